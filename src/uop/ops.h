// The one op list. Every op of every stage (lazy graph, kernel AST, linear kernel code) is a line here;
// the enum, the names and the groups are generated from it (Halide's X-macro habit).
#pragma once
#include <cstdint>

namespace tg {

// X(name, group)
#define TG_FOR_EACH_OP(X)                                                                          \
  /* graph and buffers */                                                                         \
  X(SINK, Meta) X(EMPTY, Load) X(COPY, Load) X(CONTIGUOUS, Load) X(VIEW, Meta)                     \
  /* kernel AST */                                                                                \
  X(REDUCE_AXIS, Reduce) X(LOAD, Buffer) X(STORE, Buffer) X(CONST, Meta)                           \
  /* a 1-D ramp 0, 1, ..., n-1 (lazy leaf and AST leaf): each kernel computes it from its index */    \
  X(ARANGE, Meta)                                                                                  \
  /* kernel code */                                                                               \
  X(DEFINE_GLOBAL, Define) X(DEFINE_VAR, Define) X(DEFINE_ACC, Define) X(SPECIAL, Define)          \
  X(RANGE, Define) X(ENDRANGE, Meta) X(DEFINE_LOCAL, Define) X(BARRIER, Meta) X(IF, Meta)           \
  X(ENDIF, Meta) X(INDEX, Meta) X(REDUCE, Reduce) X(ASSIGN, Meta) X(UNROLL, Meta)                                  \
  X(VECTORIZE, Meta) X(GEP, Meta) X(CAST, Cast) X(BITCAST, Cast)                                   \
  /* unary ALU */                                                                                 \
  X(EXP2, Unary) X(LOG2, Unary) X(SIN, Unary) X(COS, Unary) X(TAN, Unary) X(SQRT, Unary) X(RECIP, Unary) \
  X(NEG, Unary)                                                                                    \
  /* binary ALU */                                                                                \
  X(ADD, Binary) X(MUL, Binary) X(FDIV, Binary) X(IDIV, Binary) X(MOD, Binary) X(MAX, Binary)      \
  X(CMPLT, Binary) X(CMPNE, Binary) X(XOR, Binary) X(OR, Binary) X(AND, Binary) X(SHL, Binary)     \
  X(SHR, Binary)                                                                                   \
  /* ternary ALU */                                                                               \
  X(WHERE, Ternary) X(MULACC, Ternary)

enum class Ops : uint8_t {
#define TG_OP_ENUM(name, group) name,
  TG_FOR_EACH_OP(TG_OP_ENUM)
#undef TG_OP_ENUM
};

enum class OpGroup : uint8_t { Meta, Load, Reduce, Buffer, Define, Cast, Unary, Binary, Ternary };

const char* op_name(Ops op);
OpGroup op_group(Ops op);
inline bool is_alu(Ops op) {
  OpGroup g = op_group(op);
  return g == OpGroup::Unary || g == OpGroup::Binary || g == OpGroup::Ternary;
}
inline bool is_commutative(Ops op) {
  return op == Ops::ADD || op == Ops::MUL || op == Ops::MAX || op == Ops::CMPNE || op == Ops::XOR ||
         op == Ops::OR || op == Ops::AND;
}

}  // namespace tg

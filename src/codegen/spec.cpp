// The spec: what a graph may contain at each stage of the codegen middle (tinygrad's uop/spec.py), as
// rules over UOps. A rule that matches a node returns "" when the node is valid there and a reason when
// it is not; a node that no rule of its stage accepts is invalid. Cheap (one match per node), so the
// test build checks between every pass (SPEC=1) and a broken pass is named instead of miscompiling.
#include "codegen/spec.h"

#include <algorithm>

#include "tg/error.h"

namespace tg {

ContextVar SPEC{"SPEC", TG_SPEC_DEFAULT};

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Ast: return "the kernel AST";
    case Stage::Lowered: return "lowered";
    case Stage::Expanded: return "expanded";
    case Stage::Vectorized: return "vectorized";
    case Stage::Accumulated: return "accumulated";
  }
  return "?";
}

namespace {

using Check = std::optional<std::string>;
using SpecRule = RuleOf<Check>;
using Spec = PatternMatcherOf<Check>;
using B = const Bindings&;

Check ok() { return std::string(); }
Check bad(const std::string& why) { return why; }
Check require(bool cond, const char* why) { return cond ? ok() : bad(why); }

template <class T> bool arg_is(const UOp& u) { return std::holds_alternative<T>(u.arg); }
bool is_index_int(DType d) { return d.is_int() && d.count == 1 && !d.ptr; }
bool is_bool_like(DType cond, DType value) { return cond.scalar == Scalar::Bool && cond.count == value.count; }

// ALU ops: sources and result agree on the dtype (comparisons give bools, shifts take any int count)
Check check_alu(B b) {
  const UOp& u = *b["root"];
  DType d = u.dtype;
  if (d.ptr || d.scalar == Scalar::Void) return bad("an ALU op of a pointer or void dtype");
  switch (op_group(u.op)) {
    case OpGroup::Unary: return require(u.src.size() == 1 && u.src[0]->dtype == d, "a unary op's source has another dtype");
    case OpGroup::Binary:
      if (u.src.size() != 2) return bad("a binary op without two sources");
      if (u.op == Ops::CMPLT || u.op == Ops::CMPNE)
        return require(u.src[0]->dtype == u.src[1]->dtype && is_bool_like(d, u.src[0]->dtype), "a comparison of two dtypes, or not to bool");
      if (u.op == Ops::FDIV && !d.is_float()) return bad("FDIV of a non-float dtype (IDIV divides integers)");
      if (u.op == Ops::SHL || u.op == Ops::SHR)
        return require(u.src[0]->dtype == d && u.src[1]->dtype.is_int(), "a shift of another dtype, or by a non-integer");
      return require(u.src[0]->dtype == d && u.src[1]->dtype == d, "a binary op whose sources have other dtypes");
    case OpGroup::Ternary:
      if (u.src.size() != 3) return bad("a ternary op without three sources");
      if (u.op == Ops::WHERE) return require(is_bool_like(u.src[0]->dtype, d) && u.src[1]->dtype == d && u.src[2]->dtype == d, "WHERE(bool, x, y) of other dtypes");
      return require(std::all_of(u.src.begin(), u.src.end(), [&](const UOpPtr& s) { return s->dtype == d; }), "MULACC of other dtypes");
    default: return std::nullopt;
  }
}

// What every stage allows.
std::vector<SpecRule> common_rules() {
  return {
      {UPat::ops_of(alu_ops()), check_alu},
      {UPat::ops_of({Ops::CAST, Ops::BITCAST}), [](B b) {
         const UOp& u = *b["root"];
         return require(u.src.size() == 1 && u.src[0]->dtype.count == u.dtype.count && !u.dtype.ptr, "a cast that changes the lane count");
       }},
      {UPat::op(Ops::DEFINE_GLOBAL), [](B b) { return require(b["root"]->dtype.ptr && arg_is<int64_t>(*b["root"]), "DEFINE_GLOBAL is a pointer with its buffer number"); }},
      {UPat::op(Ops::DEFINE_VAR), [](B b) { return require(arg_is<VarArg>(*b["root"]) && is_index_int(b["root"]->dtype), "DEFINE_VAR is an int with a VarArg"); }},
  };
}

// The lowered stages: INDEX, LOAD, STORE, loops and reduces over them.
std::vector<SpecRule> lowered_rules(Stage stage) {
  bool vectors = stage >= Stage::Vectorized;
  return {
      {UPat::op(Ops::SINK), [](B b) {
         auto& s = b["root"]->src;
         return require(std::all_of(s.begin(), s.end(), [](const UOpPtr& x) { return x->op == Ops::STORE; }), "a SINK of something other than STOREs");
       }},
      {UPat::op(Ops::CONST), [](B b) { return require(b["root"]->src.empty() && b["root"]->dtype.count == 1, "a CONST with sources or lanes"); }},
      {UPat(Ops::INDEX, {UPat::op(Ops::DEFINE_GLOBAL, "buf"), UPat::var("i")}),
       [](B b) { return require(b["root"]->dtype == b["buf"]->dtype && is_index_int(b["i"]->dtype), "INDEX(buffer, int) of another dtype"); }},
      {UPat::op(Ops::LOAD), [vectors](B b) {
         const UOp& u = *b["root"];
         if (u.src.empty() || u.src.size() > 2 || u.src[0]->op != Ops::INDEX) return bad("LOAD(INDEX[, gate])");
         if (u.dtype.base() != u.src[0]->dtype.base() || (!vectors && u.dtype.count != 1)) return bad("a LOAD of another dtype than its buffer's");
         if (u.src.size() == 2 && u.src[1]->dtype.count > 1) return require(vectors && arg_is<LoadArg>(u), "a lane mask on a LOAD without its readable bound");
         if (u.src.size() == 2 && u.src[1]->dtype.scalar != Scalar::Bool) return bad("a LOAD's gate is not a bool");
         return require(arg_is<std::monostate>(u) || arg_is<LoadArg>(u), "a LOAD's arg is not a LoadArg");
       }},
      {UPat::op(Ops::STORE), [vectors](B b) {
         const UOp& u = *b["root"];
         if (u.src.size() < 2 || u.src.size() > 3 || u.src[0]->op != Ops::INDEX) return bad("STORE(INDEX, value[, gate])");
         if (u.src[1]->dtype.base() != u.src[0]->dtype.base() || (!vectors && u.src[1]->dtype.count != 1)) return bad("a STORE of another dtype than its buffer's");
         if (u.src.size() == 3 && (u.src[2]->dtype.scalar != Scalar::Bool || u.src[2]->dtype.count != 1)) return bad("a STORE's gate is not a bool");
         return require(arg_is<StoreArg>(u) && u.dtype == dtypes::void_, "a STORE without its StoreArg");
       }},
      {UPat(Ops::RANGE, {UPat::any(), UPat::any()}), [](B b) {
         const UOp& u = *b["root"];
         if (!arg_is<RangeArg>(u) || !is_index_int(u.dtype)) return bad("a RANGE is an int with a RangeArg");
         auto& r = std::get<RangeArg>(u.arg);
         return require(r.kind != RangeKind::Reduce || r.reduce.has_value(), "a reduce's RANGE that no REDUCE_AXIS bound");
       }},
      {UPat::op(Ops::SPECIAL), [](B b) { return require(arg_is<SpecialArg>(*b["root"]) && b["root"]->src.empty() && is_index_int(b["root"]->dtype), "a SPECIAL is an int with a SpecialArg"); }},
      {UPat::op(Ops::UNROLL), [stage](B b) {
         const UOp& u = *b["root"];
         if (!arg_is<UnrollArg>(u) || !is_index_int(u.dtype)) return bad("an UNROLL is an int with an UnrollArg");
         if (stage == Stage::Lowered) return ok();
         return require(stage == Stage::Expanded && std::get<UnrollArg>(u.arg).vector, stage == Stage::Expanded ? "an UNROLL the expander left" : "an UNROLL vectorize left");
       }},
      {UPat::op(Ops::REDUCE), [stage](B b) {
         const UOp& u = *b["root"];
         if (stage == Stage::Accumulated) return bad("a REDUCE reduce_to_acc left");
         if (!arg_is<ReduceOpArg>(u)) return bad("a REDUCE without its ReduceOpArg");
         auto [op, n] = std::get<ReduceOpArg>(u.arg);
         if (op != Ops::ADD && op != Ops::MAX) return bad("a REDUCE by an op other than ADD or MAX");
         if (n < 1 || static_cast<size_t>(n) > u.src.size()) return bad("a REDUCE's value count is out of its sources");
         for (int i = 0; i < n; i++)
           if (u.src[static_cast<size_t>(i)]->dtype != u.dtype) return bad("a REDUCE of values of another dtype");
         for (size_t i = static_cast<size_t>(n); i < u.src.size(); i++) {
           Ops o = u.src[i]->op;
           bool last = i + 1 == u.src.size();
           if (o == Ops::RANGE) continue;
           if (o == Ops::UNROLL && (stage == Stage::Lowered || (stage == Stage::Expanded && last))) continue;
           return bad("a REDUCE over something other than its RANGEs (and, before vectorize, its UNROLLs)");
         }
         return ok();
       }},
      {UPat::op(Ops::VECTORIZE), [vectors](B b) {
         const UOp& u = *b["root"];
         if (!vectors) return bad("a VECTORIZE before vectorize");
         return require(u.src.size() == u.dtype.count && u.dtype.count > 1 &&
                            std::all_of(u.src.begin(), u.src.end(), [&](const UOpPtr& s) { return s->dtype == u.dtype.base(); }),
                        "a VECTORIZE whose lanes do not make its dtype");
       }},
      {UPat::op(Ops::GEP), [vectors](B b) {
         const UOp& u = *b["root"];
         if (!vectors) return bad("a GEP before vectorize");
         if (u.src.size() != 1 || !arg_is<int64_t>(u)) return bad("GEP(vector) with its lane");
         int64_t l = std::get<int64_t>(u.arg);
         return require(l >= 0 && l < u.src[0]->dtype.count && u.dtype == u.src[0]->dtype.base(), "a GEP out of its vector");
       }},
      {UPat::op(Ops::DEFINE_ACC), [stage](B b) {
         const UOp& u = *b["root"];
         if (stage != Stage::Accumulated) return bad("a DEFINE_ACC before reduce_to_acc");
         if (u.src.empty() || u.src[0]->dtype != u.dtype) return bad("DEFINE_ACC(identity, RANGE...) of another dtype");
         return require(std::all_of(u.src.begin() + 1, u.src.end(), [](const UOpPtr& s) { return s->op == Ops::RANGE; }), "a DEFINE_ACC over something other than RANGEs");
       }},
      {UPat(Ops::ASSIGN, {UPat::op(Ops::DEFINE_ACC, "acc"), UPat::var("v")}),
       [stage](B b) { return require(stage == Stage::Accumulated && b["v"]->dtype == b["acc"]->dtype && b["root"]->dtype == b["acc"]->dtype, "ASSIGN(DEFINE_ACC, value) of another dtype"); }},
  };
}

// The kernel AST: STOREs of LOADs, CONSTs, ARANGEs and REDUCE_AXISes over VIEWs.
std::vector<SpecRule> ast_rules() {
  return {
      {UPat::op(Ops::SINK), [](B b) {
         auto& s = b["root"]->src;
         return require(!s.empty() && std::all_of(s.begin(), s.end(), [](const UOpPtr& x) { return x->op == Ops::STORE; }), "an AST's SINK of something other than STOREs");
       }},
      {UPat::op(Ops::VIEW), [](B b) { return require(b["root"]->src.empty(), "a VIEW with sources"); }},
      {UPat(Ops::CONST, {UPat::op(Ops::VIEW)}), [](B) { return ok(); }},
      {UPat(Ops::ARANGE, {UPat::op(Ops::VIEW)}), [](B b) { return require(b["root"]->dtype.is_int(), "an ARANGE of another dtype than an int"); }},
      {UPat(Ops::STORE, {UPat::op(Ops::DEFINE_GLOBAL, "buf"), UPat::op(Ops::VIEW), UPat::var("v")}),
       [](B b) { return require(b["v"]->dtype == b["buf"]->dtype.base(), "an AST STORE of another dtype than its buffer's"); }},
      {UPat::op(Ops::LOAD), [](B b) {
         const UOp& u = *b["root"];
         bool shape = (u.src.size() == 2 || u.src.size() == 4) && u.src[0]->op == Ops::DEFINE_GLOBAL && u.src[1]->op == Ops::VIEW;
         return require(shape && u.dtype == u.src[0]->dtype.base(), "an AST LOAD is LOAD(buffer, VIEW[, offset, valid]) of its buffer's dtype");
       }},
      {UPat(Ops::REDUCE_AXIS, {UPat::var("x")}),
       [](B b) { return require(arg_is<ReduceArg>(*b["root"]) && b["x"]->dtype == b["root"]->dtype, "REDUCE_AXIS(x) with its ReduceArg"); }},
  };
}

const Spec& spec_of(Stage s) {
  static const std::vector<Spec> specs = [] {
    std::vector<Spec> v;
    for (Stage st : {Stage::Ast, Stage::Lowered, Stage::Expanded, Stage::Vectorized, Stage::Accumulated}) {
      std::vector<SpecRule> r = st == Stage::Ast ? ast_rules() : lowered_rules(st);
      for (auto& c : common_rules()) r.push_back(c);
      v.emplace_back(std::move(r));
    }
    return v;
  }();
  return specs[static_cast<size_t>(s)];
}

}  // namespace

void verify(const UOpPtr& sink, Stage stage, const std::string& pass) {
  const Spec& spec = spec_of(stage);
  for (auto& u : sink->toposort()) {
    Check c = spec.rewrite(u);
    if (c && c->empty()) continue;
    std::string s = u->str();
    if (s.size() > 600) s = s.substr(0, 600) + "...";
    throw InternalError(detail::cat("spec: after ", pass, ", the graph is not ", stage_name(stage), ": ",
                                    c ? *c : std::string("no rule of this stage accepts ") + op_name(u->op), ": ", s));
  }
}

}  // namespace tg

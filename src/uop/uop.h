// UOp: the one IR of tinygrad.cpp, for index arithmetic, kernel ASTs and linear kernel code alike.
//
// UOps are immutable and hash-consed: building the same (op, dtype, src, arg) twice returns the same
// node, so structural equality is pointer equality and a graph is a DAG that shares all common
// subexpressions. Integer UOps carry their value bounds (vmin, vmax), which the symbolic rules use.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tg/dtype.h"
#include "uop/ops.h"

namespace tg {

struct UOp;
using UOpPtr = std::shared_ptr<const UOp>;

// A user-defined argument (e.g. a ShapeTracker on VIEW): hashed and compared by value.
struct ArgObject {
  virtual ~ArgObject() = default;
  virtual uint64_t hash() const = 0;
  virtual bool equals(const ArgObject& o) const = 0;
  virtual std::string str() const = 0;
};

// Typed args: what a node's arg means is its type, never a packed integer or a name's prefix. Each has
// ==, hash() and str() (arg_equal, the hash-consing and printing use them).

struct ReduceArg {   // REDUCE_AXIS: the binary op (ADD or MAX) and the axes it reduces
  Ops op;
  std::vector<int> axes;
  bool operator==(const ReduceArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
};
struct VarArg {      // DEFINE_VAR: a named integer in [min, max] (a symbolic variable)
  std::string name;
  int64_t min, max;
  bool operator==(const VarArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
};
// SPECIAL: an index the device launches: a global index (the CPU's thread pool splits it) or a local
// one (a work-item in a group); axis: which launch dim; the index is in [0, size).
enum class SpecialKind : uint8_t { GlobalIdx, LocalIdx };
struct SpecialArg {
  SpecialKind kind;
  int axis;
  int64_t size;
  bool operator==(const SpecialArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
  std::string name() const;  // "gidx0", "lidx1"
};
// RANGE(start, end): a loop index. A Loop range walks an output dim (a GLOBAL dim that is not launched);
// a Block range walks a BLOCK dim, outside every other loop and the launched dims too (on the CPU each
// thread runs all of its slice of outputs over one block of the reduce, whose operands then stay in its
// cache, before the next block); a Reduce range a dim that the REDUCE_AXIS `reduce` (numbered in
// lowering order) sums over; two reduces over one dim are two loops. `reduce` is empty only inside the lowerer, for a reduce
// dim's index before its REDUCE_AXIS binds it. A Row range is the STORE's own loop over a reduce dim
// that the output keeps whole (softmax stores the row its reduces read back): it runs after the
// reduces' loops. `order` orders the loops of one nest: lower opens outside.
enum class RangeKind : uint8_t { Loop, Block, Reduce, Row };
struct RangeArg {
  RangeKind kind;
  int dim;                    // the kernel dim
  int order;
  std::optional<int> reduce;  // Reduce ranges: the level of the reduces that loop over it (lowerer.cpp)
  bool operator==(const RangeArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
  std::string name() const;   // the loop variable's name: "ridx3", "ridx3_1" (dim 3 at reduce level 1)
};
// UNROLL: stands for every index of an UPCAST or UNROLL dim at once (a register tile) until a pass
// expands it: the expander makes one copy per index, or, for the one dim that becomes vector lanes
// (`vector`), vectorize lifts what depends on it into vector UOps. `reduce`: the REDUCE_AXIS whose
// unrolled dim it is (empty for an UPCAST dim).
struct UnrollArg {
  int dim;
  int64_t size;
  bool vector;
  std::optional<int> reduce;
  bool operator==(const UnrollArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
};
// REDUCE (lowered code): combines its first `nvals` sources with `op` (ADD or MAX), over the loops of its
// RANGE sources after them (and over the lanes of an UNROLL source, last, when it has one).
struct ReduceOpArg {
  Ops op;
  int nvals;
  bool operator==(const ReduceOpArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
};
// LOAD (gated): the elements of its buffer the view may read, [0, readable); a vector of a gated load
// may then read its masked lanes in one go when they stay inside.
struct LoadArg {
  int64_t readable;
  bool operator==(const LoadArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
};
// STORE: streaming marks a large output the kernel writes once: the renderer may write it around the
// caches (a non-temporal store).
struct StoreArg {
  bool streaming;
  bool operator==(const StoreArg&) const = default;
  uint64_t hash() const;
  std::string str() const;
};

using Arg = std::variant<std::monostate, int64_t, double, std::string, ReduceArg, VarArg, SpecialArg, RangeArg,
                         UnrollArg, ReduceOpArg, LoadArg, StoreArg, std::shared_ptr<const ArgObject>>;
bool arg_equal(const Arg& a, const Arg& b);
uint64_t arg_hash(const Arg& a);  // equal args (arg_equal) hash equal
std::string arg_str(const Arg& a);

struct UOp : std::enable_shared_from_this<UOp> {
  const Ops op;
  const DType dtype;
  // Not const only so that ~UOp can hand the sources to defer_release (an iterative teardown); every
  // UOp is reached through a UOpPtr (pointer to const), so nothing else can change it.
  std::vector<UOpPtr> src;
  const Arg arg;
  const uint64_t hash;
  int64_t vmin, vmax;  // bounds of an integer/bool value; meaningless for floats

  // The only way to build a UOp: returns the existing node when an equal one is alive.
  static UOpPtr make(Ops op, DType dtype, std::vector<UOpPtr> src = {}, Arg arg = {});
  static UOpPtr cnst(DType dtype, double v);        // CONST (ints and bools stored exactly as int64)
  static UOpPtr cnst_int(DType dtype, int64_t v);
  static UOpPtr index_const(int64_t v) { return cnst_int(dtypes::int32, v); }

  // CONST value accessors
  bool is_const() const { return op == Ops::CONST; }
  bool is_const(int64_t v) const;
  double const_value() const;    // as double
  int64_t const_int() const;     // as int64 (floats truncated)

  // ALU builders (no simplification here; graph_rewrite with the symbolic rules does that)
  UOpPtr alu(Ops op, const UOpPtr& b) const;
  UOpPtr alu(Ops op, const UOpPtr& b, const UOpPtr& c) const;
  UOpPtr unary(Ops op) const;
  UOpPtr add(const UOpPtr& b) const { return alu(Ops::ADD, b); }
  UOpPtr mul(const UOpPtr& b) const { return alu(Ops::MUL, b); }
  UOpPtr add(int64_t b) const;
  UOpPtr mul(int64_t b) const;
  UOpPtr idiv(int64_t b) const;
  UOpPtr mod(int64_t b) const;
  UOpPtr lt(int64_t b) const;
  UOpPtr ge(int64_t b) const;   // !(x < b), as (x < b) != true
  UOpPtr and_(const UOpPtr& b) const { return alu(Ops::AND, b); }
  UOpPtr where(const UOpPtr& t, const UOpPtr& f) const;
  UOpPtr cast(DType d) const;
  UOpPtr self() const;  // this node as a UOpPtr
  // This node with other sources (op, dtype and arg kept); the node itself when they are the same.
  UOpPtr replace(std::vector<UOpPtr> src) const;

  // All nodes reachable from this one, sources before users (post-order).
  std::vector<UOpPtr> toposort() const;
  std::string str() const;  // for DEBUG and error messages: nested, a shared node once on a line of its own

  // Builders for non-ALU nodes should call make(); the constructor is public only for make_shared.
  UOp(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg, uint64_t hash);
  ~UOp();
};

// Renders a pure index/valid expression as C-like text, e.g. "((ridx0*4)+gidx0)"; for tests and DEBUG.
std::string render_expr(const UOpPtr& u);

}  // namespace tg

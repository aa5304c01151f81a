// The lowerer pass: the kernel AST, in kernel dims, as UOps over loop indices (a graph_rewrite of the
// AST, bottom-up).
//
// Every dim has an index UOp. GLOBAL and LOCAL dims index with SPECIAL (launched) or an outer RANGE
// loop; a BLOCK dim is a Block RANGE, outside the GLOBAL loops and the launched dims (the STORE then adds
// what the earlier blocks left in the output, read as 0 in the first block). UPCAST dims index with an
// UNROLL, which the expander (or, for the vector dim, vectorize) resolves later. A reduce dim's index
// is an unbound RANGE until the REDUCE_AXIS above it binds it: the REDUCE_AXIS substitutes RANGEs (and
// UNROLLs for its unrolled dims) of its level into its lowered source. A reduce's level is one more than
// the deepest reduce it reads (0 for none), so reduces that do not read each other (a batchnorm
// backward's sums, mean and sum of squares) share one loop and each load in it, while a reduce of a
// reduce (softmax's sum after its max) runs a loop of its own. Where the output keeps a reduce dim whole
// (softmax: the row's max and sum are read back over the row), the STORE binds what is left unbound to a
// Row range of its own; a transcendental value that both the Row loop and a reduce's loop compute per
// element is computed once, in the reduce's loop, and kept in the output (Row reuse, below).
//
// A STORE into a large output that the kernel writes once (no BLOCK) is marked streaming: the renderer
// may write it around the caches (kStreamingBytes).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "codegen/kernel.h"
#include "codegen/passes.h"
#include "tg/error.h"
#include "uop/rewrite.h"

namespace tg {

namespace {

// Outputs from this size on are written around the caches where the renderer can (non-temporal stores):
// they would not stay in a typical last-level cache anyway, and a write that skips the cache does not
// read each line in first, so a large elementwise kernel moves a third less memory.
constexpr int64_t kStreamingBytes = int64_t{32} << 20;

}  // namespace

struct Kernel::LoweringCtx : RewriteContext {
  const Kernel& k;
  const std::vector<ShapeTracker>& sts;
  Shape full;
  DType idt;
  std::vector<UOpPtr> idx;                         // each dim's index (reduce dims: unbound RANGEs)
  std::unordered_map<const UOp*, size_t> view_index;
  std::unordered_map<const UOp*, int> level;      // each lowered REDUCE's level (see the top)

  explicit LoweringCtx(const Kernel& k_) : k(k_), sts(k_.sts_), full(k_.full_shape()), idt(k_.index_dtype()) {
    for (size_t i = 0; i < k.views_.size(); i++) view_index.emplace(k.views_[i].get(), i);
  }

  UOpPtr zero() const { return UOp::cnst_int(idt, 0); }
  size_t view_of(const UOpPtr& view) const { return view_index.at(view.get()); }
  // (buffer index, valid) of a view at the current indices; a dim of size 1 in the view indexes with 0
  std::pair<UOpPtr, UOpPtr> indexed(const UOpPtr& view) const {
    const ShapeTracker& st = sts[view_of(view)];
    std::vector<UOpPtr> ix;
    for (size_t d = 0; d < idx.size(); d++) ix.push_back(st.shape()[d] == 1 ? zero() : idx[d]);
    return st.to_indexed_uops(ix, idt);
  }
  // a gated load's bound: the elements of its buffer the view may read, [0, real_size)
  LoadArg readable(size_t view) const { return {sts[view].real_size()}; }
  // the dims a REDUCE_AXIS reduces: reduce-typed dims whose AST axes are all among its axes
  std::vector<int> reduced_dims(const ReduceArg& ra) const {
    std::vector<int> out;
    for (int d = 0; d < k.shape_len(); d++) {
      AxisType t = k.axis_types()[d];
      if (t != AxisType::REDUCE && t != AxisType::UNROLL && t != AxisType::GROUP_REDUCE) continue;
      const std::vector<int>& origin = k.origin_[d];
      if (std::all_of(origin.begin(), origin.end(), [&](int a) { return std::count(ra.axes.begin(), ra.axes.end(), a) > 0; }))
        out.push_back(d);
    }
    return out;
  }
  // where the dims a reduce reduces are all real (not PADTO's padding), when the kernel has a reduce
  // guard; true otherwise
  UOpPtr reduce_guard(const ReduceArg& ra) const {
    if (!k.reduce_guard_) return UOp::cnst_int(dtypes::bool_, 1);
    std::vector<UOpPtr> ix(idx.size(), zero());
    for (int d : reduced_dims(ra)) ix[d] = idx[d];
    return k.reduce_guard_->to_indexed_uops(ix, idt).second;
  }
};

namespace {

using LoweringCtx = Kernel::LoweringCtx;
using B = const Bindings&;

UOpPtr lower_const(B b) {
  auto& ctx = b.ctx<LoweringCtx>();
  const UOpPtr& c = b["root"];
  auto [i, valid] = ctx.indexed(b["view"]);
  UOpPtr v = UOp::make(Ops::CONST, c->dtype, {}, c->arg);
  return valid->is_const(1) ? v : valid->where(v, UOp::cnst(c->dtype, 0));
}

// ARANGE: the position in the ramp is the index of its view
UOpPtr lower_arange(B b) {
  auto& ctx = b.ctx<LoweringCtx>();
  auto [i, valid] = ctx.indexed(b["view"]);
  UOpPtr v = i->cast(b["root"]->dtype);
  return valid->is_const(1) ? v : valid->where(v, UOp::cnst(b["root"]->dtype, 0));
}

UOpPtr lower_load(B b) {
  auto& ctx = b.ctx<LoweringCtx>();
  const UOpPtr& ld = b["root"];
  auto [i, valid] = ctx.indexed(b["view"]);
  if (valid->is_const(0)) return UOp::cnst(ld->dtype, 0);
  bool gather = ld->src.size() == 4;  // a data-dependent read: an offset from another buffer and its range check
  if (gather) {
    i = i->add(ld->src[2]->cast(ctx.idt));
    valid = valid->and_(ld->src[3]);
  }
  UOpPtr index = UOp::make(Ops::INDEX, b["buf"]->dtype, {b["buf"], i});
  if (valid->is_const(1)) return UOp::make(Ops::LOAD, ld->dtype, {index});
  Arg bound = gather ? Arg{} : Arg{ctx.readable(ctx.view_of(b["view"]))};  // a gather's reach is unknown
  return UOp::make(Ops::LOAD, ld->dtype, {index, valid}, bound);
}

// Row reuse. A Row loop may compute again, element by element, a value that a reduce's loop computed
// over the same row (softmax's exp(x - max), summed in the reduce loop and scaled in the Row loop). When
// that value is expensive (a transcendental) and has the output's dtype, the reduce loop also stores it
// into the output at its element, and the Row loop loads it back instead of computing it: one exp per
// element, as torch does. The element is the thread's own (a row is never split between threads) and
// the Row loop runs after the reduce's loop, whose result it reads. The output is a buffer of its own
// (the scheduler never writes a kernel's output over its inputs), so nothing is read after it is
// overwritten. `index` is the Row loop's INDEX into the output. Returns the reduce loop's STORE and the
// Row value, or nothing.
bool is_transcendental(Ops op) { return op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN || op == Ops::SQRT; }

std::optional<std::pair<UOpPtr, UOpPtr>> reuse_reduce_value(const LoweringCtx& ctx, const UOpPtr& index, const UOpPtr& value,
                                                             const std::unordered_map<const UOp*, UOpPtr>& row) {
  std::unordered_map<const UOp*, int> row_dim;  // the Row ranges, by their dim
  for (auto& [idx, r] : row) row_dim.emplace(r.get(), std::get<RangeArg>(r->arg).dim);
  // what depends on a Row range, and whether it computes a transcendental there
  std::unordered_set<const UOp*> in_row, costly;
  std::vector<UOpPtr> reduces;
  for (const UOpPtr& u : value->toposort()) {
    if (u->op == Ops::REDUCE) { reduces.push_back(u); continue; }
    bool dep = row_dim.count(u.get()) > 0, cost = false;
    for (auto& x : u->src) {
      if (x->op == Ops::REDUCE) continue;
      dep |= in_row.count(x.get()) > 0;
      cost |= costly.count(x.get()) > 0;
    }
    if (dep) in_row.insert(u.get());
    if (dep && (cost || is_transcendental(u->op))) costly.insert(u.get());
  }
  for (const UOpPtr& r : reduces) {
    // the Row loop's indices as this reduce's: its RANGEs for the Row ranges, its UNROLLs for the store's
    std::unordered_map<const UOp*, UOpPtr> as_reduce;
    size_t rows = 0;
    for (size_t k = 1; k < r->src.size(); k++) {
      const UOpPtr& x = r->src[k];
      if (x->op == Ops::RANGE) {
        for (auto& [rr, d] : row_dim)
          if (d == std::get<RangeArg>(x->arg).dim) rows += as_reduce.emplace(rr, x).second;
      } else if (x->op == Ops::UNROLL) {
        as_reduce.emplace(ctx.idx[static_cast<size_t>(std::get<UnrollArg>(x->arg).dim)].get(), x);
      }
    }
    if (rows < row.size()) continue;  // the reduce does not loop over the whole row
    std::unordered_set<const UOp*> computed;
    for (const UOpPtr& u : r->src[0]->toposort()) computed.insert(u.get());
    // the element's index in the reduce's loop, which must run inside every loop of it (a reduce that no
    // launched index changes runs once, before them all)
    UOpPtr at = substitute(index, as_reduce);
    auto outside = [&](const UOpPtr& x) { return (x->op == Ops::SPECIAL || x->op == Ops::RANGE) && !computed.count(x.get()); };
    std::vector<UOpPtr> at_nodes = at->toposort();
    if (std::any_of(at_nodes.begin(), at_nodes.end(), outside)) continue;
    // the outermost costly value of the row that the reduce's loop computes too
    std::vector<UOpPtr> todo{value};
    std::unordered_set<const UOp*> seen;
    while (!todo.empty()) {
      UOpPtr e = todo.back();
      todo.pop_back();
      if (!costly.count(e.get()) || !seen.insert(e.get()).second) continue;
      UOpPtr same = substitute(e, as_reduce);
      if (e->dtype == value->dtype && computed.count(same.get())) {
        UOpPtr early = UOp::make(Ops::STORE, dtypes::void_, {at, same}, StoreArg{false});
        return std::make_pair(early, substitute(value, {{e.get(), UOp::make(Ops::LOAD, e->dtype, {index})}}));
      }
      for (auto& x : e->src) todo.push_back(x);
    }
  }
  return std::nullopt;
}

UOpPtr lower_store(B b) {
  auto& ctx = b.ctx<LoweringCtx>();
  const Kernel& k = ctx.k;
  auto [i, valid] = ctx.indexed(b["view"]);
  if (valid->is_const(0)) return UOp::make(Ops::SINK, dtypes::void_, {});  // wholly in the padding (PADTO)
  UOpPtr value = b["value"];
  // a reduce dim the output keeps whole (its reduces are read back over it): the STORE's own Row loop
  std::unordered_map<const UOp*, UOpPtr> row;
  for (int d : k.dims_of(AxisType::REDUCE))
    if (ctx.full[d] > 1) row.emplace(ctx.idx[d].get(), UOp::make(Ops::RANGE, ctx.idt, {ctx.zero(), UOp::cnst_int(ctx.idt, ctx.full[d])}, RangeArg{RangeKind::Row, d, d, {}}));
  if (!row.empty()) {
    i = substitute(i, row);
    valid = substitute(valid, row);
    value = substitute(value, row);
  }
  UOpPtr index = UOp::make(Ops::INDEX, b["buf"]->dtype, {b["buf"], i});
  std::vector<int> block = k.dims_of(AxisType::BLOCK);
  // (a row shared between threads, a GROUP_REDUCE, would need a barrier between the loops)
  if (!row.empty() && block.empty() && valid->is_const(1) && k.dims_of(AxisType::GROUP_REDUCE).empty())
    if (auto reuse = reuse_reduce_value(ctx, index, value, row))
      return UOp::make(Ops::SINK, dtypes::void_, {reuse->first, UOp::make(Ops::STORE, dtypes::void_, {index, reuse->second}, StoreArg{false})});
  for (int d : block) {  // the sum so far (apply_opt allows one BLOCK dim)
    UOpPtr earlier = ctx.idx[d]->ge(1);
    value = value->add(UOp::make(Ops::LOAD, value->dtype, {index, valid->is_const(1) ? earlier : valid->and_(earlier)},
                                 ctx.readable(k.output_view())));
  }
  std::vector<UOpPtr> s{index, value};
  if (!valid->is_const(1)) s.push_back(valid);  // padded output (PADTO): store only the real part
  bool streaming = block.empty() && ctx.readable(k.output_view()).readable * b["value"]->dtype.itemsize() >= kStreamingBytes;
  return UOp::make(Ops::STORE, dtypes::void_, std::move(s), StoreArg{streaming});
}

// one more than the deepest REDUCE that a lowered value reads (0 for none); the walk stops at REDUCEs
int reduce_level(LoweringCtx& ctx, const UOpPtr& x) {
  int level = 0;
  std::unordered_set<const UOp*> seen;
  std::vector<const UOp*> stack{x.get()};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second) continue;
    if (u->op == Ops::REDUCE) {
      level = std::max(level, ctx.level.at(u) + 1);
      continue;
    }
    for (auto& s : u->src) stack.push_back(s.get());
  }
  return level;
}

// Reduce bounds. A sum whose terms are all absent outside a window of one of its loop indices (its
// source is where(present, term, 0), `present` a conjunction with bounds on the index: a transposed
// conv's padded kernel rows, see conv.cpp's conv_skipping_padding) loops over that window only:
// RANGE(max(start, lo), min(end, hi)), with lo and hi in the indices outside the reduce. The bounds
// leave the mask, and every other place they appear in the term (the padded view's load gate). An
// empty window runs no step: the sum is 0. A bound that an UNROLL changes (per lane or per unrolled
// copy) stays in the mask.
struct Bound {
  UOpPtr range;
  bool lower;   // range >= at, or else range < at
  UOpPtr at;
};
__int128 ceil_div(__int128 a, __int128 b) { return a / b + (a % b != 0 && (a < 0) == (b < 0)); }

// `c` as a bound on one of `ranges`: m*r + e + s < K (or its negation, >= K), with e's terms
// multiples of m and s in [smin, smax] such that the bound on r + e/m is the same for every s (a
// flat index into a padded view: 40*(row + kernel row) + column + 11*kernel column, for 10-wide rows
// of 4 planes). s may vary with UNROLLs and the reduce's other ranges; e may not.
std::optional<Bound> bound_of(const UOpPtr& c, const std::vector<UOpPtr>& ranges) {
  bool lower = false;
  UOpPtr cmp = c;
  if (c->op == Ops::CMPNE && c->src[1]->is_const(1) && c->src[0]->op == Ops::CMPLT) lower = true, cmp = c->src[0];
  if (cmp->op != Ops::CMPLT || !cmp->src[1]->is_const() || cmp->src[0]->dtype.count != 1 || !cmp->src[0]->dtype.is_int()) return std::nullopt;
  std::vector<UOpPtr> terms, todo{cmp->src[0]};
  while (!todo.empty()) {
    UOpPtr t = todo.back();
    todo.pop_back();
    if (t->op == Ops::ADD) todo.insert(todo.end(), t->src.begin(), t->src.end());
    else terms.push_back(t);
  }
  auto is_range = [&](const UOpPtr& u) { return std::find(ranges.begin(), ranges.end(), u) != ranges.end(); };
  auto scaled = [](const UOpPtr& t) -> std::pair<UOpPtr, int64_t> {  // t as x * m
    if (t->op == Ops::MUL && t->src[1]->is_const()) return {t->src[0], t->src[1]->const_int()};
    if (t->op == Ops::MUL && t->src[0]->is_const()) return {t->src[1], t->src[0]->const_int()};
    return {t, 1};
  };
  // each of the reduce's ranges among the terms, tried as r
  for (const UOpPtr& candidate : terms) {
    auto [range, m] = scaled(candidate);
    if (!is_range(range) || m <= 0) continue;
    UOpPtr e = UOp::cnst_int(range->dtype, 0);
    __int128 k = cmp->src[1]->const_int(), smin = 0, smax = 0;  // (no overflow of saturated bounds)
    bool ok = true;
    for (const UOpPtr& t : terms) {
      if (t == candidate) continue;
      auto [x, mx] = scaled(t);
      bool inner = false;  // varies inside the reduce: with an UNROLL or another of its ranges
      for (const UOpPtr& u : t->toposort()) {
        ok &= u != range;
        inner |= u->op == Ops::UNROLL || is_range(u);
      }
      if (t->is_const()) k -= t->const_int();
      else if (!inner && mx % m == 0) e = e->add(mx == m ? x : x->mul(mx / m));
      else smin += t->vmin, smax += t->vmax;
    }
    // m*q + s < K  <=>  q < ceil((K - s) / m), the same for every s
    __int128 bound = ceil_div(k - smin, m);
    if (ok && bound == ceil_div(k - smax, m) && bound >= INT32_MIN && bound <= INT32_MAX)
      return Bound{range, lower, simplify(UOp::cnst_int(range->dtype, static_cast<int64_t>(bound))->add(e->mul(-1)))};
  }
  return std::nullopt;
}

std::vector<UOpPtr> conjuncts(const UOpPtr& c) {
  if (c->op == Ops::AND && c->dtype.count == 1) {
    std::vector<UOpPtr> a = conjuncts(c->src[0]), b = conjuncts(c->src[1]);
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  return {c};
}

// value and ranges of a sum, narrowed (see above); unchanged when no bound applies
void narrow_sum(UOpPtr& value, std::vector<UOpPtr>& ranges) {
  if (value->op != Ops::WHERE || !value->src[2]->is_const(0)) return;
  UOpPtr present = value->src[0];
  // a padded bool CONST lowers to where(valid, true, false)
  if (present->op == Ops::WHERE && present->src[1]->is_const(1) && present->src[2]->is_const(0)) present = present->src[0];
  std::unordered_map<const UOp*, UOpPtr> windows;  // each range -> its narrowed RANGE
  std::unordered_map<const UOp*, UOpPtr> known;    // each bound used -> true
  UOpPtr kept = UOp::cnst_int(dtypes::bool_, 1);
  std::vector<Bound> used;  // the bounds taken (which keep their `at` alive, so equal ones are the same node)
  for (const UOpPtr& c : conjuncts(present)) {
    std::optional<Bound> b = bound_of(c, ranges);
    if (!b) { kept = kept->and_(c); continue; }
    UOpPtr& w = windows.try_emplace(b->range.get(), b->range).first->second;
    UOpPtr start = w->src[0], end = w->src[1];
    if (b->lower) start = start->alu(Ops::MAX, b->at);
    else end = end->mul(-1)->alu(Ops::MAX, b->at->mul(-1))->mul(-1);  // min(end, at)
    w = UOp::make(Ops::RANGE, w->dtype, {simplify(start), simplify(end)}, w->arg);
    known.emplace(c.get(), UOp::cnst_int(dtypes::bool_, 1));
    used.push_back(*b);
  }
  if (windows.empty()) return;
  // the same bounds elsewhere in the term (the padded view's load gate) hold in the window too
  for (const UOpPtr& u : value->src[1]->toposort()) {
    if (u->dtype != dtypes::bool_ || known.count(u.get())) continue;
    if (std::optional<Bound> b = bound_of(u, ranges))
      if (std::any_of(used.begin(), used.end(), [&](const Bound& x) { return x.range == b->range && x.lower == b->lower && x.at == b->at; }))
        known.emplace(u.get(), UOp::cnst_int(dtypes::bool_, 1));
  }
  std::unordered_map<const UOp*, UOpPtr> swap = known;
  for (auto& [r, w] : windows) swap.emplace(r, w);
  value = simplify(substitute(kept, swap))->where(substitute(value->src[1], swap), value->src[2]);
  for (UOpPtr& r : ranges)
    if (auto it = windows.find(r.get()); it != windows.end()) r = it->second;
}

// REDUCE(value, RANGE..., UNROLL...): the reduce's own loops and unrolled dims bound in its source
UOpPtr lower_reduce_axis(B b) {
  auto& ctx = b.ctx<LoweringCtx>();
  const UOpPtr& r = b["root"];
  const ReduceArg& ra = std::get<ReduceArg>(r->arg);
  int id = reduce_level(ctx, b["x"]), vdim = ctx.k.vector_dim();
  std::unordered_map<const UOp*, UOpPtr> bind;
  std::vector<UOpPtr> src{b["x"]}, unrolls;
  for (int d : ctx.reduced_dims(ra)) {
    int64_t n = ctx.full[d];
    UOpPtr v;
    if (n == 1) v = ctx.zero();
    else if (d == vdim || ctx.k.axis_types()[d] == AxisType::UNROLL) unrolls.push_back(v = UOp::make(Ops::UNROLL, ctx.idt, {}, UnrollArg{d, n, d == vdim, id}));
    else src.push_back(v = UOp::make(Ops::RANGE, ctx.idt, {ctx.zero(), UOp::cnst_int(ctx.idt, n)}, RangeArg{RangeKind::Reduce, d, d, id}));
    bind.emplace(ctx.idx[d].get(), v);
  }
  // a sum over padding whose zeros its source would not map to 0 adds only where the guard holds (and
  // narrow_sum below then skips a padded loop's padding)
  if (UOpPtr valid = ctx.reduce_guard(ra); ra.op == Ops::ADD && !valid->is_const(1)) src[0] = valid->where(src[0], UOp::cnst(src[0]->dtype, 0));
  src[0] = substitute(src[0], bind);
  if (ra.op == Ops::ADD && src.size() > 1) {
    std::vector<UOpPtr> ranges(src.begin() + 1, src.end());
    narrow_sum(src[0], ranges);
    std::copy(ranges.begin(), ranges.end(), src.begin() + 1);
  }
  src.insert(src.end(), unrolls.begin(), unrolls.end());
  UOpPtr reduce = UOp::make(Ops::REDUCE, r->dtype, std::move(src), ReduceOpArg{ra.op, 1});
  ctx.level.emplace(reduce.get(), id);
  return reduce;
}

const PatternMatcher& pm_lowerer() {
  static const PatternMatcher pm = PatternMatcher({
      {UPat(Ops::CONST, {UPat::op(Ops::VIEW, "view")}), lower_const, "lower CONST"},
      {UPat(Ops::ARANGE, {UPat::op(Ops::VIEW, "view")}), lower_arange, "lower ARANGE"},
      {UPat(Ops::LOAD, {UPat::op(Ops::DEFINE_GLOBAL, "buf"), UPat::op(Ops::VIEW, "view")}), lower_load, "lower LOAD"},
      {UPat(Ops::LOAD, {UPat::op(Ops::DEFINE_GLOBAL, "buf"), UPat::op(Ops::VIEW, "view"), UPat::any(), UPat::any()}), lower_load, "lower gather LOAD"},
      {UPat(Ops::STORE, {UPat::op(Ops::DEFINE_GLOBAL, "buf"), UPat::op(Ops::VIEW, "view"), UPat::any("value")}), lower_store, "lower STORE"},
      {UPat(Ops::REDUCE_AXIS, {UPat::any("x")}), lower_reduce_axis, "lower REDUCE_AXIS"},
  }) + pm_flatten_sink();
  return pm;
}

}  // namespace

UOpPtr Kernel::lower() const {
  LoweringCtx ctx(*this);
  int n = shape_len(), nspecial = 0, nlocal = 0;
  ctx.idx.assign(n, ctx.zero());
  // the outer loops' order: BLOCK dims outside the GLOBAL ones
  std::vector<int> loop_order(n);
  int nloops = 0;
  for (AxisType t : {AxisType::BLOCK, AxisType::GLOBAL})
    for (int d : dims_of(t)) loop_order[d] = nloops++;
  auto range = [&](int d, RangeKind kind, int order) {
    return UOp::make(Ops::RANGE, ctx.idt, {ctx.zero(), UOp::cnst_int(ctx.idt, ctx.full[d])}, RangeArg{kind, d, order, {}});
  };
  int vdim = vector_dim();
  for (int d = 0; d < n; d++) {
    int64_t s = ctx.full[d];
    if (s == 1) continue;
    switch (types_[d]) {
      case AxisType::GLOBAL:
        ctx.idx[d] = nspecial < ren_->global_max_dims() ? UOp::make(Ops::SPECIAL, ctx.idt, {}, SpecialArg{SpecialKind::GlobalIdx, nspecial++, s})
                                                        : range(d, RangeKind::Loop, loop_order[d]);
        break;
      case AxisType::BLOCK: ctx.idx[d] = range(d, RangeKind::Block, loop_order[d]); break;
      case AxisType::LOCAL: ctx.idx[d] = UOp::make(Ops::SPECIAL, ctx.idt, {}, SpecialArg{SpecialKind::LocalIdx, nlocal++, s}); break;
      // an UNROLL dim is a reduce's until the REDUCE_AXIS binds it; unbound, it is the STORE's register tile
      case AxisType::UPCAST: case AxisType::UNROLL: ctx.idx[d] = UOp::make(Ops::UNROLL, ctx.idt, {}, UnrollArg{d, s, d == vdim, {}}); break;
      default: ctx.idx[d] = range(d, RangeKind::Reduce, d);  // unbound until the REDUCE_AXIS that reduces it
    }
  }
  return graph_rewrite(ast_, pm_lowerer(), &ctx, {.name = "lowerer"});
}

}  // namespace tg

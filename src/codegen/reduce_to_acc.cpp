// The reduce_to_acc pass: each REDUCE becomes an accumulator that its loops update.
//
// REDUCE(vals..., RANGE...) -> ASSIGN(DEFINE_ACC(identity, RANGE...), acc op v0 op v1 ...): the
// linearizer opens the ranges around the update and reads the ASSIGN after them. Values fold in pairs
// first, so the accumulator's loop-carried chain is one op per iteration however far the reduce is
// unrolled (a max's compare-and-select is several cycles deep). A REDUCE without ranges (every index
// unrolled) is just its values folded (a float sum's then added to +0).
//
// A float sum of products uses MULACC (an fma where the device has one). Chained through the accumulator
// (acc = fma(a0, b0, acc); acc = fma(a1, b1, acc)...) a product costs one op, but the loop waits an fma's
// latency (4 cycles) per product: that pays only where enough other accumulators of the same loop (a
// matmul's register tile) keep the fma units busy meanwhile. On a CPU with fewer accumulator registers in
// a loop than kChainedRegisters (a layernorm's sum of squares, a dot product), products pair up into
// fmas (fma(a0, b0, a1 * b1)) that fold in pairs before the accumulator, as other values do: 4 products
// cost 6 ops instead of 4, and the loop waits one add instead of four fmas. GPUs hide latency with other
// threads: they always chain.
#include <algorithm>
#include <map>

#include "codegen/passes.h"
#include "renderer/renderer.h"
#include "tg/error.h"

namespace tg {

namespace {

constexpr int64_t kChainedRegisters = 4;

struct AccCtx : RewriteContext {
  int64_t accs = 0;  // accumulators made so far: each gets its own number
  // per loop nest (a REDUCE's ranges), the registers its accumulators fill; empty on a GPU
  std::map<std::vector<const UOp*>, int64_t> registers;
};

std::vector<const UOp*> ranges_of(const UOpPtr& reduce) {
  int n = std::get<ReduceOpArg>(reduce->arg).nvals;
  std::vector<const UOp*> r;
  for (size_t i = static_cast<size_t>(n); i < reduce->src.size(); i++) r.push_back(reduce->src[i].get());
  return r;
}

// A sum of values with products among them, as pairs fused into fmas (a product and its neighbour), the
// pairs folded in pairs.
UOpPtr fold_products_pairwise(const std::vector<UOpPtr>& vals, DType dt) {
  std::vector<UOpPtr> pairs;
  for (size_t i = 0; i < vals.size(); i += 2) {
    if (i + 1 == vals.size()) { pairs.push_back(vals[i]); break; }
    const UOpPtr &a = vals[i], &b = vals[i + 1];
    if (a->op == Ops::MUL) pairs.push_back(UOp::make(Ops::MULACC, dt, {a->src[0], a->src[1], b}));
    else if (b->op == Ops::MUL) pairs.push_back(UOp::make(Ops::MULACC, dt, {b->src[0], b->src[1], a}));
    else pairs.push_back(a->alu(Ops::ADD, b));
  }
  return fold_pairwise(Ops::ADD, std::move(pairs));
}

UOpPtr reduce_to_assign(const Bindings& b) {
  const UOpPtr& u = b["root"];
  auto [op, n] = std::get<ReduceOpArg>(u->arg);
  std::vector<UOpPtr> vals(u->src.begin(), u->src.begin() + n), ranges(u->src.begin() + n, u->src.end());
  DType dt = u->dtype, base = dt.base();
  TG_ASSERT(n > 0, "a REDUCE without values");
  UOpPtr identity = op == Ops::ADD ? UOp::cnst(base, 0) : UOp::cnst(base, base.is_bool() ? 0 : base.min());
  if (dt.count > 1) identity = UOp::make(Ops::VECTORIZE, dt, std::vector<UOpPtr>(dt.count, identity));
  if (ranges.empty()) {
    // a float sum starts from +0, as an accumulator (and torch, NumPy) does: a sum of -0s is +0, which
    // the values folded alone would leave -0 (fuzz seed 1549676: x / (x - x.mean()) gave inf for -inf)
    UOpPtr folded = fold_pairwise(op, std::move(vals));
    return op == Ops::ADD && base.is_float() ? folded->alu(Ops::ADD, identity) : folded;
  }
  std::vector<UOpPtr> acc_src{identity};
  acc_src.insert(acc_src.end(), ranges.begin(), ranges.end());
  UOpPtr acc = UOp::make(Ops::DEFINE_ACC, dt, std::move(acc_src), b.ctx<AccCtx>().accs++);
  bool fma = op == Ops::ADD && (base.scalar == Scalar::Float32 || base.scalar == Scalar::Float64) &&
             std::any_of(vals.begin(), vals.end(), [](const UOpPtr& v) { return v->op == Ops::MUL; });
  if (!fma) return UOp::make(Ops::ASSIGN, dt, {acc, acc->alu(op, fold_pairwise(op, std::move(vals)))});
  const auto& regs = b.ctx<AccCtx>().registers;
  if (auto it = regs.find(ranges_of(u)); it != regs.end() && it->second < kChainedRegisters)
    return UOp::make(Ops::ASSIGN, dt, {acc, acc->alu(op, fold_products_pairwise(vals, dt))});
  UOpPtr chain = acc;
  for (auto& v : vals) chain = v->op == Ops::MUL ? UOp::make(Ops::MULACC, dt, {v->src[0], v->src[1], chain}) : chain->alu(op, v);
  return UOp::make(Ops::ASSIGN, dt, {acc, chain});
}

}  // namespace

UOpPtr reduce_to_acc(const UOpPtr& sink, const Renderer& ren) {
  static const PatternMatcher pm({{UPat::op(Ops::REDUCE), reduce_to_assign, "REDUCE to accumulator"}});
  AccCtx ctx;
  if (!ren.has_local()) {
    int64_t bytes = ren.vector_unit().bytes;  // 0: no vector registers, a lane per register
    for (const UOpPtr& u : sink->toposort())
      if (u->op == Ops::REDUCE && u->src.size() > static_cast<size_t>(std::get<ReduceOpArg>(u->arg).nvals))
        ctx.registers[ranges_of(u)] += bytes > 0 ? std::max<int64_t>(1, (u->dtype.count * u->dtype.itemsize() + bytes - 1) / bytes) : u->dtype.count;
  }
  return graph_rewrite(sink, pm, &ctx, {.name = "reduce_to_acc"});
}

}  // namespace tg

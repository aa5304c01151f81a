// The reduce_to_acc pass: each REDUCE becomes an accumulator that its loops update.
//
// REDUCE(vals..., RANGE...) -> ASSIGN(DEFINE_ACC(identity, RANGE...), acc op v0 op v1 ...): the
// linearizer opens the ranges around the update and reads the ASSIGN after them. A float sum of
// products accumulates with MULACC (an fma where the device has one). Other values fold in pairs first,
// so the accumulator's loop-carried chain is one op per iteration however far the reduce is unrolled
// (a max's compare-and-select is several cycles deep). A REDUCE without ranges (every index unrolled) is
// just its values folded (a float sum's then added to +0).
#include <algorithm>

#include "codegen/passes.h"
#include "tg/error.h"

namespace tg {

namespace {

struct AccCtx : RewriteContext {
  int64_t accs = 0;  // accumulators made so far: each gets its own number
};

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
  // Products chain through the accumulator as fmas: one op each, where a tree would add a multiply.
  UOpPtr chain = acc;
  for (auto& v : vals) chain = v->op == Ops::MUL ? UOp::make(Ops::MULACC, dt, {v->src[0], v->src[1], chain}) : chain->alu(op, v);
  return UOp::make(Ops::ASSIGN, dt, {acc, chain});
}

}  // namespace

UOpPtr reduce_to_acc(const UOpPtr& sink) {
  static const PatternMatcher pm({{UPat::op(Ops::REDUCE), reduce_to_assign, "REDUCE to accumulator"}});
  AccCtx ctx;
  return graph_rewrite(sink, pm, &ctx, {.name = "reduce_to_acc"});
}

}  // namespace tg

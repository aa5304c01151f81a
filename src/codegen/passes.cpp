// The codegen middle, in order (Halide's Lower.cpp habit: one function lists the passes). Each pass's
// result is checked against its stage's spec when SPEC is on.
#include "codegen/passes.h"

#include <bit>

#include "codegen/kernel.h"
#include "codegen/spec.h"
#include "tg/error.h"

namespace tg {

const std::vector<Pass>& codegen_passes() {
  static const std::vector<Pass> passes = {
      {"lowerer", Stage::Lowered, [](const UOpPtr&, const Kernel& k) { return k.lower(); }},
      {"expander", Stage::Expanded, [](const UOpPtr& s, const Kernel&) { return expand(s); }},
      {"vectorize", Stage::Vectorized, [](const UOpPtr& s, const Kernel& k) { return vectorize(s, k.renderer()); }},
      {"reduce_to_acc", Stage::Accumulated, [](const UOpPtr& s, const Kernel& k) { return reduce_to_acc(s, k.renderer()); }},
  };
  return passes;
}

std::vector<UOpPtr> run_passes(const Kernel& k, const std::vector<Pass>& passes) {
  UOpPtr sink = k.ast();
  if (SPEC) verify(sink, Stage::Ast, "the scheduler");
  for (const Pass& p : passes) {
    sink = p.run(sink, k);
    if (SPEC) verify(sink, p.after, p.name);
  }
  return linearize(sink);
}

const PatternMatcher& pm_flatten_sink() {
  static const PatternMatcher pm({{UPat::op(Ops::SINK), [](const Bindings& b) -> UOpPtr {
    const UOpPtr& s = b["root"];
    if (std::none_of(s->src.begin(), s->src.end(), [](const UOpPtr& x) { return x->op == Ops::SINK; })) return nullptr;
    std::vector<UOpPtr> flat;
    for (auto& x : s->src) {
      if (x->op == Ops::SINK) flat.insert(flat.end(), x->src.begin(), x->src.end());
      else flat.push_back(x);
    }
    return UOp::make(Ops::SINK, dtypes::void_, std::move(flat));
  }, "flatten SINK"}});
  return pm;
}

const PatternMatcher& pm_const_gates() {
  using B = const Bindings&;
  static const PatternMatcher pm({
      {UPat(Ops::LOAD, {UPat::var("index"), UPat::cvar("gate")}), [](B b) -> UOpPtr {
         const UOpPtr& u = b["root"];
         if (u->dtype.count != 1) return nullptr;
         return b["gate"]->const_int() ? UOp::make(Ops::LOAD, u->dtype, {b["index"]}) : UOp::cnst(u->dtype, 0);
       }, "constant LOAD gate"},
      {UPat(Ops::STORE, {UPat::var("index"), UPat::var("value"), UPat::cvar("gate")}), [](B b) -> UOpPtr {
         const UOpPtr& u = b["root"];
         return b["gate"]->const_int() ? UOp::make(Ops::STORE, dtypes::void_, {b["index"], b["value"]}, u->arg) : UOp::make(Ops::SINK, dtypes::void_, {});
       }, "constant STORE gate"},
  });
  return pm;
}

UOpPtr fold_pairwise(Ops op, std::vector<UOpPtr> vals) {
  TG_ASSERT(!vals.empty(), "fold_pairwise of no values");
  while (vals.size() > 1) {
    size_t half = std::bit_ceil(vals.size()) / 2;  // value i takes value i + half, if there is one
    std::vector<UOpPtr> next(vals.begin(), vals.begin() + static_cast<std::ptrdiff_t>(half));
    for (size_t i = half; i < vals.size(); i++) next[i - half] = next[i - half]->alu(op, vals[i]);
    vals = std::move(next);
  }
  return vals[0];
}

}  // namespace tg

// The expander pass: an UNROLL that is not the vector dim stands for every index of its dim at once;
// here it becomes one copy of what depends on it per index (a register tile), first dim slowest.
//
// A REDUCE expands its own unrolled dims into more values (REDUCE(v, ..., UNROLL) -> REDUCE(v0, v1, ...));
// a STORE that still depends on UNROLLs (the UPCAST dims) becomes one STORE per index. Bottom-up, so
// a REDUCE has taken its UNROLLs before the STORE above it looks for the rest. The copies are folded
// with the symbolic rules in the same pass: each index's constants simplify its index math, and a gate
// that becomes constant is resolved (pm_const_gates).
#include <unordered_map>

#include "codegen/passes.h"
#include "tg/error.h"

namespace tg {

namespace {

using B = const Bindings&;

bool is_expanded_unroll(const UOpPtr& u) { return u->op == Ops::UNROLL && !std::get<UnrollArg>(u->arg).vector; }

// Every assignment of indices to `unrolls`, first slowest, as substitution maps.
std::vector<std::unordered_map<const UOp*, UOpPtr>> index_combos(const std::vector<UOpPtr>& unrolls) {
  std::vector<std::unordered_map<const UOp*, UOpPtr>> out{{}};
  for (auto& u : unrolls) {
    std::vector<std::unordered_map<const UOp*, UOpPtr>> next;
    for (auto& m : out)
      for (int64_t v = 0; v < std::get<UnrollArg>(u->arg).size; v++) {
        next.push_back(m);
        next.back().emplace(u.get(), UOp::cnst_int(u->dtype, v));
      }
    out = std::move(next);
  }
  return out;
}

// REDUCE(vals..., RANGE..., UNROLL...) -> REDUCE(vals at each index..., RANGE..., [the vector UNROLL])
UOpPtr expand_reduce(B b) {
  const UOpPtr& r = b["root"];
  auto arg = std::get<ReduceOpArg>(r->arg);
  std::vector<UOpPtr> unrolls, rest;
  for (size_t i = static_cast<size_t>(arg.nvals); i < r->src.size(); i++)
    (is_expanded_unroll(r->src[i]) ? unrolls : rest).push_back(r->src[i]);
  if (unrolls.empty()) return nullptr;
  std::vector<UOpPtr> src;
  for (auto& m : index_combos(unrolls))
    for (int i = 0; i < arg.nvals; i++) src.push_back(substitute(r->src[static_cast<size_t>(i)], m));
  int nvals = static_cast<int>(src.size());
  src.insert(src.end(), rest.begin(), rest.end());
  return UOp::make(Ops::REDUCE, r->dtype, std::move(src), ReduceOpArg{arg.op, nvals});
}

// STORE depending on UNROLLs -> SINK(one STORE per index)
UOpPtr expand_store(B b) {
  const UOpPtr& st = b["root"];
  std::vector<UOpPtr> unrolls;
  for (auto& u : st->toposort())
    if (is_expanded_unroll(u)) unrolls.push_back(u);
  if (unrolls.empty()) return nullptr;
  std::sort(unrolls.begin(), unrolls.end(), [](const UOpPtr& a, const UOpPtr& c) { return std::get<UnrollArg>(a->arg).dim < std::get<UnrollArg>(c->arg).dim; });
  std::vector<UOpPtr> stores;
  for (auto& m : index_combos(unrolls)) stores.push_back(substitute(st, m));
  return UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
}

}  // namespace

UOpPtr expand(const UOpPtr& sink) {
  static const PatternMatcher pm = PatternMatcher({
      {UPat::op(Ops::REDUCE), expand_reduce, "expand REDUCE's UNROLLs"},
      {UPat::op(Ops::STORE), expand_store, "expand STORE's UNROLLs"},
  }) + pm_flatten_sink() + pm_const_gates() + symbolic();
  return graph_rewrite(sink, pm, nullptr, {.name = "expander"});
}

}  // namespace tg

// Orders a lowered kernel graph into the list the renderer prints.
//
// The loop nest is a chain: the kernel's outer RANGEs (in axis order), and inside the innermost one the
// reduce's RANGEs. Every UOp lands in one region: before the loops (no range), in the outer loops
// before the reduce, in the reduce body (depends on a reduce range), or after the reduce (uses its
// result). Within a region UOps keep their topological order. The reduce becomes DEFINE_ACC before
// its loops and ASSIGN inside them; the REDUCE node itself is placed after ENDRANGE and names the result.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "codegen/kernel.h"
#include "tg/error.h"

namespace tg {

std::vector<UOpPtr> linearize(const UOpPtr& sink) {
  std::vector<UOpPtr> topo = sink->toposort();
  UOpPtr reduce;
  for (auto& u : topo)
    if (u->op == Ops::REDUCE) {
      TG_ASSERT(!reduce, "one reduce per kernel");
      reduce = u;
    }
  std::unordered_set<const UOp*> reduce_ranges;
  if (reduce)
    for (size_t i = 1; i < reduce->src.size(); i++) reduce_ranges.insert(reduce->src[i].get());

  // per UOp: does it depend on an outer range, a reduce range, the reduce result?
  enum : uint8_t { OUTER = 1, BODY = 2, AFTER = 4 };
  std::unordered_map<const UOp*, uint8_t> flags;
  std::vector<UOpPtr> outer_ranges;
  for (auto& u : topo) {
    uint8_t f = 0;
    if (u->op == Ops::RANGE) {
      if (reduce_ranges.count(u.get())) f = BODY;
      else { f = OUTER; outer_ranges.push_back(u); }
    } else if (u->op == Ops::REDUCE) {
      f = static_cast<uint8_t>((flags[u->src[0].get()] & OUTER) | AFTER);
    } else {
      for (auto& s : u->src) f |= flags[s.get()];
    }
    flags[u.get()] = f;
  }
  std::sort(outer_ranges.begin(), outer_ranges.end(),
            [](const UOpPtr& a, const UOpPtr& b) { return std::get<int64_t>(a->arg) < std::get<int64_t>(b->arg); });

  std::vector<UOpPtr> out;
  auto region = [&](auto pred) {
    for (auto& u : topo)
      if (u->op != Ops::RANGE && u->op != Ops::REDUCE && u->op != Ops::SINK && pred(flags[u.get()])) out.push_back(u);
  };
  region([](uint8_t f) { return f == 0; });
  for (auto& r : outer_ranges) out.push_back(r);
  region([](uint8_t f) { return f == OUTER; });
  if (reduce) {
    Ops op = static_cast<Ops>(std::get<int64_t>(reduce->arg));
    DType dt = reduce->dtype;
    UOpPtr identity = op == Ops::ADD ? UOp::cnst(dt, 0) : UOp::cnst(dt, dt.is_bool() ? 0 : dt.min());
    UOpPtr acc = UOp::make(Ops::DEFINE_ACC, dt, {identity}, int64_t{0});
    out.push_back(acc);
    std::vector<UOpPtr> rr(reduce->src.begin() + 1, reduce->src.end());
    std::sort(rr.begin(), rr.end(), [](const UOpPtr& a, const UOpPtr& b) { return std::get<int64_t>(a->arg) < std::get<int64_t>(b->arg); });
    for (auto& r : rr) out.push_back(r);
    region([](uint8_t f) { return (f & BODY) && !(f & AFTER); });
    out.push_back(UOp::make(Ops::ASSIGN, dt, {acc, acc->alu(op, reduce->src[0])}));
    for (auto it = rr.rbegin(); it != rr.rend(); ++it) out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {*it}));
    out.push_back(reduce);
    region([](uint8_t f) { return (f & AFTER) != 0; });
  }
  for (auto it = outer_ranges.rbegin(); it != outer_ranges.rend(); ++it) out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {*it}));
  return out;
}

}  // namespace tg

// The linearizer (a walk, not a rewrite): orders a kernel graph (after reduce_to_acc) into the list the
// renderer prints.
//
// Every UOp has a scope: the loops it must run inside. A RANGE's scope is itself (and the loops its
// bounds vary in: a reduce's window, lowerer.cpp), a SPECIAL's too (the CPU runs it as a loop, outermost
// but for a BLOCK dim's), a DEFINE_ACC's the scopes of its reduce's ranges (the accumulating ops belong
// in that loop), and an ASSIGN gives its users its scope minus its own ranges (the result is read after
// the loop). Emission is a walk in topological order: a node is emitted as soon as every loop of its
// scope is open; an ASSIGN whose result, and the STOREs that must run in its loop, fit the open loops
// (and whose update's other reduces have run) opens its loop: first what the loop body needs but does
// not vary in it, then the accumulators, the RANGEs (in dim order), the body, and ENDRANGEs.
// Accumulators with the same ranges and outer scope share one loop (a register tile, or reduces of one
// level: see lowerer.cpp), and so does a STORE of a value the loop computes (the lowerer's Row reuse).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "codegen/passes.h"
#include "tg/error.h"

namespace tg {

namespace {

using Scope = std::set<const UOp*>;

int loop_order(const UOpPtr& range) { return std::get<RangeArg>(range->arg).order; }

bool subset(const Scope& a, const Scope& b) { return std::includes(b.begin(), b.end(), a.begin(), a.end()); }

struct Linearizer {
  std::vector<UOpPtr> topo, out;
  std::unordered_map<const UOp*, Scope> scope, exported;
  // where an ASSIGN's loop may open: its result's loops, and those of the STOREs that must run inside
  // it (a Row reuse store varies in the reduce's ranges, which only this loop opens)
  std::unordered_map<const UOp*, Scope> opens_in;
  std::unordered_map<const UOp*, size_t> order;  // position in topo
  std::unordered_set<const UOp*> emitted;  // in scope now (a loop's body leaves it when the loop ends)
  std::unordered_set<const UOp*> placed;   // emitted at least once

  explicit Linearizer(const UOpPtr& sink) : topo(sink->toposort()) {
    for (size_t i = 0; i < topo.size(); i++) order[topo[i].get()] = i;
    for (auto& u : topo) {
      Scope s;
      if (u->op == Ops::RANGE || u->op == Ops::SPECIAL) {
        s.insert(u.get());
        for (auto& x : u->src) s.insert(exported[x.get()].begin(), exported[x.get()].end());  // a window's bounds
      } else if (u->op == Ops::DEFINE_ACC) {
        for (size_t i = 1; i < u->src.size(); i++) s.insert(scope[u->src[i].get()].begin(), scope[u->src[i].get()].end());
      }
      else for (auto& x : u->src) s.insert(exported[x.get()].begin(), exported[x.get()].end());
      scope[u.get()] = s;
      if (u->op == Ops::ASSIGN)
        for (size_t i = 1; i < u->src[0]->src.size(); i++) s.erase(u->src[0]->src[i].get());
      exported[u.get()] = s;
    }
    for (auto& a : topo) {
      if (a->op != Ops::ASSIGN) continue;
      Scope need = exported[a.get()], own;  // own: the reduce's ranges
      for (size_t i = 1; i < a->src[0]->src.size(); i++) own.insert(a->src[0]->src[i].get());
      for (auto& st : topo) {
        if (st->op != Ops::STORE) continue;
        const Scope& ss = scope[st.get()];
        if (std::none_of(ss.begin(), ss.end(), [&](const UOp* x) { return own.count(x) > 0; })) continue;
        for (const UOp* x : ss)
          if (!own.count(x)) need.insert(x);
      }
      opens_in[a.get()] = std::move(need);
    }
  }

  std::vector<UOpPtr> ranges_of(const UOpPtr& assign) const {
    std::vector<UOpPtr> r(assign->src[0]->src.begin() + 1, assign->src[0]->src.end());
    std::sort(r.begin(), r.end(), [](const UOpPtr& a, const UOpPtr& b) { return loop_order(a) < loop_order(b); });
    return r;
  }

  void emit(const UOpPtr& u) {
    if (emitted.insert(u.get()).second) out.push_back(u);
    placed.insert(u.get());
  }

  // Emits every node that `pred` accepts and whose scope the open loops cover.
  template <class Pred> void block(const Scope& open, Pred pred) {
    for (size_t i = 0; i < topo.size(); i++) {
      const UOpPtr& u = topo[i];
      if (emitted.count(u.get()) || !pred(u)) continue;
      if (u->op == Ops::RANGE || u->op == Ops::SPECIAL || u->op == Ops::DEFINE_ACC || u->op == Ops::SINK) continue;
      if (u->op == Ops::ASSIGN) {
        if (subset(opens_in.at(u.get()), open) && reduces_done(u)) loop(u, open);
      } else if (subset(scope.at(u.get()), open) &&
                 std::all_of(u->src.begin(), u->src.end(), [&](const UOpPtr& x) { return emitted.count(x.get()) > 0; })) {
        emit(u);  // not before its sources: a reduce that no open loop varies may still wait for a STORE's loops
      }
    }
  }

  // Whether every other reduce that the accumulator's update reads has run: one whose loop a STORE
  // holds inside a launched dim (a Row reuse store of a value that folded to a constant) runs later
  // than its own scope says (fuzz seed 293455: a log_softmax over a constant)
  bool reduces_done(const UOpPtr& assign) const {
    std::vector<const UOp*> stack{assign->src[1].get()};
    std::unordered_set<const UOp*> seen;
    while (!stack.empty()) {
      const UOp* x = stack.back();
      stack.pop_back();
      if (emitted.count(x) || !seen.insert(x).second) continue;
      if (x->op == Ops::ASSIGN && x != assign.get()) return false;
      for (auto& s : x->src) stack.push_back(s.get());
    }
    return true;
  }

  void loop(const UOpPtr& assign, const Scope& open) {
    // the accumulators sharing this loop: same ranges, same outer scope
    std::vector<UOpPtr> rr = ranges_of(assign), group;
    for (auto& u : topo)
      if (u->op == Ops::ASSIGN && !emitted.count(u.get()) && ranges_of(u) == rr && exported.at(u.get()) == exported.at(assign.get()) &&
          reduces_done(u))
        group.push_back(u);
    // what the loop body needs
    std::unordered_set<const UOp*> body;
    std::vector<const UOp*> stack;
    for (auto& a : group) stack.push_back(a.get());
    // and a STORE inside the loop (the lowerer's Row reuse: a value the reduce computes, kept per element)
    Scope inside = open;
    for (auto& r : rr) inside.insert(r.get());
    for (auto& u : topo)
      if (u->op == Ops::STORE && !placed.count(u.get()) && subset(scope.at(u.get()), inside) &&
          std::any_of(rr.begin(), rr.end(), [&](const UOpPtr& r) { return scope.at(u.get()).count(r.get()) > 0; }))
        stack.push_back(u.get());
    while (!stack.empty()) {
      const UOp* x = stack.back();
      stack.pop_back();
      if (!body.insert(x).second) continue;
      for (auto& s : x->src)
        if (!emitted.count(s.get())) stack.push_back(s.get());
    }
    std::unordered_set<const UOp*> group_set;
    for (auto& a : group) group_set.insert(a.get());
    auto in_body = [&](const UOpPtr& u) { return body.count(u.get()) && !group_set.count(u.get()); };
    block(open, in_body);  // loop-invariant parts, and earlier reduces the body reads
    for (auto& a : group) emit(a->src[0]);
    Scope inner = open;
    size_t first = out.size();
    for (auto& r : rr) {
      out.push_back(r);  // a range may run again in another loop (another outer scope): open it each time
      emitted.insert(r.get());
      inner.insert(r.get());
    }
    block(inner, in_body);
    for (auto& a : group) emit(a);
    for (auto it = rr.rbegin(); it != rr.rend(); ++it) out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {*it}));
    // what ran inside the loop is gone after it: another loop over the same ranges emits it again
    for (size_t i = first; i < out.size(); i++) {
      const UOp* x = out[i].get();
      if (x->op == Ops::ASSIGN || x->op == Ops::ENDRANGE) continue;
      for (auto& r : rr)
        if (scope.at(x).count(r.get())) { emitted.erase(x); break; }
    }
  }
};

}  // namespace

std::vector<UOpPtr> linearize(const UOpPtr& sink) {
  Linearizer L(sink);
  // loop-free nodes first (buffers, constants, reduces that no loop index changes), then the launched
  // dims and the outer loops in dim order, then everything else. The STORE's Row loops open last, after
  // the reduces' loops, so that those run once per row and not once per element.
  L.block({}, [](const UOpPtr&) { return true; });
  std::vector<UOpPtr> outer, row;
  std::set<const UOp*> reduce_ranges;
  for (auto& u : L.topo)
    if (u->op == Ops::DEFINE_ACC)
      for (size_t i = 1; i < u->src.size(); i++) reduce_ranges.insert(u->src[i].get());
  for (auto& u : L.topo) {
    if (u->op == Ops::RANGE && reduce_ranges.count(u.get())) continue;
    if (u->op == Ops::RANGE && std::get<RangeArg>(u->arg).kind == RangeKind::Row) row.push_back(u);
    else if (u->op == Ops::SPECIAL || u->op == Ops::RANGE) outer.push_back(u);
  }
  std::stable_sort(outer.begin(), outer.end(), [](const UOpPtr& a, const UOpPtr& b) {
    // Block ranges, then the launched dims (the CPU's loop over its thread's slice), then the other loops
    auto rank = [](const UOpPtr& u) { return u->op == Ops::SPECIAL ? 1 : std::get<RangeArg>(u->arg).kind == RangeKind::Block ? 0 : 2; };
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a->op == Ops::RANGE && loop_order(a) < loop_order(b);
  });
  std::stable_sort(row.begin(), row.end(), [](const UOpPtr& a, const UOpPtr& b) { return loop_order(a) < loop_order(b); });
  Scope open;
  for (auto& u : outer) {
    L.emit(u);
    open.insert(u.get());
  }
  L.block(open, [](const UOpPtr&) { return true; });
  if (!row.empty()) {
    for (auto& u : row) {
      L.emit(u);
      open.insert(u.get());
    }
    L.block(open, [](const UOpPtr&) { return true; });
    for (auto it = row.rbegin(); it != row.rend(); ++it) L.out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {*it}));
  }
  for (auto it = outer.rbegin(); it != outer.rend(); ++it)
    if ((*it)->op == Ops::RANGE) L.out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {*it}));
  for (auto& u : L.topo)
    TG_ASSERT(u->op == Ops::SINK || u->op == Ops::RANGE || u->op == Ops::SPECIAL || L.placed.count(u.get()),
              "linearize: ", op_name(u->op), " was not placed (its loops never opened)");
  return L.out;
}

}  // namespace tg

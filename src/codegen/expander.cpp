// The passes between lowering and linearizing: vectorize (lane variables -> vector UOps) and
// reduce_to_acc (REDUCE -> DEFINE_ACC + ASSIGN).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "codegen/kernel.h"
#include "tg/error.h"
#include "uop/rewrite.h"

namespace tg {

namespace {

bool is_lane(const UOpPtr& u) { return u->op == Ops::DEFINE_VAR && std::get<VarArg>(u->arg).name.rfind("lane", 0) == 0; }
int64_t lane_width(const UOpPtr& lane) { return std::get<VarArg>(lane->arg).max + 1; }

// Simplification at the top of a node whose sources are simplified already (a whole-graph simplify per
// node would make the pass quadratic).
UOpPtr simplify_top(UOpPtr x) {
  for (int i = 0; i < 16; i++) {
    UOpPtr r = symbolic().rewrite(x);
    if (!r) break;
    x = r;
  }
  return x;
}

UOpPtr broadcast(const UOpPtr& s, int64_t w) { return UOp::make(Ops::VECTORIZE, s->dtype.vec(static_cast<int>(w)), std::vector<UOpPtr>(w, s)); }

UOpPtr fold(Ops op, const std::vector<UOpPtr>& vals) {
  UOpPtr r = vals[0];
  for (size_t i = 1; i < vals.size(); i++) r = r->alu(op, vals[i]);
  return r;
}

}  // namespace

UOpPtr vectorize(const UOpPtr& sink, const Renderer& ren) {
  std::vector<UOpPtr> topo = sink->toposort();
  if (std::none_of(topo.begin(), topo.end(), is_lane)) return sink;
  std::unordered_map<const UOp*, UOpPtr> dep;     // the lane variable a node's value depends on
  std::unordered_map<const UOp*, UOpPtr> scalar;  // lane-free node -> its (rebuilt) replacement
  std::unordered_map<const UOp*, UOpPtr> lifted;  // lane-dependent node -> its vector
  std::vector<UOpPtr> stores;
  std::unordered_set<const UOp*> reads_memory;  // lane-dependent nodes with a loaded value in them

  // u's value at lane l of `lane` (the lane variable replaced by the constant l), each node built once
  std::map<std::pair<const UOp*, int64_t>, std::unordered_map<const UOp*, UOpPtr>> lane_memo;
  auto at_lane = [&](const UOpPtr& u, const UOpPtr& lane, int64_t l) {
    auto& m = lane_memo[{lane.get(), l}];
    std::vector<std::pair<const UOpPtr*, bool>> stack{{&u, false}};
    while (!stack.empty()) {
      auto [x, expanded] = stack.back();
      stack.pop_back();
      if (m.count(x->get())) continue;
      if (*x == lane) { m[x->get()] = UOp::cnst_int(lane->dtype, l); continue; }
      if (auto it = scalar.find(x->get()); it != scalar.end()) { m[x->get()] = it->second; continue; }
      if (!expanded) {
        stack.push_back({x, true});
        for (auto& y : (*x)->src)
          if (!m.count(y.get())) stack.push_back({&y, false});
        continue;
      }
      std::vector<UOpPtr> src;
      for (auto& y : (*x)->src) src.push_back(m.at(y.get()));
      m[x->get()] = simplify_top(UOp::make((*x)->op, (*x)->dtype, std::move(src), (*x)->arg));
    }
    return m.at(u.get());
  };
  auto lane_of = [&](const UOpPtr& s, int64_t l) -> UOpPtr {
    if (!dep.count(s.get())) return scalar.at(s.get());
    const UOpPtr& v = lifted.at(s.get());
    return v->op == Ops::VECTORIZE ? v->src[l] : UOp::make(Ops::GEP, v->dtype.base(), {v}, l);
  };
  auto vec_of = [&](const UOpPtr& s, int64_t w) { return dep.count(s.get()) ? lifted.at(s.get()) : broadcast(scalar.at(s.get()), w); };
  auto can_vector = [&](DType d, int64_t w) {
    return (d.is_float() || d.is_int()) && d.scalar != Scalar::Float16 && w * d.itemsize() <= ren.max_vector_bytes();
  };
  // per lane: the index and validity of a LOAD/STORE, and whether they are one contiguous access
  struct Access { std::vector<UOpPtr> idx, valid; bool contiguous; };
  auto access = [&](const UOpPtr& index, const UOpPtr& valid, const UOpPtr& lane) {
    Access a;
    int64_t w = lane_width(lane);
    a.contiguous = true;
    for (int64_t l = 0; l < w; l++) {
      a.idx.push_back(simplify(at_lane(index->src[1], lane, l)));
      a.valid.push_back(valid ? simplify(at_lane(valid, lane, l)) : nullptr);
      a.contiguous = a.contiguous && a.valid[l] == a.valid[0] && a.idx[l] == simplify(a.idx[0]->add(l));
    }
    return a;
  };

  for (auto& u : topo) {
    if (u->op == Ops::SINK) continue;  // rebuilt from the stores at the end
    UOpPtr lane;
    for (auto& s : u->src)
      if (dep.count(s.get())) lane = dep.at(s.get());
    if (is_lane(u)) lane = u;
    // a REDUCE over its own lanes (a vector UNROLL) gives a lane-free result
    UOpPtr own_lane;
    if (u->op == Ops::REDUCE && is_lane(u->src.back())) own_lane = u->src.back();
    if (u->op == Ops::REDUCE && own_lane) {
      int64_t w = lane_width(own_lane);
      size_t n = reduce_nvals(*u);
      Ops op = reduce_op(*u);
      std::vector<UOpPtr> ranges;
      for (size_t i = n; i + 1 < u->src.size(); i++) ranges.push_back(scalar.at(u->src[i].get()));
      std::vector<UOpPtr> vals;
      if (can_vector(u->dtype, w) && ren.vector_alu(op, u->dtype)) {
        for (size_t i = 0; i < n; i++) vals.push_back(vec_of(u->src[i], w));
        vals.insert(vals.end(), ranges.begin(), ranges.end());
        UOpPtr r = UOp::make(Ops::REDUCE, u->dtype.vec(static_cast<int>(w)), std::move(vals), reduce_arg(op, n));
        std::vector<UOpPtr> lanes;
        for (int64_t l = 0; l < w; l++) lanes.push_back(UOp::make(Ops::GEP, u->dtype, {r}, l));
        scalar[u.get()] = fold(op, lanes);
      } else {  // every lane is one more unrolled value
        for (size_t i = 0; i < n; i++)
          for (int64_t l = 0; l < w; l++) vals.push_back(dep.count(u->src[i].get()) ? lane_of(u->src[i], l) : scalar.at(u->src[i].get()));
        size_t nv = vals.size();
        vals.insert(vals.end(), ranges.begin(), ranges.end());
        scalar[u.get()] = UOp::make(Ops::REDUCE, u->dtype, std::move(vals), reduce_arg(op, nv));
      }
      continue;
    }
    if (!lane) {  // lane-free: rebuilt only when a source changed
      std::vector<UOpPtr> s;
      bool changed = false;
      for (auto& x : u->src) {
        s.push_back(scalar.at(x.get()));
        changed |= s.back() != x;
      }
      scalar[u.get()] = changed ? UOp::make(u->op, u->dtype, std::move(s), u->arg) : u;
      if (u->op == Ops::STORE) stores.push_back(scalar.at(u.get()));
      continue;
    }
    int64_t w = lane_width(lane);
    dep[u.get()] = lane;
    bool reads = u->op == Ops::LOAD || u->op == Ops::REDUCE;
    for (auto& x : u->src) reads |= reads_memory.count(x.get()) > 0;
    if (reads) reads_memory.insert(u.get());
    // index arithmetic (no loaded value in it): each lane its own scalar, simplified with the lane's
    // constant (a vector of indices would only be taken apart again)
    if (!reads && u->op != Ops::INDEX && u->op != Ops::STORE) {
      std::vector<UOpPtr> lanes;
      for (int64_t l = 0; l < w; l++) lanes.push_back(at_lane(u, lane, l));
      lifted[u.get()] = UOp::make(Ops::VECTORIZE, u->dtype.vec(static_cast<int>(w)), std::move(lanes));
      continue;
    }
    auto per_lane = [&]() {
      std::vector<UOpPtr> lanes;
      for (int64_t l = 0; l < w; l++) {
        std::vector<UOpPtr> s;
        for (auto& x : u->src) s.push_back(lane_of(x, l));
        UOpPtr x = UOp::make(u->op, u->dtype, std::move(s), u->arg);
        lanes.push_back(simplify_top(x));
      }
      return UOp::make(Ops::VECTORIZE, u->dtype.vec(static_cast<int>(w)), std::move(lanes));
    };
    switch (u->op) {
      case Ops::DEFINE_VAR: {
        std::vector<UOpPtr> c;
        for (int64_t l = 0; l < w; l++) c.push_back(UOp::cnst_int(u->dtype, l));
        lifted[u.get()] = UOp::make(Ops::VECTORIZE, u->dtype.vec(static_cast<int>(w)), std::move(c));
        break;
      }
      case Ops::INDEX: break;  // read through the LOAD/STORE that uses it
      case Ops::LOAD: {
        const UOpPtr& index = u->src[0];
        UOpPtr valid = u->src.size() > 1 ? u->src[1] : nullptr;
        Access a = access(index, valid, lane);
        const UOpPtr& buf = index->src[0];
        // the lanes that may read are at consecutive indices (a lane that never reads may have any index:
        // the mask drops what the vector read finds there)
        auto never = [&](int64_t l) { return valid && a.valid[l]->is_const(0); };
        int64_t first = 0;
        while (first < w && never(first)) first++;
        bool contiguous_idx = first < w;
        UOpPtr base = contiguous_idx ? simplify(a.idx[first]->add(-first)) : nullptr;
        for (int64_t l = first + 1; l < w && contiguous_idx; l++) contiguous_idx = never(l) || a.idx[l] == simplify(base->add(l));
        if (a.contiguous && can_vector(u->dtype, w)) {
          std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[0]})};
          if (valid) s.push_back(a.valid[0]);
          lifted[u.get()] = UOp::make(Ops::LOAD, u->dtype.vec(static_cast<int>(w)), std::move(s));
        } else if (contiguous_idx && valid && std::holds_alternative<int64_t>(u->arg) && can_vector(u->dtype, w)) {
          // contiguous lanes with lane-dependent validity (padding): one vector read under a lane mask
          // (0 / all ones, an integer of the element's width); the read stays within the readable part
          // of the buffer (the arg), or the renderer falls back to reading lane by lane
          DType mt = mask_dtype(u->dtype);
          std::vector<UOpPtr> mask;
          for (int64_t l = 0; l < w; l++) mask.push_back(simplify_top(a.valid[l]->where(UOp::cnst_int(mt, -1), UOp::cnst_int(mt, 0))));
          UOpPtr m = UOp::make(Ops::VECTORIZE, mt.vec(static_cast<int>(w)), std::move(mask));
          lifted[u.get()] = UOp::make(Ops::LOAD, u->dtype.vec(static_cast<int>(w)), {UOp::make(Ops::INDEX, index->dtype, {buf, base}), m}, u->arg);
        } else {
          std::vector<UOpPtr> lanes;
          for (int64_t l = 0; l < w; l++) {
            std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[l]})};
            if (valid && !a.valid[l]->is_const(1)) s.push_back(a.valid[l]);
            lanes.push_back(valid && a.valid[l]->is_const(0) ? UOp::cnst(u->dtype, 0) : UOp::make(Ops::LOAD, u->dtype, std::move(s)));
          }
          lifted[u.get()] = UOp::make(Ops::VECTORIZE, u->dtype.vec(static_cast<int>(w)), std::move(lanes));
        }
        break;
      }
      case Ops::STORE: {
        const UOpPtr& index = u->src[0];
        UOpPtr valid = u->src.size() > 2 ? u->src[2] : nullptr;
        Access a = access(index, valid, lane);
        const UOpPtr& buf = index->src[0];
        const UOpPtr& val = u->src[1];
        if (a.contiguous && can_vector(val->dtype, w)) {
          std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[0]}), vec_of(val, w)};
          if (valid) s.push_back(a.valid[0]);
          stores.push_back(UOp::make(Ops::STORE, dtypes::void_, std::move(s), u->arg));  // streaming or not
        } else {
          for (int64_t l = 0; l < w; l++) {
            if (valid && a.valid[l]->is_const(0)) continue;
            std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[l]}), lane_of(val, l)};
            if (valid && !a.valid[l]->is_const(1)) s.push_back(a.valid[l]);
            stores.push_back(UOp::make(Ops::STORE, dtypes::void_, std::move(s)));
          }
        }
        break;
      }
      case Ops::REDUCE: {  // the accumulator is a vector, one lane per index of the vector UPCAST
        size_t n = reduce_nvals(*u);
        Ops op = reduce_op(*u);
        if (can_vector(u->dtype, w) && ren.vector_alu(op, u->dtype)) {
          std::vector<UOpPtr> s;
          for (size_t i = 0; i < n; i++) s.push_back(vec_of(u->src[i], w));
          for (size_t i = n; i < u->src.size(); i++) s.push_back(scalar.at(u->src[i].get()));
          lifted[u.get()] = UOp::make(Ops::REDUCE, u->dtype.vec(static_cast<int>(w)), std::move(s), u->arg);
        } else {
          lifted[u.get()] = per_lane();
        }
        break;
      }
      default:
        if ((is_alu(u->op) || u->op == Ops::CAST) && can_vector(u->dtype, w) && ren.vector_alu(u->op, u->dtype) &&
            std::all_of(u->src.begin(), u->src.end(), [&](const UOpPtr& x) { return can_vector(x->dtype, w) && x->dtype.base() == u->dtype.base(); })) {
          std::vector<UOpPtr> s;
          for (auto& x : u->src) s.push_back(vec_of(x, w));
          lifted[u.get()] = UOp::make(u->op, u->dtype.vec(static_cast<int>(w)), std::move(s), u->arg);
        } else {
          lifted[u.get()] = per_lane();
        }
    }
  }
  return UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
}

UOpPtr reduce_to_acc(const UOpPtr& sink) {
  std::unordered_map<const UOp*, UOpPtr> m;
  int64_t next_acc = 0;
  for (auto& u : sink->toposort()) {
    std::vector<UOpPtr> s;
    bool changed = false;
    for (auto& x : u->src) {
      s.push_back(m.at(x.get()));
      changed |= s.back() != x;
    }
    if (u->op != Ops::REDUCE) {
      m[u.get()] = changed ? UOp::make(u->op, u->dtype, std::move(s), u->arg) : u;
      continue;
    }
    size_t n = reduce_nvals(*u);
    Ops op = reduce_op(*u);
    std::vector<UOpPtr> vals(s.begin(), s.begin() + static_cast<long>(n)), ranges(s.begin() + static_cast<long>(n), s.end());
    DType dt = u->dtype, base = dt.base();
    if (ranges.empty()) {  // every index is unrolled: no loop, no accumulator
      m[u.get()] = n ? fold(op, vals) : UOp::cnst(dt, 0);
      TG_ASSERT(n > 0, "a REDUCE without values or ranges");
      continue;
    }
    UOpPtr identity = op == Ops::ADD ? UOp::cnst(base, 0) : UOp::cnst(base, base.is_bool() ? 0 : base.min());
    if (dt.count > 1) identity = broadcast(identity, dt.count);
    std::vector<UOpPtr> acc_src{identity};
    acc_src.insert(acc_src.end(), ranges.begin(), ranges.end());
    UOpPtr acc = UOp::make(Ops::DEFINE_ACC, dt, std::move(acc_src), next_acc++);
    UOpPtr chain = acc;
    bool fma = op == Ops::ADD && (base.scalar == Scalar::Float32 || base.scalar == Scalar::Float64);
    for (auto& v : vals)
      chain = fma && v->op == Ops::MUL ? UOp::make(Ops::MULACC, dt, {v->src[0], v->src[1], chain}) : chain->alu(op, v);
    m[u.get()] = UOp::make(Ops::ASSIGN, dt, {acc, chain});
  }
  return m.at(sink.get());
}

}  // namespace tg

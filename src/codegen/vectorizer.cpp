// The vectorize pass: the vector dim's UNROLL (its lanes) lifted into vector UOps of its width.
//
// Bottom-up: a node that has a lane-dependent source (the UNROLL itself, or a vector made here) is
// lifted when it is reached. Index math (no value from memory in it) is taken lane by lane, each lane's
// scalar folded with its constant, so that a LOAD or STORE can see whether its lanes are consecutive:
// then it is one vector access (under a lane mask when only the gate differs), else one access per
// lane. Values become vector ops where the renderer has them (vector_alu), else VECTORIZEs of scalar
// ops on the lanes (GEP). A REDUCE accumulates a vector, or, over its own lanes (a vector UNROLL of a
// reduce dim), ends with a horizontal fold.
//
// Last, scalar STOREs at consecutive addresses are stored together as one vector. They come from a
// register tile whose vector dim is not the output's contiguous one (a conv's output channels, with
// the pixels of a row in other copies): its lanes go out one by one, and the copies' lanes at the same
// channel are neighbours. One vector store per row of the tile instead of a store per value is less
// work for the core, and far less for LLVM, whose memory passes slow down with the number of stores.
// Likewise the lanes of gathers at consecutive addresses are read as vector loads (group_loads).
#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <unordered_map>

#include "codegen/passes.h"
#include "renderer/renderer.h"
#include "tg/error.h"

namespace tg {

namespace {

struct VectorizeCtx : RewriteContext {
  const Renderer& ren;
  std::unordered_map<const UOp*, bool> reads_memo;
  std::vector<UOpPtr> keep;  // memo keys stay alive, so no address is reused
  explicit VectorizeCtx(const Renderer& r) : ren(r) {}

  // Whether u's value comes from memory (a LOAD or a REDUCE in it): index math does not.
  bool reads(const UOpPtr& u) {
    std::vector<std::pair<const UOpPtr*, bool>> stack{{&u, false}};
    while (!stack.empty()) {
      auto [x, expanded] = stack.back();
      stack.pop_back();
      if (reads_memo.count(x->get())) continue;
      if ((*x)->op == Ops::LOAD || (*x)->op == Ops::REDUCE) { reads_memo[x->get()] = true; keep.push_back(*x); continue; }
      if (!expanded) {
        stack.push_back({x, true});
        for (auto& s : (*x)->src)
          if (!reads_memo.count(s.get())) stack.push_back({&s, false});
        continue;
      }
      bool r = std::any_of((*x)->src.begin(), (*x)->src.end(), [&](const UOpPtr& s) { return reads_memo.at(s.get()); });
      reads_memo[x->get()] = r;
      keep.push_back(*x);
    }
    return reads_memo.at(u.get());
  }
  bool can_vector(DType d, int64_t w) const {
    return (d.is_float() || d.is_int()) && d.scalar != Scalar::Float16 && w * d.itemsize() <= ren.max_vector_bytes();
  }
};

using B = const Bindings&;

bool is_lanes(const UOpPtr& u) { return u->op == Ops::UNROLL && std::get<UnrollArg>(u->arg).vector; }
// The number of lanes u's value has (0: lane-free).
int64_t width(const UOpPtr& u) { return is_lanes(u) ? std::get<UnrollArg>(u->arg).size : u->dtype.count > 1 ? u->dtype.count : 0; }
int64_t width_of_srcs(const UOp& u, size_t begin = 0, size_t end = SIZE_MAX) {
  for (size_t i = begin; i < std::min(end, u.src.size()); i++)
    if (int64_t w = width(u.src[i])) return w;
  return 0;
}
// Lane l of u's value.
UOpPtr lane(const UOpPtr& u, int64_t l) {
  if (is_lanes(u)) return UOp::cnst_int(u->dtype, l);
  if (u->op == Ops::VECTORIZE) return u->src[static_cast<size_t>(l)];
  if (u->dtype.count > 1) return UOp::make(Ops::GEP, u->dtype.base(), {u}, l);
  return u;
}
UOpPtr broadcast(const UOpPtr& s, int64_t w) { return UOp::make(Ops::VECTORIZE, s->dtype.vec(static_cast<int>(w)), std::vector<UOpPtr>(w, s)); }
// u's value as a vector of w lanes.
UOpPtr vec(const UOpPtr& u, int64_t w) {
  if (is_lanes(u)) {
    std::vector<UOpPtr> c;
    for (int64_t l = 0; l < w; l++) c.push_back(UOp::cnst_int(u->dtype, l));
    return UOp::make(Ops::VECTORIZE, u->dtype.vec(static_cast<int>(w)), std::move(c));
  }
  return u->dtype.count > 1 ? u : broadcast(u, w);
}
// u with each lane computed on its own: VECTORIZE(op(lane l of each source) for each lane l)
UOpPtr per_lane(const UOpPtr& u, int64_t w) {
  std::vector<UOpPtr> lanes;
  for (int64_t l = 0; l < w; l++) {
    std::vector<UOpPtr> s;
    for (auto& x : u->src) s.push_back(lane(x, l));
    lanes.push_back(UOp::make(u->op, u->dtype, std::move(s), u->arg));
  }
  return UOp::make(Ops::VECTORIZE, u->dtype.vec(static_cast<int>(w)), std::move(lanes));
}
UOpPtr lift_alu(B b) {
  auto& ctx = b.ctx<VectorizeCtx>();
  const UOpPtr& u = b["root"];
  int64_t w = width_of_srcs(*u);
  if (!w || u->dtype.count > 1) return nullptr;
  // bool lanes are the renderer's to allow (LLVM's vectors of i1)
  auto lanes_fit = [&](DType d) { return ctx.can_vector(d, w) || (d.is_bool() && w <= ctx.ren.max_vector_bytes()); };
  bool vector_op = false;
  if (u->op == Ops::CAST) {  // a mask made a number ((x > 0).float(): a pool's or a relu's backward)
    DType from = u->src[0]->dtype.base();
    vector_op = ctx.reads(u) && lanes_fit(from) && lanes_fit(u->dtype) && ctx.ren.vector_cast(from, u->dtype);
  } else if (is_alu(u->op)) {
    // the type the op computes in: a comparison's operands' (its result is a vector of bools), else its
    // own (WHERE's condition is a vector of bools, whatever made it)
    DType t = u->op == Ops::CMPLT || u->op == Ops::CMPNE ? u->src[0]->dtype.base() : u->dtype;
    auto operand_fits = [&](size_t i) {
      DType x = u->src[i]->dtype.base();
      return u->op == Ops::WHERE && i == 0 ? x.is_bool() : x == t;
    };
    vector_op = ctx.reads(u) && lanes_fit(t) && ctx.ren.vector_alu(u->op, t);
    for (size_t i = 0; i < u->src.size() && vector_op; i++) vector_op = operand_fits(i);
  }
  if (!vector_op) return per_lane(u, w);  // index math, or an op the device has no vector form of
  std::vector<UOpPtr> s;
  for (auto& x : u->src) s.push_back(vec(x, w));
  return UOp::make(u->op, u->dtype.vec(static_cast<int>(w)), std::move(s), u->arg);
}

// Each lane's index and gate, and whether they make one contiguous access with one gate.
struct Access {
  std::vector<UOpPtr> idx, valid;
  bool contiguous = true;
};
Access access(const UOpPtr& idx, const UOpPtr& valid, int64_t w) {
  Access a;
  for (int64_t l = 0; l < w; l++) {
    a.idx.push_back(lane(idx, l));
    a.valid.push_back(valid ? lane(valid, l) : nullptr);
    a.contiguous = a.contiguous && a.valid[l] == a.valid[0] && a.idx[l] == simplify(a.idx[0]->add(l));
  }
  return a;
}

UOpPtr lift_load(B b) {
  auto& ctx = b.ctx<VectorizeCtx>();
  const UOpPtr& u = b["root"];
  const UOpPtr &index = b["index"], &buf = index->src[0], &idx = index->src[1];
  UOpPtr valid = u->src.size() > 1 ? u->src[1] : nullptr;
  int64_t w = width(idx) ? width(idx) : valid ? width(valid) : 0;
  if (!w || u->dtype.count > 1) return nullptr;
  Access a = access(idx, valid, w);
  DType vdt = u->dtype.vec(static_cast<int>(w));
  if (a.contiguous && ctx.can_vector(u->dtype, w)) {
    std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[0]})};
    if (valid) s.push_back(a.valid[0]);
    return UOp::make(Ops::LOAD, vdt, std::move(s));
  }
  // the lanes that may read at consecutive indices (a lane that never reads may have any index: the
  // mask drops what the vector read finds there)
  auto never = [&](int64_t l) { return valid && a.valid[l]->is_const(0); };
  int64_t first = 0;
  while (first < w && never(first)) first++;
  bool contiguous_idx = first < w;
  UOpPtr base = contiguous_idx ? simplify(a.idx[first]->add(-first)) : nullptr;
  for (int64_t l = first + 1; l < w && contiguous_idx; l++) contiguous_idx = never(l) || a.idx[l] == simplify(base->add(l));
  if (contiguous_idx && valid && std::holds_alternative<LoadArg>(u->arg) && ctx.can_vector(u->dtype, w)) {
    // one vector read under a lane mask (0 / all ones, an integer of the element's width); the read
    // stays within the readable part of the buffer (the arg), or the renderer reads lane by lane
    DType mt = mask_dtype(u->dtype);
    std::vector<UOpPtr> mask;
    for (int64_t l = 0; l < w; l++) mask.push_back(simplify(a.valid[l]->where(UOp::cnst_int(mt, -1), UOp::cnst_int(mt, 0))));
    UOpPtr m = UOp::make(Ops::VECTORIZE, mt.vec(static_cast<int>(w)), std::move(mask));
    return UOp::make(Ops::LOAD, vdt, {UOp::make(Ops::INDEX, index->dtype, {buf, base}), m}, u->arg);
  }
  std::vector<UOpPtr> lanes;
  for (int64_t l = 0; l < w; l++) {
    std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[l]})};
    if (valid && !a.valid[l]->is_const(1)) s.push_back(a.valid[l]);
    lanes.push_back(never(l) ? UOp::cnst(u->dtype, 0) : UOp::make(Ops::LOAD, u->dtype, std::move(s)));
  }
  return UOp::make(Ops::VECTORIZE, vdt, std::move(lanes));
}

UOpPtr lift_store(B b) {
  auto& ctx = b.ctx<VectorizeCtx>();
  const UOpPtr& u = b["root"];
  const UOpPtr &index = b["index"], &buf = index->src[0], &idx = index->src[1], &val = u->src[1];
  UOpPtr valid = u->src.size() > 2 ? u->src[2] : nullptr;
  // lifted when its address or gate has lanes (a STORE of a vector at one address is a vector store)
  int64_t w = std::max(width(idx), valid ? width(valid) : 0);
  if (!w) return nullptr;
  Access a = access(idx, valid, w);
  if (a.contiguous && ctx.can_vector(val->dtype.base(), w)) {
    std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[0]}), vec(val, w)};
    if (valid) s.push_back(a.valid[0]);
    return UOp::make(Ops::STORE, dtypes::void_, std::move(s), u->arg);  // streaming or not
  }
  std::vector<UOpPtr> stores;
  for (int64_t l = 0; l < w; l++) {
    if (valid && a.valid[l]->is_const(0)) continue;
    std::vector<UOpPtr> s{UOp::make(Ops::INDEX, index->dtype, {buf, a.idx[l]}), lane(val, l)};
    if (valid && !a.valid[l]->is_const(1)) s.push_back(a.valid[l]);
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, std::move(s), StoreArg{false}));
  }
  return UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
}

// a REDUCE over its own lanes (a vector UNROLL, last): a lane-free result
UOpPtr lift_reduce_own_lanes(B b) {
  auto& ctx = b.ctx<VectorizeCtx>();
  const UOpPtr& u = b["root"];
  if (!is_lanes(u->src.back())) return nullptr;
  auto [op, n] = std::get<ReduceOpArg>(u->arg);
  int64_t w = width(u->src.back());
  std::vector<UOpPtr> ranges(u->src.begin() + n, u->src.end() - 1), vals;
  if (ctx.can_vector(u->dtype, w) && ctx.ren.vector_alu(op, u->dtype)) {
    for (int i = 0; i < n; i++) vals.push_back(vec(u->src[static_cast<size_t>(i)], w));
    vals.insert(vals.end(), ranges.begin(), ranges.end());
    UOpPtr r = UOp::make(Ops::REDUCE, u->dtype.vec(static_cast<int>(w)), std::move(vals), ReduceOpArg{op, n});
    // fold_pairwise's order (lane i with lane i + w/2, halving), a vector op a step while the width is
    // a power of two: 4 ops of shrinking width for 16 lanes, where lane by lane is 15 scalar ops and their
    // extracts (other widths fold lane by lane, in that order too)
    while (w > 2 && std::has_single_bit(static_cast<uint64_t>(w))) {
      std::vector<UOpPtr> lo, hi;
      for (int64_t l = 0; l < w / 2; l++) {
        lo.push_back(UOp::make(Ops::GEP, u->dtype, {r}, l));
        hi.push_back(UOp::make(Ops::GEP, u->dtype, {r}, l + w / 2));
      }
      DType half = u->dtype.vec(static_cast<int>(w / 2));
      r = UOp::make(Ops::VECTORIZE, half, std::move(lo))->alu(op, UOp::make(Ops::VECTORIZE, half, std::move(hi)));
      w /= 2;
    }
    std::vector<UOpPtr> lanes;
    for (int64_t l = 0; l < w; l++) lanes.push_back(UOp::make(Ops::GEP, u->dtype, {r}, l));
    return fold_pairwise(op, std::move(lanes));
  }
  for (int i = 0; i < n; i++)  // every lane is one more value
    for (int64_t l = 0; l < w; l++) vals.push_back(lane(u->src[static_cast<size_t>(i)], l));
  int nv = static_cast<int>(vals.size());
  vals.insert(vals.end(), ranges.begin(), ranges.end());
  return UOp::make(Ops::REDUCE, u->dtype, std::move(vals), ReduceOpArg{op, nv});
}

// a REDUCE of lane-dependent values: a vector accumulator, one lane per index of the vector UPCAST
UOpPtr lift_reduce(B b) {
  auto& ctx = b.ctx<VectorizeCtx>();
  const UOpPtr& u = b["root"];
  auto [op, n] = std::get<ReduceOpArg>(u->arg);
  int64_t w = width_of_srcs(*u, 0, static_cast<size_t>(n));
  if (!w || u->dtype.count > 1) return nullptr;
  if (!ctx.can_vector(u->dtype, w) || !ctx.ren.vector_alu(op, u->dtype)) return per_lane(u, w);
  std::vector<UOpPtr> s;
  for (size_t i = 0; i < u->src.size(); i++) s.push_back(i < static_cast<size_t>(n) ? vec(u->src[i], w) : u->src[i]);
  return UOp::make(Ops::REDUCE, u->dtype.vec(static_cast<int>(w)), std::move(s), u->arg);
}

std::vector<Ops> lifted_ops() {
  std::vector<Ops> ops{Ops::CAST, Ops::BITCAST};
  ops.insert(ops.end(), alu_ops().begin(), alu_ops().end());
  return ops;
}

// the symbolic rules on scalars only: the vectors here are made for the renderer, not to be folded
UOpPtr simplify_scalar(B b) {
  const UOpPtr& u = b["root"];
  if (u->dtype.count > 1 || std::any_of(u->src.begin(), u->src.end(), [](const UOpPtr& s) { return s->dtype.count > 1 || is_lanes(s); })) return nullptr;
  return symbolic().rewrite(u);
}

// The loops u's value varies in: the RANGEs (and SPECIALs) under it that no REDUCE under it closes.
class OpenRanges {
 public:
  const std::set<const UOp*>& of(const UOpPtr& root) {
    if (auto it = memo_.find(root.get()); it != memo_.end()) return it->second;  // no walk of a known graph
    for (const UOpPtr& u : root->toposort()) {
      if (memo_.count(u.get())) continue;
      std::set<const UOp*> s;
      size_t nvals = u->op == Ops::REDUCE ? static_cast<size_t>(std::get<ReduceOpArg>(u->arg).nvals) : u->src.size();
      for (size_t i = 0; i < nvals; i++) s.insert(memo_.at(u->src[i].get()).begin(), memo_.at(u->src[i].get()).end());
      if (u->op == Ops::REDUCE)
        for (size_t i = nvals; i < u->src.size(); i++) s.erase(u->src[i].get());
      if (u->op == Ops::RANGE || u->op == Ops::SPECIAL) s.insert(u.get());
      memo_[u.get()] = std::move(s);
      keep_.push_back(u);
    }
    return memo_.at(root.get());
  }

 private:
  std::unordered_map<const UOp*, std::set<const UOp*>> memo_;
  std::vector<UOpPtr> keep_;  // memo keys stay alive, so no address is reused
};

// Where a LOAD's or STORE's INDEX points, `offset` elements further on: (buffer, index), the key under
// which group_stores and group_loads find accesses at consecutive addresses.
std::pair<const UOp*, const UOp*> address(const UOpPtr& index, int64_t offset) {
  const UOpPtr& idx = index->src[1];
  return {index->src[0].get(), offset ? simplify(idx->add(offset)).get() : idx.get()};
}

// A run of n accesses at consecutive addresses in vectors as wide as fit (powers of two, at most
// `widest` lanes): the (first, lanes) of each piece of two lanes or more.
std::vector<std::pair<size_t, size_t>> vector_pieces(size_t n, int64_t widest) {
  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t k = 0; k < n;) {
    size_t w = 1;
    while (static_cast<int64_t>(w * 2) <= widest && k + w * 2 <= n) w *= 2;
    if (w > 1) pieces.emplace_back(k, w);
    k += w;
  }
  return pieces;
}

// A scalar STORE that may join a vector store: ungated, not streaming, of a type that has vectors.
bool groupable(const UOpPtr& st, const VectorizeCtx& ctx) {
  return st->op == Ops::STORE && st->src.size() == 2 && st->src[0]->op == Ops::INDEX && st->src[1]->dtype.count == 1 &&
         st->arg == Arg(StoreArg{false}) && ctx.can_vector(st->src[1]->dtype, 2);
}

// The sink's scalar STOREs at consecutive addresses of a buffer, in runs of a power of two lanes (as
// wide as the renderer's vectors), as vector STOREs of their values. Stores join only when they sit in
// the same loops (their addresses and values vary in the same ones), where the vector store then sits.
UOpPtr group_stores(B b) {
  const UOpPtr& sink = b["root"];
  auto& ctx = b.ctx<VectorizeCtx>();
  auto key = [](const UOpPtr& st, int64_t offset) { return address(st->src[0], offset); };
  std::map<std::pair<const UOp*, const UOp*>, size_t> at;  // (buffer, index) -> position in the sink
  for (size_t i = 0; i < sink->src.size(); i++)
    if (groupable(sink->src[i], ctx)) at[key(sink->src[i], 0)] = i;
  if (at.size() < 2) return nullptr;
  OpenRanges open;
  auto loops = [&](const UOpPtr& st) {
    std::set<const UOp*> s = open.of(st->src[0]->src[1]);
    const std::set<const UOp*>& of_value = open.of(st->src[1]);
    s.insert(of_value.begin(), of_value.end());
    return s;
  };
  std::unordered_map<size_t, UOpPtr> replaced;  // position -> its run's vector store, or nullptr: in one
  for (size_t i = 0; i < sink->src.size(); i++) {
    const UOpPtr& first = sink->src[i];
    // a run starts at a store with no neighbour below it
    if (!groupable(first, ctx) || at.at(key(first, 0)) != i || at.count(key(first, -1))) continue;
    std::set<const UOp*> in = loops(first);
    std::vector<size_t> run{i};
    for (auto next = at.find(key(first, 1)); next != at.end(); next = at.find(key(first, static_cast<int64_t>(run.size())))) {
      const UOpPtr& st = sink->src[next->second];
      if (st->src[1]->dtype != first->src[1]->dtype || loops(st) != in) break;
      run.push_back(next->second);
    }
    for (auto [k, w] : vector_pieces(run.size(), ctx.ren.max_vector_bytes() / first->src[1]->dtype.itemsize())) {
      std::vector<UOpPtr> vals;
      for (size_t l = 0; l < w; l++) vals.push_back(sink->src[run[k + l]]->src[1]), replaced[run[k + l]] = nullptr;
      const UOpPtr& head = sink->src[run[k]];
      DType vdt = vals[0]->dtype.vec(static_cast<int>(w));
      replaced[run[k]] = UOp::make(Ops::STORE, dtypes::void_, {head->src[0], UOp::make(Ops::VECTORIZE, vdt, std::move(vals))}, head->arg);
    }
  }
  if (replaced.empty()) return nullptr;
  std::vector<UOpPtr> out;
  for (size_t i = 0; i < sink->src.size(); i++) {
    auto r = replaced.find(i);
    if (r == replaced.end()) out.push_back(sink->src[i]);
    else if (r->second) out.push_back(r->second);
  }
  return UOp::make(Ops::SINK, sink->dtype, std::move(out), sink->arg);
}

// A scalar LOAD that may join a vector load: of a type that has vectors, and a lane of gathers only
// (every use a VECTORIZE of several values; a broadcast's scalar is best read as one). Gated loads join
// loads under the same gate (a padded tile's row of columns): one branch around a vector read.
bool groupable_load(const UOpPtr& ld, const std::vector<const UOp*>& uses, const VectorizeCtx& ctx) {
  auto gathers = [](const UOp* v) {
    return v->op == Ops::VECTORIZE && std::any_of(v->src.begin(), v->src.end(), [v](const UOpPtr& s) { return s != v->src[0]; });
  };
  return ld->op == Ops::LOAD && ld->src[0]->op == Ops::INDEX && ld->dtype.count == 1 && ctx.can_vector(ld->dtype, 2) &&
         !uses.empty() && std::all_of(uses.begin(), uses.end(), gathers);
}

// The gathers' lanes at consecutive addresses of a buffer, in runs of a power of two lanes (as wide as
// the renderer's vectors), read as vector LOADs whose lanes (GEP) the gathers take. A transposing tile
// gathers each vector from as many rows as it has lanes, and its other copies gather the next element of
// each row: so each row's elements are one vector load, and the gathers become shuffles of those
// vectors. A stride-2 gather (a 2x2 pool's even and odd columns) becomes one load and two shuffles.
// Loads join only when they sit in the same loops (their addresses vary in the same ones).
UOpPtr group_loads(B b) {
  const UOpPtr& sink = b["root"];
  auto& ctx = b.ctx<VectorizeCtx>();
  std::vector<UOpPtr> order = sink->toposort();
  std::unordered_map<const UOp*, std::vector<const UOp*>> uses;
  for (const UOpPtr& u : order)
    for (const UOpPtr& s : u->src) uses[s.get()].push_back(u.get());
  auto key = [](const UOpPtr& ld, int64_t offset) {
    return std::tuple_cat(address(ld->src[0], offset), std::make_tuple(ld->src.size() > 1 ? ld->src[1].get() : nullptr));
  };
  std::map<std::tuple<const UOp*, const UOp*, const UOp*>, const UOpPtr*> at;  // (buffer, index, gate) -> its load
  std::vector<const UOpPtr*> loads;
  for (const UOpPtr& u : order)
    if (groupable_load(u, uses[u.get()], ctx)) at[key(u, 0)] = &u, loads.push_back(&u);
  if (at.size() < 2) return nullptr;
  OpenRanges open;
  std::unordered_map<const UOp*, UOpPtr> lanes;  // a grouped load -> its lane of the vector load
  for (const UOpPtr* ld : loads) {
    const UOpPtr& first = *ld;
    // a run starts at a load with no neighbour below it
    if (at.at(key(first, 0)) != ld || at.count(key(first, -1))) continue;
    const std::set<const UOp*>& in = open.of(first->src[0]->src[1]);
    std::vector<const UOpPtr*> run{&first};
    for (auto next = at.find(key(first, 1)); next != at.end(); next = at.find(key(first, static_cast<int64_t>(run.size())))) {
      if (open.of((*next->second)->src[0]->src[1]) != in) break;
      run.push_back(next->second);
    }
    for (auto [k, w] : vector_pieces(run.size(), ctx.ren.max_vector_bytes() / first->dtype.itemsize())) {
      const UOpPtr& head = *run[k];
      UOpPtr v = UOp::make(Ops::LOAD, head->dtype.vec(static_cast<int>(w)), head->src, head->arg);
      for (size_t l = 0; l < w; l++) lanes[run[k + l]->get()] = UOp::make(Ops::GEP, head->dtype, {v}, static_cast<int64_t>(l));
    }
  }
  return lanes.empty() ? nullptr : substitute(sink, lanes);
}

}  // namespace

UOpPtr vectorize(const UOpPtr& sink, const Renderer& ren) {
  static const PatternMatcher pm = PatternMatcher({
      {UPat::ops_of(lifted_ops()), lift_alu, "lift ALU"},
      {UPat(Ops::LOAD, {UPat::op(Ops::INDEX, "index")}), lift_load, "lift LOAD"},
      {UPat(Ops::LOAD, {UPat::op(Ops::INDEX, "index"), UPat::any()}), lift_load, "lift gated LOAD"},
      {UPat(Ops::STORE, {UPat::op(Ops::INDEX, "index"), UPat::any()}), lift_store, "lift STORE"},
      {UPat(Ops::STORE, {UPat::op(Ops::INDEX, "index"), UPat::any(), UPat::any()}), lift_store, "lift gated STORE"},
      {UPat::op(Ops::REDUCE), lift_reduce_own_lanes, "REDUCE over its lanes"},
      {UPat::op(Ops::REDUCE), lift_reduce, "lift REDUCE"},
      {UPat(Ops::GEP, {UPat::op(Ops::VECTORIZE, "v")}), [](B b) { return b["v"]->src[static_cast<size_t>(std::get<int64_t>(b["root"]->arg))]; }, "GEP of VECTORIZE"},
      {UPat::any(), simplify_scalar, "symbolic"},
  }) + pm_flatten_sink();
  VectorizeCtx ctx(ren);
  static const PatternMatcher pm_group({{UPat::op(Ops::SINK), group_stores, "consecutive STOREs as a vector STORE"},
                                        {UPat::op(Ops::SINK), group_loads, "gathered lanes at consecutive addresses as vector LOADs"}});
  return graph_rewrite(graph_rewrite(sink, pm, &ctx, {.name = "vectorize"}), pm_group, &ctx, {.name = "vectorize: group stores and loads"});
}

}  // namespace tg

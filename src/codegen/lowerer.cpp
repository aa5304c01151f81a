// Kernel::lower: the AST, in kernel dims, as UOps over loop indices.
//
// Every AST node is lowered in a context: one index UOp per dim. GLOBAL and LOCAL dims index with
// SPECIAL (launched) or outer RANGE loops; a REDUCE_AXIS gives the dims it reduces fresh RANGEs of its
// own (two reduces over one axis are two loops) and lowers its source once per index of its UNROLL
// dims; the STORE is lowered once per index of the UPCAST dims. The vector dim, if any, is a lane
// variable (DEFINE_VAR "lane...") that vectorize() lifts into vector UOps later. A BLOCK dim is an
// outer RANGE like a GLOBAL one, numbered so that the linearizer opens it outside the GLOBAL loops;
// the STORE then adds what the earlier blocks left in the output (read as 0 in the first block).
// A STORE into a large output that the kernel writes once (no BLOCK) is marked streaming (arg 1): the
// renderer may write it around the caches (kStreamingBytes).
#include <algorithm>
#include <map>

#include "codegen/kernel.h"
#include "tg/error.h"

namespace tg {

namespace {
// Every assignment of values to `dims` (sizes from `full`), as lists of constants, first dim slowest.
std::vector<std::vector<int64_t>> combos(const std::vector<int>& dims, const Shape& full) {
  std::vector<std::vector<int64_t>> out{{}};
  for (int d : dims) {
    std::vector<std::vector<int64_t>> next;
    for (auto& c : out)
      for (int64_t v = 0; v < full[d]; v++) {
        next.push_back(c);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}
// Outputs from this size on are written around the caches where the renderer can (non-temporal stores):
// they would not stay in a typical last-level cache anyway, and a write that skips the cache does not
// read each line in first, so a large elementwise kernel moves a third less memory.
constexpr int64_t kStreamingBytes = int64_t{32} << 20;
}  // namespace

UOpPtr Kernel::lower() const {
  struct Lowering {
    const Kernel& k;
    Shape full;
    DType idt;
    int vdim;
    std::map<const UOp*, size_t> view_index;
    // keyed by the index UOps themselves (held, so no freed node's address is reused as a key)
    std::map<std::pair<const UOp*, std::vector<UOpPtr>>, UOpPtr> memo;
    std::map<const UOp*, int> reduce_id;  // REDUCE_AXIS -> its number, for unique range names
    std::map<size_t, int64_t> readable;     // view -> the elements of its buffer it may read (real_size)

    // a gated load's arg: how much of its buffer the view may read ([0, real_size)), so that a vector
    // of it can read masked lanes too (vectorize); once per view, not once per upcast index
    Arg readable_arg(size_t view) {
      auto it = readable.find(view);
      if (it == readable.end()) it = readable.emplace(view, k.sts_[view].real_size()).first;
      return Arg{it->second};
    }

    UOpPtr zero() const { return UOp::cnst_int(idt, 0); }
    std::pair<UOpPtr, UOpPtr> indexed(const UOpPtr& view, const std::vector<UOpPtr>& idx) const {
      const ShapeTracker& st = k.sts_[view_index.at(view.get())];
      std::vector<UOpPtr> ix;
      for (size_t d = 0; d < idx.size(); d++) ix.push_back(st.shape()[d] == 1 ? zero() : idx[d]);
      return st.to_indexed_uops(ix, idt);
    }
    // the dims a REDUCE_AXIS reduces: reduce-typed dims whose AST axes are all among its axes
    std::vector<int> reduced_dims(const ReduceArg& ra) const {
      std::vector<int> out;
      for (int d = 0; d < k.shape_len(); d++) {
        AxisType t = k.types_[d];
        if (t != AxisType::REDUCE && t != AxisType::UNROLL && t != AxisType::GROUP_REDUCE) continue;
        bool all = true;
        for (int a : k.origin_[d]) all &= std::count(ra.axes.begin(), ra.axes.end(), a) > 0;
        if (all) out.push_back(d);
      }
      return out;
    }

    UOpPtr node(const UOpPtr& u, const std::vector<UOpPtr>& idx) {
      auto mk = std::make_pair(u.get(), idx);
      if (auto it = memo.find(mk); it != memo.end()) return it->second;
      UOpPtr r;
      switch (u->op) {
        case Ops::CONST: {
          auto [i, valid] = indexed(u->src[0], idx);
          UOpPtr c = UOp::make(Ops::CONST, u->dtype, {}, u->arg);
          r = valid->is_const(1) ? c : valid->where(c, UOp::cnst(u->dtype, 0));
          break;
        }
        case Ops::LOAD: {
          auto [i, valid] = indexed(u->src[1], idx);
          if (valid->is_const(0)) { r = UOp::cnst(u->dtype, 0); break; }
          // a gather's data-dependent load: an offset read from another buffer, and whether it is in range
          if (u->src.size() == 4) { i = i->add(node(u->src[2], idx)->cast(idt)); valid = valid->and_(node(u->src[3], idx)); }
          UOpPtr index = UOp::make(Ops::INDEX, u->src[0]->dtype, {u->src[0], i});
          Arg bound = u->src.size() == 4 ? Arg{} : readable_arg(view_index.at(u->src[1].get()));  // a gather's is unknown
          r = valid->is_const(1) ? UOp::make(Ops::LOAD, u->dtype, {index}) : UOp::make(Ops::LOAD, u->dtype, {index, valid}, bound);
          break;
        }
        case Ops::STORE: {
          auto [i, valid] = indexed(u->src[1], idx);
          if (valid->is_const(0)) break;  // wholly in the padding (PADTO): nothing to store
          UOpPtr index = UOp::make(Ops::INDEX, u->src[0]->dtype, {u->src[0], i}), value = node(u->src[2], idx);
          for (int d : k.dims_of(AxisType::BLOCK)) {  // the sum so far (apply_opt allows one BLOCK dim)
            UOpPtr earlier = idx[d]->ge(1);
            value = value->add(UOp::make(Ops::LOAD, value->dtype, {index, valid->is_const(1) ? earlier : valid->and_(earlier)},
                                         readable_arg(k.output_view())));
          }
          std::vector<UOpPtr> s{index, value};
          if (!valid->is_const(1)) s.push_back(valid);  // padded output (PADTO): store only the real part
          bool streaming = valid->is_const(1) && k.dims_of(AxisType::BLOCK).empty() &&
                           std::get<int64_t>(readable_arg(k.output_view())) * u->src[2]->dtype.itemsize() >= kStreamingBytes;
          r = UOp::make(Ops::STORE, dtypes::void_, std::move(s), streaming ? Arg{int64_t{1}} : Arg{});
          break;
        }
        case Ops::REDUCE_AXIS: {
          const ReduceArg& ra = std::get<ReduceArg>(u->arg);
          int id = reduce_id.emplace(u.get(), static_cast<int>(reduce_id.size())).first->second;
          std::vector<UOpPtr> inner = idx, ranges, unrolled_vals;
          std::vector<int> unroll;
          UOpPtr lane;
          for (int d : reduced_dims(ra)) {
            if (full[d] == 1) inner[d] = zero();
            else if (d == vdim) inner[d] = lane = UOp::make(Ops::DEFINE_VAR, idt, {}, VarArg{"lane" + std::to_string(id + 1), 0, full[d] - 1});
            else if (k.types_[d] == AxisType::UNROLL) unroll.push_back(d);
            else {
              inner[d] = UOp::make(Ops::RANGE, idt, {zero(), UOp::cnst_int(idt, full[d])}, int64_t{100 * (id + 1) + d});
              ranges.push_back(inner[d]);
            }
          }
          std::vector<UOpPtr> s;
          for (auto& c : combos(unroll, full)) {
            for (size_t j = 0; j < unroll.size(); j++) inner[unroll[j]] = UOp::cnst_int(idt, c[j]);
            s.push_back(node(u->src[0], inner));
          }
          size_t nvals = s.size();
          s.insert(s.end(), ranges.begin(), ranges.end());
          if (lane) s.push_back(lane);
          r = UOp::make(Ops::REDUCE, u->dtype, std::move(s), reduce_arg(ra.op, nvals));
          break;
        }
        case Ops::VIEW: case Ops::DEFINE_GLOBAL: r = u; break;
        default: {
          std::vector<UOpPtr> s;
          for (auto& x : u->src) s.push_back(node(x, idx));
          r = UOp::make(u->op, u->dtype, std::move(s), u->arg);
        }
      }
      memo.emplace(std::move(mk), r);
      return r;
    }
  };

  Lowering L{*this, full_shape(), index_dtype(), vector_dim(), {}, {}, {}, {}};
  for (size_t i = 0; i < views_.size(); i++) L.view_index.emplace(views_[i].get(), i);
  int n = shape_len(), nspecial = 0, nlocal = 0;
  std::vector<UOpPtr> idx(n, L.zero());
  // the outer RANGEs' numbers give their loop order: BLOCK dims outside the GLOBAL ones
  std::vector<int64_t> loop_number(n);
  int64_t nloops = 0;
  for (AxisType t : {AxisType::BLOCK, AxisType::GLOBAL})
    for (int d : dims_of(t)) loop_number[d] = nloops++;
  auto outer_range = [&](int d) { return UOp::make(Ops::RANGE, L.idt, {L.zero(), UOp::cnst_int(L.idt, L.full[d])}, loop_number[d]); };
  std::vector<int> upcast;
  for (int d = 0; d < n; d++) {
    int64_t s = L.full[d];
    switch (types_[d]) {
      case AxisType::GLOBAL:
        if (s == 1) break;
        if (nspecial < ren_->global_max_dims())
          idx[d] = UOp::make(Ops::SPECIAL, L.idt, {}, VarArg{"gidx" + std::to_string(nspecial++), 0, s - 1});
        else
          idx[d] = outer_range(d);
        break;
      case AxisType::BLOCK:
        if (s > 1) idx[d] = outer_range(d);
        break;
      case AxisType::LOCAL:
        if (s > 1) idx[d] = UOp::make(Ops::SPECIAL, L.idt, {}, VarArg{"lidx" + std::to_string(nlocal++), 0, s - 1});
        break;
      case AxisType::UPCAST:
        if (s == 1) break;
        if (d == L.vdim) idx[d] = UOp::make(Ops::DEFINE_VAR, L.idt, {}, VarArg{"lane0", 0, s - 1});
        else upcast.push_back(d);
        break;
      default: break;  // reduce dims: 0 outside their reduce
    }
  }
  std::vector<UOpPtr> stores;
  for (auto& c : combos(upcast, L.full)) {
    for (size_t j = 0; j < upcast.size(); j++) idx[upcast[j]] = UOp::cnst_int(L.idt, c[j]);
    if (UOpPtr st = L.node(ast_->src[0], idx)) stores.push_back(st);
  }
  return UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
}

}  // namespace tg

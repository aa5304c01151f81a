#include "codegen/kernel.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "tg/error.h"
#include "uop/rewrite.h"

namespace tg {

namespace {
const ShapeTracker& st_of(const UOpPtr& view) {
  return static_cast<const ShapeTracker&>(*std::get<std::shared_ptr<const ArgObject>>(view->arg));
}
std::vector<UOpPtr> views_of(const UOpPtr& ast) {
  std::vector<UOpPtr> v;
  for (auto& u : ast->toposort())
    if (u->op == Ops::VIEW) v.push_back(u);
  return v;
}
}  // namespace

Kernel::Kernel(UOpPtr ast, const Renderer& ren) : ast_(std::move(ast)), ren_(ren) {
  TG_ASSERT(ast_->op == Ops::SINK && ast_->src.size() == 1 && ast_->src[0]->op == Ops::STORE);
  Shape out = st_of(ast_->src[0]->src[1]).shape();
  // the loop sizes: the largest view's, except that a dim some view has as 0 is empty (a reduce over
  // a zero-length axis runs no iterations and leaves its identity)
  Shape full = out;
  for (auto& v : views_of(ast_)) {
    const Shape& s = st_of(v).shape();
    TG_ASSERT(s.size() == full.size(), "kernel views of different ranks");
    for (size_t i = 0; i < s.size(); i++) full[i] = (full[i] == 0 || s[i] == 0) ? 0 : std::max(full[i], s[i]);
  }
  // reduce dims last
  std::vector<int> keep, red;
  for (int i = 0; i < static_cast<int>(full.size()); i++) (out[i] == full[i] ? keep : red).push_back(i);
  perm_ = keep;
  perm_.insert(perm_.end(), red.begin(), red.end());
  // merge neighbouring dims of the same kind when every view walks them as one
  std::vector<ShapeTracker> sts;
  for (auto& v : views_of(ast_)) sts.push_back(st_of(v).permute(perm_));
  std::vector<std::vector<std::optional<int64_t>>> strides;
  for (auto& st : sts) strides.push_back(st.real_strides());
  int n = static_cast<int>(perm_.size()), nkeep = static_cast<int>(keep.size());
  int last_real = -1;  // the last dim of size > 1 in the current group
  for (int i = 0; i < n; i++) {
    int64_t size = full[perm_[i]];
    bool same_kind = !merged_.empty() && (merged_.back().back() >= nkeep) == (i >= nkeep);
    bool mergeable = same_kind && (size == 1 || last_real < 0);
    if (same_kind && !mergeable) {
      mergeable = true;
      for (size_t k = 0; k < sts.size() && mergeable; k++) {
        auto sp = strides[k][last_real], si = strides[k][i];
        const View& v = sts[k].views.back();
        auto full_dim = [&](int d) { return !v.mask || (*v.mask)[d] == std::pair<int64_t, int64_t>{0, v.shape[d]}; };
        mergeable = sts[k].views.size() == 1 && full_dim(last_real) && full_dim(i) && sp && si && *sp == *si * sts[k].shape()[i];
      }
    }
    if (mergeable) merged_.back().push_back(i);
    else { merged_.push_back({i}); last_real = -1; }
    if (size > 1) last_real = i;
  }
  for (auto& g : merged_) {
    int64_t f = 1, o = 1;
    for (int64_t i : g) { f *= full[perm_[i]]; o *= out[perm_[i]]; }
    full_shape_.push_back(f);
    output_shape_.push_back(o);
  }
  first_reduce_ = 0;
  while (first_reduce_ < static_cast<int>(full_shape_.size()) && output_shape_[first_reduce_] == full_shape_[first_reduce_]) first_reduce_++;
}

ShapeTracker Kernel::reshape_st(const ShapeTracker& st) const {
  ShapeTracker p = st.permute(perm_);
  Shape s;
  for (auto& g : merged_) {
    int64_t n = 1;
    for (int64_t i : g) n *= p.shape()[i];
    s.push_back(n);
  }
  return p.reshape(s);
}

std::string Kernel::name() const {
  std::string n = first_reduce_ < static_cast<int>(full_shape_.size()) ? "r" : "E";
  for (int64_t d : full_shape_) n += "_" + std::to_string(d);
  if (full_shape_.empty()) n += "_1";
  return n;
}

DType Kernel::index_dtype() const {
  for (auto& u : ast_->toposort()) {
    if (u->op == Ops::VIEW && st_of(u).index_bound() > INT32_MAX) return dtypes::int64;
    // a gather's loaded offset is int64 when its data has 2^31 elements or more
    if (u->op == Ops::LOAD && u->src.size() == 4 && u->src[2]->dtype == dtypes::int64) return dtypes::int64;
  }
  return dtypes::int32;
}

UOpPtr Kernel::lower() const {
  int n = static_cast<int>(full_shape_.size());
  DType idt = index_dtype();
  std::vector<UOpPtr> idxs;
  for (int i = 0; i < n; i++) {
    if (full_shape_[i] == 1) idxs.push_back(UOp::cnst_int(idt, 0));
    else if (i < first_reduce_ && i < ren_.global_max_dims())
      idxs.push_back(UOp::make(Ops::SPECIAL, idt, {}, VarArg{"gidx" + std::to_string(i), 0, full_shape_[i] - 1}));
    else
      idxs.push_back(UOp::make(Ops::RANGE, idt, {UOp::cnst_int(idt, 0), UOp::cnst_int(idt, full_shape_[i])}, int64_t{i}));
  }
  auto indexed = [&](const UOpPtr& view) {
    ShapeTracker st = reshape_st(st_of(view));
    std::vector<UOpPtr> ix;
    for (int i = 0; i < n; i++) ix.push_back(st.shape()[i] == 1 ? UOp::cnst_int(idt, 0) : idxs[i]);
    return st.to_indexed_uops(ix);
  };
  // bottom-up over the AST
  std::unordered_map<const UOp*, UOpPtr> done;
  for (auto& u : ast_->toposort()) {
    std::vector<UOpPtr> src;
    for (auto& s : u->src) src.push_back(done.count(s.get()) ? done.at(s.get()) : s);
    UOpPtr r;
    switch (u->op) {
      case Ops::VIEW: case Ops::DEFINE_GLOBAL: r = u; break;
      case Ops::CONST: {
        auto [idx, valid] = indexed(u->src[0]);
        UOpPtr c = UOp::make(Ops::CONST, u->dtype, {}, u->arg);
        r = valid->is_const(1) ? c : valid->where(c, UOp::cnst(u->dtype, 0));
        break;
      }
      case Ops::LOAD: {
        auto [idx, valid] = indexed(u->src[1]);
        if (valid->is_const(0)) { r = UOp::cnst(u->dtype, 0); break; }
        // a gather's data-dependent load: an offset read from another buffer, and whether it is in range
        if (u->src.size() == 4) { idx = idx->add(src[2]->cast(idt)); valid = valid->and_(src[3]); }
        UOpPtr index = UOp::make(Ops::INDEX, u->src[0]->dtype, {u->src[0], idx});
        r = valid->is_const(1) ? UOp::make(Ops::LOAD, u->dtype, {index}) : UOp::make(Ops::LOAD, u->dtype, {index, valid});
        break;
      }
      case Ops::STORE: {
        auto [idx, valid] = indexed(u->src[1]);
        r = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, u->src[0]->dtype, {u->src[0], idx}), src[2]});
        break;
      }
      case Ops::REDUCE_AXIS: {
        std::vector<UOpPtr> s{src[0]};
        for (int i = first_reduce_; i < n; i++)
          if (idxs[i]->op == Ops::RANGE) s.push_back(idxs[i]);
        r = UOp::make(Ops::REDUCE, u->dtype, std::move(s), static_cast<int64_t>(std::get<ReduceArg>(u->arg).op));
        break;
      }
      default: r = UOp::make(u->op, u->dtype, std::move(src), u->arg);
    }
    done[u.get()] = r;
  }
  return done.at(ast_.get());
}

std::vector<UOpPtr> Kernel::linearize() const { return tg::linearize(simplify(lower())); }

int64_t Kernel::estimate_ops() const {
  int64_t total = 1;
  for (int64_t d : full_shape_) total *= d;
  int64_t alu = 0;
  for (auto& u : ast_->toposort())
    if (is_alu(u->op) || u->op == Ops::REDUCE_AXIS) alu++;
  return total * std::max<int64_t>(alu, 1);
}

int64_t Kernel::estimate_mem() const {
  int64_t bytes = 0;
  for (auto& u : ast_->toposort())
    if (u->op == Ops::LOAD || u->op == Ops::STORE)
      bytes += st_of(u->src[1]).real_size() * u->src[0]->dtype.itemsize();
  return bytes;
}

}  // namespace tg

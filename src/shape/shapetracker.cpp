// ShapeTracker: a stack of Views, and the index/valid expressions (UOps) they produce.
#include "shape/shapetracker.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>

#include "tg/error.h"
#include "tg/helpers.h"
#include "uop/rewrite.h"

namespace tg {

namespace {

UOpPtr true_const() { return UOp::cnst_int(dtypes::bool_, 1); }
int64_t sat_add(int64_t a, int64_t b) { int64_t r; return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r; }
int64_t sat_mul(int64_t a, int64_t b) { int64_t r; return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r; }
UOpPtr and_all(const UOpPtr& a, const UOpPtr& b) { return a ? a->and_(b) : b; }

// One view's expression: buffer index = offset + sum(idx_i * stride_i); valid = idx inside the mask.
// Bounds that in-range indices satisfy trivially (b <= 0, e >= size) are left out. `dt` is the index
// dtype (int32, or int64 for kernels that address 2^31 elements or more).
std::pair<UOpPtr, UOpPtr> view_expr(const View& v, const std::vector<UOpPtr>& idxs, UOpPtr valid, DType dt) {
  TG_ASSERT(idxs.size() == v.shape.size(), "need one index per dim of ", shape_str(v.shape));
  UOpPtr idx = UOp::cnst_int(dt, v.offset);
  for (size_t i = 0; i < v.shape.size(); i++) {
    if (v.shape[i] != 1 && v.strides[i] != 0) idx = idx->add(v.strides[i] == 1 ? idxs[i] : idxs[i]->mul(v.strides[i]));
    if (!v.mask) continue;
    auto [b, e] = (*v.mask)[i];
    if (b >= e) {
      valid = and_all(valid, UOp::cnst_int(dtypes::bool_, 0));
      continue;
    }
    if (b > 0) valid = and_all(valid, idxs[i]->ge(b));
    if (e < v.shape[i]) valid = and_all(valid, idxs[i]->lt(e));
  }
  return {idx, valid};
}

// Splits a flat row-major index over `shape` into one index per dim.
std::vector<UOpPtr> unravel_flat(const Shape& shape, const UOpPtr& flat) {
  std::vector<UOpPtr> out(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) {
      out[i] = UOp::cnst_int(flat->dtype, 0);
      continue;
    }
    UOpPtr x = acc == 1 ? flat : flat->idiv(acc);
    out[i] = i == 0 ? x : x->mod(shape[i]);  // the outermost dim needs no mod for in-range indices
    acc *= shape[i];
  }
  return out;
}

// The same view with its mergeable dims merged (fewer div/mod terms when unraveling into it).
View minify(const View& v) {
  Shape merged;
  // dims that can be fused: consecutive strides, or both broadcast; size-1 dims vanish
  for (size_t i = 0; i < v.shape.size(); i++) {
    if (v.shape[i] == 1 && !merged.empty()) continue;
    merged.push_back(v.shape[i]);
  }
  // try to fuse greedily from the inside out, letting View::reshape decide what is expressible
  View cur = v.reshape(merged).value_or(v);
  for (bool progress = true; progress && cur.shape.size() > 1;) {
    progress = false;
    for (size_t i = 0; i + 1 < cur.shape.size(); i++) {
      Shape s = cur.shape;
      s[i] *= s[i + 1];
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      if (auto r = cur.reshape(s)) {
        cur = *r;
        progress = true;
        break;
      }
    }
  }
  return cur;
}

}  // namespace

ShapeTracker ShapeTracker::from_shape(const Shape& shape) {
  // View::create(shape), built in place: every lazy op makes one, and the contiguous view needs no checks
  Views views(1);
  View& v = views.back();
  v.shape = shape;
  v.strides = strides_for_shape(shape);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) v.strides.assign(shape.size(), 0);  // nothing to address
  return ShapeTracker(std::move(views));
}
ShapeTracker ShapeTracker::from_view(View v) {
  Views views;  // not ShapeTracker({v}): an initializer list is copied from
  views.push_back(std::move(v));
  return ShapeTracker(std::move(views));
}

static ShapeTracker with_last(const ShapeTracker& st, View v) {
  Views views;
  views.reserve(st.views.size());
  views.insert(views.end(), st.views.begin(), st.views.end() - 1);
  views.push_back(std::move(v));
  return ShapeTracker(std::move(views));
}

ShapeTracker ShapeTracker::reshape(const Shape& new_shape) const {
  if (auto v = views.back().reshape(new_shape)) return with_last(*this, *v);
  Views vs = views;
  vs.push_back(View::create(new_shape));
  return ShapeTracker(std::move(vs));
}
ShapeTracker ShapeTracker::permute(const std::vector<int>& order) const { return with_last(*this, views.back().permute(order)); }
ShapeTracker ShapeTracker::expand(const Shape& new_shape) const { return with_last(*this, views.back().expand(new_shape)); }
ShapeTracker ShapeTracker::pad(const std::vector<std::pair<int64_t, int64_t>>& arg) const { return with_last(*this, views.back().pad(arg)); }
ShapeTracker ShapeTracker::shrink(const std::vector<std::pair<int64_t, int64_t>>& arg) const { return with_last(*this, views.back().shrink(arg)); }
ShapeTracker ShapeTracker::flip(const std::vector<bool>& axes) const { return with_last(*this, views.back().flip(axes)); }

ShapeTracker ShapeTracker::operator+(const ShapeTracker& top) const {
  ShapeTracker ret = *this;
  for (const View& v : top.views) {  // one view at a time merges best
    ret.views.push_back(v);
    ret = ret.simplify();
  }
  return ret;
}

UOpPtr ShapeTracker::to_uop() const {
  return UOp::make(Ops::VIEW, dtypes::void_, {}, std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(*this)));
}

const ShapeTracker& ShapeTracker::of(const UOp& view) {
  TG_ASSERT(view.op == Ops::VIEW, "ShapeTracker::of a ", op_name(view.op));
  return static_cast<const ShapeTracker&>(*std::get<std::shared_ptr<const ArgObject>>(view.arg));
}

ShapeTracker ShapeTracker::simplify() const {
  Views vs = views;
  while (vs.size() >= 2) {
    auto merged = vs[vs.size() - 2].merge_on_top(vs.back());
    if (!merged) break;
    vs.pop_back();
    vs.back() = *merged;
  }
  return ShapeTracker(std::move(vs));
}

std::pair<UOpPtr, UOpPtr> ShapeTracker::to_indexed_uops(const std::vector<UOpPtr>& idxs, DType dt) const {
  for (const UOpPtr& i : idxs) TG_ASSERT(i->dtype == dt, "to_indexed_uops: index of ", i->dtype.name(), " in a ", dt.name(), " expression");
  auto [idx, valid] = view_expr(views.back(), idxs, nullptr, dt);
  for (size_t i = views.size() - 1; i-- > 0;) {
    View v = minify(views[i]);
    std::tie(idx, valid) = view_expr(v, unravel_flat(v.shape, idx), valid, dt);
  }
  UOpPtr sv = valid ? tg::simplify(valid) : true_const();
  // nothing is valid: the index is irrelevant, make it a harmless 0
  if (sv->is_const(0)) return {UOp::cnst_int(dt, 0), sv};
  return {tg::simplify(idx), sv};
}

int64_t ShapeTracker::index_bound() const {
  int64_t bound = 0;
  for (const View& v : views) {
    int64_t b = std::abs(v.offset);
    for (size_t i = 0; i < v.shape.size(); i++) b = sat_add(b, sat_mul(std::abs(v.strides[i]), std::max<int64_t>(0, v.shape[i] - 1)));
    bound = std::max({bound, b, prod(v.shape)});
  }
  return bound;
}

std::pair<UOpPtr, UOpPtr> ShapeTracker::to_indexed_uops_flat(const UOpPtr& idx) const {
  return to_indexed_uops(unravel_flat(shape(), idx), idx->dtype);
}

std::optional<std::pair<int64_t, int64_t>> ShapeTracker::valid_index_range() const {
  if (size() == 0) return std::nullopt;
  // Every valid access lands inside the bottom view's valid window: its extreme addresses bound them.
  const View& b = views.front();
  if (prod(b.shape) == 0) return std::nullopt;
  int64_t lo = b.offset, hi = b.offset;
  for (size_t i = 0; i < b.shape.size(); i++) {
    auto [first, end] = b.mask ? (*b.mask)[i] : std::pair<int64_t, int64_t>{0, b.shape[i]};
    if (first >= end) return std::nullopt;
    lo += b.strides[i] * (b.strides[i] > 0 ? first : end - 1);
    hi += b.strides[i] * (b.strides[i] > 0 ? end - 1 : first);
  }
  if (views.size() == 1) return std::pair{lo, hi};
  // stacked views: the whole expression may reach less than the bottom view
  std::vector<UOpPtr> idxs;
  for (size_t i = 0; i < shape().size(); i++)
    idxs.push_back(UOp::make(Ops::DEFINE_VAR, dtypes::int64, {}, VarArg{"idx" + std::to_string(i), 0, shape()[i] - 1}));
  auto [idx, valid] = to_indexed_uops(idxs, dtypes::int64);
  if (valid->is_const(0)) return std::nullopt;
  return std::pair{std::max(lo, idx->vmin), std::min(hi, idx->vmax)};
}

int64_t ShapeTracker::real_size() const {
  auto r = valid_index_range();
  return r ? std::max<int64_t>(0, sat_add(r->second, 1)) : 0;
}

int64_t ShapeTracker::footprint() const {
  auto r = valid_index_range();
  return r && r->second >= r->first ? sat_add(r->second - r->first, 1) : 0;
}

std::vector<std::optional<int64_t>> ShapeTracker::real_strides(bool ignore_valid) const {
  const View& last = views.back();
  const size_t n = last.shape.size();
  std::vector<std::optional<int64_t>> ret(n);
  if (views.size() == 1) {  // a dim is affine unless its mask cuts it
    for (size_t i = 0; i < n; i++)
      if (ignore_valid || !last.mask || (*last.mask)[i] == std::pair<int64_t, int64_t>{0, last.shape[i]}) ret[i] = last.strides[i];
    return ret;
  }
  std::vector<UOpPtr> idxs;
  for (size_t i = 0; i < n; i++)
    idxs.push_back(UOp::make(Ops::DEFINE_VAR, dtypes::int64, {}, VarArg{"idx" + std::to_string(i), 0, last.shape[i] - 1}));
  auto [idx, valid] = to_indexed_uops(idxs, dtypes::int64);
  auto dim_of = [&](const UOpPtr& u) -> int {
    for (size_t i = 0; i < n; i++)
      if (idxs[i] == u) return static_cast<int>(i);
    return -1;
  };
  auto vars_in = [&](const UOpPtr& u) {
    std::set<int> out;
    for (const UOpPtr& x : u->toposort())
      if (int d = dim_of(x); d >= 0) out.insert(d);
    return out;
  };
  // Split the index into its summands: idx_i, idx_i*c and constants are affine; anything else taints
  // every index it mentions.
  std::vector<UOpPtr> todo{idx}, terms;
  while (!todo.empty()) {
    UOpPtr t = todo.back();
    todo.pop_back();
    if (t->op == Ops::ADD) todo.insert(todo.end(), t->src.begin(), t->src.end());
    else terms.push_back(t);
  }
  std::vector<int64_t> stride(n, 0);
  std::set<int> bad = ignore_valid ? std::set<int>{} : vars_in(valid);
  for (const UOpPtr& t : terms) {
    if (t->is_const()) continue;
    if (int d = dim_of(t); d >= 0) { stride[d] += 1; continue; }
    if (t->op == Ops::MUL) {
      for (int k = 0; k < 2; k++) {
        int d = dim_of(t->src[k]);
        if (d >= 0 && t->src[1 - k]->is_const()) { stride[d] += t->src[1 - k]->const_int(); goto next; }
      }
    }
    for (int d : vars_in(t)) bad.insert(d);
  next:;
  }
  for (size_t i = 0; i < n; i++)
    if (!bad.count(static_cast<int>(i))) ret[i] = stride[i];
  return ret;
}

uint64_t ShapeTracker::hash() const {
  uint64_t h = fnv1a("ShapeTracker");
  auto put = [&](int64_t x) { h = hash_combine(h, static_cast<uint64_t>(x)); };
  for (const View& v : views) {
    put(static_cast<int64_t>(v.shape.size()));
    for (int64_t x : v.shape) put(x);
    for (int64_t x : v.strides) put(x);
    put(v.offset);
    put(v.mask ? 1 : 0);
    if (v.mask)
      for (auto [b, e] : *v.mask) put(b), put(e);
  }
  return h;
}

bool ShapeTracker::equals(const ArgObject& o) const {
  auto* st = dynamic_cast<const ShapeTracker*>(&o);
  return st && st->views == views;
}

std::string ShapeTracker::str() const {
  std::string s = "ShapeTracker(views=(";
  for (const View& v : views) s += v.str() + ", ";
  if (!views.empty()) s.resize(s.size() - 2);
  return s + (views.size() == 1 ? ",))" : "))");
}

}  // namespace tg

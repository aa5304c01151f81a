// Indexing: libtorch's Tensor::index, gather, scatter, masked_fill and one_hot.
//
// An integer tensor index is one data-dependent load (LazyBuffer::gather): the kernel reads the index,
// then the one element it names, so the work is proportional to the output. tinygrad v0.9 builds the
// same thing as a one-hot (output x indexed axis) multiply-and-sum instead. Only the gradient, and
// scatter (whose output is the whole tensor anyway), use a one-hot compare.
#include <algorithm>
#include <cmath>

#include "lazy/lazybuffer.h"
#include "shape/shapetracker.h"
#include "tensor/internal.h"

namespace tg {

namespace {

using namespace indexing;

// 0, 1, ..., n-1 as int32 (int64 from 2^31 on), shaped to lie along `dim` of a rank-`ndim` tensor.
Tensor iota_along(int64_t n, int dim, int ndim, const std::string& device) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[static_cast<size_t>(dim)] = n;
  return Tensor::arange(0, static_cast<double>(n), 1, n > INT32_MAX ? dtypes::int64 : dtypes::int32, device).reshape(s);
}

// An integer index tensor as int32 or int64 with every entry's meaning kept, for an axis of size n: the
// narrow types widen to int32, uint32 to int64, int64 stays; a uint64 entry is compared in its own type
// first, and one past the axis (also one past int64's range) becomes n, which is as out of range. No
// entry is ever narrowed onto a valid position.
Tensor signed_index(const Tensor& idx, int64_t n) {
  DType d = idx.dtype();
  if (d == dtypes::int32 || d == dtypes::int64) return idx;
  if (d == dtypes::uint64) {
    Tensor in_axis = idx < detail::const_tensor({}, static_cast<double>(n), d, idx.device());
    return in_axis.where(idx.cast(dtypes::int64), detail::const_tensor({}, static_cast<double>(n), dtypes::int64, idx.device()));
  }
  return idx.cast(d.itemsize() < 4 ? dtypes::int32 : dtypes::int64);
}

// Negative indices count from the end of an axis of size n (idx is int32 or int64; int64 when n needs it).
Tensor wrap_negative(const Tensor& idx, int64_t n) {
  Tensor i = n > INT32_MAX ? idx.cast(dtypes::int64) : idx;
  return (i < 0).where(i + n, i);
}

// out = data gathered along `axis` by idx (int32, of the output's shape). The gradient of data is the
// output's gradient summed into the rows it was read from: a one-hot compare-and-sum, whose cost is
// paid by backward only. The index gets no gradient.
struct Gather : Function {
  explicit Gather(int axis) : axis(axis) {}
  int axis;
  Shape data_shape;
  LBPtr idx;
  LBPtr forward(Inputs x) override {
    data_shape = x[0]->shape();
    return x[0]->gather(save(idx, x[1]), axis);
  }
  std::vector<LBPtr> backward(const LBPtr& grad) override {
    Tensor g(grad), i(idx);
    int64_t n = data_shape[axis];
    // (..., m, n, ...): output position m along axis against data position n
    Tensor hit = wrap_negative(i, n).unsqueeze(axis + 1).eq(iota_along(n, axis + 1, g.ndim() + 1, g.device()));
    Tensor zero = Tensor::full({}, 0, g.dtype(), g.device());
    Tensor dx = hit.where(g.unsqueeze(axis + 1), zero).sum({axis}).cast(g.dtype());
    return {dx.reshape(data_shape).lazydata(), nullptr};
  }
};

Tensor gather_along(const Tensor& data, int axis, const Tensor& idx) {
  if (idx.numel() == 0) return Tensor::zeros(idx.shape(), data.dtype(), data.device());
  return Function::apply<Gather>({data, signed_index(idx, data.shape()[static_cast<size_t>(axis)])}, axis);
}

// Python's slice.indices(n): the first element, the step and the number of elements.
struct SliceRange {
  int64_t start, step, len;
};
SliceRange slice_range(const Slice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  TG_CHECK(step != 0, "index: slice step cannot be zero");
  int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp(x, lower, upper);
  };
  int64_t start = clamp(s.start, step > 0 ? lower : upper), stop = clamp(s.stop, step > 0 ? upper : lower);
  int64_t len = step > 0 ? (start < stop ? (stop - start - 1) / step + 1 : 0) : (stop < start ? (start - stop - 1) / -step + 1 : 0);
  return {start, step, len};
}

std::vector<std::pair<int64_t, int64_t>> full_bounds(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> b;
  for (int64_t d : t.shape()) b.emplace_back(0, d);
  return b;
}

// y[..., start::step, ...] along dim d, as views: flip for a negative step, shrink, and for a step
// above 1 a reshape to (len, step) that keeps column 0.
Tensor take_slice(const Tensor& y, int d, SliceRange r) {
  int64_t n = y.shape()[d], first = r.start, step = r.step;
  Tensor t = y;
  if (step < 0) { t = t.flip({d}); first = n - 1 - first; step = -step; }
  auto bounds = full_bounds(t);
  if (r.len == 0) { bounds[d] = {0, 0}; return t.shrink(bounds); }
  bounds[d] = {first, std::min(n, first + r.len * step)};
  t = t.shrink(bounds);
  if (step == 1) return t;
  std::vector<std::pair<int64_t, int64_t>> pad(static_cast<size_t>(t.ndim()), {0, 0});
  pad[d] = {0, r.len * step - t.shape()[d]};
  t = t.pad(pad);
  Shape s = t.shape();
  s[d] = r.len;
  s.insert(s.begin() + d + 1, step);
  t = t.reshape(s);
  bounds = full_bounds(t);
  bounds[d + 1] = {0, 1};
  return t.shrink(bounds).squeeze(d + 1);
}

// y indexed by integer tensors on the dims `dims` (numpy's advanced indexing). The tensors broadcast to
// one shape B. Adjacent dims are replaced by B in place; otherwise B comes first. The indexed dims are
// merged into one and read with a single gather by a combined linear index.
Tensor advanced_index(Tensor y, std::vector<int> dims, std::vector<Tensor> idxs) {
  std::vector<Shape> shapes;
  for (const Tensor& t : idxs) shapes.push_back(t.shape());
  std::optional<Shape> broadcast = detail::broadcast_shape(shapes);
  if (!broadcast) {
    std::string listed;
    for (const Shape& sh : shapes) listed += (listed.empty() ? "" : ", ") + shape_str(sh);
    TG_ERROR("index: shape mismatch: index tensors of shapes ", listed, " cannot be broadcast together");
  }
  Shape B = *broadcast;
  size_t k = dims.size();
  bool adjacent = true;
  for (size_t j = 1; j < k; j++) adjacent &= dims[j] == dims[0] + static_cast<int>(j);
  if (!adjacent) {  // indexed dims first, in index order
    std::vector<int> order(dims.begin(), dims.end());
    for (int i = 0; i < y.ndim(); i++)
      if (std::find(dims.begin(), dims.end(), i) == dims.end()) order.push_back(i);
    y = y.permute(order);
    for (size_t j = 0; j < k; j++) dims[j] = static_cast<int>(j);
  }
  int first = dims[0];
  Shape before(y.shape().begin(), y.shape().begin() + first), after(y.shape().begin() + first + static_cast<long>(k), y.shape().end());
  // the linear index into the merged dims; an entry out of range in any dim points past the end. It is
  // int64 where the merged dims or an index need it.
  int64_t total = 1;
  for (size_t j = 0; j < k; j++) total *= y.shape()[static_cast<size_t>(first) + j];
  for (size_t j = 0; j < k; j++) idxs[j] = signed_index(idxs[j], y.shape()[static_cast<size_t>(first) + j]);
  Tensor lin = idxs[0].expand(B);
  if (k > 1) {
    bool wide = total > INT32_MAX || std::any_of(idxs.begin(), idxs.end(), [](const Tensor& t) { return t.dtype() == dtypes::int64; });
    DType lt = wide ? dtypes::int64 : dtypes::int32;
    Tensor ok = Tensor::full({}, 1, dtypes::bool_, y.device());
    int64_t stride = total;
    lin = Tensor::full({}, 0, lt, y.device());
    for (size_t j = 0; j < k; j++) {
      int64_t n = y.shape()[static_cast<size_t>(first) + j];
      stride /= n;
      Tensor w = wrap_negative(idxs[j].cast(lt), n);
      ok = ok.bitwise_and((w >= 0).bitwise_and(w < n));
      lin = lin + w * stride;
    }
    lin = ok.where(lin, Tensor::full({}, static_cast<double>(total), lt, y.device())).expand(B);
  }
  Shape merged = before;
  merged.push_back(total);
  merged.insert(merged.end(), after.begin(), after.end());
  int64_t m = prod(B);
  Shape idx_shape = before, idx_view(before.size(), 1);
  idx_shape.push_back(m);
  idx_view.push_back(m);
  idx_shape.insert(idx_shape.end(), after.begin(), after.end());
  idx_view.insert(idx_view.end(), after.size(), 1);
  Tensor out = gather_along(y.reshape(merged), first, lin.reshape(idx_view).expand(idx_shape));
  Shape out_shape = before;
  out_shape.insert(out_shape.end(), B.begin(), B.end());
  out_shape.insert(out_shape.end(), after.begin(), after.end());
  return out.reshape(out_shape);
}

// A bool mask over dims d.. of `shape`, as numpy and torch read it: the coordinates of its true entries,
// one int tensor per masked dim (int64 for a dim of 2^31 or more). The output's shape depends on the
// data, so the mask is read on the host.
std::vector<Tensor> mask_coordinates(const Tensor& mask, const Shape& shape, int d, const char* op, const std::string& device) {
  TG_CHECK_AS(IndexError, d + mask.ndim() <= static_cast<int>(shape.size()), op, ": a bool mask of shape ", mask.shape(),
              " has more dims than are left in shape ", shape);
  for (int i = 0; i < mask.ndim(); i++)
    TG_CHECK_AS(IndexError, mask.shape()[i] == shape[d + i], op, ": the bool mask of shape ", mask.shape(), " does not match dims ", d,
                ".. of ", shape);
  std::vector<bool> m = mask.tolist<bool>();
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(mask.ndim()));
  for (size_t flat = 0; flat < m.size(); flat++) {
    if (!m[flat]) continue;
    size_t rest = flat;
    for (int i = mask.ndim() - 1; i >= 0; i--) {
      auto n = static_cast<size_t>(mask.shape()[i]);
      coords[i].push_back(static_cast<int64_t>(rest % n));
      rest /= n;
    }
  }
  std::vector<Tensor> out;
  for (int i = 0; i < mask.ndim(); i++) {
    Shape n{static_cast<int64_t>(coords[i].size())};
    if (mask.shape()[i] > INT32_MAX) out.emplace_back(coords[i], n, device);
    else out.emplace_back(std::vector<int32_t>(coords[i].begin(), coords[i].end()), n, device);
  }
  return out;
}

void check_index_tensor(const Tensor& t, const char* op) {
  TG_CHECK_AS(TypeError, t.dtype().is_int(), op, ": index tensors must be integers, got ", t.dtype().name(), " of shape ", t.shape());
}

// The indices as the walks below take them: an int (in range, not negative), a Slice, None, or an integer
// index tensor on t's device, one per dim it indexes. Ellipsis becomes whole-dim slices and a bool mask
// the coordinates of its true entries; everything is checked against the dims of t it applies to.
// A 0-d bool mask (torch's and NumPy's t[True] / t[False]) adds a dim as None does, of length 1 when true
// and 0 when false: it becomes None, and the positions in the result of the false ones go to `empty`.
std::vector<TensorIndex> resolve(const Tensor& t, const std::vector<TensorIndex>& indices, const char* op,
                                 std::vector<size_t>* empty = nullptr) {
  int consumed = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    const auto& v = i.value();
    if (std::holds_alternative<EllipsisIndex>(v)) ellipses++;
    else if (auto* m = std::get_if<Tensor>(&v); m && m->dtype().is_bool()) consumed += m->ndim();  // a 0-d mask adds a dim, as None
    else if (!std::holds_alternative<NoneIndex>(v)) consumed++;
  }
  TG_CHECK_AS(IndexError, ellipses <= 1, op, ": an index can only have a single ellipsis");
  TG_CHECK_AS(IndexError, consumed <= t.ndim(), op, ": too many indices for tensor of shape ", t.shape(), ": ", consumed, " indices given");
  std::vector<TensorIndex> out;
  int td = 0;  // the dim of t the next index applies to
  for (const TensorIndex& i : indices) {
    const auto& v = i.value();
    if (auto* n = std::get_if<int64_t>(&v)) {
      int64_t size = t.shape()[td];
      TG_CHECK_AS(IndexError, *n >= -size && *n < size, op, ": index ", *n, " is out of bounds for dimension ", td, " with size ", size,
                  " (tensor of shape ", t.shape(), ")");
      out.emplace_back(*n < 0 ? *n + size : *n);
      td++;
    } else if (std::holds_alternative<Slice>(v) || std::holds_alternative<NoneIndex>(v)) {
      out.push_back(i);
      td += std::holds_alternative<Slice>(v);
    } else if (std::holds_alternative<EllipsisIndex>(v)) {
      for (int k = 0; k < t.ndim() - consumed; k++, td++) out.emplace_back(Slice());
    } else {
      const Tensor& x = std::get<Tensor>(v);
      if (x.dtype().is_bool() && x.ndim() == 0) {
        if (!x.item<bool>() && empty) empty->push_back(out.size());
        out.emplace_back(None);
        continue;
      }
      if (x.dtype().is_bool()) {
        for (Tensor& c : mask_coordinates(x, t.shape(), td, op, t.device())) out.emplace_back(c);
        td += x.ndim();
        continue;
      }
      // an IndexError, as torch and NumPy ("tensors used as indices must be long, int, byte or bool tensors")
      TG_CHECK_AS(IndexError, x.dtype().is_int(), op, ": tensors used as indices must be integer or bool tensors, got ", x.dtype().name(),
                  " of shape ", x.shape());
      int64_t n = t.shape()[static_cast<size_t>(td)];
      detail::check_index_range(x, -n, n, op, detail::cat("a dim of size ", n, " (tensor of shape ", t.shape(), ")"));
      out.emplace_back(x.to(t.device()));
      td++;
    }
  }
  return out;
}

bool has_index_tensor(const std::vector<TensorIndex>& r) {
  return std::any_of(r.begin(), r.end(), [](const TensorIndex& i) { return std::holds_alternative<Tensor>(i.value()); });
}

// The row-major flat position in t of each element that t.index(r) selects (r resolved, with index
// tensors), laid out as Tensor::index lays the selection out; an entry out of range in its dim selects
// t.numel(), a position past the end. Basic indices are arithmetic on the positions' strides and index
// tensors contribute their values: nothing of t's size is made.
Tensor flat_positions(const Tensor& t, const std::vector<TensorIndex>& r) {
  struct Dim { int64_t size, stride; };
  std::vector<Dim> dims;
  int64_t stride = 1;
  for (int i = t.ndim() - 1; i >= 0; i--) {
    dims.insert(dims.begin(), Dim{t.shape()[i], stride});
    stride *= t.shape()[i];
  }
  int64_t offset = 0;
  size_t d = 0;
  std::vector<size_t> tdims;
  std::vector<Tensor> tidx;
  for (const TensorIndex& i : r) {
    const auto& v = i.value();
    if (auto* p = std::get_if<int64_t>(&v)) {
      offset += *p * dims[d].stride;
      dims.erase(dims.begin() + static_cast<long>(d));
    } else if (auto* s = std::get_if<Slice>(&v)) {
      SliceRange sr = slice_range(*s, dims[d].size);
      offset += sr.start * dims[d].stride;
      dims[d] = {sr.len, dims[d].stride * sr.step};
      d++;
    } else if (std::holds_alternative<NoneIndex>(v)) {
      dims.insert(dims.begin() + static_cast<long>(d++), Dim{1, 0});
    } else {
      tdims.push_back(d++);
      tidx.push_back(std::get<Tensor>(v));
    }
  }
  std::vector<Shape> shapes;
  for (const Tensor& x : tidx) shapes.push_back(x.shape());
  std::optional<Shape> B = detail::broadcast_shape(shapes);
  TG_CHECK_AS(IndexError, B, "index_put: index tensors of these shapes cannot be broadcast together (tensor of shape ", t.shape(), ")");
  // Tensor::index's layout: the broadcast index shape B in place of adjacent indexed dims, else first
  bool adjacent = true;
  for (size_t j = 1; j < tdims.size(); j++) adjacent &= tdims[j] == tdims[0] + j;
  size_t b_at = adjacent ? tdims[0] : 0;
  std::vector<Dim> rest;
  for (size_t k = 0; k < dims.size(); k++)
    if (std::find(tdims.begin(), tdims.end(), k) == tdims.end()) rest.push_back(dims[k]);
  Shape out;
  for (size_t k = 0; k < rest.size(); k++) out.push_back(rest[k].size);
  out.insert(out.begin() + static_cast<long>(b_at), B->begin(), B->end());
  auto rank = static_cast<int>(out.size());
  DType pt = t.numel() > INT32_MAX ? dtypes::int64 : dtypes::int32;
  Tensor pos = detail::const_tensor({}, static_cast<double>(offset), pt, t.device());
  for (size_t k = 0; k < rest.size(); k++) {  // a plain dim: its coordinate times its stride
    size_t at = k < b_at ? k : k + B->size();
    pos = pos + iota_along(rest[k].size, static_cast<int>(at), rank, t.device()).cast(pt) *
                    detail::const_tensor({}, static_cast<double>(rest[k].stride), pt, t.device());
  }
  Tensor ok = detail::const_tensor({}, 1, dtypes::bool_, t.device());
  for (size_t j = 0; j < tidx.size(); j++) {  // an indexed dim: the index's value times its stride
    int64_t n = dims[tdims[j]].size;
    Tensor w = wrap_negative(signed_index(tidx[j], n), n);
    // w's dims, right-aligned in B, at B's place among the output dims
    Shape placed(b_at + B->size() - static_cast<size_t>(w.ndim()), 1);
    placed.insert(placed.end(), w.shape().begin(), w.shape().end());
    placed.resize(static_cast<size_t>(rank), 1);
    ok = ok.bitwise_and((w >= 0).bitwise_and(w < n).reshape(placed));
    // (an entry out of range may wrap here: `ok` replaces its position)
    pos = pos + w.cast(pt).reshape(placed) * detail::const_tensor({}, static_cast<double>(dims[tdims[j]].stride), pt, t.device());
  }
  return ok.where(pos, detail::const_tensor({}, static_cast<double>(t.numel()), pt, t.device())).expand(out);
}

// index_put writes up to this many positions with a where each, more with scatter.
constexpr int64_t kFewPositions = 16;

// One dim of a basic selection: `count` elements from `start` every `step` (step may be negative); an int
// index selects one and drops the dim (keep false).
struct DimSel {
  int64_t start = 0, step = 1, count = 0;
  bool keep = true;
};

// x (one dim per dim of `full`, of the selection's counts) placed at the selection in the full shape,
// the rest `fill`: strided slices through a reshape/pad/shrink, reversed ones through a flip.
Tensor embed(Tensor x, const std::vector<DimSel>& sel, const Shape& full, double fill) {
  for (size_t d = 0; d < sel.size(); d++) {
    const DimSel& s = sel[d];
    int64_t first = s.step > 0 ? s.start : s.start + (s.count - 1) * s.step, step = s.step > 0 ? s.step : -s.step;
    if (s.step < 0) x = x.flip({static_cast<int>(d)});
    if (step > 1) {  // (..., count, ...) -> (..., count, step, ...) padded -> (..., count*step, ...) -> first (count-1)*step+1
      Shape sh = x.shape(), split = sh;
      split.insert(split.begin() + static_cast<long>(d) + 1, 1);
      std::vector<std::pair<int64_t, int64_t>> p(split.size(), {0, 0});
      p[d + 1] = {0, step - 1};
      x = x.reshape(split).pad(p, fill);
      sh[d] = s.count * step;
      x = x.reshape(sh);
      auto b = full_bounds(x);
      b[d] = {0, (s.count - 1) * step + 1};
      x = x.shrink(b);
    }
    std::vector<std::pair<int64_t, int64_t>> p(full.size(), {0, 0});
    p[d] = {first, full[d] - first - x.shape()[d]};
    x = x.pad(p, fill);
  }
  return x;
}

// values broadcast (NumPy's rule: leading 1s added) to the selection's shape.
Tensor broadcast_values(const Tensor& values, const Shape& shape, const Tensor& self) {
  std::optional<Shape> b = detail::broadcast_shape({values.shape(), shape});
  TG_CHECK(b && *b == shape, "index_put: values of shape ", values.shape(), " do not broadcast to the selection's shape ", shape,
           " (tensor of shape ", self.shape(), ")");
  Shape vs = values.shape();
  vs.insert(vs.begin(), shape.size() - vs.size(), 1);
  return values.reshape(vs).expand(shape);
}

}  // namespace

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  Tensor y = *this;
  int d = 0;  // the dim of y the next index applies to
  std::vector<int> tdims;
  std::vector<Tensor> tidx;
  std::vector<size_t> empty;
  std::vector<TensorIndex> r = resolve(*this, indices, "index", &empty);
  for (size_t k = 0; k < r.size(); k++) {
    const auto& v = r[k].value();
    if (auto* p = std::get_if<int64_t>(&v)) {
      auto b = full_bounds(y);
      b[d] = {*p, *p + 1};
      y = y.shrink(b).squeeze(d);
    } else if (auto* s = std::get_if<Slice>(&v)) {
      y = take_slice(y, d, slice_range(*s, y.shape()[d]));
      d++;
    } else if (std::holds_alternative<NoneIndex>(v)) {
      y = y.unsqueeze(d);
      if (std::find(empty.begin(), empty.end(), k) != empty.end()) {  // a false 0-d mask: the new dim is empty
        auto b = full_bounds(y);
        b[d] = {0, 0};
        y = y.shrink(b);
      }
      d++;
    } else {
      tdims.push_back(d++);
      tidx.push_back(std::get<Tensor>(v));
    }
  }
  return tidx.empty() ? y : advanced_index(y, tdims, tidx);
}

Tensor Tensor::index_put(const std::vector<TensorIndex>& indices, const Tensor& values) const {
  TG_CHECK_AS(TypeError, values.dtype() == dtype(), "index_put: values of ", values.dtype().name(), " into a tensor of ", dtype().name(),
              " (shape ", shape(), ")");
  TG_CHECK(values.device() == device(), "index_put: values on ", values.device(), ", the tensor on ", device());
  std::vector<size_t> empty;
  std::vector<TensorIndex> r = resolve(*this, indices, "index_put", &empty);
  if (!empty.empty()) return *this;  // a false 0-d mask selects nothing
  if (has_index_tensor(r)) {  // a write to the selection's flat positions
    Tensor pos = flat_positions(*this, r);
    int64_t m = pos.numel();
    Tensor v = broadcast_values(values, pos.shape(), *this).reshape({m}), flat = reshape({numel()});
    pos = pos.reshape({m});
    if (m == 0) return *this;
    if (m > kFewPositions) return flat.scatter(0, pos, v).reshape(shape());
    // a few positions: one where each, in one kernel, the last one winning; no buffer of the scatter's
    // one-hot bookkeeping (4 to 8 bytes a position of this tensor)
    Tensor iota = Tensor::arange(0, static_cast<double>(numel()), 1, pos.dtype(), device());
    for (int64_t j = 0; j < m; j++) {
      Tensor at = pos.shrink({{j, j + 1}}).reshape({}), vj = v.shrink({{j, j + 1}}).reshape({});
      flat = iota.eq(at).where(vj, flat);
    }
    return flat.reshape(shape());
  }
  // basic indices: the values and a mask placed at the selection by padding, one lazy where
  std::vector<DimSel> sel;
  Shape view;  // the selection's shape, None dims included
  for (const TensorIndex& i : r) {
    const auto& v = i.value();
    if (auto* p = std::get_if<int64_t>(&v)) {
      sel.push_back({*p, 1, 1, false});
    } else if (auto* s = std::get_if<Slice>(&v)) {
      SliceRange sr = slice_range(*s, shape()[sel.size()]);
      sel.push_back({sr.start, sr.step, sr.len, true});
      view.push_back(sr.len);
    } else {
      view.push_back(1);
    }
  }
  for (size_t d = sel.size(); d < shape().size(); d++) {
    sel.push_back({0, 1, shape()[d], true});
    view.push_back(shape()[d]);
  }
  Tensor v = broadcast_values(values, view, *this);
  Shape counts;
  for (const DimSel& s : sel) {
    if (s.count == 0) return *this;  // an empty selection writes nothing
    counts.push_back(s.count);
  }
  v = v.reshape(counts);  // None dims dropped, int dims back as size 1
  Tensor mask = detail::const_tensor(counts, 1, dtypes::bool_, device());
  return embed(mask, sel, shape(), 0).where(embed(v, sel, shape(), 0), *this);
}

Tensor Tensor::operator[](int64_t i) const { return index({i}); }

Tensor Tensor::gather(int dim, const Tensor& index) const {
  check_index_tensor(index, "gather");
  TG_CHECK(index.ndim() == ndim(), "gather: index of shape ", index.shape(), " must have the same rank as the input of shape ", shape());
  int d = norm_axis(dim, "gather");
  if (ndim() == 0) return reshape({1}).gather(0, index.reshape({1})).reshape({});  // one element along dim 0 or -1
  int64_t n = shape()[static_cast<size_t>(d)];
  detail::check_index_range(index, -n, n, "gather", detail::cat("dim ", d, " of size ", n, " of shape ", shape()));
  auto bounds = full_bounds(*this);
  for (int i = 0; i < ndim(); i++) {
    if (i == d) continue;
    TG_CHECK(index.shape()[i] <= shape()[i], "gather: index of shape ", index.shape(), " is larger than the input of shape ",
             shape(), " in dim ", i);
    bounds[i] = {0, index.shape()[i]};
  }
  return gather_along(shrink(bounds), d, index.to(device()));
}

namespace {
// (..., m, n, ...): whether index entry m (along d) names self's position n.
Tensor scatter_hits(const Tensor& self, int d, const Tensor& index) {
  int64_t n = self.shape()[static_cast<size_t>(d)];
  return wrap_negative(signed_index(index, n), n).unsqueeze(d + 1).eq(iota_along(n, d + 1, self.ndim() + 1, self.device()));
}
// self with val where hit: both cover the index's sizes in the dims other than d, self's along d.
Tensor scatter_into(const Tensor& self, const Tensor& hit, const Tensor& val) {
  std::vector<std::pair<int64_t, int64_t>> pad;
  for (int i = 0; i < self.ndim(); i++) pad.emplace_back(0, self.shape()[static_cast<size_t>(i)] - hit.shape()[static_cast<size_t>(i)]);
  return hit.pad(pad).where(val.pad(pad), self);
}

// self with src[...] written at index along d (torch's scatter), as a one-hot select: for every
// position of self along d, the last index entry naming it wins. src has the index's shape.
Tensor scatter_impl(const Tensor& self, int d, const Tensor& index, const Tensor& src) {
  int64_t m = index.shape()[d];
  int r = self.ndim() + 1;
  Tensor hits = scatter_hits(self, d, index);
  // the last entry hitting each position, in the narrowest type that numbers the entries (a buffer the
  // size of self: 1 byte a position for up to 127 entries)
  DType lt = m < INT8_MAX ? dtypes::int8 : m < INT16_MAX ? dtypes::int16 : m < INT32_MAX ? dtypes::int32 : dtypes::int64;
  Tensor mpos = iota_along(m, d, r, self.device()).cast(lt);
  Tensor last = hits.where(mpos, detail::const_tensor({}, -1, lt, self.device())).max({d}, true);
  Tensor win = hits.bitwise_and(mpos.eq(last));
  // one entry wins a position: a max in src's own dtype picks it (no wider accumulator, -0.0 kept)
  Tensor lowest = detail::const_tensor({}, src.dtype().is_float() ? -INFINITY : src.dtype().min(), src.dtype(), self.device());
  Tensor val = win.where(src.unsqueeze(d + 1), lowest).max({d});
  return scatter_into(self, (last >= 0).squeeze(d), val);
}

int scatter_checks(const Tensor& self, int dim, const Tensor& index, const Shape* src_shape, const char* op = "scatter") {
  check_index_tensor(index, op);
  TG_CHECK(index.ndim() == self.ndim(), op, ": index of shape ", index.shape(), " must have the same rank as the input of shape ",
           self.shape());
  int d = self.norm_axis(dim, op);
  if (self.ndim() > 0) {
    int64_t n = self.shape()[static_cast<size_t>(d)];
    detail::check_index_range(index, -n, n, op, detail::cat("dim ", d, " of size ", n, " of shape ", self.shape()));
  }
  for (int i = 0; i < self.ndim(); i++) {
    TG_CHECK(i == d || index.shape()[i] <= self.shape()[i], op, ": index of shape ", index.shape(),
             " is larger than the input of shape ", self.shape(), " in dim ", i);
    TG_CHECK(!src_shape || index.shape()[i] <= (*src_shape)[i], op, ": index of shape ", index.shape(),
             " is larger than src of shape ", *src_shape, " in dim ", i);
  }
  return d;
}
}  // namespace

Tensor Tensor::scatter(int dim, const Tensor& index, const Tensor& src) const {
  TG_CHECK(src.ndim() == ndim(), "scatter: src of shape ", src.shape(), " must have the same rank as the input of shape ", shape());
  TG_CHECK_AS(TypeError, src.dtype() == dtype(), "scatter: src dtype ", src.dtype().name(), " differs from the input's ", dtype().name());
  TG_CHECK(src.device() == device(), "scatter: src on ", src.device(), ", the input on ", device());
  int d = scatter_checks(*this, dim, index, &src.shape());
  if (ndim() == 0) return reshape({1}).scatter(0, index.reshape({1}), src.reshape({1})).reshape({});
  if (index.numel() == 0) return *this;
  return scatter_impl(*this, d, index.to(device()), src.shrink(full_bounds(index)));
}

Tensor Tensor::scatter(int dim, const Tensor& index, double value) const {
  int d = scatter_checks(*this, dim, index, nullptr);
  detail::check_fill_value(value, dtype(), "scatter");
  if (ndim() == 0) return reshape({1}).scatter(0, index.reshape({1}), value).reshape({});
  if (index.numel() == 0) return *this;
  return scatter_impl(*this, d, index.to(device()), detail::const_tensor(index.shape(), value, dtype(), device()));
}

Tensor Tensor::scatter_reduce(int dim, const Tensor& index, const Tensor& src, const std::string& reduce, bool include_self) const {
  const char* op = "scatter_reduce";
  TG_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", op, ": reduce must be sum, prod, mean, amax or amin, got '", reduce, "'");
  TG_CHECK(src.ndim() == ndim(), op, ": src of shape ", src.shape(), " must have the same rank as the input of shape ", shape());
  TG_CHECK_AS(TypeError, src.dtype() == dtype(), op, ": src dtype ", src.dtype().name(), " differs from the input's ", dtype().name());
  TG_CHECK(src.device() == device(), op, ": src on ", src.device(), ", the input on ", device());
  int d = scatter_checks(*this, dim, index, &src.shape(), op);
  if (ndim() == 0) return reshape({1}).scatter_reduce(0, index.reshape({1}), src.reshape({1}), reduce, include_self).reshape({});
  if (index.numel() == 0) return *this;
  std::vector<std::pair<int64_t, int64_t>> in_index = full_bounds(index);
  int64_t n = shape()[static_cast<size_t>(d)];
  Tensor hits = scatter_hits(*this, d, index.to(device()));  // every entry that hits a position joins its reduce
  Tensor s = src.shrink(in_index).unsqueeze(d + 1);
  DType dt = dtype();
  auto fill = [&](double v) { return detail::const_tensor({}, v, dt, device()); };
  double lowest = dt.is_float() ? -INFINITY : dt.min(), highest = dt.is_float() ? INFINITY : dt.max();
  Tensor count = hits.cast(dtypes::int32).sum({d});
  // the region index covers (its sizes in the other dims) and, within it, the positions something hits
  Tensor self_part = shrink([&] {
    auto b = in_index;
    b[static_cast<size_t>(d)] = {0, n};
    return b;
  }());
  Tensor got = [&] {
    if (reduce == "sum" || reduce == "mean") {
      Tensor sum = hits.where(s, fill(0)).sum({d}).cast(dt);
      if (include_self) sum = sum + self_part;
      if (reduce == "sum") return sum;
      // as torch, integers by floor division
      DType q = dt.is_float() ? dt : dt == dtypes::uint64 ? dtypes::uint64 : dtypes::int64;  // holds every count
      Tensor c = (count + (include_self ? 1 : 0)).cast(q);
      return dt.is_float() ? sum / c : sum.cast(q).floor_divide(c).cast(dt);
    }
    if (reduce == "prod") {
      Tensor p = hits.where(s, fill(1)).prod({d}).cast(dt);
      return include_self ? p * self_part : p;
    }
    bool amax = reduce == "amax";
    Tensor e = amax ? hits.where(s, fill(lowest)).max({d}) : hits.where(s, fill(highest)).min({d});
    return !include_self ? e : amax ? e.maximum(self_part) : e.minimum(self_part);
  }();
  return scatter_into(*this, count > 0, got);
}

Tensor Tensor::masked_fill(const Tensor& mask, double value) const {
  TG_CHECK_AS(TypeError, mask.dtype().is_bool(), "masked_fill: mask must be bool, got ", mask.dtype().name(), " of shape ", mask.shape());
  std::optional<Shape> b = detail::broadcast_shape({shape(), mask.shape()});
  TG_CHECK(b && *b == shape(), "masked_fill: mask of shape ", mask.shape(), " does not broadcast to the input's shape ", shape());
  detail::check_fill_value(value, dtype(), "masked_fill");
  return mask.where(detail::const_tensor({}, value, dtype(), device()), *this);
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  TG_CHECK_AS(TypeError, dtype().is_int(), "one_hot: needs an integer tensor, got ", dtype().name(), " of shape ", shape());
  if (num_classes == -1) {  // the number of classes is in the data: read it
    TG_CHECK(numel() > 0, "one_hot: cannot infer the number of classes from an empty tensor of shape ", shape());
    TG_CHECK(min().cast(dtypes::int64).item<int64_t>() >= 0, "one_hot: class values must be non-negative (shape ", shape(), ")");
    num_classes = max().cast(dtypes::int64).item<int64_t>() + 1;
  }
  TG_CHECK(num_classes >= 0 && num_classes < (int64_t{1} << 31), "one_hot: num_classes must be -1 or in [0, 2^31), got ", num_classes,
           " (tensor of shape ", shape(), ")");
  Shape out = shape();
  out.push_back(num_classes);
  detail::checked_numel(out, dtypes::default_int, "one_hot");
  detail::check_index_range(*this, 0, num_classes, "one_hot", detail::cat("num_classes ", num_classes));
  // an entry outside [0, num_classes) matches no class: its row is all zeros
  DType cmp = dtype().itemsize() == 8 ? dtypes::int64 : dtypes::int32;  // no wrap of a large label onto a class
  Tensor hit = cast(cmp).unsqueeze(-1).eq(iota_along(num_classes, ndim(), ndim() + 1, device()).cast(cmp));
  return hit.cast(dtypes::default_int);
}

}  // namespace tg

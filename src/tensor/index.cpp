// Indexing: libtorch's Tensor::index, gather, scatter, masked_fill and one_hot.
//
// An integer tensor index is one data-dependent load (LazyBuffer::gather): the kernel reads the index,
// then the one element it names, so the work is proportional to the output. tinygrad v0.9 builds the
// same thing as a one-hot (output x indexed axis) multiply-and-sum instead. Only the gradient, and
// scatter (whose output is the whole tensor anyway), use a one-hot compare.
#include <algorithm>

#include "lazy/lazybuffer.h"
#include "shape/shapetracker.h"
#include "tensor/internal.h"

namespace tg {

namespace {

using namespace indexing;

// 0, 1, ..., n-1 as int32, shaped to lie along `dim` of a rank-`ndim` tensor.
Tensor iota_along(int64_t n, int dim, int ndim, const std::string& device) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[static_cast<size_t>(dim)] = n;
  return Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, device).reshape(s);
}

// Negative indices count from the end of an axis of size n.
Tensor wrap_negative(const Tensor& idx, int64_t n) { return (idx < 0).where(idx + n, idx); }

// out = data gathered along `axis` by idx (int32, of the output's shape). The gradient of data is the
// output's gradient summed into the rows it was read from: a one-hot compare-and-sum, whose cost is
// paid by backward only. The index gets no gradient.
struct Gather : Function {
  explicit Gather(int axis) : axis(axis) {}
  int axis;
  Shape data_shape;
  LBPtr idx;
  LBPtr forward(const std::vector<LBPtr>& x) override {
    data_shape = x[0]->shape();
    idx = x[1];
    return x[0]->gather(x[1], axis);
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
  return Function::apply<Gather>({data, idx.cast(dtypes::int32)}, axis);
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
  // the linear index into the merged dims; an entry out of range in any dim points past the end
  int64_t total = 1;
  for (size_t j = 0; j < k; j++) total *= y.shape()[static_cast<size_t>(first) + j];
  Tensor lin = idxs[0].cast(dtypes::int32).expand(B);
  if (k > 1) {
    Tensor ok = Tensor::full({}, 1, dtypes::bool_, y.device());
    int64_t stride = total;
    lin = Tensor::full({}, 0, dtypes::int32, y.device());
    for (size_t j = 0; j < k; j++) {
      int64_t n = y.shape()[static_cast<size_t>(first) + j];
      stride /= n;
      Tensor w = wrap_negative(idxs[j].cast(dtypes::int32), n);
      ok = ok.bitwise_and((w >= 0).bitwise_and(w < n));
      lin = lin + w * stride;
    }
    lin = ok.where(lin, Tensor::full({}, static_cast<double>(total), dtypes::int32, y.device())).expand(B);
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

// A bool mask over dims d.. of y, as numpy and torch read it: the coordinates of its true entries, one
// int32 tensor per masked dim. The output's shape depends on the data, so the mask is read on the host.
std::vector<Tensor> mask_coordinates(const Tensor& mask, const Tensor& y, int d) {
  TG_CHECK_AS(IndexError, d + mask.ndim() <= y.ndim(), "index: a bool mask of shape ", mask.shape(), " has more dims than are left in shape ", y.shape());
  for (int i = 0; i < mask.ndim(); i++)
    TG_CHECK_AS(IndexError, mask.shape()[i] == y.shape()[d + i], "index: the bool mask of shape ", mask.shape(), " does not match dims ", d, ".. of ",
             y.shape());
  std::vector<bool> m = mask.tolist<bool>();
  std::vector<std::vector<int32_t>> coords(static_cast<size_t>(mask.ndim()));
  for (size_t flat = 0; flat < m.size(); flat++) {
    if (!m[flat]) continue;
    size_t rest = flat;
    for (int i = mask.ndim() - 1; i >= 0; i--) {
      auto n = static_cast<size_t>(mask.shape()[i]);
      coords[i].push_back(static_cast<int32_t>(rest % n));
      rest /= n;
    }
  }
  std::vector<Tensor> out;
  for (auto& c : coords) out.push_back(Tensor(c, {static_cast<int64_t>(c.size())}, y.device()));
  return out;
}

void check_index_tensor(const Tensor& t, const char* op) {
  TG_CHECK_AS(TypeError, t.dtype().is_int(), op, ": index tensors must be integers, got ", t.dtype().name(), " of shape ", t.shape());
}

}  // namespace

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  int consumed = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    const auto& v = i.value();
    if (std::holds_alternative<EllipsisIndex>(v)) ellipses++;
    else if (auto* t = std::get_if<Tensor>(&v); t && t->dtype().is_bool()) consumed += std::max(1, t->ndim());
    else if (!std::holds_alternative<NoneIndex>(v)) consumed++;
  }
  TG_CHECK_AS(IndexError, ellipses <= 1, "index: an index can only have a single ellipsis");
  TG_CHECK_AS(IndexError, consumed <= ndim(), "index: too many indices for tensor of shape ", shape(), ": ", consumed, " indices given");
  Tensor y = *this;
  int d = 0;  // the dim of y the next index applies to
  std::vector<int> tdims;
  std::vector<Tensor> tidx;
  for (const TensorIndex& i : indices) {
    const auto& v = i.value();
    if (auto* n = std::get_if<int64_t>(&v)) {
      int64_t size = y.shape()[d];
      TG_CHECK_AS(IndexError, *n >= -size && *n < size, "index: index ", *n, " is out of bounds for dimension ", d, " with size ", size,
               " (tensor of shape ", shape(), ")");
      int64_t p = *n < 0 ? *n + size : *n;
      auto b = full_bounds(y);
      b[d] = {p, p + 1};
      y = y.shrink(b).squeeze(d);
    } else if (auto* s = std::get_if<Slice>(&v)) {
      y = take_slice(y, d, slice_range(*s, y.shape()[d]));
      d++;
    } else if (std::holds_alternative<NoneIndex>(v)) {
      y = y.unsqueeze(d);
      d++;
    } else if (std::holds_alternative<EllipsisIndex>(v)) {
      d += ndim() - consumed;
    } else {
      const Tensor& t = std::get<Tensor>(v);
      if (t.dtype().is_bool()) {
        TG_CHECK(t.ndim() > 0, "index: a 0-dim bool mask is not supported");
        for (Tensor& c : mask_coordinates(t, y, d)) {
          tdims.push_back(d++);
          tidx.push_back(c);
        }
        continue;
      }
      check_index_tensor(t, "index");
      int64_t n = y.shape()[static_cast<size_t>(d)];
      detail::check_index_range(t, -n, n, "index", detail::cat("a dim of size ", n, " (tensor of shape ", shape(), ")"));
      tdims.push_back(d);
      tidx.push_back(t.to(device()));
      d++;
    }
  }
  return tidx.empty() ? y : advanced_index(y, tdims, tidx);
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
// self with src[...] written at index along d (torch's scatter), as a one-hot select: for every
// position of self along d, the last index entry naming it wins. src has the index's shape.
Tensor scatter_impl(const Tensor& self, int d, const Tensor& index, const Tensor& src) {
  int64_t n = self.shape()[d], m = index.shape()[d];
  int r = self.ndim() + 1;
  // (..., m, n, ...): index entry m against self position n
  Tensor hits = wrap_negative(index.cast(dtypes::int32), n).unsqueeze(d + 1).eq(iota_along(n, d + 1, r, self.device()));
  Tensor mpos = iota_along(m, d, r, self.device());
  Tensor last = hits.where(mpos, Tensor::full({}, -1, dtypes::int32, self.device())).max({d}, true);
  Tensor win = hits.bitwise_and(mpos.eq(last));
  Tensor zero = Tensor::full({}, 0, src.dtype(), self.device());
  Tensor val = win.where(src.unsqueeze(d + 1), zero).sum({d}).cast(self.dtype());
  Tensor hit = (last >= 0).squeeze(d);
  // index covers self only up to its own sizes in the other dims
  std::vector<std::pair<int64_t, int64_t>> pad;
  for (int i = 0; i < self.ndim(); i++) pad.emplace_back(0, self.shape()[i] - hit.shape()[i]);
  return hit.pad(pad).where(val.pad(pad), self);
}

int scatter_checks(const Tensor& self, int dim, const Tensor& index, const Shape* src_shape) {
  check_index_tensor(index, "scatter");
  TG_CHECK(index.ndim() == self.ndim(), "scatter: index of shape ", index.shape(), " must have the same rank as the input of shape ",
           self.shape());
  int d = self.norm_axis(dim, "scatter");
  if (self.ndim() > 0) {
    int64_t n = self.shape()[static_cast<size_t>(d)];
    detail::check_index_range(index, -n, n, "scatter", detail::cat("dim ", d, " of size ", n, " of shape ", self.shape()));
  }
  for (int i = 0; i < self.ndim(); i++) {
    TG_CHECK(i == d || index.shape()[i] <= self.shape()[i], "scatter: index of shape ", index.shape(),
             " is larger than the input of shape ", self.shape(), " in dim ", i);
    TG_CHECK(!src_shape || index.shape()[i] <= (*src_shape)[i], "scatter: index of shape ", index.shape(),
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
  return scatter_impl(*this, d, index.to(device()), src.shrink([&] {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (int64_t s : index.shape()) b.emplace_back(0, s);
    return b;
  }()));
}

Tensor Tensor::scatter(int dim, const Tensor& index, double value) const {
  int d = scatter_checks(*this, dim, index, nullptr);
  detail::check_fill_value(value, dtype(), "scatter");
  if (ndim() == 0) return reshape({1}).scatter(0, index.reshape({1}), value).reshape({});
  if (index.numel() == 0) return *this;
  return scatter_impl(*this, d, index.to(device()), detail::const_tensor(index.shape(), value, dtype(), device()));
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

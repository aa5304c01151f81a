// Movement ops: views over the same data, each one autograd Function (Reshape, Permute, Expand, Pad,
// Shrink, Flip), plus the conveniences built from them.
#include <algorithm>
#include <numeric>

#include "tensor/internal.h"

namespace tg {


Tensor Tensor::reshape(const Shape& new_shape) const {
  if (new_shape == shape()) return *this;  // (a tensor's own shape is valid: nothing to check)
  Shape s = new_shape;
  int infer = -1;
  int64_t known = 1;
  bool overflow = false;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == -1) {
      TG_CHECK(infer < 0, "reshape: only one dimension can be -1, got ", new_shape);
      infer = static_cast<int>(i);
    } else {
      TG_CHECK(s[i] >= 0, "reshape: invalid dimension ", s[i], " in ", new_shape, " for shape ", shape());
      overflow |= __builtin_mul_overflow(known, s[i], &known);
    }
  }
  TG_CHECK(!overflow, "reshape: cannot reshape ", shape(), " to ", new_shape, ": the element count overflows int64");
  if (infer >= 0) {
    TG_CHECK(known != 0 && numel() % known == 0, "reshape: cannot reshape ", shape(), " to ", new_shape);
    s[infer] = numel() / known;
  }
  TG_CHECK(known == numel() || infer >= 0, "reshape: cannot reshape ", shape(), " to ", new_shape, " (", numel(), " elements vs ", known, ")");
  detail::checked_numel(s, dtype(), "reshape");  // also the dims beside a zero one
  if (s == shape()) return *this;
  return Function::apply<F::Reshape>({*this}, s);
}

Tensor Tensor::permute(const std::vector<int>& order) const {
  std::vector<int> o;
  std::vector<bool> used(ndim(), false);
  bool ok = static_cast<int>(order.size()) == ndim();
  for (int a : order) {
    if (!ok || a < -ndim() || a >= ndim()) { ok = false; break; }
    int n = a < 0 ? a + ndim() : a;
    if (used[n]) { ok = false; break; }
    used[n] = true;
    o.push_back(n);
  }
  TG_CHECK(ok, "permute: order ", std::vector<int64_t>(order.begin(), order.end()), " is not a permutation of the dims of shape ", shape());
  return Function::apply<F::Permute>({*this}, o);
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  int a = norm_axis(dim0, "transpose"), b = norm_axis(dim1, "transpose");
  if (ndim() == 0) return *this;
  std::vector<int> order(static_cast<size_t>(ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
  return permute(order);
}

Tensor Tensor::expand(const Shape& new_shape) const {
  TG_CHECK(new_shape.size() >= shape().size(), "expand: cannot expand ", shape(), " to ", new_shape);
  Shape s = shape();
  s.insert(s.begin(), new_shape.size() - s.size(), 1);
  Shape out(new_shape.size());
  for (size_t i = 0; i < s.size(); i++) {
    out[i] = new_shape[i] == -1 ? s[i] : new_shape[i];
    TG_CHECK(s[i] == out[i] || (s[i] == 1 && out[i] >= 0), "expand: cannot expand ", shape(), " to ", new_shape);
  }
  TG_CHECK(detail::numel_if_fits(out, dtype()), "expand: cannot expand ", shape(), " to ", new_shape, " (", dtype().name(),
           "): the element count or byte size overflows int64");
  Tensor r = reshape(s);
  if (out == s) return r;
  return Function::apply<F::Expand>({r}, out);
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value) const {
  TG_CHECK(padding.size() == shape().size(), "pad: ", padding.size(), " (before, after) pairs for shape ", shape());
  bool any = false;
  for (auto [b, e] : padding) {
    TG_CHECK(b >= 0 && e >= 0, "pad: negative padding (", b, ", ", e, ") for shape ", shape());
    any |= b || e;
  }
  detail::checked_pad_shape(shape(), padding, dtype(), "pad");
  detail::check_fill_value(value, dtype(), "pad");
  if (!any) return *this;
  Tensor r = Function::apply<F::Pad>({*this}, padding);
  if (value == 0) return r;
  // pad with a value: pad a mask of ones with zeros and select
  Tensor mask = Function::apply<F::Pad>({detail::const_tensor(shape(), 1, dtypes::bool_, device())}, padding);
  return mask.where(r, detail::const_tensor({}, value, dtype(), device()));
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const {
  TG_CHECK(bounds.size() == shape().size(), "shrink: ", bounds.size(), " (begin, end) pairs for shape ", shape());
  bool any = false;
  for (size_t i = 0; i < bounds.size(); i++) {
    auto [b, e] = bounds[i];
    TG_CHECK(0 <= b && b <= e && e <= shape()[i], "shrink: bounds (", b, ", ", e, ") out of range for dim ", i, " of shape ", shape());
    any |= b != 0 || e != shape()[i];
  }
  return any ? Function::apply<F::Shrink>({*this}, bounds) : *this;
}

Tensor Tensor::flip(const std::vector<int>& axes) const {
  std::vector<bool> f(static_cast<size_t>(std::max(ndim(), 1)), false);  // a 0-d tensor flips as one element
  for (int a : axes) {
    int n = norm_axis(a, "flip");
    TG_CHECK(!f[n], "flip: axis ", a, " repeated for shape ", shape());
    f[n] = true;
  }
  if (ndim() == 0) return *this;
  return Function::apply<F::Flip>({*this}, f);
}

Tensor Tensor::squeeze(std::optional<int> dim) const {
  Shape s;
  if (!dim) {
    for (int64_t d : shape()) if (d != 1) s.push_back(d);
  } else {
    int n = norm_axis(*dim, "squeeze");
    if (ndim() == 0) return *this;
    s = shape();
    if (s[n] != 1) return *this;
    s.erase(s.begin() + n);
  }
  return reshape(s);
}

Tensor Tensor::unsqueeze(int dim) const {
  int n = ndim() + 1;
  TG_CHECK_AS(IndexError, dim >= -n && dim < n, "unsqueeze: dim ", dim, " out of range for shape ", shape());
  int d = dim < 0 ? dim + n : dim;
  Shape s = shape();
  s.insert(s.begin() + d, 1);
  return reshape(s);
}

Tensor Tensor::flatten(int start_dim, int end_dim) const {
  int a = norm_axis(start_dim, "flatten"), b = norm_axis(end_dim, "flatten");
  if (ndim() == 0) return reshape({1});
  TG_CHECK(a <= b, "flatten: start_dim ", start_dim, " is after end_dim ", end_dim, " for shape ", shape());
  Shape s(shape().begin(), shape().begin() + a);
  int64_t m = 1;
  for (int i = a; i <= b; i++) m *= shape()[i];
  s.push_back(m);
  s.insert(s.end(), shape().begin() + b + 1, shape().end());
  return reshape(s);
}

}  // namespace tg

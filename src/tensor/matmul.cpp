// Matrix products.
#include "tensor/internal.h"

namespace tg {

Tensor Tensor::dot(const Tensor& w) const {
  int n1 = ndim(), n2 = w.ndim();
  TG_CHECK(n1 != 0 && n2 != 0, "dot: both tensors need at least 1 dimension, got ", shape(), " and ", w.shape());
  int64_t l = shape()[n1 - 1], r = w.shape()[n2 - std::min(n2, 2)];
  TG_CHECK(l == r, "dot: cannot multiply shapes ", shape(), " and ", w.shape(), " (", l, " != ", r, ")");
  int ones = std::min({n1 - 1, n2 - 1, 1});
  Shape xs(shape().begin(), shape().end() - 1);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(l);
  Shape ws(w.shape().begin(), w.shape().end() - std::min(n2, 2));
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), w.shape().end() - std::min(n2, 2), w.shape().end());
  Tensor x = reshape(xs), y = w.reshape(ws).transpose(-1, -std::min(n2, 2));
  return (x * y).sum({-1}).cast(least_upper_dtype({dtype(), w.dtype()}));
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  Tensor x = weight.ndim() == 1 ? *this * weight : dot(weight.transpose(-1, -2));
  return bias ? x + *bias : x;
}

}  // namespace tg

// Matrix products.
#include "tensor/internal.h"

namespace tg {

namespace {
// a @ w by numpy's rules; errors name `op` (dot or matmul, whichever the user called) and the user's shapes.
Tensor matmul_as(const Tensor& a, const Tensor& w, const char* op) {
  int n1 = a.ndim(), n2 = w.ndim();
  TG_CHECK(n1 != 0 && n2 != 0, op, ": both tensors need at least 1 dimension, got ", a.shape(), " and ", w.shape());
  int64_t l = a.shape()[n1 - 1], r = w.shape()[n2 - std::min(n2, 2)];
  TG_CHECK(l == r, op, ": cannot multiply shapes ", a.shape(), " and ", w.shape(), " (", l, " != ", r, ")");
  int ones = std::min({n1 - 1, n2 - 1, 1});
  Shape xs(a.shape().begin(), a.shape().end() - 1);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(l);
  Shape ws(w.shape().begin(), w.shape().end() - std::min(n2, 2));
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), w.shape().end() - std::min(n2, 2), w.shape().end());
  // the leading (batch) dims must broadcast: checked here, before the multiply could name itself
  Shape yt = ws;
  std::swap(yt.back(), yt[yt.size() - static_cast<size_t>(std::min(n2, 2))]);
  TG_CHECK(detail::broadcast_shape({xs, yt}), op, ": cannot broadcast the batch dims of shapes ", a.shape(), " and ", w.shape());
  Tensor x = a.reshape(xs), y = w.reshape(ws).transpose(-1, -std::min(n2, 2));
  return (x * y).sum({-1}).cast(least_upper_dtype({a.dtype(), w.dtype()}));
}
}  // namespace

Tensor Tensor::dot(const Tensor& w) const { return matmul_as(*this, w, "dot"); }
Tensor Tensor::matmul(const Tensor& w) const { return matmul_as(*this, w, "matmul"); }

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  TG_CHECK(ndim() >= 1 && (weight.ndim() == 1 || weight.ndim() == 2) && shape().back() == weight.shape().back(), "linear: input ",
           shape(), " and weight ", weight.shape(), " do not match: weight must be (out_features, ", ndim() ? shape().back() : 0,
           ") or (", ndim() ? shape().back() : 0, ",)");
  Shape out = shape();
  if (weight.ndim() == 2) out.back() = weight.shape()[0];
  TG_CHECK(!bias || detail::broadcast_shape({out, bias->shape()}) == out, "linear: bias ", bias ? bias->shape() : Shape{},
           " does not broadcast to the output ", out, " of input ", shape(), " and weight ", weight.shape());
  Tensor x = weight.ndim() == 1 ? *this * weight : dot(weight.transpose(-1, -2));
  return bias ? x + *bias : x;
}

}  // namespace tg

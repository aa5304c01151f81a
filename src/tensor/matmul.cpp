// Matrix products.
#include <cstdlib>

#include "renderer/renderer.h"
#include "runtime/device.h"
#include "tensor/internal.h"

namespace tg {

namespace {
// A large product by a matrix is computed from a copy of the matrix in column panels: w (K, N) becomes
// (N/W, K, W), contiguous, in a kernel of its own, and the product reads each panel as one stream (a
// kernel reading w's own rows, N elements apart, loses a third of its speed to cache conflicts). W is
// the device's (Renderer::matmul_panel; 0: not packed). Each output is the same sum of the same
// products; the order of the additions is the kernel's, as with any other choice of opts.
// A w read across its rows (w.T of a row-major matrix, as every Linear layer's weight is) is copied for
// any reduce of 8 or more: without the copy the product gathers each vector of w from separate rows,
// 2-5x slower than the copy and the product together even at a reduce of 16 (Emerald Rapids; at 4 the
// copy no longer pays).
std::optional<Tensor> panel_matmul(const Tensor& a, const Tensor& w) {
  constexpr int64_t kMinRows = 64, kMinReduce = 256, kMinReduceAcrossRows = 8, kMinPanels = 8;
  if (a.ndim() < 2 || w.ndim() != 2 || a.dtype() != w.dtype() || a.device() != w.device()) return std::nullopt;
  int64_t k = w.shape()[0], n = w.shape()[1], m = a.numel() / std::max<int64_t>(k, 1);
  std::optional<int64_t> column_stride = w.lazydata()->st.real_strides()[1];  // (0: a broadcast w, nothing to gather)
  bool across_rows = column_stride && std::abs(*column_stride) > 1;
  if (m < kMinRows || k < (across_rows ? kMinReduceAcrossRows : kMinReduce)) return std::nullopt;
  Compiled& dev = Device::get(w.device());
  int64_t width = dev.has_renderer() ? dev.renderer().matmul_panel(w.dtype()) : 0;
  if (width < 2 || n < kMinPanels * width) return std::nullopt;
  // columns up to whole panels are zeros (a 1000-wide w: 1024, so the kernel keeps its full register
  // tile), cut from the product again
  int64_t panels_n = (n + width - 1) / width, padded = panels_n * width;
  Tensor wp = padded == n ? w : w.pad({{0, 0}, {0, padded - n}});
  Tensor panels = wp.reshape({k, panels_n, width}).permute({1, 0, 2}).contiguous();
  Shape out = a.shape();
  out.back() = padded;
  Tensor prod = (a.reshape({m, 1, k, 1}) * panels.reshape({1, panels_n, k, width})).sum({2}).reshape(out);
  if (padded == n) return prod;
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t d : a.shape()) keep.emplace_back(0, d);
  keep.back() = {0, n};
  return prod.shrink(keep);
}

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
  if (auto p = panel_matmul(a, w)) return *p;
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

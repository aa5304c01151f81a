// Reductions, composed from the Sum and Max Functions.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tensor/internal.h"

namespace tg {

namespace detail {
std::pair<std::vector<int>, Shape> reduce_axes(const Tensor& t, const std::vector<int>& axes, bool keepdim, const char* op) {
  std::vector<int> ax;
  if (axes.empty()) { ax.resize(static_cast<size_t>(t.ndim())); std::iota(ax.begin(), ax.end(), 0); }
  for (int a : axes) {
    int n = t.norm_axis(a, op);
    TG_CHECK(std::find(ax.begin(), ax.end(), n) == ax.end(), op, ": axis ", a, " repeated for shape ", t.shape());
    ax.push_back(n);
  }
  ax.erase(std::remove_if(ax.begin(), ax.end(), [&](int a) { return a >= t.ndim(); }), ax.end());  // scalar tensors
  Shape out;
  for (int i = 0; i < t.ndim(); i++) {
    bool reduced = std::find(ax.begin(), ax.end(), i) != ax.end();
    if (!reduced) out.push_back(t.shape()[i]);
    else if (keepdim) out.push_back(1);
  }
  return {std::move(ax), std::move(out)};
}
DType sum_acc_dtype(DType d) {
  if (d.is_float()) return d.scalar == Scalar::Float16 ? dtypes::float32 : d;
  if (d.is_unsigned()) return least_upper_dtype({d, dtypes::uint32});
  return least_upper_dtype({d, dtypes::int32});
}
}  // namespace detail

using detail::reduce_axes;
using detail::to_float;

namespace {
// mean and var over normalized axes `ax` (which reduce_axes has checked under the user's op name). An
// empty `ax` of a 0-d tensor means all of its (no) axes, as for sum.
Tensor mean_of(const Tensor& t, const std::vector<int>& ax, bool keepdim) {
  Tensor s = t.sum(ax, keepdim);
  int64_t n = t.numel() / std::max<int64_t>(1, s.numel());
  Tensor f = to_float(s);
  return n == 0 ? f * NAN : f * (1.0 / static_cast<double>(n));
}
Tensor var_of(const Tensor& t, const std::vector<int>& ax, bool keepdim, double correction) {
  Tensor m = mean_of(t, ax, true);
  Tensor sq = (to_float(t) - m).square().sum(ax, keepdim);
  int64_t n = t.numel() / std::max<int64_t>(1, sq.numel());
  return sq * (1.0 / std::max(0.0, static_cast<double>(n) - correction));
}
}  // namespace

Tensor Tensor::sum(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = reduce_axes(*this, axes, keepdim, "sum");
  DType acc = detail::sum_acc_dtype(dtype());
  Tensor r = Function::apply<F::Sum>({cast(acc)}, ax).reshape(out);
  return dtype().scalar == Scalar::Float16 ? r.cast(dtype()) : r;
}
namespace {
// max/min: every reduced axis must have entries (torch raises too; there is no identity to return).
std::pair<std::vector<int>, Shape> extreme_axes(const Tensor& t, const std::vector<int>& axes, bool keepdim, const char* op) {
  auto r = reduce_axes(t, axes, keepdim, op);
  for (int a : r.first) TG_CHECK(t.shape()[a] > 0, op, ": cannot reduce zero-size axis ", a, " of shape ", t.shape());
  return r;
}
}  // namespace

Tensor Tensor::max(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = extreme_axes(*this, axes, keepdim, "max");
  return Function::apply<F::Max>({*this}, ax).reshape(out);
}
Tensor Tensor::min(const std::vector<int>& axes, bool keepdim) const {
  std::vector<int> ax = extreme_axes(*this, axes, keepdim, "min").first;
  if (dtype().is_float()) return neg().max(ax, keepdim).neg();
  if (dtype().is_bool()) return logical_not().max(ax, keepdim).logical_not();
  // ~x reverses the order of signed and unsigned integers alike
  return bitwise_not().max(ax, keepdim).bitwise_not();
}
Tensor Tensor::mean(const std::vector<int>& axes, bool keepdim) const {
  std::vector<int> ax = reduce_axes(*this, axes, keepdim, "mean").first;
  return mean_of(*this, ax, keepdim);
}
Tensor Tensor::var(const std::vector<int>& axes, bool keepdim, double correction) const {
  return var_of(*this, reduce_axes(*this, axes, keepdim, "var").first, keepdim, correction);
}
Tensor Tensor::std(const std::vector<int>& axes, bool keepdim, double correction) const {
  return var_of(*this, reduce_axes(*this, axes, keepdim, "std").first, keepdim, correction).sqrt();
}

}  // namespace tg

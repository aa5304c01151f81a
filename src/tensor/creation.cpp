// Tensors made from nothing: constants, ranges, the identity.
#include <cmath>

#include "lazy/lazybuffer.h"
#include "tensor/internal.h"

namespace tg {

namespace {
Tensor filled(const Shape& shape, double value, DType dtype, const std::string& device, const char* op) {
  detail::checked_numel(shape, dtype, op);
  detail::check_fill_value(value, dtype, op);
  return detail::const_tensor(shape, value, dtype, device);
}
}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  detail::checked_numel(shape, dtype, "empty");
  return Tensor(LazyBuffer::metaop(Ops::EMPTY, shape, dtype, detail::dev_or_default(device)));
}
Tensor Tensor::full(const Shape& shape, double value, DType dtype, const std::string& device) {
  return filled(shape, value, dtype, device, "full");
}
Tensor Tensor::scalar_tensor(double value, DType dtype, const std::string& device) { return filled({}, value, dtype, device, "Tensor"); }
Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) { return filled(shape, 0, dtype, device, "zeros"); }
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) { return filled(shape, 1, dtype, device, "ones"); }
Tensor Tensor::full_like(double value, std::optional<DType> dt) const {
  return filled(shape(), value, dt.value_or(dtype()), device(), "full_like");
}
Tensor Tensor::zeros_like(std::optional<DType> dt) const { return full_like(0, dt); }
Tensor Tensor::ones_like(std::optional<DType> dt) const { return full_like(1, dt); }

namespace {
// 0, 1, ..., n-1 as int32 (int64 from 2^31 elements on): an ARANGE leaf, which the kernels that read
// it compute from their index (no kernel of its own, and an argmax's ramp fuses into its reduce).
Tensor ramp(int64_t n, const std::string& device) {
  return Tensor(LazyBuffer::metaop(Ops::ARANGE, {n}, n > INT32_MAX ? dtypes::int64 : dtypes::int32, device));
}
}  // namespace

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype, const std::string& device) {
  // torch's rules: finite ends, a nonzero step pointing from start to stop, a count that fits
  TG_CHECK(std::isfinite(start) && std::isfinite(stop), "arange: unsupported range ", start, " -> ", stop);
  TG_CHECK(step != 0 && !std::isnan(step), "arange: step must be nonzero, got ", step);
  TG_CHECK((step > 0 && stop >= start) || (step < 0 && stop <= start), "arange: the range ", start, " -> ", stop,
           " is inconsistent with the sign of step ", step);
  bool all_int = start == std::floor(start) && stop == std::floor(stop) && step == std::floor(step);
  DType dt = dtype.value_or(all_int ? dtypes::default_int : dtypes::default_float);
  double count = std::ceil((stop - start) / step);  // >= 0 here; may be inf or huge
  TG_CHECK(count < 0x1p62, "arange: ", start, " -> ", stop, " by ", step, " is ", count, " elements, too many for a tensor");
  int64_t n = static_cast<int64_t>(count);
  detail::checked_numel({n}, dt, "arange");
  if (n == 0) return empty({0}, dt, device);
  // both ends must be values of the dtype: torch wraps an integer range and overflows a float16 one to
  // inf without a word; the values between lie between the ends
  double last = n == 1 ? start : start + static_cast<double>(n - 1) * step;  // one element: any step, inf too
  for (double end : {start, last}) {
    TG_CHECK(detail::is_value_of(end, dt), "arange: ", start, " -> ", stop, " by ", step, " reaches ", end, ", which ", dt.name(),
             " cannot hold");
  }
  if (n == 1) return full({1}, start, dt, device);
  Tensor i = ramp(n, detail::dev_or_default(device));
  if (dt.is_float()) return (i.cast(dt) * step + start).cast(dt);
  // integers in 64-bit integers: start and step are whole numbers here; uint64's ends past int64 in uint64
  DType wide = dt == dtypes::uint64 ? dtypes::uint64 : dtypes::int64;
  Tensor base = detail::const_tensor({}, start, wide, i.device());
  Tensor offset = i.cast(wide) * detail::const_tensor({}, std::fabs(step), wide, i.device());  // |step| may be 2^63
  return (step > 0 ? base + offset : base - offset).cast(dt);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype, const std::string& device) {
  TG_CHECK(steps >= 0 && steps < (int64_t{1} << 31), "linspace: steps must be in [0, 2^31), got ", steps);
  if (steps == 1) return filled({1}, start, dtype, device, "linspace");
  Tensor i = arange(0, static_cast<double>(steps), 1, dtypes::float32, device);
  return (i * ((stop - start) / static_cast<double>(steps - 1)) + start).cast(dtype);
}

Tensor Tensor::eye(int64_t n, DType dtype, const std::string& device) {
  TG_CHECK(n >= 0, "eye: negative size ", n);
  detail::checked_numel({n, n}, dtype, "eye");
  if (n == 0) return zeros({0, 0}, dtype, device);
  // ones at stride n+1 of a flat (n*n) buffer: a (n, n+1) grid whose first column is 1
  return full({n, 1}, 1, dtype, device).pad({{0, 0}, {0, n}}).reshape({n * (n + 1)}).shrink({{0, n * n}}).reshape({n, n});
}

Tensor Tensor::eye(int64_t n, int64_t m, DType dtype, const std::string& device) {
  TG_CHECK(n >= 0 && m >= 0, "eye: negative size (", n, ", ", m, ")");
  detail::checked_numel({n, m}, dtype, "eye");
  // the square identity of the smaller side, zero-padded out to the rectangle: no (max, max) buffer
  int64_t k = std::min(n, m);
  return eye(k, dtype, device).pad({{0, n - k}, {0, m - k}});
}

}  // namespace tg

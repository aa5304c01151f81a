// Tensors made from nothing: constants, ranges, the identity.
#include <cmath>

#include "lazy/lazybuffer.h"
#include "tensor/internal.h"

namespace tg {

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  for (int64_t d : shape) TG_CHECK(d >= 0, "empty: negative dimension in shape ", shape);
  return Tensor(LazyBuffer::metaop(Ops::EMPTY, shape, dtype, detail::dev_or_default(device)));
}
Tensor Tensor::full(const Shape& shape, double value, DType dtype, const std::string& device) {
  for (int64_t d : shape) TG_CHECK(d >= 0, "full: negative dimension in shape ", shape);
  return Tensor(LazyBuffer::cnst(value, dtype, detail::dev_or_default(device), shape));
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) { return full(shape, 0, dtype, device); }
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) { return full(shape, 1, dtype, device); }
Tensor Tensor::full_like(double value, std::optional<DType> dt) const { return full(shape(), value, dt.value_or(dtype()), device()); }
Tensor Tensor::zeros_like(std::optional<DType> dt) const { return full_like(0, dt); }
Tensor Tensor::ones_like(std::optional<DType> dt) const { return full_like(1, dt); }

namespace {
// 0, 1, ..., n-1 as int32 with O(n) work. Up to 256 it is tinygrad's window sum (row i of a sliding
// window over (0,..,0,1,..,1) holds i+1 ones, an n*n reduce); beyond that the ramp is built from a
// coarser one: ramp(n)[256*h + l] = 256*ramp(ceil(n/256))[h] + ramp(256)[l].
Tensor ramp(int64_t n, const std::string& device) {
  constexpr int64_t kBlock = 256;
  if (n <= kBlock) {
    Tensor ones = Tensor::full({n}, 1, dtypes::int32, device);
    Tensor idx = ones.reshape({1, n}).pad({{0, 0}, {n - 1, 0}});  // (1, 2n-1)
    Tensor window = idx.expand({n, 2 * n - 1}).reshape({n * (2 * n - 1)}).pad({{0, n}}).reshape({n, 2 * n}).shrink({{0, n}, {0, n}});
    return window.sum({1}) - 1;
  }
  int64_t hi_n = (n + kBlock - 1) / kBlock;
  Tensor hi = ramp(hi_n, device).reshape({hi_n, 1}) * static_cast<int>(kBlock);
  Tensor grid = hi + ramp(kBlock, device).reshape({1, kBlock});
  return grid.reshape({hi_n * kBlock}).shrink({{0, n}});
}
}  // namespace

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype, const std::string& device) {
  TG_CHECK(step != 0, "arange: step must not be 0");
  bool all_int = start == std::floor(start) && stop == std::floor(stop) && step == std::floor(step);
  DType dt = dtype.value_or(all_int ? dtypes::default_int : dtypes::default_float);
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  TG_CHECK(n < (int64_t{1} << 31), "arange: ", n, " elements is too many");
  if (n == 0) return empty({0}, dt, device);
  Tensor i = ramp(n, detail::dev_or_default(device));
  if (dt.is_float()) return (i.cast(dt) * step + start).cast(dt);
  return (i.cast(dtypes::int64) * static_cast<int64_t>(step) + static_cast<int64_t>(start)).cast(dt);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype, const std::string& device) {
  TG_CHECK(steps >= 0, "linspace: steps must be non-negative, got ", steps);
  if (steps == 1) return full({1}, start, dtype, device);
  Tensor i = arange(0, static_cast<double>(steps), 1, dtypes::float32, device);
  return (i * ((stop - start) / static_cast<double>(steps - 1)) + start).cast(dtype);
}

Tensor Tensor::eye(int64_t n, DType dtype, const std::string& device) {
  TG_CHECK(n >= 0, "eye: negative size ", n);
  if (n == 0) return zeros({0, 0}, dtype, device);
  // ones at stride n+1 of a flat (n*n) buffer: a (n, n+1) grid whose first column is 1
  return full({n, 1}, 1, dtype, device).pad({{0, 0}, {0, n}}).reshape({n * (n + 1)}).shrink({{0, n * n}}).reshape({n, n});
}

}  // namespace tg

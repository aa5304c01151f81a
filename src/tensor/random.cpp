// Random tensors.
#include <cmath>

#include "tensor/internal.h"

namespace tg {

namespace {
uint64_t g_seed = 0, g_counter = 0;  // the random state (a Context-like global, as tinygrad's Tensor._seed)
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

void Tensor::manual_seed(uint64_t seed) { g_seed = seed; g_counter = 0; }

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device) {
  TG_CHECK(dtype.is_float(), "rand: dtype must be a float type, got ", dtype.name());
  int64_t n = tg::prod(shape);
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t key = splitmix64(g_seed ^ splitmix64(g_counter++));
  for (int64_t i = 0; i < n; i++) v[i] = static_cast<float>(splitmix64(key + static_cast<uint64_t>(i)) >> 40) * (1.0f / 16777216.0f);
  return Tensor(v, shape, device).cast(dtype);
}

Tensor Tensor::randn(const Shape& shape, DType dtype, const std::string& device) {
  // Box-Muller on two uniform draws
  Shape both{2};
  both.insert(both.end(), shape.begin(), shape.end());
  Tensor u = rand(both, dtypes::float32, device);
  std::vector<std::pair<int64_t, int64_t>> first{{0, 1}}, second{{1, 2}};
  for (int64_t d : shape) { first.emplace_back(0, d); second.emplace_back(0, d); }
  Tensor u1 = u.shrink(first).reshape(shape), u2 = u.shrink(second).reshape(shape);
  Tensor r = ((1.0f - u1).log() * -2.0f).sqrt() * (u2 * static_cast<float>(2 * M_PI)).cos();
  return r.cast(dtype);
}

}  // namespace tg

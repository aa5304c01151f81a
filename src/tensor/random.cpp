// Random tensors from a counter-based generator that runs on the device: threefry2x32 (Random123)
// built from uint32 Tensor ops. The key is manual_seed's value and the counter is (element index,
// call number), so the numbers depend only on the seed and on how many random calls came before.
#include "tensor/random.h"

#include <atomic>
#include <cmath>

#include "lazy/lazybuffer.h"
#include "shape/shapetracker.h"
#include "tensor/capture.h"
#include "tensor/internal.h"

namespace tg {

namespace {

// Atomic: random tensors may be made from several threads (each call still takes its own counter word).
std::atomic<uint64_t> g_seed{0};   // the key (as tinygrad's Tensor._seed)
std::atomic<uint32_t> g_calls{0};  // the high counter word: one per random call since manual_seed

constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
constexpr uint32_t kSkeinParity = 0x1BD11BDA;

Tensor rotl(const Tensor& x, int r) { return x.lshift(r) | x.rshift(32 - r); }

Tensor iota(int64_t n, const std::string& device) { return Tensor::arange(0, static_cast<double>(n), 1, dtypes::uint32, device); }

// The shape and dtype a random op is asked for, checked under the user's op name: a float dtype (an
// integer one for randint), a count that fits, and at most 2^33 / draws draws (the generator's limit per
// call; randn draws twice per element).
void check_random(const Shape& shape, DType dtype, const char* op, int draws = 1) {
  bool want_int = std::string(op) == "randint";
  TG_CHECK_AS(TypeError, want_int ? dtype.is_int() : dtype.is_float(), op, ": dtype must be ", want_int ? "an integer" : "a float", " type, got ",
           dtype.name(), " (shape ", shape, ")");
  int64_t n = detail::checked_numel(shape, dtype, op);
  TG_CHECK(n <= (int64_t{1} << 33) / draws, op, ": shape ", shape, " has ", n, " elements, more than the generator's ",
           (int64_t{1} << 33) / draws, " per call");
}

}  // namespace

namespace detail {

std::pair<Tensor, Tensor> threefry2x32(const Tensor& x0, const Tensor& x1, const Tensor& k0, const Tensor& k1) {
  for (const Tensor* t : {&x0, &x1, &k0, &k1})
    TG_CHECK(t->dtype() == dtypes::uint32, "threefry2x32: needs uint32 tensors, got ", t->dtype().name(), " of shape ", t->shape());
  Tensor ks[3] = {k0, k1, k0 ^ k1 ^ static_cast<int64_t>(kSkeinParity)};
  Tensor a = x0 + ks[0], b = x1 + ks[1];
  for (int r = 0; r < 20; r++) {
    a = a + b;
    b = rotl(b, kRotations[r % 8]) ^ a;
    if (r % 4 == 3) {  // key injection s: the schedule rotates through ks and adds s to the second word
      int s = (r + 1) / 4;
      a = a + ks[s % 3];
      b = b + ks[(s + 1) % 3] + s;
    }
  }
  return {a, b};
}

Tensor random_bits(int64_t numel, const std::string& device) {
  int64_t half = (numel + 1) / 2;
  TG_CHECK(half <= (int64_t{1} << 32), "rand: ", numel, " elements exceed the generator's 2^33 per call");
  // key and call number come in a small buffer, not as kernel constants, so every call with the same
  // shape reuses one compiled kernel; a TinyJit replay refreshes the buffer, so its numbers advance too
  auto state = [] {
    uint64_t seed = g_seed;
    return std::vector<uint32_t>{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), g_calls++};
  };
  std::vector<uint32_t> now = state();
  LBPtr host = LazyBuffer::from_host(now.data(), {3}, dtypes::uint32);
  detail::on_replay([buf = host->buffer, state] { buf->copyin(state().data()); });
  Tensor st(host->copy_to_device(detail::dev_or_default(device)));
  Tensor k0 = st.shrink({{0, 1}}).reshape({}), k1 = st.shrink({{1, 2}}).reshape({}), call = st.shrink({{2, 3}}).reshape({});
  auto [w0, w1] = threefry2x32(iota(half, device), call, k0, k1);
  // each counter gives two words: the first half of the output, then the second
  Tensor bits = w0.pad({{0, half}}) | w1.pad({{half, 0}});
  return bits.shrink({{0, numel}});
}

}  // namespace detail

void Tensor::manual_seed(uint64_t seed) { g_seed = seed; g_calls = 0; }

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device) {
  check_random(shape, dtype, "rand");
  int64_t n = tg::prod(shape);
  if (n == 0) return zeros(shape, dtype, device);
  Tensor bits = detail::random_bits(n, detail::dev_or_default(device));
  // the top mantissa-many bits under the exponent of 1 make a float in [1, 2); minus 1 is exact, so
  // 1 is never reached (a float32 draw cast to half could round up to 1)
  Tensor u = dtype == dtypes::float16 ? (bits.rshift(22).cast(dtypes::uint16) | 0x3c00).bitcast(dtypes::float16) - 1.0
                                      : (bits.rshift(9) | 0x3f800000).bitcast(dtypes::float32) - 1.0;
  return u.cast(dtype).reshape(shape);
}

Tensor Tensor::rand_like(std::optional<DType> dt) const { return rand(shape(), dt.value_or(dtype()), device()); }

Tensor Tensor::randn(const Shape& shape, DType dtype, const std::string& device) {
  check_random(shape, dtype, "randn", 2);
  // Box-Muller on two uniform draws; 1 - u is in (0, 1], so the log is finite
  Shape both{2};
  both.insert(both.end(), shape.begin(), shape.end());
  Tensor u = rand(both, dtypes::float32, device);
  std::vector<std::pair<int64_t, int64_t>> first{{0, 1}}, second{{1, 2}};
  for (int64_t d : shape) { first.emplace_back(0, d); second.emplace_back(0, d); }
  Tensor u1 = u.shrink(first).reshape(shape), u2 = u.shrink(second).reshape(shape);
  return ((u1 * (2 * M_PI)).cos() * ((1.0 - u2).log() * -2.0).sqrt()).cast(dtype);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dtype, const std::string& device) {
  check_random(shape, dtype, "randint");
  TG_CHECK(low < high, "randint: low (", low, ") must be below high (", high, "), shape ", shape);
  TG_CHECK(static_cast<double>(low) >= dtype.min() && static_cast<double>(high - 1) <= dtype.max(), "randint: [", low, ", ",
           high, ") does not fit ", dtype.name());
  double range = static_cast<double>(high) - static_cast<double>(low);
  TG_CHECK(range <= 4294967296.0, "randint: range ", range, " exceeds the generator's 32 bits");
  int64_t n = tg::prod(shape);
  if (n == 0) return zeros(shape, dtype, device);
  // floor(bits / 2^32 * range) in float64 is exact enough to stay below range
  Tensor bits = detail::random_bits(n, detail::dev_or_default(device));
  Tensor offset = (bits.cast(dtypes::float64) * (range / 4294967296.0)).cast(dtypes::int64);
  return (offset + Tensor::full({}, static_cast<double>(low), dtypes::int64, offset.device())).cast(dtype).reshape(shape);
}

Tensor Tensor::normal(const Shape& shape, double mean, double std, DType dtype, const std::string& device) {
  check_random(shape, dtype, "normal", 2);
  return randn(shape, dtype, device) * std + mean;
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dtype, const std::string& device) {
  check_random(shape, dtype, "uniform");
  return rand(shape, dtype, device) * (high - low) + low;
}

Tensor Tensor::scaled_uniform(const Shape& shape, DType dtype, const std::string& device) {
  check_random(shape, dtype, "scaled_uniform");
  return uniform(shape, -1, 1, dtype, device) * std::pow(static_cast<double>(std::max<int64_t>(tg::prod(shape), 1)), -0.5);
}

namespace {
// prod(shape[1:]): the fan-in of a weight of this shape (tinygrad's convention)
double fan_in(const Shape& shape, DType dtype, const char* op) {
  TG_CHECK(!shape.empty(), op, ": needs a shape with at least one dimension");
  check_random(shape, dtype, op, 2);
  return static_cast<double>(tg::prod(Shape(shape.begin() + 1, shape.end())));
}
}  // namespace

Tensor Tensor::glorot_uniform(const Shape& shape, DType dtype, const std::string& device) {
  double fan = static_cast<double>(shape.empty() ? 0 : shape[0]) + fan_in(shape, dtype, "glorot_uniform");
  return uniform(shape, -1, 1, dtype, device) * std::sqrt(6.0 / fan);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, DType dtype, const std::string& device) {
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1 + a * a)) / std::sqrt(fan_in(shape, dtype, "kaiming_uniform"));
  return uniform(shape, -bound, bound, dtype, device);
}

Tensor Tensor::kaiming_normal(const Shape& shape, double a, DType dtype, const std::string& device) {
  double std = std::sqrt(2.0 / (1 + a * a)) / std::sqrt(fan_in(shape, dtype, "kaiming_normal"));
  return normal(shape, 0, std, dtype, device);
}

}  // namespace tg

namespace tg {

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  TG_CHECK(ndim() == 1 || ndim() == 2, "multinomial: needs a 1-D or 2-D tensor of weights, got shape ", shape(), " (", dtype().name(), ")");
  TG_CHECK(num_samples > 0, "multinomial: num_samples must be positive, got ", num_samples, " (weights of shape ", shape(), ")");
  TG_CHECK_AS(TypeError, !dtype().is_bool(), "multinomial: weights must be numbers, got bool (shape ", shape(), ")");
  Tensor w = (ndim() == 1 ? unsqueeze(0) : *this).detach().cast(dtypes::float32);
  int64_t rows = w.shape()[0], n = w.shape()[1];
  TG_CHECK(n > 0, "multinomial: weights of shape ", shape(), " have no categories to draw from");
  TG_CHECK(replacement || num_samples <= n, "multinomial: cannot draw ", num_samples, " samples without replacement from ", n,
           " categories (weights of shape ", shape(), ")");
  std::optional<Tensor> idx;
  if (replacement || num_samples == 1) {
    // the CDF of each row, and per sample the number of its entries at or below a uniform number in [0, 1)
    Tensor cw = w.cumsum(1);
    Tensor cdf = cw / cw.shrink({{0, rows}, {n - 1, n}});
    Tensor u = Tensor::rand({num_samples, rows, 1}, dtypes::float32, device());
    idx = (u >= cdf.unsqueeze(0)).cast(dtypes::int32).sum({2}).permute({1, 0});
  } else {
    // Efraimidis-Spirakis: the largest keys u^(1/w), compared as log2(u) / w (-inf for a weight of 0)
    Tensor keys = Tensor::rand(w.shape(), dtypes::float32, device()).log2() / w;
    idx = keys.topk(num_samples, 1).second;
  }
  Tensor r = idx->cast(dtypes::int32);
  return ndim() == 1 ? r.squeeze(0) : r;
}

}  // namespace tg

// Constant folding in the lazy layer (as tinygrad's LazyBuffer): an elementwise op of unpadded constants
// is a constant, and a reduce of a broadcast constant is a multiplication (sum n*v, max v, prod v^n), so
// ones({2^40}).sum() costs no kernel instead of minutes. The folded values are the kernels' values:
// integers wrap as the kernel's arithmetic does (checked against the same reduce of a realized buffer),
// a float sum is the correctly rounded n*v.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "tg/tensor.h"

using namespace tg;

namespace {
size_t kernels_of(const Tensor& t) {
  size_t n = 0;
  for (auto& si : create_schedule({t.lazydata()})) n += si.is_kernel();
  return n;
}
// Tensor::full(shape, v, dt) as a realized buffer, whose reduces run as kernels. Made from the host and
// cast (one kernel per dtype and shape, whatever v is: constants are compiled into kernels).
Tensor buffer_of(const Shape& shape, double v, DType dt) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor(std::vector<double>(static_cast<size_t>(n), v), shape).cast(dt).realize();
}
constexpr int64_t k40 = int64_t{1} << 40;
}  // namespace

TEST(LazyFold, HugeBroadcastSumsAreConstants) {
  Tensor s = Tensor::ones({k40}).sum();
  EXPECT_EQ(kernels_of(s), 0u);
  EXPECT_EQ(s.item<float>(), 0x1p40f);
  EXPECT_EQ(Tensor::ones({k40}).mean().item<float>(), 1.f);
  EXPECT_EQ(Tensor::full({5, int64_t{1} << 33}, 3, dtypes::int64).sum().item<int64_t>(), 15 * (int64_t{1} << 33));
  EXPECT_EQ(Tensor::full({5, int64_t{1} << 33}, 3, dtypes::int64).sum({1}).tolist<int64_t>(), std::vector<int64_t>(5, 3 * (int64_t{1} << 33)));
  // an int32 sum wraps at 32 bits, as the kernel's int32 accumulator: 2 * (2^31 + 1) = 2 (mod 2^32)
  EXPECT_EQ(Tensor::full({(int64_t{1} << 31) + 1}, 2, dtypes::int32).sum().item<int>(), 2);
  EXPECT_EQ(Tensor::full({k40}, -3, dtypes::int32).max().item<int>(), -3);
  EXPECT_EQ(Tensor::full({k40}, -3, dtypes::int32).min().item<int>(), -3);
  EXPECT_EQ(Tensor::full({k40}, 2.5).min().item<float>(), 2.5f);
  EXPECT_TRUE(Tensor::full({k40}, 1, dtypes::bool_).all().item<bool>());
  EXPECT_FALSE(Tensor::full({k40}, 0, dtypes::bool_).any().item<bool>());
  EXPECT_EQ(Tensor::full({k40}, -1, dtypes::int32).prod().item<int>(), 1);          // even count
  EXPECT_EQ(Tensor::full({k40 + 1}, -1.0).prod().item<float>(), -1.f);              // odd count
  EXPECT_EQ(Tensor::full({k40}, 0.5).prod().item<float>(), 0.f);
  EXPECT_EQ(kernels_of(Tensor::full({k40}, 0.5).prod()), 0u);
}

// A float sum is the float nearest to the exact n*v, rounded once. Here the exact value lies just above
// a midpoint between two floats, closer than a double can tell: n*v computed in double and then
// rounded to float would round twice and land on the lower neighbour.
TEST(LazyFold, FloatSumIsCorrectlyRounded) {
  const int64_t n = 18014397435740288;  // (2^23 * 2^54 + 2^53 + 128) / (2^23 + 1)
  const float v = 1.f + 0x1p-23f;
  float want = static_cast<float>((0x1p23 + 1) * 0x1p31);
  EXPECT_EQ(Tensor::full({n}, v).sum().item<float>(), want);
  EXPECT_NE(static_cast<float>(static_cast<double>(v) * static_cast<double>(n)), want);  // the double shortcut's answer
  // overflow to inf, exactly representable sums, float64, and the half sum (in float32, then rounded)
  EXPECT_EQ(Tensor::full({k40}, 3e30).sum().item<float>(), INFINITY);
  EXPECT_EQ(Tensor::full({k40}, -3e30).sum().item<float>(), -INFINITY);
  EXPECT_EQ(Tensor::full({k40 + 1}, 0.1, dtypes::float64).sum().item<double>(), 0.1 * static_cast<double>(k40 + 1));
  EXPECT_TRUE(std::isnan(Tensor::full({10}, NAN).sum().item<float>()));
  EXPECT_EQ(Tensor::full({3000}, 0.1, dtypes::float16).sum().item<float>(), Tensor::full({3000}, 0.1, dtypes::float16).contiguous().sum().item<float>());
}

// Folded reduces equal the kernels' reduces of the same values in a buffer, for every dtype (a float
// product within rounding: the kernel multiplies pairwise, the fold is pow's nearly exact v^n).
TEST(LazyFold, FoldedReducesEqualKernels) {
  for (DType dt : dtypes::all()) {
    for (double v : {0.0, 1.0, -1.0, 3.0, -7.0, 100.0}) {
      if (!dt.is_float() && !dt.is_bool() && (v < dt.min() || v > dt.max())) continue;
      for (int64_t n : {int64_t{1}, int64_t{1000}}) {
        Tensor c = Tensor::full({2, n}, v, dt), b = buffer_of({2, n}, v, dt);
        SCOPED_TRACE(dt.name() + " v=" + std::to_string(v) + " n=" + std::to_string(n));
        auto same = [](const Tensor& folded, const Tensor& kernel, double rtol = 0) {
          EXPECT_EQ(kernels_of(folded), 0u);
          EXPECT_EQ(folded.dtype(), kernel.dtype());
          std::vector<double> f = folded.cast(dtypes::float64).tolist<double>(), k = kernel.cast(dtypes::float64).tolist<double>();
          ASSERT_EQ(f.size(), k.size());
          for (size_t i = 0; i < f.size(); i++)
            if (f[i] != k[i]) { EXPECT_NEAR(f[i], k[i], rtol * std::fabs(k[i])) << i; }
        };
        same(c.sum({1}), b.sum({1}));
        same(c.max({1}), b.max({1}));
        same(c.min({1}), b.min({1}));
        same(c.prod({1}), b.prod({1}), dt == dtypes::float16 ? 1e-3 : dt.is_float() ? 1e-5 : 0);
        same(c.any({1}), b.any({1}));
        same(c.all({1}), b.all({1}));
        // elementwise ops of constants fold with the kernels' semantics too
        if (!dt.is_bool()) same(c * c + c, b * b + b);
      }
    }
  }
}

// Folding keeps autograd: a constant's product, sum and max have the kernels' gradients.
TEST(LazyFold, GradientsOfFoldedReduces) {
  auto grads = [](bool fold, int which) {
    Tensor x = fold ? Tensor::full({4}, 3.0) : buffer_of({4}, 3.0, dtypes::float32);
    x.requires_grad_();
    Tensor y = which == 0 ? x.prod() : which == 1 ? x.sum() * 2 : x.max();
    y.backward();
    return std::make_pair(y.item<float>(), x.grad().tolist<float>());
  };
  for (int which = 0; which < 3; which++) EXPECT_EQ(grads(true, which), grads(false, which)) << which;
  EXPECT_EQ(grads(true, 0).second, std::vector<float>(4, 27.f));
}

// Padding is not the constant: a padded constant is not folded (its sum counts only the real part).
TEST(LazyFold, PaddedConstantsAreNotFolded) {
  Tensor p = Tensor::full({3}, 2.0).pad({{1, 2}});
  EXPECT_EQ(p.sum().item<float>(), 6.f);
  EXPECT_EQ((p + 1).tolist<float>(), (std::vector<float>{1, 3, 3, 3, 1, 1}));
  EXPECT_EQ(kernels_of(p.sum()), 1u);
}

// A constant operand that cannot carry a gradient is broadcast straight to the other operand's shape
// (no Reshape/Expand Functions); one that requires grad goes through them and gets its gradient, summed
// back over the broadcast; under no_grad nothing requires grad.
TEST(LazyFold, BroadcastConstantsKeepAutograd) {
  Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  x.requires_grad_();
  Tensor s = Tensor::full({}, 2.0);
  Tensor y = x * s;
  EXPECT_EQ(y.lazydata()->srcs[1]->shape(), (Shape{2, 3}));
  EXPECT_FALSE(s.requires_grad().has_value());
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  Tensor t = Tensor::full({3}, 3.0);
  t.requires_grad_();
  Tensor z = (x * t + s).sum();
  z.backward();
  EXPECT_EQ(t.grad().tolist<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(x.grad().tolist<float>(), (std::vector<float>{3, 3, 3, 3, 3, 3}));
  {
    NoGradGuard no_grad;
    EXPECT_EQ((x * s).requires_grad(), std::optional<bool>(false));
    EXPECT_EQ((s * Tensor::full({2}, 1.0)).requires_grad(), std::optional<bool>(false));
  }
  // a constant that will not carry a gradient: as any constant operand, it keeps requires_grad unset
  EXPECT_FALSE((s + Tensor::full({2}, 1.0)).requires_grad().has_value());
  Tensor off = Tensor::full({}, 1.0), v = Tensor::full({2}, 1.0);
  off.requires_grad_(false);
  v.requires_grad_(false);
  EXPECT_EQ((off * v).requires_grad(), std::optional<bool>(false));
}

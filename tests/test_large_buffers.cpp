// Buffers of 2^31 elements and more: loop counters, index math and element offsets must be 64-bit
// there (an `int` wraps and the kernel reads garbage or faults). Every path that computes an element
// offset is read at its first and last element: sums, element access (item), shrink, copies from the
// host, gathers by int32 and int64 indices, argmax, a stack its reader loads in place, a transposed conv
// reading dy unpadded under a mask. Slow and memory hungry (2 GiB a tensor, the conv's 10 GiB in all), so
// plain build only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {
constexpr int64_t kN = (int64_t{1} << 31) + 16;

// kN uint8 from a host vector: 1 at the front, 9 and 5 at the very end, 2 elsewhere.
Tensor big_from_host() {
  std::vector<uint8_t> v(static_cast<size_t>(kN), 2);
  v.front() = 1;
  v[kN - 2] = 5;
  v.back() = 9;
  return Tensor(v, {kN}).realize();
}
}  // namespace

#ifdef TG_SANITIZED
#define SKIP_UNDER_SANITIZERS() GTEST_SKIP() << "2 GiB stress case: runs in the plain build"
#else
#define SKIP_UNDER_SANITIZERS() (void)0
#endif

TEST(LargeBuffers, SumOfMoreThan2e31Uint8) {
  SKIP_UNDER_SANITIZERS();
  const int64_t n = kN;
  Tensor x = Tensor::full({n}, 1, dtypes::uint8).contiguous();
  x.realize();
  EXPECT_EQ(x.sum().item<uint32_t>(), static_cast<uint32_t>(n));
  // the last 16 elements, past 2^31, through a padded view (read at indices above 2^31)
  Tensor y = x.shrink({{0, n - 16}}).pad({{0, 16}}, 3);
  EXPECT_EQ(y.sum().item<uint32_t>(), static_cast<uint32_t>(n - 16 + 3 * 16));
  EXPECT_EQ(y.index({n - 1}).item<int>(), 3);
  EXPECT_EQ(y.index({n - 17}).item<int>(), 1);
}

// t[i].item() is a one-element kernel whose only index is the view's offset: a 0-d view has no index
// variable to take the index dtype from, and the offset alone passes 2^31.
TEST(LargeBuffers, ItemOfFirstAndLastElement) {
  SKIP_UNDER_SANITIZERS();
  Tensor t = big_from_host();
  EXPECT_EQ(t[0].item<uint8_t>(), 1);
  EXPECT_EQ(t[kN - 1].item<uint8_t>(), 9);
  EXPECT_EQ(t[-1].item<uint8_t>(), 9);
  EXPECT_EQ(t[kN - 2].item<uint8_t>(), 5);
  EXPECT_EQ(t[int64_t{1} << 31].item<uint8_t>(), 2);
  // a computed tensor, not yet realized: its element through the same view
  EXPECT_EQ((t + 1)[kN - 1].item<uint8_t>(), 10);
}

TEST(LargeBuffers, ShrinkOfHeadAndTail) {
  SKIP_UNDER_SANITIZERS();
  Tensor t = big_from_host();
  EXPECT_EQ(t.shrink({{kN - 3, kN}}).tolist<uint8_t>(), (std::vector<uint8_t>{2, 5, 9}));
  EXPECT_EQ(t.shrink({{0, 2}}).tolist<uint8_t>(), (std::vector<uint8_t>{1, 2}));
  EXPECT_EQ(t.shrink({{kN - 2, kN}}).cast(dtypes::int32).sum().item<int>(), 14);
  EXPECT_EQ(t.reshape({2, kN / 2}).shrink({{1, 2}, {kN / 2 - 1, kN / 2}}).item<uint8_t>(), 9);  // the last row's end
}

// Gathers: the index tensor's dtype keeps its values (int64 past 2^31, negative int32 counting from the
// end of an axis longer than int32 can count).
TEST(LargeBuffers, GatherFirstAndLastByInt64AndInt32) {
  SKIP_UNDER_SANITIZERS();
  Tensor t = big_from_host();
  Tensor i64(std::vector<int64_t>{0, kN - 1, -1, -kN, kN - 2, kN, -kN - 1}, {7});
  EXPECT_EQ(t.index({i64}).tolist<uint8_t>(), (std::vector<uint8_t>{1, 9, 9, 1, 5, 0, 0}));
  EXPECT_EQ(t.gather(0, i64).tolist<uint8_t>(), (std::vector<uint8_t>{1, 9, 9, 1, 5, 0, 0}));
  Tensor i32({-1, 0, -2});
  EXPECT_EQ(t.index({i32}).tolist<uint8_t>(), (std::vector<uint8_t>{9, 1, 5}));
  // two index tensors over a (2, kN/2) view: the merged linear index passes 2^31
  Tensor rows(std::vector<int64_t>{1, 0, 1}, {3}), cols(std::vector<int64_t>{kN / 2 - 1, 0, kN / 2 - 2}, {3});
  EXPECT_EQ(t.reshape({2, kN / 2}).index({rows, cols}).tolist<uint8_t>(), (std::vector<uint8_t>{9, 1, 5}));
}

TEST(LargeBuffers, ArgmaxPastInt32IsInt64) {
  SKIP_UNDER_SANITIZERS();
  Tensor t = big_from_host();
  Tensor a = t.argmax();
  EXPECT_EQ(a.dtype(), dtypes::int64);
  EXPECT_EQ(a.item<int64_t>(), kN - 1);
  EXPECT_EQ(t.argmin().item<int64_t>(), 0);
}

// arange's ramp is an ARANGE leaf computed from the kernel's index: entries past 2^31 and 2^32 are
// exact in int64 without a buffer of that size (no kernel stores the whole ramp).
TEST(LargeBuffers, ArangePast2e32IsComputedFromTheIndex) {
  int64_t n = (int64_t{1} << 32) + 7;
  Tensor r = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64);
  EXPECT_EQ(r.shrink({{n - 3, n}}).tolist<int64_t>(), (std::vector<int64_t>{n - 3, n - 2, n - 1}));
  EXPECT_EQ(r.shrink({{int64_t{1} << 31, (int64_t{1} << 31) + 1}}).item<int64_t>(), int64_t{1} << 31);
  Tensor f = Tensor::arange(0, static_cast<double>(n), 2, dtypes::float64);
  EXPECT_EQ(f.shrink({{(n - 1) / 2, (n + 1) / 2}}).item<double>(), static_cast<double>(n - 1 - ((n - 1) % 2)));
}

namespace {
// 65537 rows of 32768 uint8 2s (2^31 + 32768 elements), with a 7 at [0, 1] and a 9 at the very end.
constexpr int64_t kRowsPast2e31 = 65537, kRowPast2e31 = 32768;
Tensor rows_past_2e31() {
  std::vector<uint8_t> v(static_cast<size_t>(kRowsPast2e31 * kRowPast2e31), 2);
  v[1] = 7;
  v.back() = 9;
  return Tensor(v, {kRowsPast2e31, kRowPast2e31}).realize();
}
}  // namespace

// A reduce broadcast back over its rows is one kernel (a Row loop stores the row after its reduce): the
// rows' loop, the reduce's and the Row loop's indices pass 2^31 in the last rows, read and written at
// both ends. Also a mean and a max of the same rows, two outputs of one kernel, read at the end.
TEST(LargeBuffers, FusedRowKernelPast2e31) {
  SKIP_UNDER_SANITIZERS();
  constexpr int64_t R = kRowsPast2e31, C = kRowPast2e31;
  Tensor x = rows_past_2e31();
  int64_t before = GlobalCounters::kernel_count;
  Tensor y = (x.max({1}, true) - x).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 1);
  EXPECT_EQ(y.dtype(), dtypes::uint8);
  EXPECT_EQ(y[0][0].item<uint8_t>(), 5);
  EXPECT_EQ(y[0][1].item<uint8_t>(), 0);
  EXPECT_EQ(y[R / 2][C / 2].item<uint8_t>(), 0);
  EXPECT_EQ(y[R - 1][0].item<uint8_t>(), 7);
  EXPECT_EQ(y[R - 1][C - 1].item<uint8_t>(), 0);
  Tensor s = x.sum({1}), m = x.max({1});  // uint8 sums in uint32
  before = GlobalCounters::kernel_count;
  Tensor::corealize({s, m});
  EXPECT_EQ(GlobalCounters::kernel_count - before, 1);
  EXPECT_EQ(s.dtype(), dtypes::uint32);
  EXPECT_EQ(s[R - 1].item<uint32_t>(), 2 * C + 7);
  EXPECT_EQ(m[R - 1].item<uint8_t>(), 9);
  EXPECT_EQ(s[0].item<uint32_t>(), 2 * C + 5);
  EXPECT_EQ(m[0].item<uint8_t>(), 7);
}

// softmax over rows past 2^31 elements in float16: the fused kernel's sum loop stores each exp into the
// output and its Row loop scales it in place (the lowerer's Row reuse), both at 64-bit offsets; read at
// the first and last rows.
TEST(LargeBuffers, SoftmaxRowReusePast2e31) {
  SKIP_UNDER_SANITIZERS();
  constexpr int64_t R = kRowsPast2e31, C = kRowPast2e31;
  Tensor x = rows_past_2e31();
  int64_t before = GlobalCounters::kernel_count;
  Tensor p = x.cast(dtypes::float16).softmax(1).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 1);
  // a row of 2s with one larger value m: that one is 1 / (1 + (C - 1) e^(2 - m)), the others e^(2 - m) times it
  // (float16: a few units of its 2^-11 roundoff; the smallest values are subnormal halves)
  auto near = [](double got, double want) { EXPECT_NEAR(got, want, 5e-3 * want); };
  double top0 = 1 / (1 + (C - 1) * std::exp(-5.0)), top_last = 1 / (1 + (C - 1) * std::exp(-7.0));
  near(p[0][1].cast(dtypes::float32).item<float>(), top0);
  near(p[0][0].cast(dtypes::float32).item<float>(), top0 * std::exp(-5.0));
  near(p[R / 2][C / 2].cast(dtypes::float32).item<float>(), 1.0 / C);
  near(p[R - 1][C - 1].cast(dtypes::float32).item<float>(), top_last);
  near(p[R - 1][0].cast(dtypes::float32).item<float>(), top_last * std::exp(-7.0));
}

// A stack of two realized tensors of 2^31 + 32768 elements each, read expanded by a reduce: the stack
// stays in its reader (grouping's is_concat), which loads each piece at its own offsets, past 2^31 in
// the last rows, under the stack's mask; one kernel, not a 4 GiB copy of the stack first.
TEST(LargeBuffers, StackReadInPlacePast2e31) {
  SKIP_UNDER_SANITIZERS();
  constexpr int64_t R = kRowsPast2e31, C = kRowPast2e31;
  Tensor x = rows_past_2e31(), y = (x + 1).realize();
  Tensor m = Tensor(std::vector<uint8_t>{1, 1, 0, 1}, {2, 2}).realize();  // z[o] = sum over p of m[p, o] x stack[p]
  int64_t before = GlobalCounters::kernel_count;
  Tensor z = (Tensor::stack({x, y}).reshape({2, 1, R, C}) * m.reshape({2, 2, 1, 1})).sum({0, 3}).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 1);
  ASSERT_EQ(z.dtype(), dtypes::uint32);
  // rows of x: 2s, with a 7 at [0, 1] and a 9 at the very end; y = x + 1
  EXPECT_EQ(z[0][0].item<uint32_t>(), 2 * C + 5);
  EXPECT_EQ(z[0][R - 1].item<uint32_t>(), 2 * C + 7);
  EXPECT_EQ(z[1][0].item<uint32_t>(), (2 * C + 5) + (3 * C + 5));
  EXPECT_EQ(z[1][R - 1].item<uint32_t>(), (2 * C + 7) + (3 * C + 7));
  EXPECT_EQ(z[1][R / 2].item<uint32_t>(), 5 * C);
}

// A stride-1 transposed conv (a conv's input gradient) onto rows of at most 12 columns reads dy as it
// is, its padded rows and columns absent under a mask of the same padded view (conv.cpp's
// conv_skipping_padding): dy here has 2^31 + 5632 elements (466035 images of 128 channels of 6x6), the
// last image's past 2^31, read through the masked view's 64-bit offsets. Small integer values, so every
// sum is exact: the first and last images equal a brute-force loop's.
TEST(LargeBuffers, TransposedConvReadsDyUnpaddedPast2e31) {
  SKIP_UNDER_SANITIZERS();
  constexpr int64_t C = 128, O = 16, N = (int64_t{1} << 31) / (C * 36) + 2;
  auto dy_at = [](int64_t n, int64_t c, int64_t i, int64_t j) { return static_cast<float>((n + 2 * c + 3 * i + j) % 3 - 1); };
  auto w_at = [](int64_t c, int64_t o, int64_t ky, int64_t kx) { return static_cast<float>((7 * c + 3 * o + ky + kx) % 5 - 2); };
  Tensor idx = Tensor::arange(N).cast(dtypes::int64).reshape({N, 1, 1, 1}) + Tensor::arange(C).reshape({1, C, 1, 1}) * 2 +
               Tensor::arange(6).reshape({1, 1, 6, 1}) * 3 + Tensor::arange(6).reshape({1, 1, 1, 6});
  Tensor dy = (idx % 3 - 1).cast(dtypes::float32).contiguous().realize();
  ASSERT_GT(dy.numel(), int64_t{1} << 31);
  std::vector<float> wv;
  for (int64_t c = 0; c < C; c++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t ky = 0; ky < 3; ky++)
        for (int64_t kx = 0; kx < 3; kx++) wv.push_back(w_at(c, o, ky, kx));
  Tensor w = Tensor(wv, {C, O, 3, 3}).realize();
  int64_t before = GlobalCounters::kernel_count;
  Tensor dx = dy.conv_transpose2d(w).realize();
  // the flipped weights and the conv: no padded copy of dy
  EXPECT_EQ(GlobalCounters::kernel_count - before, 2);
  ASSERT_EQ(dx.shape(), (Shape{N, O, 8, 8}));
  for (int64_t n : {int64_t{0}, N - 1}) {
    std::vector<float> got = dx[n].tolist<float>();
    for (int64_t o = 0; o < O; o++)
      for (int64_t y = 0; y < 8; y++)
        for (int64_t x = 0; x < 8; x++) {
          float want = 0;
          for (int64_t ky = 0; ky < 3; ky++)
            for (int64_t kx = 0; kx < 3; kx++)
              if (y - ky >= 0 && y - ky < 6 && x - kx >= 0 && x - kx < 6)
                for (int64_t c = 0; c < C; c++) want += dy_at(n, c, y - ky, x - kx) * w_at(c, o, ky, kx);
          ASSERT_EQ(got[static_cast<size_t>((o * 8 + y) * 8 + x)], want) << "image " << n << " [" << o << ", " << y << ", " << x << "]";
        }
  }
}

// The default heuristics for reduces that are not register tiles: vector partial sums folded in pairs, a
// short row as one padded vector, pooling windows unrolled whole, heavy bodies (a fused batchnorm) with
// several outputs per step, long sums walking their outputs in memory order, and a big sum split in two
// kernels. Register, channel and window tiles: test_kernel_opts.cpp, test_matmul_heuristics.cpp,
// test_conv_heuristics.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <unordered_map>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "kernel_ast.h"
#include "kernel_opts_util.h"
#include "lazy/lazybuffer.h"
#include "test_util.h"
#include "tg/tg.h"

using namespace tg;
using namespace kernel_opts_test;
using testing::HasSubstr;

// A short reduce (a pooling window: 2x2, 3x3) runs unrolled whole, without a loop of 2 or 3 steps
// around a small body; a long one (a row of 512) keeps its loop.
TEST(KernelOpts, PoolingWindowsRunUnrolled) {
  std::mt19937 rng(21);
  Tensor x = rand_tensor(rng, {4, 8, 12, 12}, dtypes::float32);
  x.realize();
  std::map<std::string, Tensor> cases = {{"max_pool2d(2)", x.max_pool2d({2})},
                                         {"max_pool2d(3, 2)", x.max_pool2d({3}, {2})},
                                         {"avg_pool2d(2)", x.avg_pool2d({2})}};
  for (auto& [name, out] : cases) {
    SCOPED_TRACE(name);
    ScheduleItem si = kernel_of(out);
    for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
      auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string what = name + ", " + std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
      Shape full = k.full_shape();
      for (int d : k.dims_of(AxisType::REDUCE)) EXPECT_EQ(full[static_cast<size_t>(d)], 1) << what;
      expect_close(run(si, k.applied_opts()), run(si, {}), what);
    }
  }
  Tensor rows = rand_tensor(rng, {8, 512}, dtypes::float32);
  rows.realize();
  auto ren = with_vector_unit(Device::get("CPU").renderer(), kAVX512);
  Kernel row(kernel_of(rows.max({-1})).ast, *ren);
  row.hand_coded_optimizations();
  int64_t looped = 1;
  for (int d : row.dims_of(AxisType::REDUCE)) looped *= row.full_shape()[static_cast<size_t>(d)];
  EXPECT_GT(looped, 1) << opts_str(row.applied_opts());
}

// A kernel that computes much per element it reads (a batchnorm fused with a pool, or its backward
// summed per channel) takes more outputs per step, so its loads and chains of ops overlap: 2 along the
// output row under a short window, 4 channels (whose 6x6 images lie next to each other) around a long
// reduce. The plain pool and the plain sum keep one.
TEST(KernelOpts, HeavyBodiesTakeMoreOutputsPerStep) {
  std::mt19937 rng(22);
  Tensor x = rand_tensor(rng, {4, 8, 12, 12}, dtypes::float32), y = rand_tensor(rng, {16, 8, 6, 6}, dtypes::float32);
  Tensor m = rand_tensor(rng, {1, 8, 1, 1}, dtypes::float32), s = rand_tensor(rng, {1, 8, 1, 1}, dtypes::float32);
  for (Tensor t : {x, y, m, s}) t.realize();
  auto heavy = [&](const Tensor& v) { return (((v - m) * s).exp() * m + s).relu() * (v + s).sigmoid(); };
  struct Case { std::string what; Tensor out; bool upcast; };
  std::vector<Case> cases = {{"batchnorm-like + max_pool2d(2)", heavy(x).max_pool2d({2}), true},
                             {"max_pool2d(2)", x.max_pool2d({2}), false},
                             {"batchnorm-like, summed per channel", heavy(y).sum({0, 2, 3}), true},
                             {"sum per channel", y.sum({0, 2, 3}), false}};
  for (auto& c : cases) {
    ScheduleItem si = kernel_of(c.out);
    auto ren = avx512_renderer();  // (the kernel keeps a reference to it)
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string what = c.what + ": " + opts_str(k.applied_opts());
    EXPECT_EQ(k.dims_of(AxisType::UPCAST).empty(), !c.upcast) << what;
    expect_close(run(si, k.applied_opts()), run(si, {}), what);
  }
  // Under a short window, an output row of no whole vectors is padded to them when that fills more
  // lanes: c2's pooled rows of 10 take 16 lanes (10 used), not 2 (2.6 -> 1.0 ms on Zen 5); on AVX2 two
  // vectors of 8. The padded lanes store nothing.
  Tensor x20 = rand_tensor(rng, {2, 8, 20, 20}, dtypes::float32);
  x20.realize();
  ScheduleItem si = kernel_of(heavy(x20).max_pool2d({2}));
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string what = "rows of 10, " + std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
    int64_t upcast = 1;
    for (int d : k.dims_of(AxisType::UPCAST)) upcast *= k.full_shape()[static_cast<size_t>(d)];
    EXPECT_EQ(upcast, unit.bytes / 4) << what;
    EXPECT_THAT(what, HasSubstr("PADTO(")) << what;
    expect_close(run(si, k.applied_opts()), run(si, {}), what);
  }
  // Pooled rows of 3 on AVX-512 (no pairs, and 16 lanes are too many to pad them to) run whole, beside 8
  // channels, the dim the per-channel values vary along: 24 outputs per step, each channel's values
  // computed once (c4's pool: 0.97 -> 0.30 ms on Zen 5). The batch, along which those values broadcast
  // too, is not the dim taken. (AVX2 pads them to one vector of 8.)
  ScheduleItem si3 = kernel_of(heavy(y).max_pool2d({2}));  // (16, 8, 3, 3)
  auto ren = avx512_renderer();
  Kernel k(si3.ast, *ren);
  k.hand_coded_optimizations();
  std::string what = "rows of 3: " + opts_str(k.applied_opts());
  std::vector<int> ups = k.dims_of(AxisType::UPCAST);
  ASSERT_EQ(ups.size(), 2u) << what;
  EXPECT_EQ(k.full_shape()[static_cast<size_t>(ups[0])], 3) << what;
  EXPECT_EQ(k.full_shape()[static_cast<size_t>(ups[1])], 8) << what;
  EXPECT_EQ(k.full_shape()[0], 16) << what;  // the batch stays a loop
  expect_close(run(si3, k.applied_opts()), run(si3, {}), what);
}

// A row shorter than a vector that no view lets merge with the next (a 2x2 max-pool's backward reads
// its pooled values twice along it) is one padded vector: c4's batchnorm backward sums rows of 6 as 8
// lanes, not 3 pairs (2.8-3.1 -> 1.7-1.8 ms on Zen 5), on AVX2 too. Its divisor (the count of each
// window's maxima) reads 0 in the padding: the reduce guard keeps 1/0 out of the sum.
TEST(KernelOpts, ShortRowsSumAsOnePaddedVector) {
  std::mt19937 rng(23);
  Tensor y = rand_tensor(rng, {16, 8, 6, 6}, dtypes::float32), m = rand_tensor(rng, {1, 8, 1, 1}, dtypes::float32);
  y.realize();
  Tensor pooled = y.max_pool2d({2}), count = rand_tensor(rng, {16, 8, 3, 3}, dtypes::float32).abs() + 1;
  for (Tensor t : {m, pooled, count}) t.realize();
  auto up = [](const Tensor& t) { return t.reshape({16, 8, 3, 1, 3, 1}).expand({16, 8, 3, 2, 3, 2}).reshape({16, 8, 6, 6}); };
  Tensor grad = (y == up(pooled)).cast(dtypes::float32) / up(count);
  ScheduleItem si = kernel_of((((y - m) * m).relu() * grad).sum({0, 2, 3}));
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string what = std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
    int64_t lanes = 1;
    for (int d : k.dims_of(AxisType::UNROLL)) lanes *= k.full_shape()[static_cast<size_t>(d)];
    EXPECT_EQ(lanes, 8) << what;
    EXPECT_THAT(what, HasSubstr("PADTO(")) << what;
    expect_close(run(si, k.applied_opts()), run(si, {}), what);
  }
}

// A reduce along a row (max, or a softmax's max and sum) keeps 4 vectors of partial results per
// iteration, folded in pairs before the accumulator: the loop-carried chain is one op per 4 vectors, and
// the horizontal end folds the lanes in halves. So no chain of MAXes is deeper than log2(lanes) (3 inside
// the loop: 4 vectors, then the accumulator); one accumulator folded lane by lane was 15 deep on AVX-512.
// A NaN in any lane of any of the 4 vectors still makes the row's max NaN.
TEST(KernelOpts, RowReducesFoldInPairs) {
  std::vector<float> v(64 * 512);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>((i * 37) % 101) * 0.125f - 6.f;
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < 8; r++) v[static_cast<size_t>(r * 512 + r * 67 + 3)] = std::nanf("");  // every unrolled slot
  v[static_cast<size_t>(9 * 512 + 100)] = inf;
  v[static_cast<size_t>(10 * 512 + 200)] = -inf;
  Tensor x(v, {64, 512});
  x.realize();
  std::map<std::string, Tensor> cases = {{"max", x.max({-1})}, {"softmax", x.softmax(-1)}};
  for (auto& [name, out] : cases) {
    ScheduleItem si = kernel_of(out);
    std::vector<double> want = run(si, {});  // no opts: one scalar accumulator
    for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}, VectorUnit{16, 32}}) {  // AVX-512, AVX2, NEON
      auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      int64_t lanes = unit.bytes / 4;
      std::string what = name + ", " + std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
      EXPECT_THAT(what, HasSubstr("UNROLL(0, " + std::to_string(lanes) + ") UNROLL(0, 4)"));
      std::unordered_map<const UOp*, int> depth;  // the longest chain of MAXes ending at each uop
      int deepest = 0;
      for (const UOpPtr& u : k.linearize()) {
        int d = 0;
        for (const UOpPtr& s : u->src)
          if (auto it = depth.find(s.get()); it != depth.end()) d = std::max(d, it->second);
        if (u->op == Ops::MAX) depth[u.get()] = d + 1, deepest = std::max(deepest, d + 1);
        if (u->op == Ops::ASSIGN) {  // the accumulator's update reads it once, directly
          const UOpPtr& update = u->src[1];
          EXPECT_TRUE(update->src[0] == u->src[0] || update->src[1] == u->src[0]) << what;
        }
      }
      EXPECT_LE(deepest, std::max<int>(3, std::bit_width(static_cast<uint64_t>(lanes)) - 1)) << what;
      expect_close(run(si, k.applied_opts()), want, what);
    }
    for (int64_t r = 0; r < 8 && name == "max"; r++) EXPECT_TRUE(std::isnan(want[static_cast<size_t>(r)])) << r;
  }
}

// A long sum with one run per output (a batchnorm's statistics in partial sums per channel and pair of
// images, the pairs contiguous in the output) runs its output loops in x's memory order: the pairs, 100 KB
// apart in beautiful_mnist, outermost (the threads split them), the channels (one run apart) inside, so
// consecutive outputs read consecutive runs. A sum whose output is already in that order keeps it.
TEST(KernelOpts, LongSumsWalkTheirOutputsInMemoryOrder) {
  std::mt19937 rng(31);
  Tensor x = rand_tensor(rng, {64, 8, 20, 20}, dtypes::float32).realize();
  struct Case { std::string what; Tensor out; int64_t outer; };
  std::vector<Case> cases = {{"per channel and pair of images", x.reshape({32, 2, 8, 400}).permute({2, 0, 1, 3}).sum({2, 3}), 32},
                             {"per pair of images and channel", x.reshape({32, 2, 8, 400}).sum({1, 3}), 32},
                             {"per channel", x.reshape({64, 8, 400}).permute({1, 0, 2}).sum({2}), 64}};
  for (auto& c : cases) {
    ScheduleItem si = kernel_of(c.out);
    for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
      auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string what = c.what + ", " + std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
      std::vector<int> globals;
      for (int d : k.dims_of(AxisType::GLOBAL))
        if (k.full_shape()[static_cast<size_t>(d)] > 1) globals.push_back(d);
      ASSERT_EQ(globals.size(), 2u) << what;
      EXPECT_EQ(k.full_shape()[static_cast<size_t>(globals[0])], c.outer) << "the threads split x's outermost dim: " << what;
      expect_close(run(si, k.applied_opts()), run(si, {}), what);
    }
  }
}

// A big reduction to a small output is two kernels (tinygrad's split_reduceop): the first has outputs
// to spread over threads, the second reduces those.
TEST(SplitReduce, BigSumIsTwoKernels) {
  std::vector<float> v(1 << 20);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 7) - 3;  // sums exactly
  Tensor t(v, {1 << 20});
  t.realize();
  Tensor s = t.sum();
  std::vector<ScheduleItem> kernels;
  for (auto& si : create_schedule({s.lazydata()}))
    if (si.is_kernel()) kernels.push_back(si);
  ASSERT_EQ(kernels.size(), 2u);
  Kernel first(kernels[0].ast, Device::get("CPU").renderer());
  EXPECT_EQ(first.axis_types()[0], AxisType::GLOBAL);
  EXPECT_EQ(first.full_shape()[0], 256);
  double want = 0;
  for (float x : v) want += x;
  EXPECT_EQ(t.sum().item<float>(), static_cast<float>(want));
  EXPECT_EQ(t.max().item<float>(), 3.f);
  // small reductions stay one kernel
  Tensor small = Tensor::ones({1000}).contiguous();  // a buffer: the sum of a constant folds
  small.realize();
  int n = 0;
  for (auto& si : create_schedule({small.sum().lazydata()})) n += si.is_kernel();
  EXPECT_EQ(n, 1);
}

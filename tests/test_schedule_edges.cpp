// Edge cases of the realize rules and of lowering: padding pushed through ops with f(0) != 0, empty
// axes and empty buffers, padded constants, int64 gather indices, and the index dtype of kernels that
// address 2^31 elements. Expected values are computed here by hand or with <cmath>.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "renderer/renderer.h"
#include "runtime/device.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;
using namespace tg::indexing;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor realized(Tensor t) {
  t.realize();
  return t;
}

// Realizes t (inputs already realized) and returns its values and the number of kernels that ran.
std::vector<float> values(const Tensor& t, int64_t* kernels) {
  GlobalCounters::reset();
  Tensor r = t.contiguous();
  r.realize();
  *kernels = GlobalCounters::kernel_count;
  return r.tolist<float>();
}
}  // namespace

// cat(f(x), y): the padding of f(x) must be 0, not f(0), for every f; and the pad stays fused (the
// padding is selected in the kernel, not materialized by an extra kernel).
TEST(SchedulePadding, PadThroughOpsWhereZeroIsNotAFixedPoint) {
  Tensor x = realized(Tensor({0.5f, 2.f})), y = realized(Tensor({3.f, -1.f}));
  struct Case { const char* name; std::function<Tensor(const Tensor&)> f; std::function<double(double)> ref; };
  std::vector<Case> cases = {
      {"exp", [](const Tensor& t) { return t.exp(); }, [](double v) { return std::exp(v); }},
      {"log", [](const Tensor& t) { return t.log(); }, [](double v) { return std::log(v); }},
      {"reciprocal", [](const Tensor& t) { return t.reciprocal(); }, [](double v) { return 1 / v; }},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"div", [&](const Tensor& t) { return Tensor(4.f) / t; }, [](double v) { return 4 / v; }},
      {"cos", [](const Tensor& t) { return t.cos(); }, [](double v) { return std::cos(v); }},
      {"sqrt", [](const Tensor& t) { return t.sqrt(); }, [](double v) { return std::sqrt(v); }},
  };
  for (auto& c : cases) {
    int64_t kernels = 0;
    std::vector<float> got = values(Tensor::cat({c.f(x), y}), &kernels);
    std::vector<double> want = {c.ref(0.5), c.ref(2.0), 3.0, -1.0};
    ASSERT_EQ(got.size(), 4u) << c.name;
    for (size_t i = 0; i < 4; i++) EXPECT_NEAR(got[i], want[i], 1e-5 * std::abs(want[i]) + 1e-6) << c.name << " at " << i;
    EXPECT_EQ(kernels, 1) << c.name;
  }
}

// -0.0 is not 0 to a reciprocal: a float negation under a pad must leave +0 in the padding.
TEST(SchedulePadding, NegationUnderPadLeavesPositiveZero) {
  Tensor x = realized(Tensor({0.5f, 2.f}));
  std::vector<float> got = (-x).pad({{0, 2}}).reciprocal().tolist<float>();
  EXPECT_EQ(got, (std::vector<float>{-2.f, -0.5f, kInf, kInf}));
}

// A gather under a pad: in the padding the index reads as 0, which is a valid index; the padding must
// still be 0, not data[0].
TEST(SchedulePadding, GatherUnderPad) {
  Tensor x = realized(Tensor({10.f, 20.f, 30.f}));
  Tensor idx = realized(Tensor({2, 0}));
  int64_t kernels = 0;
  std::vector<float> got = values(x.index({idx}).pad({{1, 2}}), &kernels);
  EXPECT_EQ(got, (std::vector<float>{0.f, 30.f, 10.f, 0.f, 0.f}));
  EXPECT_EQ(kernels, 1);
}

// Strided slices are pads and reshapes: the elements they pick must be f(x), never the padding.
TEST(SchedulePadding, StridedSliceOfExp) {
  Tensor x = realized(Tensor({0.f, 1.f, 2.f, 3.f, 4.f}));
  std::vector<float> got = x.exp().index({Slice(1, std::nullopt, 3)}).tolist<float>();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], std::exp(1.0), 1e-5);
  EXPECT_NEAR(got[1], std::exp(4.0), 1e-4);
  std::vector<float> rev = x.exp().index({Slice(std::nullopt, std::nullopt, -2)}).tolist<float>();
  ASSERT_EQ(rev.size(), 3u);
  for (int i = 0; i < 3; i++) EXPECT_NEAR(rev[static_cast<size_t>(i)], std::exp(4.0 - 2 * i), 1e-4) << i;
}

// Casting a padded constant keeps the padding.
TEST(SchedulePadding, PaddedConstantCast) {
  EXPECT_EQ(Tensor::ones({2}).pad({{1, 1}}).cast(dtypes::int32).tolist<int>(), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(Tensor::full({2}, 5.5).pad({{1, 0}}).cast(dtypes::int8).tolist<int>(), (std::vector<int>{0, 5, 5}));
}

// A reduce over an axis of length 0 is its identity; nothing reads the (absent) data. (Of a constant
// the reduce folds; of a buffer, it is a kernel.)
TEST(ScheduleEmpty, ReductionsOverZeroLengthAxes) {
  EXPECT_EQ(Tensor::empty({2, 0}).sum({1}).tolist<float>(), (std::vector<float>{0.f, 0.f}));
  EXPECT_EQ(Tensor::empty({3, 0}, dtypes::int32).sum({1}).tolist<int>(), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(Tensor::empty({2, 0}).prod({1}).tolist<float>(), (std::vector<float>{1.f, 1.f}));
  EXPECT_EQ(Tensor::empty({2, 0}).matmul(Tensor::empty({0, 4})).tolist<float>(), std::vector<float>(8, 0.f));
  EXPECT_EQ(Tensor::ones({2, 0}).sum({1}).tolist<float>(), (std::vector<float>{0.f, 0.f}));
  EXPECT_EQ(Tensor::ones({0, 3}).sum({0}).tolist<float>(), (std::vector<float>{0.f, 0.f, 0.f}));
  EXPECT_EQ(Tensor::ones({0}).sum().item<float>(), 0.f);
  EXPECT_EQ(Tensor::ones({3, 0}, dtypes::int32).sum({1}).tolist<int>(), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(Tensor::ones({2, 0}).prod({1}).tolist<float>(), (std::vector<float>{1.f, 1.f}));
  Tensor m = Tensor::ones({2, 0}).matmul(Tensor::ones({0, 4}));
  EXPECT_EQ(m.shape(), (Shape{2, 4}));
  EXPECT_EQ(m.tolist<float>(), std::vector<float>(8, 0.f));
  // realized data behind the empty view must not be read either
  Tensor r = realized(Tensor({1.f, 2.f, 3.f, 4.f}).reshape({2, 2}));
  EXPECT_EQ(r.shrink({{0, 2}, {1, 1}}).sum({1}).tolist<float>(), (std::vector<float>{0.f, 0.f}));
}

// Empty results (and empty intermediates padded back out) realize without running anything on no data.
TEST(ScheduleEmpty, EmptyBuffersAndPaddedEmptyViews) {
  Tensor x = realized(Tensor({1.f, 2.f, 3.f}));
  for (int64_t a = 0; a <= 5; a++) {
    Tensor empty = x.exp().pad({{1, 1}}).shrink({{a, a}});
    EXPECT_EQ(empty.numel(), 0);
    EXPECT_TRUE(empty.tolist<float>().empty());
    EXPECT_EQ(empty.pad({{2, 1}}).tolist<float>(), (std::vector<float>{0.f, 0.f, 0.f})) << a;
    EXPECT_EQ(Tensor::cat({empty, x}).tolist<float>(), (std::vector<float>{1.f, 2.f, 3.f})) << a;
  }
  GlobalCounters::reset();
  Tensor::empty({0, 4}).exp().realize();
  EXPECT_EQ(GlobalCounters::kernel_count, 0);
  // found by the differential fuzz test: this used to recurse without end in View::merge_on_top
  Tensor padded = Tensor::ones({5, 4}, dtypes::uint8).pad({{1, 0}, {1, 0}}, 3).shrink({{0, 6}, {5, 5}});
  EXPECT_EQ(padded.shape(), (Shape{6, 0}));
  EXPECT_TRUE(padded.tolist<int>().empty());
}

// An empty output of an op whose sources other outputs compute (differential fuzz seed 1153316: the
// grouping once read those sources as a copy would, and crashed).
TEST(ScheduleEmpty, EmptyOutputBesideItsSourcesReaders) {
  Tensor x = realized(Tensor(std::vector<float>{-2.625f, 1.9375f, 2.5625f}, {3, 1}));
  Tensor sq = x * x;
  Tensor m = x.mean({0, 1}, true), msq = sq.mean({0, 1}, true), empty = sq.shrink({{3, 3}, {0, 1}}) * -3;
  Tensor::corealize({m, msq, empty});
  EXPECT_FLOAT_EQ(m.item<float>(), (-2.625f + 1.9375f + 2.5625f) / 3);
  EXPECT_FLOAT_EQ(msq.item<float>(), (2.625f * 2.625f + 1.9375f * 1.9375f + 2.5625f * 2.5625f) / 3);
  EXPECT_EQ(empty.shape(), (Shape{0, 1}));
  EXPECT_TRUE(empty.tolist<float>().empty());
}

// A row's elements, kept in the output during the reduce's loop (Row reuse) and read back, that fold to
// a constant only inside the kernel (2 < a bool is always false): the reduce of a constant needs no loop
// of its own, but the store of each element does (differential fuzz seed 1532068: the linearizer opened
// the reduce's loop outside the rows, where that store could not go, and raised an internal error).
TEST(ScheduleRowReuse, ElementsThatFoldToAConstantInTheKernel) {
  Tensor b = realized(Tensor(std::vector<bool>{true, true, false, true, true, false, true, false, true}, {3, 3}));
  Tensor zero = (2 < b).sin();  // sin(0)
  EXPECT_EQ((zero.sum({1}, true) - zero).tolist<float>(), std::vector<float>(9, 0.f));
  Tensor e = ((2 < b).cast(dtypes::float32) + 1).exp();  // exp(1)
  std::vector<float> got = (e.sum({1}, true) - e).tolist<float>();
  for (float g : got) EXPECT_NEAR(g, 2 * std::exp(1.f), 1e-5f);
  // Two reduces, the second reading the first, over a constant kept by the first's loop: that loop runs
  // inside the rows' launched dim (its store does), so the second may not run before it (fuzz seed
  // 293455: log_softmax of sigmoid(bool > 4), the sum's loop opened before the max existed)
  Tensor c = (b > 4).sigmoid();  // 0.5
  for (float g : c.log_softmax(0).tolist<float>()) EXPECT_NEAR(g, -std::log(3.f), 1e-6f);
}

// Indices past the int32 range are out of range, not truncated to an in-range int32 value.
TEST(ScheduleGather, Int64IndicesAreNotTruncated) {
  Tensor data = realized(Tensor({10.f, 20.f, 30.f, 40.f}));
  const int64_t big = int64_t{1} << 32;
  Tensor idx = realized(Tensor(std::vector<int64_t>{1, big + 1, -1, -big, big - 1}, {5}));
  Tensor out(data.lazydata()->reshape({4})->gather(idx.lazydata(), 0));
  EXPECT_EQ(out.tolist<float>(), (std::vector<float>{20.f, 0.f, 40.f, 0.f, 0.f}));
}

// A kernel whose buffers have 2^31 elements or more computes its indices in int64; smaller ones in
// the renderer's index type: int32 for C, int64 (pointer width) for LLVM IR. (Scheduled and lowered
// only: nothing is allocated.)
TEST(ScheduleIndexDtype, Int64ForBuffersPast2e31) {
  auto c = make_cpu_renderer();
  // the loop index dtypes of each kernel, in schedule order (a big sum is two kernels: the first
  // reads the whole buffer, the second adds its partial sums)
  auto loop_dtypes = [&](const Tensor& t, const Renderer& ren) {
    std::vector<std::vector<DType>> out;
    for (auto& si : create_schedule({t.lazydata()})) {
      if (!si.is_kernel()) continue;
      Kernel k(si.ast, ren);
      out.emplace_back();
      for (auto& u : k.linearize())
        if (u->op == Ops::RANGE || u->op == Ops::SPECIAL) out.back().push_back(u->dtype);
    }
    return out;
  };
  auto big = loop_dtypes(Tensor::empty({(int64_t{1} << 31) + 16}, dtypes::uint8).sum(), *c);
  ASSERT_FALSE(big.empty());
  ASSERT_FALSE(big[0].empty());
  for (DType d : big[0]) EXPECT_EQ(d, dtypes::int64);
  for (auto& k : loop_dtypes(Tensor::empty({1 << 20}, dtypes::uint8).sum(), *c))
    for (DType d : k) EXPECT_EQ(d, dtypes::int32);
  const Renderer& dev = Device::get("CPU").renderer();  // LLVM IR where built with LLVM
  for (auto& k : loop_dtypes(Tensor::empty({1 << 20}, dtypes::uint8).sum(), dev))
    for (DType d : k) EXPECT_EQ(d, dev.index_dtype());
  // 2^16 x 2^16 elements: each dim is small, the flat index is not
  auto wide = loop_dtypes(Tensor::empty({1 << 16, 1 << 16}, dtypes::uint8).sum({1}), *c);
  ASSERT_FALSE(wide.empty());
  ASSERT_FALSE(wide[0].empty());
  for (DType d : wide[0]) EXPECT_EQ(d, dtypes::int64);
}

// Indexing by an integer tensor is one data-dependent load: one kernel whose work is proportional to
// the output, not to the indexed axis (tinygrad v0.9 pays output x axis for its one-hot sum).
// Negative entries count from the end; entries still out of range read 0 (see tensor.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/realize.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;
using indexing::Slice;

namespace {

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

const ScheduleItem* only_kernel(const std::vector<ScheduleItem>& s) {
  const ScheduleItem* k = nullptr;
  for (auto& si : s)
    if (si.is_kernel()) {
      if (k) return nullptr;
      k = &si;
    }
  return k;
}

}  // namespace

TEST(GatherKernel, RowsOfALargeMatrixCostTheOutputOnly) {
  const int64_t rows = 20000, cols = 64;
  Tensor X = Tensor(iota_floats(rows * cols), {rows, cols}).realize();
  std::vector<int> pick{7, 19999, 0, 12345, 3, 3, 18000, 42};
  Tensor idx = Tensor(pick, {8}).realize();
  Tensor Y = X.index({idx});
  ASSERT_EQ(Y.shape(), (Shape{8, 64}));

  auto sched = create_schedule({Y.lazydata()});
  const ScheduleItem* k = only_kernel(sched);
  ASSERT_NE(k, nullptr) << "the gather must be exactly one kernel, got " << sched.size() << " items";
  ASSERT_EQ(sched.size(), 1u);
  auto runner = get_runner(k->outputs[0]->device, k->ast);
  // every estimate scales with the 8*64 outputs; the one-hot way would be >= 8*64*20000
  EXPECT_LE(runner->op_estimate, 8 * 64 * 32);
  EXPECT_LE(runner->mem_estimate, 8 * 64 * 4 * 4);
  // the rendered kernel loops over the output only: no loop or bound over the 20000 rows
  EXPECT_THAT(runner->kernel.src, ::testing::Not(::testing::HasSubstr("< 20000;"))) << runner->kernel.src;

  GlobalCounters::reset();
  run_schedule(std::move(sched));
  EXPECT_EQ(GlobalCounters::kernel_count, 1);
  EXPECT_LE(GlobalCounters::global_ops, 8 * 64 * 32);
  std::vector<float> got = Y.tolist<float>();
  for (size_t i = 0; i < pick.size(); i++)
    for (int64_t j = 0; j < cols; j++)
      ASSERT_EQ(got[i * cols + static_cast<size_t>(j)], static_cast<float>(pick[i] * cols + j)) << i << "," << j;
}

TEST(GatherKernel, ColumnsOfAPermutedViewNeedNoCopy) {
  Tensor X = Tensor(iota_floats(300 * 40), {300, 40}).realize();
  Tensor idx = Tensor(std::vector<int>{5, 299, 0}, {3}).realize();
  Tensor Y = X.transpose().index({Slice(), idx});  // X.T[:, idx] = X[idx].T, read through the permuted view
  auto sched = create_schedule({Y.lazydata()});
  EXPECT_EQ(sched.size(), 1u);
  run_schedule(std::move(sched));
  ASSERT_EQ(Y.shape(), (Shape{40, 3}));
  std::vector<float> got = Y.tolist<float>();
  for (int64_t c = 0; c < 40; c++)
    for (int j = 0; j < 3; j++) {
      int r = std::vector<int>{5, 299, 0}[static_cast<size_t>(j)];
      EXPECT_EQ(got[static_cast<size_t>(c * 3 + j)], static_cast<float>(r * 40 + c));
    }
}

TEST(GatherKernel, FusesWithElementwiseOpsAndReduces) {
  Tensor X = Tensor(iota_floats(1000 * 4), {1000, 4}).realize();
  Tensor idx = Tensor(std::vector<int>{1, 999, 2}, {3}).realize();
  Tensor s = (X.index({idx}) * 2).sum({1});
  auto sched = create_schedule({s.lazydata()});
  EXPECT_EQ(sched.size(), 1u) << "gather, multiply and sum in one kernel";
  run_schedule(std::move(sched));
  std::vector<float> got = s.tolist<float>();
  for (int j = 0; j < 3; j++) {
    int r = std::vector<int>{1, 999, 2}[static_cast<size_t>(j)];
    EXPECT_EQ(got[static_cast<size_t>(j)], 2.f * (16.f * static_cast<float>(r) + 6.f));
  }
}

TEST(GatherKernel, NegativeEntriesWrapAndOutOfRangeEntriesReadZero) {
  Tensor X = Tensor(std::vector<float>{10, 11, 12, 13, 14}, {5});
  Tensor idx = Tensor(std::vector<int>{-1, -5, 4, 5, -6, 100, -100, 0}, {8});
  EXPECT_EQ(X.index({idx}).tolist<float>(), (std::vector<float>{14, 10, 14, 0, 0, 0, 0, 10}));
  // per row, as gather does
  Tensor M = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor gi = Tensor(std::vector<int>{2, -1, 3, 0, -3, -4}, {2, 3});
  EXPECT_EQ(M.gather(1, gi).tolist<float>(), (std::vector<float>{3, 3, 0, 4, 4, 0}));
  // two index tensors: out of range in either dim reads 0, even if the linear position exists
  Tensor A = Tensor(iota_floats(6), {2, 3});
  Tensor r = Tensor(std::vector<int>{0, 1, -1, 0, 2}, {5}), c = Tensor(std::vector<int>{3, 2, 0, -1, 0}, {5});
  EXPECT_EQ(A.index({r, c}).tolist<float>(), (std::vector<float>{0, 5, 3, 2, 0}));
  // scatter: negative entries wrap, out-of-range ones write nothing, the last of duplicates wins
  Tensor into = Tensor::zeros({5});
  Tensor si = Tensor(std::vector<int>{-1, 7, 1, 1, -9}, {5}), src = Tensor(std::vector<float>{1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(into.scatter(0, si, src).tolist<float>(), (std::vector<float>{0, 4, 0, 0, 1}));
}

TEST(GatherKernel, PythonIntsOutOfRangeAreErrors) {
  Tensor X = Tensor::zeros({4, 3});
  EXPECT_THROW(X.index({4}), Error);
  EXPECT_THROW(X.index({0, -4}), Error);
  EXPECT_THROW(X[-5], Error);
  EXPECT_EQ(X[-4].shape(), (Shape{3}));
}

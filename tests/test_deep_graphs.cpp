// Deep lazy graphs: building, realizing, differentiating and dropping a chain of a million ops. Every
// graph walk (schedule, backward, teardown of LazyBuffers, UOps and autograd tensors) must be iterative,
// and the scheduler must cut the chain into kernels a C compiler can take.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {
// The sanitizers' bigger frames make recursion fail far sooner, so a smaller chain still proves the point
// there; the full million runs once, in the plain build.
#ifdef TG_SANITIZED
constexpr int kDepth = 100'000;
#else
constexpr int kDepth = 1'000'000;
#endif
}  // namespace

TEST(DeepGraphs, ChainRealizes) {
  Tensor x({1.f, 2.f});
  for (int i = 0; i < kDepth; i++) x = x + 1.f;
  GlobalCounters::reset();
  std::vector<float> v = x.tolist<float>();
  EXPECT_EQ(v, (std::vector<float>{1.f + kDepth, 2.f + kDepth}));  // exact: below 2^24
  // cut into kernels of bounded depth, not one kernel per op
  EXPECT_GT(GlobalCounters::kernel_count, 1);
  EXPECT_LT(GlobalCounters::kernel_count, kDepth / 100);
}

TEST(DeepGraphs, ChainBackward) {
  Tensor w({2.f, -3.f});
  w.requires_grad_();
  Tensor x = w;
  for (int i = 0; i < kDepth; i++) x = (i % 2 ? x * 1.f : x + 0.5f);
  x.sum().backward();
  EXPECT_EQ(w.grad().tolist<float>(), (std::vector<float>{1.f, 1.f}));
  EXPECT_EQ(x.tolist<float>(), (std::vector<float>{2.f + 0.25f * kDepth, -3.f + 0.25f * kDepth}));
}

TEST(DeepGraphs, ChainDroppedUnrealized) {
  {
    Tensor w({1.f});
    w.requires_grad_();
    Tensor x = w;
    for (int i = 0; i < kDepth; i++) x = x * 2.f - 1.f;
  }  // x, its LazyBuffers, their UOp-free graph and the autograd contexts all go here
  Tensor y({1.f});
  EXPECT_EQ((y + 1.f).item<float>(), 2.f);
}

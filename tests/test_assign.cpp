// Tensor::assign of a realized tensor is an ASSIGN: the new values end up in the tensor's own Buffer
// object (what optimizers, BatchNorm and TinyJit plans hold), computed into a buffer of their own and
// traded in at the end of the schedule, so a value computed from the old values (read before or after,
// through any view) is never overwritten.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "tg/tg.h"

using namespace tg;

namespace {
Tensor realized(std::vector<float> v) { return Tensor(v, {static_cast<int64_t>(v.size())}).realize(); }
const Buffer* buffer_of(const Tensor& t) { return t.lazydata()->base()->buffer.get(); }
}  // namespace

TEST(Assign, WritesTheSameBufferObject) {
  Tensor w = realized({1, 2, 3});
  const Buffer* b = buffer_of(w);
  Tensor alias = w;  // another handle to the same tensor
  w.assign(w + 1).realize();
  EXPECT_EQ(buffer_of(w), b);
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(alias.tolist<float>(), (std::vector<float>{2, 3, 4}));
  for (int i = 0; i < 3; i++) w.assign(w * 2).realize();  // every step into the same Buffer
  EXPECT_EQ(buffer_of(w), b);
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{16, 24, 32}));
}

// The optimizer pattern: step, then read a loss computed from the old weights (here lazily, fused with
// the weights: the loss reads them directly).
TEST(Assign, ValuesComputedFromTheOldValuesKeepThem) {
  Tensor w = realized({1, 2, 3});
  Tensor loss = (w * w).sum();       // built before the assign, realized after it
  Tensor before = w.detach();        // a tensor of the old values
  w.assign(w - 0.5).realize();
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(loss.item<float>(), 14.f);
  EXPECT_EQ(before.tolist<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ((before + 0).tolist<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(Assign, ReadsOfOldAndNewValuesInOneSchedule) {
  Tensor w = realized({1, 2, 3, 4});
  Tensor old_sum = w.sum();
  w.assign(w.flip({0}) * 10);          // reads its own buffer through another view
  Tensor new_sum = w.sum();
  Tensor::corealize({old_sum, w, new_sum});
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{40, 30, 20, 10}));
  EXPECT_EQ(old_sum.item<float>(), 10.f);
  EXPECT_EQ(new_sum.item<float>(), 100.f);
}

TEST(Assign, ChainedAssignsInOneSchedule) {
  Tensor w = realized({1, 2});
  const Buffer* b = buffer_of(w);
  w.assign(w + 1);
  Tensor mid = w * 1;  // reads the first assign's values
  w.assign(w * 3);
  Tensor::corealize({w, mid});
  EXPECT_EQ(buffer_of(w), b);
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{6, 9}));
  EXPECT_EQ(mid.tolist<float>(), (std::vector<float>{2, 3}));
}

TEST(Assign, UnrealizedTargetBecomesTheValue) {
  Tensor t = Tensor::zeros({3}) + 1;  // nothing to write into yet
  Tensor x = realized({7, 8, 9});
  t.assign(x);
  EXPECT_EQ(t.lazydata(), x.lazydata());
  EXPECT_EQ(t.tolist<float>(), (std::vector<float>{7, 8, 9}));
}

// An optimizer keeps its parameters and state in the same Buffers step after step (TinyJit relies on it).
TEST(Assign, AdamStepsKeepTheirBuffers) {
  nn::Linear l(4, 3);
  nn::optim::Adam opt(l.parameters(), 1e-2);
  TrainingGuard training;
  std::vector<const Buffer*> bufs;
  Tensor x = Tensor::rand({5, 4}).realize();
  for (int step = 0; step < 4; step++) {
    opt.zero_grad();
    Tensor loss = l(x).square().mean();
    loss.backward();
    opt.step();
    float v = loss.item<float>();  // computed from the weights before this step
    EXPECT_TRUE(std::isfinite(v));
    std::vector<const Buffer*> now;
    for (const Tensor& p : opt.params) now.push_back(buffer_of(p));
    if (step >= 1) { EXPECT_EQ(now, bufs) << step; }  // realized from the first step on
    bufs = now;
  }
}

// The realize path: realize from several threads (one engine lock), the bounded method cache, kernel
// names that do not depend on the order kernels were first seen, no schedule for what is realized.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/realize.h"
#include "engine/schedule.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {

// The one kernel AST of t's schedule (its inputs realized first).
UOpPtr kernel_ast(const Tensor& t) {
  UOpPtr ast;
  for (auto& si : create_schedule({t.lazydata()}))
    if (si.is_kernel()) {
      EXPECT_EQ(ast, nullptr) << "more than one kernel";
      ast = si.ast;
    }
  EXPECT_NE(ast, nullptr);
  return ast;
}

struct CapacityGuard {
  size_t old;
  explicit CapacityGuard(size_t n) : old(set_method_cache_capacity(n)) {}
  ~CapacityGuard() { set_method_cache_capacity(old); }
};

}  // namespace

TEST(RealizeThreads, TwoThreadsRealizeSharedGraphs200Times) {
  // Each round: a lazy reduce `s` that both threads' graphs use; each thread builds its own graph on it
  // (one asks for s.contiguous(), setting its forced-realize hint while the other may be scheduling)
  // and realizes it, both starting together. Expected values by loops over the host data.
  for (int round = 0; round < 200; round++) {
    std::vector<float> host(24);
    for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>((static_cast<int>(i) * 7 + round) % 11) - 5.f;
    Tensor x = Tensor(host, {4, 6});
    Tensor s = (x * 2.f).sum({1});  // lazy, shared: (4,)
    std::vector<float> s_ref(4, 0.f);
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 6; c++) s_ref[static_cast<size_t>(r)] += 2.f * host[static_cast<size_t>(r * 6 + c)];
    float a_ref = 0.f, b_ref = -1e30f;
    for (float v : s_ref) { a_ref += v + 1.f; b_ref = std::max(b_ref, v * 3.f); }

    std::latch start(2);
    std::vector<float> got(2, 0.f);
    std::vector<std::string> errors(2);
    auto work = [&](int who) {
      try {
        start.arrive_and_wait();
        Tensor r = who == 0 ? (s + 1.f).sum() : (s.contiguous() * 3.f).max();
        got[static_cast<size_t>(who)] = r.item<float>();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(who)] = e.what();
      }
    };
    std::thread t0(work, 0), t1(work, 1);
    t0.join();
    t1.join();
    ASSERT_EQ(errors[0], "") << "round " << round;
    ASSERT_EQ(errors[1], "") << "round " << round;
    ASSERT_EQ(got[0], a_ref) << "round " << round;
    ASSERT_EQ(got[1], b_ref) << "round " << round;
    ASSERT_EQ(s.tolist<float>(), s_ref) << "round " << round;
  }
}

// no_grad and training are per thread: a guard held in one thread leaves another's graph recording alone.
TEST(RealizeThreads, GradModeIsPerThread) {
  std::latch guard_held(1), checked(1);
  std::thread other([&] {
    NoGradGuard ng;
    TrainingGuard tr;
    guard_held.count_down();
    checked.wait();
  });
  guard_held.wait();
  EXPECT_FALSE(Tensor::no_grad);
  EXPECT_FALSE(Tensor::training);
  Tensor w({1.f, 2.f});
  w.requires_grad_();
  Tensor y = (w * 3.f).sum();
  EXPECT_EQ(y.requires_grad(), std::optional<bool>(true));
  y.backward();
  EXPECT_EQ(w.grad().tolist<float>(), (std::vector<float>{3.f, 3.f}));
  checked.count_down();
  other.join();
}

TEST(MethodCache, BoundedLeastRecentlyUsedEvictedAndUnloaded) {
  Tensor x = Tensor({1.f, 2.f, 3.f});
  x.realize();
  UOpPtr a = kernel_ast(x + 101.f), b = kernel_ast(x + 102.f), c = kernel_ast(x + 103.f);
  CapacityGuard cap(2);
  EXPECT_LE(method_cache_size(), 2u);
  std::weak_ptr<CompiledRunner> ra = get_runner("CPU", a);
  std::shared_ptr<CompiledRunner> rb = get_runner("CPU", b);
  EXPECT_EQ(get_runner("CPU", a), ra.lock());  // a hit, and now the most recently used
  std::shared_ptr<CompiledRunner> rc = get_runner("CPU", c);  // evicts b, the least recently used
  EXPECT_EQ(method_cache_size(), 2u);
  EXPECT_FALSE(ra.expired());
  EXPECT_NE(get_runner("CPU", b), rb);  // b was evicted: built anew (now a is evicted)
  EXPECT_TRUE(ra.expired());            // nobody held a: its program is gone
  EXPECT_EQ(get_runner("CPU", c), rc);
  EXPECT_EQ(method_cache_size(), 2u);
}

TEST(MethodCache, KernelSourceDoesNotDependOnWhatRanBefore) {
  // two different kernels with the same shape-derived name; built in either order, each renders the
  // same source (so the disk cache hits in every process)
  Tensor x = Tensor({1.f, 2.f, 3.f, 4.f});
  x.realize();
  UOpPtr a = kernel_ast(x + 7.f), b = kernel_ast(x * 7.f);
  CapacityGuard cap(1);  // each get_runner below evicts the other: every call builds anew
  std::string a_first = get_runner("CPU", a)->kernel.src;
  std::string b_second = get_runner("CPU", b)->kernel.src;
  std::string a_after_b = get_runner("CPU", a)->kernel.src;
  std::string b_after_a = get_runner("CPU", b)->kernel.src;
  EXPECT_EQ(a_first, a_after_b);
  EXPECT_EQ(b_second, b_after_a);
  EXPECT_EQ(get_runner("CPU", a)->display_name, get_runner("CPU", b)->display_name);
}

// Realizing what is realized already (a parameter, x.realize() twice, a view of a realized buffer) makes
// no schedule; anything unrealized among the tensors does, and is computed.
TEST(Realize, RealizedTensorsMakeNoSchedule) {
  Tensor a = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).realize();
  Tensor b = (a * 2).realize();
  GlobalCounters::reset();
  a.realize();
  b.realize();
  Tensor::corealize({a, b, b.transpose(0, 1)});
  EXPECT_EQ(GlobalCounters::schedules, 0);
  Tensor c = a + b;
  Tensor::corealize({a, c});
  EXPECT_EQ(GlobalCounters::schedules, 1);
  EXPECT_EQ(c.tolist<float>(), (std::vector<float>{3, 6, 9, 12, 15, 18}));
  Tensor k = Tensor::full({2}, 7.0);  // an unrealized constant is not realized: it gets its schedule
  k.realize();
  EXPECT_EQ(GlobalCounters::schedules, 2);
  EXPECT_EQ(k.tolist<float>(), (std::vector<float>{7, 7}));
}

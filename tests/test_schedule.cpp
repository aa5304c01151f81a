// Acceptance tests for the scheduler and the realize path: how many kernels a graph becomes, what the
// schedule and the command queue look like (seeds 000, 002, 004), dtypes and promotion, creation ops and
// reductions against loop references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "engine/realize.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "runtime/device.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

#include "test_util.h"

using namespace tg;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

size_t count_copies(const std::vector<ScheduleItem>& s) {
  size_t n = 0;
  for (auto& si : s) n += si.ast->op == Ops::COPY;
  return n;
}
size_t count_kernels(const std::vector<ScheduleItem>& s) {
  size_t n = 0;
  for (auto& si : s) n += si.is_kernel();
  return n;
}

// Realizes t and returns the number of kernels that ran for it.
int64_t kernels_to_realize(Tensor& t) {
  GlobalCounters::reset();
  t.realize();
  return GlobalCounters::kernel_count;
}

// Realized random inputs and their host values.
Tensor rand_realized(const Shape& s, std::vector<float>& host) {
  Tensor t = Tensor::rand(s);
  t.realize();
  host = t.tolist<float>();
  return t;
}

}  // namespace

// ---- 1. the dot product example (seed 002): one kernel, one loop, one accumulator ---------------------

TEST(ScheduleDot, ValueAndOneKernel) {
  Tensor a({1, 2}), b({3, 4});
  Tensor c = a.dot(b);
  EXPECT_EQ(c.dtype(), dtypes::int32);
  EXPECT_TRUE(c.shape().empty());
  GlobalCounters::reset();
  EXPECT_EQ(c.item<int>(), 11);
  EXPECT_EQ(GlobalCounters::kernel_count, 1);
}

TEST(ScheduleDot, RenderedSourceHasOneLoopAndAccumulator) {
  // DEBUG=4 prints the source when a kernel is first built. The factor 7919 is fused into the kernel's
  // AST and used by no other test, so this kernel is new to the method cache even when every test runs
  // in one process, and the source is always printed.
  Context noopt{{"NOOPT", 1}};  // seed 002's kernel, before any optimization
  std::string printed;
  {
    Context ctx{{"DEBUG", 4}};
    testing::internal::CaptureStdout();
    int v = 0;
    try {
      v = (Tensor({1, 2}) * 7919).dot(Tensor({3, 4})).item<int>();
    } catch (...) {
      testing::internal::GetCapturedStdout();
      throw;
    }
    printed = testing::internal::GetCapturedStdout();
    EXPECT_EQ(v, 11 * 7919);
  }
  EXPECT_EQ(loop_vars(printed).size(), 1u) << printed;
  EXPECT_THAT(printed, HasSubstr(is_llvm_ir(printed) ? "%acc" : "acc0")) << printed;
  EXPECT_THAT(printed, HasSubstr("7919")) << printed;

  Tensor c = Tensor({1, 2}).dot(Tensor({3, 4}));
  auto sched = create_schedule({c.lazydata()});
  ASSERT_FALSE(sched.empty());
  const ScheduleItem* k = nullptr;
  for (auto& si : sched)
    if (si.is_kernel()) k = &si;
  ASSERT_NE(k, nullptr);
  auto runner = get_runner(k->outputs[0]->device, k->ast);
  ASSERT_NE(runner, nullptr);
  const std::string& src = runner->kernel.src;
  EXPECT_EQ(loop_vars(src).size(), 1u) << src;
  EXPECT_THAT(src, HasSubstr(is_llvm_ir(src) ? "%acc" : "acc0")) << src;
  run_schedule(std::move(sched));
  EXPECT_EQ(c.item<int>(), 11);
}

// ---- 2. schedules and the command queue (seeds 000, 002, 004) ----------------------------------------

TEST(ScheduleItems, DotIsTwoCopiesThenOneKernel) {
  Tensor c = Tensor({1, 2}).dot(Tensor({3, 4}));
  auto sched = create_schedule({c.lazydata()});
  ASSERT_EQ(sched.size(), 3u);
  EXPECT_EQ(sched[0].ast->op, Ops::COPY);
  EXPECT_EQ(sched[1].ast->op, Ops::COPY);
  EXPECT_TRUE(sched[2].is_kernel());
  EXPECT_FALSE(sched[0].is_kernel());
  EXPECT_FALSE(sched[1].is_kernel());
  // the kernel reads what the copies wrote
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(sched[i].bufs.size(), 2u);
    EXPECT_EQ(sched[i].bufs[1]->device, "EXT");
    bool used = false;
    for (size_t j = sched[2].n_outputs; j < sched[2].bufs.size(); j++) used |= sched[2].bufs[j] == sched[i].bufs[0];
    EXPECT_TRUE(used) << "kernel does not read copy " << i;
  }
}

// seed 002's open bounty: var's mean is read back over the row it reduced. Ours keeps it in the
// kernel (one kernel); FUSE=0 realizes it first, as tinygrad does (two).
TEST(ScheduleItems, VarIsOneCopyOneKernel) {
  for (int fuse : {1, 0}) {
    Context ctx{{"FUSE", fuse}};
    Tensor v = Tensor({1.f, 2.f, 3.f, 4.f}).var();
    auto sched = create_schedule({v.lazydata()});
    ASSERT_EQ(sched.size(), fuse ? 2u : 3u);
    EXPECT_EQ(count_copies(sched), 1u);
    EXPECT_EQ(count_kernels(sched), fuse ? 1u : 2u);
    EXPECT_EQ(sched[0].ast->op, Ops::COPY);

    Tensor w = Tensor({1.f, 2.f, 3.f, 4.f}).var();
    GlobalCounters::reset();
    EXPECT_NEAR(w.item<float>(), 1.6666667f, 1e-6);
    EXPECT_EQ(GlobalCounters::kernel_count, fuse ? 1 : 2);
  }
}

// DEBUG=1 prints each schedule's kernel count, DEBUG=2 what each kernel fused and why it is a kernel of
// its own: here the mean is read back over its rows, and the sum over the other axis cannot hold it.
TEST(ScheduleItems, DebugPrintsFusionDecisions) {
  Tensor x = Tensor::rand({64, 48}).realize();
  Tensor y = (x - x.mean({1}, true)).square().sum({0});
  testing::internal::CaptureStdout();
  {
    Context ctx{{"DEBUG", 2}};
    create_schedule({y.lazydata()});
  }
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, testing::ContainsRegex("schedule: 2 kernels, 2 items in [0-9]+\\.[0-9][0-9] ms"));
  EXPECT_THAT(out, HasSubstr("(64,1) float32: ADD (64,48)->(64,1), 0 elementwise ops, 1 inputs; a kernel of its own: its reader's kernel reduces other rows"));
  EXPECT_THAT(out, HasSubstr("(1,48) float32: ADD (64,48)->(1,48), 4 elementwise ops, 2 inputs; a kernel of its own: an output"));
  Tensor s = x.softmax(1);
  testing::internal::CaptureStdout();
  {
    Context ctx{{"DEBUG", 2}};
    create_schedule({s.lazydata()});
  }
  out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("schedule: 1 kernels, 1 items"));
  EXPECT_THAT(out, HasSubstr("MAX (64,48)->(64,1) read back, ADD (64,48)->(64,1) read back"));
  testing::internal::CaptureStdout();
  {
    Context ctx{{"DEBUG", 2}, {"FUSE", 0}};
    create_schedule({s.lazydata()});
  }
  out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("schedule: 3 kernels, 3 items"));
  EXPECT_THAT(out, HasSubstr("a kernel of its own: FUSE=0"));
}

TEST(ScheduleQueue, DotQueuesSyncWaitCopiesKernel) {
  Tensor c = Tensor({1, 2}).dot(Tensor({3, 4}));
  CommandQueue cq(lower_schedule(create_schedule({c.lazydata()})));
  const auto& qs = cq.queues();
  const std::vector<QueueItem>* ext = nullptr;
  const std::vector<QueueItem>* cpu = nullptr;
  for (auto& [d, items] : qs) {
    if (d == "EXT") ext = &items;
    if (d == "CPU") cpu = &items;
  }
  ASSERT_NE(ext, nullptr);
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(ext->size(), 1u);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<SyncItem>>((*ext)[0]));
  ASSERT_EQ(cpu->size(), 4u);
  ASSERT_TRUE(std::holds_alternative<WaitItem>((*cpu)[0]));
  auto runner = [&](size_t i) { return std::get<ExecItem>((*cpu)[i]).prg.get(); };
  EXPECT_NE(dynamic_cast<BufferCopy*>(runner(1)), nullptr);
  EXPECT_NE(dynamic_cast<BufferCopy*>(runner(2)), nullptr);
  EXPECT_TRUE(runner(3)->is_kernel);
  EXPECT_EQ(std::get<WaitItem>((*cpu)[0]).sync, std::get<std::shared_ptr<SyncItem>>((*ext)[0]));
  cq();
  EXPECT_EQ(c.item<int>(), 11);
}

TEST(ScheduleQueue, TraceIsDeterministicAndOrdered) {
  auto run = [] {
    Tensor c = Tensor({1, 2}).dot(Tensor({3, 4}));
    CommandQueue cq(lower_schedule(create_schedule({c.lazydata()})));
    std::vector<std::string> trace;
    cq(&trace);
    EXPECT_EQ(c.item<int>(), 11);
    return trace;
  };
  std::vector<std::string> t1 = run(), t2 = run();
  EXPECT_EQ(t1, t2);
  ASSERT_FALSE(t1.empty());
  EXPECT_EQ(t1.back(), "CPU: KERNEL");
  auto pos = [&](const std::string& s) {
    for (size_t i = 0; i < t1.size(); i++)
      if (t1[i] == s) return static_cast<long>(i);
    return -1L;
  };
  long wait = pos("CPU: WAIT"), copy = pos("CPU: COPY"), sync = pos("EXT: SYNC");
  ASSERT_GE(wait, 0);
  ASSERT_GE(copy, 0);
  ASSERT_GE(sync, 0);
  EXPECT_LT(wait, copy);
  EXPECT_LT(sync, copy);
  size_t copies = 0, kernels = 0;
  for (auto& s : t1) {
    copies += s == "CPU: COPY";
    kernels += s == "CPU: KERNEL";
  }
  EXPECT_EQ(copies, 2u);
  EXPECT_EQ(kernels, 1u);
}

// ---- 3. fusion ----------------------------------------------------------------------------------------

TEST(ScheduleFusion, ElementwiseChainIsOneKernel) {
  std::vector<float> ha, hb, hc;
  Tensor a = rand_realized({3, 5}, ha), b = rand_realized({3, 5}, hb), c = rand_realized({3, 5}, hc);
  Tensor r = (a + b) * c;
  EXPECT_EQ(kernels_to_realize(r), 1);
  auto v = r.tolist<float>();
  ASSERT_EQ(v.size(), 15u);
  for (size_t i = 0; i < v.size(); i++) EXPECT_NEAR(v[i], (ha[i] + hb[i]) * hc[i], 1e-6) << i;
}

TEST(ScheduleFusion, SumPlusOneIsOneKernel) {
  std::vector<float> hx;
  Tensor x = rand_realized({17}, hx);
  Tensor r = x.sum() + 1;
  EXPECT_EQ(kernels_to_realize(r), 1);
  double ref = 1;
  for (float f : hx) ref += f;
  EXPECT_NEAR(r.item<float>(), ref, 1e-5);
}

TEST(ScheduleFusion, SoftmaxDenominatorAtMostTwoKernels) {
  std::vector<float> hx;
  Tensor x = rand_realized({19}, hx);
  Tensor r = (x - x.max()).exp().sum();
  int64_t k = kernels_to_realize(r);
  EXPECT_GE(k, 1);
  EXPECT_LE(k, 2);
  float m = hx[0];
  for (float f : hx) m = std::max(m, f);
  double ref = 0;
  for (float f : hx) ref += std::exp(static_cast<double>(f) - m);
  EXPECT_NEAR(r.item<float>(), ref, 1e-5);
}

TEST(ScheduleFusion, MatmulReluIsOneKernel) {
  std::vector<float> ha, hb;
  Tensor a = rand_realized({3, 4}, ha), b = rand_realized({4, 5}, hb);
  // make some outputs negative so relu matters
  Tensor a2 = a - 0.5f;
  a2.realize();
  ha = a2.tolist<float>();
  Tensor r = a2.matmul(b).relu();
  EXPECT_EQ(kernels_to_realize(r), 1);
  EXPECT_EQ(r.shape(), (Shape{3, 5}));
  auto v = r.tolist<float>();
  ASSERT_EQ(v.size(), 15u);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) {
      double acc = 0;
      for (int k = 0; k < 4; k++) acc += static_cast<double>(ha[i * 4 + k]) * hb[k * 5 + j];
      EXPECT_NEAR(v[i * 5 + j], std::max(acc, 0.0), 1e-5) << i << "," << j;
    }
}

// An elementwise value of many ops (rand's threefry, ~240) read by two kernels of different loops (a
// transposed copy, a row sum) is computed once, in a kernel of its own: each reader would run, and
// compile, all of it again. A value of a few ops is still computed in each reader, as is everything
// with FUSE=0 (tinygrad's kernels). Values: the same seed's rand realized first, and loops over it.
TEST(ScheduleFusion, AValueOfManyOpsReadByTwoKernelsIsComputedOnce) {
  auto graph = [](bool big) {
    Tensor::manual_seed(3);
    Tensor r = big ? Tensor::rand({64, 48}) : Tensor::rand({64, 48}).realize() * 2.f + 1.f;
    return std::pair{r.transpose(0, 1).contiguous(), r.sum({1})};
  };
  auto kernels_and_reasons = [](const Tensor& a, const Tensor& b) {
    std::string reasons;
    size_t n = 0;
    for (const ScheduleItem& si : create_schedule({a.lazydata(), b.lazydata()}))
      if (si.is_kernel()) n++, reasons += si.fusion + "\n";
    return std::pair{n, reasons};
  };
  auto [t, s] = graph(true);
  auto [n, reasons] = kernels_and_reasons(t, s);
  EXPECT_EQ(n, 3u) << reasons;
  EXPECT_THAT(reasons, HasSubstr("computed by 2 kernels otherwise, more than 64 ops each"));
  Tensor::corealize({t, s});
  Tensor::manual_seed(3);
  std::vector<float> r = Tensor::rand({64, 48}).tolist<float>(), tv = t.tolist<float>(), sv = s.tolist<float>();
  for (int64_t i = 0; i < 64; i++) {
    double sum = 0;
    for (int64_t j = 0; j < 48; j++) {
      float x = r[static_cast<size_t>(i * 48 + j)];
      sum += x;
      ASSERT_EQ(tv[static_cast<size_t>(j * 64 + i)], x) << i << "," << j;
    }
    ASSERT_NEAR(sv[static_cast<size_t>(i)], sum, 1e-4) << i;
  }
  auto [ts, ss] = graph(false);
  EXPECT_EQ(kernels_and_reasons(ts, ss).first, 2u) << kernels_and_reasons(ts, ss).second;
  Context tinygrad{{"FUSE", 0}};
  auto [t0, s0] = graph(true);
  EXPECT_THAT(kernels_and_reasons(t0, s0).second, Not(HasSubstr("more than 64 ops")));
}

// ---- 4. realized buffers are not scheduled again -----------------------------------------------------

TEST(ScheduleRealized, RealizingTwiceRunsNothing) {
  Tensor t = (Tensor({5, 6, 7}) * 3) + 1;
  t.realize();
  EXPECT_TRUE(create_schedule({t.lazydata()}).empty());
  GlobalCounters::reset();
  t.realize();
  EXPECT_EQ(GlobalCounters::kernel_count, 0);
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{16, 19, 22}));
}

TEST(ScheduleRealized, HostDataIsCopiedOnce) {
  Tensor a({1, 2, 3});
  a.realize();
  EXPECT_TRUE(create_schedule({a.lazydata()}).empty());
  Tensor p = a + 1, q = a * 2;
  auto sp = create_schedule({p.lazydata()});
  auto sq = create_schedule({q.lazydata()});
  EXPECT_EQ(count_copies(sp), 0u);
  EXPECT_EQ(count_copies(sq), 0u);
  EXPECT_EQ(count_kernels(sp), 1u);
  EXPECT_EQ(count_kernels(sq), 1u);
  run_schedule(std::move(sp));
  run_schedule(std::move(sq));
  EXPECT_EQ(p.tolist<int>(), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(q.tolist<int>(), (std::vector<int>{2, 4, 6}));
}

// ---- 5. dtypes and promotion --------------------------------------------------------------------------

TEST(ScheduleDtypes, DefaultsFromCppTypes) {
  EXPECT_EQ(Tensor({1, 2}).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor({1.f}).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({1.0}).dtype(), dtypes::float64);
  EXPECT_EQ(Tensor({true, false}).dtype(), dtypes::bool_);
}

TEST(ScheduleDtypes, Promotion) {
  EXPECT_EQ((Tensor({1, 2}) + Tensor({1.f, 2.f})).dtype(), dtypes::float32);
  Tensor i8 = Tensor(std::vector<int8_t>{100, -3}, {2});
  Tensor u8 = Tensor(std::vector<uint8_t>{200, 7}, {2});
  Tensor s = i8 + u8;
  EXPECT_EQ(s.dtype(), dtypes::int16);
  EXPECT_EQ(s.tolist<int16_t>(), (std::vector<int16_t>{300, 4}));
  Tensor bi = Tensor({true, false}) + Tensor({1, 2});
  EXPECT_EQ(bi.dtype(), dtypes::int32);
  EXPECT_EQ(bi.tolist<int>(), (std::vector<int>{2, 2}));
  EXPECT_EQ(least_upper_dtype({dtypes::uint32, dtypes::int32}), dtypes::int64);
  EXPECT_EQ(least_upper_dtype({dtypes::float16, dtypes::int64}), dtypes::float16);
  EXPECT_EQ(least_upper_dtype({dtypes::float16, dtypes::float32}), dtypes::float32);
  EXPECT_EQ(least_upper_dtype({dtypes::float64, dtypes::float32}), dtypes::float64);
}

TEST(ScheduleDtypes, IntDivisionIsFloat) {
  Tensor d = Tensor({1, 3}) / Tensor({2, 4});
  EXPECT_EQ(d.dtype(), dtypes::float32);
  auto v = d.tolist<float>();
  EXPECT_FLOAT_EQ(v[0], 0.5f);
  EXPECT_FLOAT_EQ(v[1], 0.75f);
}

TEST(ScheduleDtypes, ComparisonsAreBool) {
  Tensor c = Tensor({1, 5, 3}) < Tensor({2, 2, 3});
  EXPECT_EQ(c.dtype(), dtypes::bool_);
  EXPECT_EQ(c.tolist<bool>(), (std::vector<bool>{true, false, false}));
  Tensor e = Tensor({1.f, 2.f}) == Tensor({1.f, 3.f});
  EXPECT_EQ(e.dtype(), dtypes::bool_);
  EXPECT_EQ(e.tolist<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(e.logical_not().tolist<bool>(), (std::vector<bool>{false, true}));
  // float comparisons must compare values (not be folded by integer bounds)
  Tensor fl = Tensor({1.f, 3.f, 2.f}) < Tensor({2.f, 2.f, 2.f});
  EXPECT_EQ(fl.dtype(), dtypes::bool_);
  EXPECT_EQ(fl.tolist<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((Tensor({1.f, 3.f}) != Tensor({1.f, 2.f})).tolist<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((Tensor({0.5, 2.5}) >= Tensor({1.0, 2.5})).tolist<bool>(), (std::vector<bool>{false, true}));
}

TEST(ScheduleDtypes, SumAccumulatorTypes) {
  Tensor i8 = Tensor(std::vector<int8_t>{100, 100, 100}, {3});
  Tensor s8 = i8.sum();
  EXPECT_EQ(s8.dtype(), dtypes::int32);
  EXPECT_EQ(s8.item<int>(), 300);
  Tensor u8 = Tensor(std::vector<uint8_t>{200, 100}, {2});
  Tensor su8 = u8.sum();
  EXPECT_EQ(su8.dtype(), dtypes::uint32);
  EXPECT_EQ(su8.item<uint32_t>(), 300u);
  Tensor i16 = Tensor(std::vector<int16_t>{30000, 30000}, {2});
  EXPECT_EQ(i16.sum().dtype(), dtypes::int32);
  EXPECT_EQ(i16.sum().item<int>(), 60000);
  Tensor b = Tensor({true, true, false, true});
  EXPECT_EQ(b.sum().dtype(), dtypes::int32);
  EXPECT_EQ(b.sum().item<int>(), 3);
  Tensor i64 = Tensor(std::vector<int64_t>{int64_t{1} << 40, 5}, {2});
  EXPECT_EQ(i64.sum().dtype(), dtypes::int64);
  EXPECT_EQ(i64.sum().item<int64_t>(), (int64_t{1} << 40) + 5);
  Tensor h = Tensor({1.5f, 2.25f, 4.f}).cast(dtypes::float16);
  EXPECT_EQ(h.sum().dtype(), dtypes::float16);
  EXPECT_FLOAT_EQ(h.sum().item<float>(), 7.75f);
  // max keeps the dtype
  EXPECT_EQ(i8.max().dtype(), dtypes::int8);
  EXPECT_EQ(i8.mean().dtype(), dtypes::float32);
  EXPECT_FLOAT_EQ(i8.mean().item<float>(), 100.f);
}

TEST(ScheduleDtypes, ElementwisePerDtype) {
  Tensor u32 = Tensor(std::vector<uint32_t>{4000000000u, 1u}, {2});
  Tensor r32 = u32 + Tensor(std::vector<uint32_t>{5u, 2u}, {2});
  EXPECT_EQ(r32.dtype(), dtypes::uint32);
  EXPECT_EQ(r32.tolist<uint32_t>(), (std::vector<uint32_t>{4000000005u, 3u}));

  Tensor i64 = Tensor(std::vector<int64_t>{int64_t{1} << 40, -7}, {2});
  Tensor r64 = i64 * 3;
  EXPECT_EQ(r64.dtype(), dtypes::int64);
  EXPECT_EQ(r64.tolist<int64_t>(), (std::vector<int64_t>{int64_t{3} << 40, -21}));

  Tensor i16 = Tensor(std::vector<int16_t>{-300, 400}, {2});
  EXPECT_EQ((i16 - 1).dtype(), dtypes::int16);
  EXPECT_EQ((i16 - 1).tolist<int16_t>(), (std::vector<int16_t>{-301, 399}));

  Tensor i8 = Tensor(std::vector<int8_t>{-5, 7}, {2});
  EXPECT_EQ((-i8).dtype(), dtypes::int8);
  EXPECT_EQ((-i8).tolist<int8_t>(), (std::vector<int8_t>{5, -7}));

  Tensor u8 = Tensor(std::vector<uint8_t>{250, 3}, {2});
  EXPECT_EQ(u8.maximum(Tensor(std::vector<uint8_t>{4, 4}, {2})).tolist<uint8_t>(), (std::vector<uint8_t>{250, 4}));

  Tensor h = Tensor({1.5f, -2.25f}).cast(dtypes::float16);
  Tensor hr = h * 2;
  EXPECT_EQ(hr.dtype(), dtypes::float16);
  EXPECT_EQ(hr.tolist<float>(), (std::vector<float>{3.f, -4.5f}));

  Tensor f64 = Tensor({0.1, 0.2});
  Tensor fr = f64 + Tensor({0.2, 0.4});
  EXPECT_EQ(fr.dtype(), dtypes::float64);
  auto fv = fr.tolist<double>();
  EXPECT_DOUBLE_EQ(fv[0], 0.1 + 0.2);
  EXPECT_DOUBLE_EQ(fv[1], 0.2 + 0.4);

  Tensor f32 = Tensor({4.f, 9.f}).sqrt();
  EXPECT_EQ(f32.dtype(), dtypes::float32);
  EXPECT_EQ(f32.tolist<float>(), (std::vector<float>{2.f, 3.f}));

  // exp of an int is float32
  EXPECT_EQ(Tensor({0, 1}).exp().dtype(), dtypes::float32);
  EXPECT_NEAR(Tensor({0, 1}).exp().tolist<float>()[1], std::exp(1.0), 1e-6);

  Tensor bb = Tensor({true, false}).cast(dtypes::int8);
  EXPECT_EQ(bb.tolist<int8_t>(), (std::vector<int8_t>{1, 0}));
}

// ---- 6. creation --------------------------------------------------------------------------------------

TEST(ScheduleCreation, ConstantsArangeEye) {
  Tensor z = Tensor::zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), dtypes::float32);
  EXPECT_EQ(z.tolist<float>(), std::vector<float>(6, 0.f));
  Tensor o = Tensor::ones({4}, dtypes::int32);
  EXPECT_EQ(o.dtype(), dtypes::int32);
  EXPECT_EQ(o.tolist<int>(), std::vector<int>(4, 1));
  Tensor f = Tensor::full({2, 2}, 7.5);
  EXPECT_EQ(f.tolist<float>(), std::vector<float>(4, 7.5f));

  Tensor ar = Tensor::arange(0, 10, 3);
  EXPECT_EQ(ar.dtype(), dtypes::int32);
  EXPECT_EQ(ar.shape(), (Shape{4}));
  EXPECT_EQ(ar.tolist<int>(), (std::vector<int>{0, 3, 6, 9}));
  EXPECT_EQ(Tensor::arange(5).tolist<int>(), (std::vector<int>{0, 1, 2, 3, 4}));
  Tensor af = Tensor::arange(0, 1, 0.25);
  EXPECT_EQ(af.dtype(), dtypes::float32);
  EXPECT_EQ(af.tolist<float>(), (std::vector<float>{0.f, 0.25f, 0.5f, 0.75f}));

  Tensor e = Tensor::eye(3);
  EXPECT_EQ(e.shape(), (Shape{3, 3}));
  EXPECT_EQ(e.tolist<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));

  Tensor em = Tensor::empty({3, 2, 5});
  EXPECT_EQ(em.shape(), (Shape{3, 2, 5}));
  EXPECT_EQ(em.numel(), 30);
}

TEST(ScheduleCreation, RandIsUniformAndReproducible) {
  Tensor::manual_seed(1234);
  auto a = Tensor::rand({1000}).tolist<float>();
  auto a2 = Tensor::rand({1000}).tolist<float>();
  Tensor::manual_seed(1234);
  auto b = Tensor::rand({1000}).tolist<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, a2);
  double mean = 0;
  for (float v : a) {
    EXPECT_GE(v, 0.f);
    EXPECT_LT(v, 1.f);
    mean += v;
  }
  mean /= static_cast<double>(a.size());
  EXPECT_NEAR(mean, 0.5, 0.05);
  Tensor::manual_seed(99);
  auto c = Tensor::rand({1000}).tolist<float>();
  EXPECT_NE(a, c);
}

TEST(ScheduleCreation, RandnMoments) {
  Tensor::manual_seed(7);
  Tensor r = Tensor::randn({10000});
  EXPECT_EQ(r.shape(), (Shape{10000}));
  auto v = r.tolist<float>();
  double m = 0, s = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    m += x;
  }
  m /= static_cast<double>(v.size());
  for (float x : v) s += (x - m) * (x - m);
  s = std::sqrt(s / static_cast<double>(v.size() - 1));
  EXPECT_NEAR(m, 0.0, 0.05);
  EXPECT_NEAR(s, 1.0, 0.05);
}

// ---- 7. reductions with axes and keepdim --------------------------------------------------------------

namespace {
struct Ref3 {
  std::vector<float> h;  // (2,3,4) row-major
  float at(int i, int j, int k) const { return h[static_cast<size_t>((i * 3 + j) * 4 + k)]; }
};
void expect_near_vec(const std::vector<float>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}
}  // namespace

TEST(ScheduleReduce, AxesKeepdimNegative) {
  Tensor::manual_seed(5);
  Ref3 r;
  Tensor x = rand_realized({2, 3, 4}, r.h);

  // sum over axis 0 -> (3,4)
  {
    Tensor s = x.sum({0});
    EXPECT_EQ(s.shape(), (Shape{3, 4}));
    std::vector<double> w;
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) w.push_back(static_cast<double>(r.at(0, j, k)) + r.at(1, j, k));
    expect_near_vec(s.tolist<float>(), w, 1e-5, "sum0");
  }
  // sum over axes (1,2) -> (2,)
  {
    Tensor s = x.sum({1, 2});
    EXPECT_EQ(s.shape(), (Shape{2}));
    std::vector<double> w(2, 0);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) w[i] += r.at(i, j, k);
    expect_near_vec(s.tolist<float>(), w, 1e-5, "sum12");
  }
  // sum over -1 keepdim -> (2,3,1)
  {
    Tensor s = x.sum({-1}, true);
    EXPECT_EQ(s.shape(), (Shape{2, 3, 1}));
    std::vector<double> w;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) {
        double a = 0;
        for (int k = 0; k < 4; k++) a += r.at(i, j, k);
        w.push_back(a);
      }
    expect_near_vec(s.tolist<float>(), w, 1e-5, "sum-1k");
  }
  // full sum -> ()
  {
    Tensor s = x.sum();
    EXPECT_TRUE(s.shape().empty());
    double a = 0;
    for (float f : r.h) a += f;
    EXPECT_NEAR(s.item<float>(), a, 1e-4);
  }
  // max over -2 -> (2,4)
  {
    Tensor m = x.max({-2});
    EXPECT_EQ(m.shape(), (Shape{2, 4}));
    std::vector<double> w;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++) {
        float a = r.at(i, 0, k);
        for (int j = 1; j < 3; j++) a = std::max(a, r.at(i, j, k));
        w.push_back(a);
      }
    expect_near_vec(m.tolist<float>(), w, 0, "max-2");
  }
  // max over (0,2) keepdim -> (1,3,1)
  {
    Tensor m = x.max({0, 2}, true);
    EXPECT_EQ(m.shape(), (Shape{1, 3, 1}));
    std::vector<double> w;
    for (int j = 0; j < 3; j++) {
      float a = r.at(0, j, 0);
      for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) a = std::max(a, r.at(i, j, k));
      w.push_back(a);
    }
    expect_near_vec(m.tolist<float>(), w, 0, "max02k");
  }
  // min over (0,-1) -> (3,)
  {
    Tensor m = x.min({0, -1});
    EXPECT_EQ(m.shape(), (Shape{3}));
    std::vector<double> w;
    for (int j = 0; j < 3; j++) {
      float a = r.at(0, j, 0);
      for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) a = std::min(a, r.at(i, j, k));
      w.push_back(a);
    }
    expect_near_vec(m.tolist<float>(), w, 0, "min0-1");
  }
  // mean over 1 keepdim -> (2,1,4)
  {
    Tensor m = x.mean({1}, true);
    EXPECT_EQ(m.shape(), (Shape{2, 1, 4}));
    std::vector<double> w;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++) {
        double a = 0;
        for (int j = 0; j < 3; j++) a += r.at(i, j, k);
        w.push_back(a / 3);
      }
    expect_near_vec(m.tolist<float>(), w, 1e-6, "mean1k");
  }
  // var over 2 (correction 1) -> (2,3); std over (0,1) -> (4,)
  {
    Tensor v = x.var({2});
    EXPECT_EQ(v.shape(), (Shape{2, 3}));
    std::vector<double> w;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) {
        double m = 0, s = 0;
        for (int k = 0; k < 4; k++) m += r.at(i, j, k);
        m /= 4;
        for (int k = 0; k < 4; k++) s += (r.at(i, j, k) - m) * (r.at(i, j, k) - m);
        w.push_back(s / 3);
      }
    expect_near_vec(v.tolist<float>(), w, 1e-5, "var2");
  }
  {
    Tensor sd = x.std({0, -2});
    EXPECT_EQ(sd.shape(), (Shape{4}));
    std::vector<double> w;
    for (int k = 0; k < 4; k++) {
      double m = 0, s = 0;
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) m += r.at(i, j, k);
      m /= 6;
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) s += (r.at(i, j, k) - m) * (r.at(i, j, k) - m);
      w.push_back(std::sqrt(s / 5));
    }
    expect_near_vec(sd.tolist<float>(), w, 1e-5, "std0-2");
  }
  {
    Tensor sd = x.std({}, true, 0);
    EXPECT_EQ(sd.shape(), (Shape{1, 1, 1}));
    double m = 0, s = 0;
    for (float f : r.h) m += f;
    m /= 24;
    for (float f : r.h) s += (f - m) * (f - m);
    EXPECT_NEAR(sd.item<float>(), std::sqrt(s / 24), 1e-5);
  }
}

// A float sum starts from +0 (torch, NumPy): a sum of -0s is +0, whether the kernel loops over the row
// or unrolls it whole (fuzz seed 1549676: the unrolled fold of four -0s gave -0, and x / (x - mean)
// +inf where NumPy has -inf).
TEST(ScheduleReduce, ASumOfNegativeZerosIsPositiveZero) {
  for (int64_t n : {2, 4, 16, 100, 4096}) {  // (over one element a sum is a view of it: -0 stays -0)
    Tensor z = Tensor::full({2, n}, -0.0, dtypes::float32).contiguous().realize();
    for (const Tensor& r : {z.sum({1}), z.mean({1}), z.sum(), (Tensor::ones({2, n}) / (z - z.mean({1}, true))).max({1})}) {
      for (float v : r.tolist<float>()) {
        if (std::isinf(v)) EXPECT_EQ(v, -INFINITY) << n;  // 1 / (-0 - +0)
        else EXPECT_FALSE(std::signbit(v)) << n << ": " << v;
      }
    }
  }
}

TEST(ScheduleReduce, IntegerReductionsWithAxes) {
  // arange(24) as (2,3,4): exact integer references
  Tensor x = Tensor::arange(24).reshape({2, 3, 4});
  EXPECT_EQ(x.sum({-1}).tolist<int>(), (std::vector<int>{6, 22, 38, 54, 70, 86}));
  EXPECT_EQ(x.max({1}).tolist<int>(), (std::vector<int>{8, 9, 10, 11, 20, 21, 22, 23}));
  EXPECT_EQ(x.min({0, 1}).tolist<int>(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ((x - 12).min({2}, true).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ((x - 12).min({2}, true).tolist<int>(), (std::vector<int>{-12, -8, -4, 0, 4, 8}));
  EXPECT_EQ(x.mean({0}).dtype(), dtypes::float32);
  auto mv = x.mean({0}).tolist<float>();
  for (int i = 0; i < 12; i++) EXPECT_FLOAT_EQ(mv[i], static_cast<float>(i + 6));
}

// corealize: several tensors in one schedule; their shared reduce is computed once, for both.
TEST(Schedule, CorealizeSharesWork) {
  Tensor x({1.f, 2.f, 3.f});
  Tensor s = x.sum(), a = s + 1, b = s * 2;
  auto sched = create_schedule({a.lazydata(), b.lazydata()});
  int reduces = 0;
  for (auto& si : sched) {
    if (!si.is_kernel()) continue;
    auto nodes = si.ast->toposort();
    reduces += std::any_of(nodes.begin(), nodes.end(), [](const UOpPtr& u) { return u->op == Ops::REDUCE_AXIS; });
  }
  EXPECT_EQ(reduces, 1);
  Tensor::corealize({a, b});
  EXPECT_EQ(a.item<float>(), 7.f);
  EXPECT_EQ(b.item<float>(), 12.f);
  int64_t before = GlobalCounters::kernel_count;
  Tensor::corealize({a, b});  // already realized: nothing runs
  EXPECT_EQ(GlobalCounters::kernel_count, before);
}

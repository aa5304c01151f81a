// The schedule cache (engine/schedule_cache.h): a graph built again over new buffers is scheduled from
// the cache, with the new graph's LazyBuffers and Buffers, and gives the same schedule as scheduling from
// scratch; any difference the scheduler reads (an op, a constant, a shape, a view, an input shared
// twice, a realized source, contiguous(), FUSE) is another key. Values are checked against loops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "engine/schedule.h"
#include "engine/schedule_cache.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {

Tensor input(int64_t rows, int64_t cols, float scale) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); i++) v[i] = std::sin(static_cast<float>(i) * scale);
  return Tensor(v, {rows, cols}).realize();
}

// Whether scheduling `build()` a second time, over new inputs, is a cache hit.
bool second_is_hit(const std::function<Tensor()>& build) {
  create_schedule({build().lazydata()});
  Tensor second = build();  // (its inputs' own schedules are not counted)
  int64_t hits = GlobalCounters::schedule_hits;
  create_schedule({second.lazydata()});
  return GlobalCounters::schedule_hits == hits + 1;
}

}  // namespace

TEST(ScheduleCache, HitIsTheScheduleFromScratchOverTheNewBuffers) {
  Context ctx{{"SCHEDULE_CACHE", 1}};
  Tensor a = input(8, 32, 0.1f), b = input(8, 32, 0.7f);
  std::vector<ScheduleItem> first = create_schedule({a.softmax(-1).lazydata()});
  Tensor sb = b.softmax(-1);
  GlobalCounters::reset();
  std::vector<ScheduleItem> hit = create_schedule({sb.lazydata()});
  EXPECT_EQ(GlobalCounters::schedule_hits, 1);
  std::vector<ScheduleItem> fresh;
  {
    Context off{{"SCHEDULE_CACHE", 0}};
    fresh = create_schedule({sb.lazydata()});
  }
  ASSERT_EQ(hit.size(), 1u);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(hit[0].ast, fresh[0].ast);
  EXPECT_EQ(hit[0].ast, first[0].ast);  // the same kernel: the method cache hits too
  EXPECT_EQ(hit[0].bufs, fresh[0].bufs);
  EXPECT_EQ(hit[0].outputs, fresh[0].outputs);
  EXPECT_EQ(hit[0].bufs[1], b.lazydata()->base()->buffer);  // b's values, not a's
  EXPECT_NE(hit[0].bufs[0], first[0].bufs[0]);
}

TEST(ScheduleCache, RepeatedCallsComputeEachCallsValues) {
  Context ctx{{"SCHEDULE_CACHE", 2}};  // every hit checked against scheduling from scratch
  GlobalCounters::reset();
  for (int call = 0; call < 4; call++) {
    Tensor x = input(4, 16, 0.3f + 0.2f * static_cast<float>(call));
    std::vector<float> xv = x.tolist<float>();
    std::vector<float> got = x.layernorm({-1}, 1e-5).tolist<float>();
    for (int64_t r = 0; r < 4; r++) {
      double m = 0, v = 0;
      for (int64_t c = 0; c < 16; c++) m += xv[static_cast<size_t>(r * 16 + c)] / 16.0;
      for (int64_t c = 0; c < 16; c++) v += std::pow(xv[static_cast<size_t>(r * 16 + c)] - m, 2) / 16.0;
      for (int64_t c = 0; c < 16; c++)
        EXPECT_NEAR(got[static_cast<size_t>(r * 16 + c)], (xv[static_cast<size_t>(r * 16 + c)] - m) / std::sqrt(v + 1e-5), 1e-4) << call;
    }
  }
  EXPECT_GE(GlobalCounters::schedule_hits, 3);
}

TEST(ScheduleCache, WhatTheSchedulerReadsIsInTheKey) {
  Context ctx{{"SCHEDULE_CACHE", 1}};
  Tensor a = input(8, 32, 0.1f), b = input(8, 32, 0.2f);
  EXPECT_TRUE(second_is_hit([] { return input(8, 32, 0.3f).exp() + 1; }));
  // a constant's value is in the kernel
  EXPECT_FALSE(second_is_hit([n = 0]() mutable { return input(8, 32, 0.3f) + static_cast<float>(++n); }));
  // shapes and views
  EXPECT_FALSE(second_is_hit([n = 0]() mutable { return input(8, 32 + 16 * ++n, 0.3f).sum({1}); }));
  EXPECT_FALSE(second_is_hit([&, n = 0]() mutable {
    n++;
    return a.shrink({{n, n + 4}, {0, 32}}).exp();
  }));
  // one buffer read twice, or two buffers
  EXPECT_FALSE(second_is_hit([&, n = 0]() mutable { return ++n == 1 ? a * b : a * a; }));
  Tensor c = input(4, 8, 0.1f), d = input(4, 8, 0.2f);  // a shape of its own: c * d is not in the cache yet
  EXPECT_FALSE(second_is_hit([&, n = 0]() mutable { return ++n == 1 ? c * c : c * d; }));
  // a source realized, or computed in the kernel
  EXPECT_FALSE(second_is_hit([&, n = 0]() mutable {
    Tensor e = a.exp();
    if (++n == 2) e.realize();
    return e.sum({1});
  }));
  // contiguous() of a computed buffer marks it to be realized (no new node)
  EXPECT_FALSE(second_is_hit([&, n = 0]() mutable { return ++n == 1 ? (a.exp() + 1).sum({1}) : (a.exp().contiguous() + 1).sum({1}); }));
  // dtypes, and an output given twice or as another output's source
  EXPECT_FALSE(second_is_hit([n = 0]() mutable { return ++n == 1 ? input(8, 32, 0.3f).exp() : input(8, 32, 0.3f).cast(dtypes::float16).exp(); }));
  auto outs_hit = [&](const std::function<std::vector<LBPtr>()>& outs) {
    create_schedule(outs());
    std::vector<LBPtr> second = outs();
    int64_t hits = GlobalCounters::schedule_hits;
    create_schedule(second);
    return GlobalCounters::schedule_hits == hits + 1;
  };
  EXPECT_TRUE(outs_hit([&] { Tensor e = a.exp(); return std::vector<LBPtr>{e.lazydata(), (e + 1).lazydata()}; }));
  EXPECT_FALSE(outs_hit([&, n = 0]() mutable {
    Tensor e = a.exp(), f = e + 1;
    return ++n == 1 ? std::vector<LBPtr>{e.lazydata(), f.lazydata(), f.lazydata()} : std::vector<LBPtr>{e.lazydata(), f.lazydata(), e.lazydata()};
  }));
  // FUSE is part of the key: softmax is one kernel fused, three with FUSE=0
  Tensor s = a.softmax(-1);
  EXPECT_EQ(create_schedule({s.lazydata()}).size(), 1u);
  Context nofuse{{"FUSE", 0}};
  EXPECT_EQ(create_schedule({s.lazydata()}).size(), 3u);
}

// An optimizer step repeats its graph over the same parameters: the ASSIGN commits come from the cache
// too, and the parameters keep updating. (The first two steps differ: before the first, the parameter
// was realized by a copy, after it by an assign.)
TEST(ScheduleCache, RepeatedAssignsUpdateInPlace) {
  Context ctx{{"SCHEDULE_CACHE", 2}};
  Tensor w = Tensor(std::vector<float>{1, 2, 3, 4}, {4}).realize();
  GlobalCounters::reset();
  for (int i = 0; i < 5; i++) {
    w.assign(w * 2 + 1).realize();
  }
  EXPECT_EQ(GlobalCounters::schedule_hits, 3);
  std::vector<float> want{1, 2, 3, 4};
  for (float& x : want)
    for (int i = 0; i < 5; i++) x = x * 2 + 1;
  EXPECT_EQ(w.tolist<float>(), want);
}

namespace {
// x times 1.0001, `steps` times: a graph of 3 nodes a step (the constant, its view and the multiply).
Tensor mul_chain(const Tensor& x, int steps) {
  Tensor y = x;
  for (int i = 0; i < steps; i++) y = y * 1.0001f;
  return y;
}
}  // namespace

// A graph of thousands of nodes is kept (a sort's network of 55 steps is 2000 to 5000): here 5400.
TEST(ScheduleCache, GraphsOfThousandsOfNodesAreKept) {
  Context ctx{{"SCHEDULE_CACHE", 1}};
  Tensor x = input(1, 8, 0.5f);
  mul_chain(x, 1800).realize();
  size_t before = schedule_cache_size();
  int64_t hits = GlobalCounters::schedule_hits;
  mul_chain(x, 1800).realize();
  EXPECT_EQ(schedule_cache_size(), before);
  EXPECT_EQ(GlobalCounters::schedule_hits, hits + 1);
}

// A graph too big to keep a copy of (past 16384 nodes) is scheduled without the cache, and still right.
TEST(ScheduleCache, HugeGraphsAreNotKept) {
  Context ctx{{"SCHEDULE_CACHE", 1}};
  Tensor x = input(1, 8, 0.5f);
  size_t before = schedule_cache_size();
  std::vector<float> got = mul_chain(x, 6000).tolist<float>();
  EXPECT_EQ(schedule_cache_size(), before);
  std::vector<float> xv = x.tolist<float>();
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], xv[i] * std::pow(1.0001, 6000), 1e-3);
}

// Another thread's contiguous() may force a buffer of a graph to realize while this one schedules it:
// the key made before no longer describes the graph, and create_schedule schedules it again.
TEST(ScheduleCache, AKeyIsStaleOnceAnotherBufferOfItsGraphIsForced) {
  Tensor x = input(4, 6, 0.3f);
  Tensor s = (x * 2.f).sum({1});
  Tensor r = (s + 1.f).sum();
  ScheduleKey key = schedule_key({r.lazydata()});
  ASSERT_FALSE(key.words.empty());
  EXPECT_TRUE(key_is_current(key));
  Tensor sc = s.contiguous();  // a whole buffer already: the hint is set on s, no new node
  EXPECT_EQ(sc.lazydata(), s.lazydata());
  EXPECT_FALSE(key_is_current(key));
  EXPECT_TRUE(key_is_current(schedule_key({r.lazydata()})));
  EXPECT_NE(schedule_key({r.lazydata()}).words, key.words);
}

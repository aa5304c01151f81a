// TinyJit: replays do no engine work, give the same numbers as running the function, and either work or
// raise a JitError where tinygrad's JIT is silently wrong (test/unit/test_jit_footguns.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "test_util.h"
#include "tg/jit.h"
#include "tg/tg.h"

using namespace tg;
using ::testing::HasSubstr;

namespace {
Tensor vec(std::vector<float> v) { return Tensor(v, {static_cast<int64_t>(v.size())}); }
std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

// The JitError a call raises, with the function's name in it.
std::string jit_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const JitError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a JitError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a JitError, nothing was thrown";
  return "";
}
}  // namespace

TEST(TinyJit, ReplaysScheduleLowerAndCompileNothing) {
  TinyJit f([](const std::vector<Tensor>& in) { return one(((in[0] * 2 + in[1]).relu() * in[1]).sum({1}) + 1); }, "f");
  auto call = [&](float a) { return f({Tensor::full({3, 4}, a).contiguous(), Tensor::full({3, 4}, 2.f).contiguous()})[0]; };
  EXPECT_EQ(call(1).tolist<float>(), std::vector<float>(3, 33.f));  // warm-up
  EXPECT_EQ(call(2).tolist<float>(), std::vector<float>(3, 49.f));  // capture
  EXPECT_EQ(f.cnt(), 2);
  EXPECT_GE(f.captured_kernels(), 1u);
  std::vector<Tensor> ins;
  for (int i = 0; i < 20; i++) ins.push_back(Tensor::full({3, 4}, static_cast<float>(i)).contiguous().realize());
  Tensor two = Tensor::full({3, 4}, 2.f).contiguous().realize();
  GlobalCounters::reset();
  std::vector<Tensor> outs;
  for (int i = 0; i < 20; i++) outs.push_back(f({ins[static_cast<size_t>(i)], two})[0]);
  EXPECT_EQ(GlobalCounters::schedules, 0);
  EXPECT_EQ(GlobalCounters::lowered, 0);
  EXPECT_EQ(GlobalCounters::compiles, 0);
  EXPECT_EQ(GlobalCounters::kernel_count, static_cast<int64_t>(20 * f.captured_kernels()));
  for (int i = 0; i < 20; i++)  // every output still holds its own call's values
    EXPECT_EQ(outs[static_cast<size_t>(i)].tolist<float>(), std::vector<float>(3, 8.f * std::max(2.f * i + 2, 0.f) + 1)) << i;
}

// A small model with BatchNorm, dropout and Adam, trained step for step with and without the JIT: the same
// kernels on the same numbers (the random batches and dropout masks too), so the same bits.
TEST(TinyJit, TrainingMatchesJitOffBitForBit) {
  auto train = [](bool jit) {
    Context ctx{{"JIT", jit ? 1 : 0}};
    Tensor::manual_seed(42);
    struct Model : nn::Module {
      nn::Linear l1{8, 16}, l2{16, 4};
      nn::BatchNorm bn{16};
      Model() { register_module("l1", l1); register_module("l2", l2); register_module("bn", bn); }
      Tensor operator()(const Tensor& x) const { return l2(bn(l1(x)).relu().dropout(0.25)); }
    } model;
    nn::optim::Adam opt(nn::state::get_parameters(model), 1e-2);
    Tensor X = Tensor::randn({64, 8}).realize(), Y = Tensor::randint({64}, 0, 4).realize();
    TinyJit step([&](const std::vector<Tensor>&) {
      TrainingGuard training;
      Tensor idx = Tensor::randint({16}, 0, 64);
      Tensor loss = model(X.index({idx})).sparse_categorical_crossentropy(Y.index({idx}));
      opt.zero_grad();
      loss.backward();
      std::vector<Tensor> state = opt.schedule_step();
      state.insert(state.begin(), loss);
      Tensor::corealize(state);
      return one(loss);
    }, "train_step");
    std::vector<float> losses;
    for (int i = 0; i < 8; i++) losses.push_back(step({})[0].item<float>());
    std::vector<float> params;
    for (auto& [name, t] : model.state_dict())
      for (float v : t.cast(dtypes::float32).tolist<float>()) params.push_back(v);
    return std::make_pair(losses, params);
  };
  auto [jit_losses, jit_params] = train(true);
  auto [ref_losses, ref_params] = train(false);
  EXPECT_EQ(jit_losses, ref_losses);
  EXPECT_EQ(jit_params, ref_params);  // weights, Adam's effect, BatchNorm's running stats and count
  EXPECT_NE(jit_losses.front(), jit_losses.back());
}

// ---- tinygrad's footguns: here they work -------------------------------------------------------------

TEST(TinyJitFootguns, OutputsOfTwoCallsNeverAlias) {
  TinyJit f([](const std::vector<Tensor>& in) { return one(in[0].sum()); });
  Tensor r1 = f({vec({1, 1})})[0], r2 = f({vec({2, 2})})[0], r3 = f({vec({3, 3})})[0], r4 = f({vec({4, 4})})[0];
  EXPECT_EQ(r1.item<float>(), 2.f);
  EXPECT_EQ(r2.item<float>(), 4.f);  // tinygrad: 8 (overwritten by the later calls)
  EXPECT_EQ(r3.item<float>(), 6.f);
  EXPECT_EQ(r4.item<float>(), 8.f);
}

TEST(TinyJitFootguns, RandomNumbersAdvanceOnEveryReplay) {
  TinyJit f([](const std::vector<Tensor>& in) { return one(in[0] + Tensor::rand({3})); });
  std::set<std::vector<float>> seen;
  for (int i = 0; i < 7; i++) seen.insert(f({Tensor::zeros({3}).contiguous()})[0].tolist<float>());
  EXPECT_EQ(seen.size(), 7u);
}

// The same numbers as without the JIT: the replays draw what the function would have drawn.
TEST(TinyJitFootguns, RandomNumbersAreTheFunctionsOwn) {
  auto draws = [](bool jit) {
    Context ctx{{"JIT", jit ? 1 : 0}};
    Tensor::manual_seed(7);
    TinyJit f([](const std::vector<Tensor>&) { return one(Tensor::rand({4}).dropout(0.5) * 1); });
    std::vector<std::vector<float>> out;
    TrainingGuard training;
    for (int i = 0; i < 5; i++) out.push_back(f({})[0].tolist<float>());
    return out;
  };
  EXPECT_EQ(draws(true), draws(false));
}

TEST(TinyJitFootguns, AnInputTheFunctionWritesIsUpdated) {
  TinyJit f([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    x.assign(x + 1);
    return one((x * 10).realize());
  });
  Tensor a = vec({0}).contiguous().realize(), b = vec({100}).contiguous().realize();
  std::vector<float> got;
  for (int i = 0; i < 5; i++) got.push_back(f({a})[0].item<float>());
  EXPECT_EQ(a.item<float>(), 5.f);
  EXPECT_EQ(got, (std::vector<float>{10, 20, 30, 40, 50}));
  EXPECT_EQ(f({b})[0].item<float>(), 1010.f);  // another input, the same plan
  EXPECT_EQ(b.item<float>(), 101.f);
  EXPECT_EQ(a.item<float>(), 5.f);
}

// The output of one call fed back as the next call's input (tinygrad's graph input/output aliasing).
TEST(TinyJitFootguns, OutputFedBackAsInput) {
  TinyJit f([](const std::vector<Tensor>& in) { return one(((in[0] + 1).realize() * 2).realize()); });
  Tensor x = f({vec({10}).contiguous()})[0];
  x = f({vec({20}).contiguous()})[0];
  for (int i = 0; i < 3; i++) x = f({x})[0];
  EXPECT_EQ(x.item<float>(), 350.f);
  Tensor y = vec({100}).contiguous().realize();
  for (int i = 0; i < 3; i++) y = f({y})[0];
  EXPECT_EQ(y.item<float>(), 814.f);
}

TEST(TinyJitFootguns, StateOutsideTheArgumentsIsReadEachReplay) {
  Tensor w = vec({0}).contiguous().realize();
  TinyJit f([&](const std::vector<Tensor>&) { return one(w * 2); });
  for (int i = 0; i < 5; i++) {
    w.assign(vec({static_cast<float>(i)})).realize();
    EXPECT_EQ(f({})[0].item<float>(), 2.f * i) << i;
  }
}

// ---- what cannot be replayed raises a JitError naming the function and the argument ------------------

TEST(TinyJitErrors, InputShapeViewDtypeDiffer) {
  TinyJit f([](const std::vector<Tensor>& in) { return one(in[0] + 1); }, "add_one");
  Tensor base = Tensor::rand({10, 10}).realize();
  f({base.shrink({{0, 10}, {1, 3}})});
  f({base.shrink({{0, 10}, {1, 3}})});
  EXPECT_EQ(f({base.shrink({{0, 10}, {1, 3}})})[0].shape(), (Shape{10, 2}));
  std::string shape = jit_error_of([&] { f({Tensor::rand({20, 2})}); });
  EXPECT_THAT(shape, HasSubstr("add_one: argument 0"));
  EXPECT_THAT(shape, HasSubstr("(20,2)"));
  EXPECT_THAT(jit_error_of([&] { f({base.shrink({{0, 10}, {2, 4}})}); }), HasSubstr("argument 0"));  // another offset
  EXPECT_THAT(jit_error_of([&] { f({Tensor::rand({10, 2}, dtypes::float64)}); }), HasSubstr("float64"));
  EXPECT_THAT(jit_error_of([&] { f({base.shrink({{0, 10}, {1, 3}}), Tensor::rand({2})}); }), HasSubstr("2 tensor arguments"));
}

TEST(TinyJitErrors, FunctionThatRealizesNothing) {
  TinyJit f([](const std::vector<Tensor>&) { return std::vector<Tensor>{}; }, "nothing");
  f({vec({1})});
  EXPECT_THAT(jit_error_of([&] { f({vec({1})}); }), HasSubstr("nothing: the function realized nothing"));
}

TEST(TinyJitErrors, NestedJit) {
  TinyJit inner([](const std::vector<Tensor>& in) { return one(in[0] + 1); }, "inner");
  TinyJit outer([&](const std::vector<Tensor>& in) { return one(inner({in[0]})[0] * 3); }, "outer");
  EXPECT_EQ(outer({vec({1})})[0].item<float>(), 6.f);
  EXPECT_THAT(jit_error_of([&] { outer({vec({2})}); }), HasSubstr("inner: called during the capture of outer"));
}

TEST(TinyJitErrors, HostReadsDuringTheCapture) {
  for (int which = 0; which < 3; which++) {
    TinyJit f([which](const std::vector<Tensor>& in) {
      Tensor s = in[0].sum();
      float v = which == 0 ? s.item<float>() : which == 1 ? s.tolist<float>()[0] : static_cast<float>(s.bytes().size());
      return one(Tensor::full({2}, v));
    }, "reads");
    f({vec({1, 2})});  // warm-up: reading is fine
    EXPECT_THAT(jit_error_of([&] { f({vec({1, 2})}); }), HasSubstr("reads: item()/tolist()/numpy()/bytes() during the TinyJit capture"));
  }
}

TEST(TinyJitErrors, SameBufferTwiceAndConstants) {
  TinyJit f([](const std::vector<Tensor>& in) { return one(in[0] + in[1]); }, "pair");
  Tensor x = vec({1, 2, 3}).realize();
  EXPECT_THAT(jit_error_of([&] { f({x, x}); }), HasSubstr("pair: arguments 0 and 1 are the same buffer"));
  EXPECT_THAT(jit_error_of([&] { f({x, Tensor(2.f)}); }), HasSubstr("pair: argument 1"));
  EXPECT_THAT(jit_error_of([&] { f({x, Tensor::full({3}, 2.f).realize()}); }), HasSubstr("constant"));
  EXPECT_EQ(f({x, vec({1, 1, 1})})[0].tolist<float>(), (std::vector<float>{2, 3, 4}));
}

TEST(TinyJit, ConstantAndPersistentOutputsAreReturnedAsThey) {
  Tensor w = vec({1, 2}).contiguous().realize();
  TinyJit f([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * 2).realize(), Tensor::full({2}, 7.f), w}; });
  for (int i = 0; i < 4; i++) {
    std::vector<Tensor> r = f({vec({static_cast<float>(i), 1})});
    EXPECT_EQ(r[0].tolist<float>(), (std::vector<float>{2.f * i, 2}));
    EXPECT_EQ(r[1].tolist<float>(), (std::vector<float>{7, 7}));
    EXPECT_TRUE(r[2].is_same(w) || r[2].lazydata() == w.lazydata());
  }
}

TEST(TinyJit, JitZeroRunsTheFunctionEveryCall) {
  Context ctx{{"JIT", 0}};
  int calls = 0;
  TinyJit f([&](const std::vector<Tensor>& in) { calls++; return one(in[0] * 2); });
  for (int i = 0; i < 4; i++) EXPECT_EQ(f({vec({static_cast<float>(i)})})[0].item<float>(), 2.f * i);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(f.captured_kernels(), 0u);
}

// The CPU's graph executor runs the captured kernels as one dispatch, with the same results as running
// them one by one (JIT=2), for kernels split over threads and kernels run on one.
TEST(TinyJit, GraphExecutorMatchesKernelByKernel) {
  auto run = [](int jit) {
    Context ctx{{"JIT", jit}};
    TinyJit f([](const std::vector<Tensor>& in) {
      Tensor big = in[0], small = in[1];
      for (int i = 0; i < 6; i++) big = (big * 0.5f + in[0].sum()).realize(), small = (small.exp() + big.max()).realize();
      return std::vector<Tensor>{big, small};
    });
    std::vector<std::vector<float>> out;
    for (int i = 0; i < 5; i++) {
      std::vector<Tensor> r = f({Tensor::rand({256, 1024}), Tensor::full({8}, static_cast<float>(i)).contiguous()});
      out.push_back(r[0].tolist<float>());
      out.push_back(r[1].tolist<float>());
    }
    EXPECT_EQ(f.graph_calls(), 1u);  // all of it one batch (JIT=2 replays it kernel by kernel)
    return out;
  };
  Tensor::manual_seed(5);
  auto graph = run(1);
  Tensor::manual_seed(5);
  EXPECT_EQ(graph, run(2));
}

// Buffers that live only inside the function share memory: a chain of realized intermediates needs two.
TEST(TinyJit, IntermediatesShareMemory) {
  TinyJit f([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 8; i++) x = (x * 2 + 1).realize();
    return one(x.sum());
  });
  Tensor in = Tensor::rand({1024}).realize();
  float want = f({in})[0].item<float>();
  EXPECT_EQ(f({in})[0].item<float>(), want);
  EXPECT_EQ(f({in})[0].item<float>(), want);
  EXPECT_EQ(f.unplanned_bytes(), 8 * 1024 * 4);  // the 8 intermediates
  EXPECT_EQ(f.planned_bytes(), 2 * 1024 * 4);
}

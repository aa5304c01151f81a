// Where compile time goes, stage by stage, for three graphs:
//   chain1000: 1000 chained elementwise ops (mul, add, neg, exp2, sqrt in turn) on 1024 float32s, one kernel
//   var:       the README's x.var() on 4 float32s, two kernels (mean, then variance)
//   cnn:       the main job's train step (examples/beautiful_mnist: forward, backward, Adam) at batch 32,
//              every kernel of it (the heuristics' optimizations applied, as realize does)
// Stages: build (Tensor ops), schedule (create_schedule), linearize (Kernel(ast, renderer).linearize()),
// render (renderer.render), compile (the CPU compiler, without the disk cache).
// Build and schedule make a fresh graph every iteration (LazyBuffers are not shared between graphs;
// UOps are hash-consed, so the AST of a rebuilt graph is the same object). Linearize, render and compile
// reuse one AST / one source.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "../examples/beautiful_mnist_model.h"
#include "codegen/kernel.h"
#include "engine/schedule.h"
#include "renderer/renderer.h"
#include "runtime/device.h"
#include "tg/helpers.h"
#include "tg/nn.h"
#include "tg/optim.h"
#include "tg/state.h"
#include "tg/tensor.h"

namespace {

tg::Tensor chain_input() {
  static tg::Tensor x = [] {
    std::vector<float> v(1024);
    for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i) / 1024.f;
    tg::Tensor t(v, {1024});
    t.realize();
    return t;
  }();
  return x;
}

tg::Tensor build_chain1000() {
  tg::Tensor x = chain_input();
  for (int i = 0; i < 1000; i++) {
    switch (i % 5) {
      case 0: x = x * 1.0001f; break;
      case 1: x = x + 0.5f; break;
      case 2: x = -x; break;
      case 3: x = x.exp2(); break;  // > 0, so the sqrt that follows is defined
      default: x = x.sqrt(); break;
    }
  }
  return x;
}

tg::Tensor var_input() {
  static tg::Tensor x = [] {
    tg::Tensor t({1.f, 2.f, 3.f, 4.f});
    t.realize();
    return t;
  }();
  return x;
}

tg::Tensor build_var() { return var_input().var(); }

// examples/beautiful_mnist's train step on random data (the graph is what matters here); the step's
// outputs: the updated parameters and optimizer state, and the loss
std::vector<tg::Tensor> build_cnn() {
  static BeautifulMnistModel model;
  static tg::nn::optim::Adam opt(tg::nn::state::get_parameters(model), 1e-3);
  static tg::Tensor x = tg::Tensor::rand({32, 1, 28, 28}), y = tg::Tensor::randint({32}, 0, 10);
  static bool ready = [] {  // parameters, optimizer state and data realized once, as in training
    std::vector<tg::Tensor> s = tg::nn::state::get_parameters(model);
    s.push_back(x), s.push_back(y);
    tg::Tensor::corealize(s);
    return true;
  }();
  (void)ready;
  tg::TrainingGuard training;
  opt.zero_grad();
  tg::Tensor loss = model(x).sparse_categorical_crossentropy(y);
  loss.backward();
  std::vector<tg::Tensor> all = opt.schedule_step();
  all.push_back(loss);
  return all;
}

std::vector<tg::Tensor> one(tg::Tensor t) { return {std::move(t)}; }
std::vector<tg::Tensor> build_chain1000_outs() { return one(build_chain1000()); }
std::vector<tg::Tensor> build_var_outs() { return one(build_var()); }

using Builder = std::vector<tg::Tensor> (*)();

std::vector<tg::UOpPtr> kernel_asts(Builder build) {
  std::vector<tg::UOpPtr> asts;
  std::vector<tg::LBPtr> outs;
  for (auto& t : build()) outs.push_back(t.lazydata());
  for (auto& si : tg::create_schedule(outs))
    if (si.is_kernel()) asts.push_back(si.ast);
  return asts;
}

const tg::Renderer& cpu_renderer() { return tg::Device::get("CPU").renderer(); }

struct Rendered {
  std::vector<std::string> names;
  std::vector<std::vector<tg::UOpPtr>> uops;
  std::vector<std::string> srcs;
};
Rendered lower_all(Builder build) {
  Rendered r;
  for (auto& ast : kernel_asts(build)) {
    tg::Kernel k(ast, cpu_renderer());
    if (!tg::NOOPT) k.hand_coded_optimizations();
    r.names.push_back(k.name());
    r.uops.push_back(k.linearize());
    r.srcs.push_back(cpu_renderer().render(r.names.back(), r.uops.back()).src);
  }
  return r;
}

void stage_build(benchmark::State& state, Builder build) {
  chain_input();
  var_input();
  for (auto _ : state) {
    std::vector<tg::Tensor> t = build();
    benchmark::DoNotOptimize(t);
  }
}

void stage_schedule(benchmark::State& state, Builder build) {
  size_t items = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto t = std::make_unique<std::vector<tg::Tensor>>(build());
    std::vector<tg::LBPtr> outs;
    for (auto& x : *t) outs.push_back(x.lazydata());
    state.ResumeTiming();
    auto sched = tg::create_schedule(outs);
    benchmark::DoNotOptimize(sched);
    state.PauseTiming();  // freeing the graph is not scheduling
    items = sched.size();
    sched.clear();
    t.reset();
    state.ResumeTiming();
  }
  state.counters["items"] = static_cast<double>(items);
}

void stage_linearize(benchmark::State& state, Builder build) {
  auto asts = kernel_asts(build);
  size_t n = 0;
  for (auto _ : state) {
    for (auto& ast : asts) {
      tg::Kernel k(ast, cpu_renderer());
      if (!tg::NOOPT) k.hand_coded_optimizations();
      auto uops = k.linearize();
      n = uops.size();
      benchmark::DoNotOptimize(uops);
    }
  }
  state.counters["kernels"] = static_cast<double>(asts.size());
  state.counters["uops_last"] = static_cast<double>(n);
}

void stage_render(benchmark::State& state, Builder build) {
  Rendered r = lower_all(build);
  size_t bytes = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < r.uops.size(); i++) {
      auto rk = cpu_renderer().render(r.names[i], r.uops[i]);
      bytes = rk.src.size();
      benchmark::DoNotOptimize(rk);
    }
  }
  state.counters["src_bytes_last"] = static_cast<double>(bytes);
}

void stage_compile(benchmark::State& state, Builder build) {
  Rendered r = lower_all(build);
  tg::Compiler& c = tg::Device::get("CPU").compiler();
  for (auto _ : state) {
    for (auto& src : r.srcs) {
      std::string lib = c.compile(src);  // uncached: a real compiler run every time
      benchmark::DoNotOptimize(lib);
    }
  }
}

}  // namespace

BENCHMARK_CAPTURE(stage_build, chain1000, build_chain1000_outs)->Name("BM_chain1000_build")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(stage_schedule, chain1000, build_chain1000_outs)->Name("BM_chain1000_schedule")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(stage_linearize, chain1000, build_chain1000_outs)->Name("BM_chain1000_linearize")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(stage_render, chain1000, build_chain1000_outs)->Name("BM_chain1000_render")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(stage_compile, chain1000, build_chain1000_outs)->Name("BM_chain1000_compile")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(stage_build, var, build_var_outs)->Name("BM_var_build")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(stage_schedule, var, build_var_outs)->Name("BM_var_schedule")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(stage_linearize, var, build_var_outs)->Name("BM_var_linearize")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(stage_render, var, build_var_outs)->Name("BM_var_render")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(stage_compile, var, build_var_outs)->Name("BM_var_compile")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(stage_schedule, cnn, build_cnn)->Name("BM_cnn_schedule")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(stage_linearize, cnn, build_cnn)->Name("BM_cnn_linearize")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(stage_render, cnn, build_cnn)->Name("BM_cnn_render")->Unit(benchmark::kMillisecond);

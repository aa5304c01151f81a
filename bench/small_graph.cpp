// The per-call overhead of small graphs, warm: (a+b).sum() on 16 float32s, built and realized, from C++;
// softmax and layernorm over (64, 512) built, realized, and replayed by a TinyJit (bottom).
// bench/python_overhead.py runs the same graphs through the Python bindings and prints both side by side.
//   build:        the lazy graph only (two Tensor ops, no schedule, nothing runs)
//   realize:      build + schedule + run the (cached) kernel
//   item:         build + realize + read the scalar back to the host
// The kernel is compiled (or loaded from the disk cache) before timing; what remains is graph building,
// scheduling, lowering lookups and the launch: the fixed cost every call pays.
#include <benchmark/benchmark.h>

#include <vector>

#include "tg/helpers.h"
#include "tg/jit.h"
#include "tg/tensor.h"

namespace {

struct Inputs {
  tg::Tensor a, b;
  Inputs() : a(std::vector<float>(16, 1.5f), {16}), b(std::vector<float>(16, 0.25f), {16}) {
    a.realize();
    b.realize();
    (a + b).sum().realize();  // compile outside the timing
  }
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

void BM_small_graph_build(benchmark::State& state) {
  Inputs& in = inputs();
  for (auto _ : state) {
    tg::Tensor c = (in.a + in.b).sum();
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_small_graph_build)->Unit(benchmark::kMicrosecond);

void BM_small_graph_realize(benchmark::State& state) {
  Inputs& in = inputs();
  tg::GlobalCounters::reset();
  for (auto _ : state) {
    tg::Tensor c = (in.a + in.b).sum();
    c.realize();
    benchmark::DoNotOptimize(c);
  }
  state.counters["kernels/iter"] = static_cast<double>(tg::GlobalCounters::kernel_count) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_small_graph_realize)->Unit(benchmark::kMicrosecond);

void BM_small_graph_item(benchmark::State& state) {
  Inputs& in = inputs();
  float v = 0;
  for (auto _ : state) {
    v = (in.a + in.b).sum().item<float>();
    benchmark::DoNotOptimize(v);
  }
  if (v != 16 * 1.75f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_small_graph_item)->Unit(benchmark::kMicrosecond);

// softmax and layernorm over the last axis of (64, 512): one fused kernel of 5-9 us each, so the rest of
// an eager call is the fixed cost of a graph of a dozen lazy ops (two reduces and their broadcasts) that
// issue 18's small rows pay; the TinyJit replay is the kernel with none of it.
tg::Tensor& rows_input() {
  static tg::Tensor x = [] {
    std::vector<float> v(64 * 512);
    for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 97) * 0.03f - 1.5f;
    tg::Tensor t(v, {64, 512});
    t.realize();
    return t;
  }();
  return x;
}
tg::Tensor softmax_rows(const tg::Tensor& x) { return x.softmax(-1); }
tg::Tensor layernorm_rows(const tg::Tensor& x) { return x.layernorm({-1}, 1e-5); }

template <tg::Tensor (*F)(const tg::Tensor&)> void BM_rows_build(benchmark::State& state) {
  tg::Tensor& x = rows_input();
  for (auto _ : state) {
    tg::Tensor o = F(x);
    benchmark::DoNotOptimize(o);
  }
}
template <tg::Tensor (*F)(const tg::Tensor&)> void BM_rows_realize(benchmark::State& state) {
  tg::Tensor& x = rows_input();
  F(x).realize();  // compile outside the timing
  tg::GlobalCounters::reset();
  for (auto _ : state) {
    tg::Tensor o = F(x);
    o.realize();
    benchmark::DoNotOptimize(o);
  }
  state.counters["kernels/iter"] = static_cast<double>(tg::GlobalCounters::kernel_count) / static_cast<double>(state.iterations());
}
template <tg::Tensor (*F)(const tg::Tensor&)> void BM_rows_jit(benchmark::State& state) {
  tg::Tensor& x = rows_input();
  tg::TinyJit jit([](const std::vector<tg::Tensor>& in) { return std::vector<tg::Tensor>{F(in[0])}; });
  for (int i = 0; i < 3; i++) jit({x});  // warm-up, capture, one replay
  for (auto _ : state) benchmark::DoNotOptimize(jit({x}));
}
BENCHMARK(BM_rows_build<softmax_rows>)->Name("BM_softmax_64x512_build")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rows_realize<softmax_rows>)->Name("BM_softmax_64x512_realize")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rows_jit<softmax_rows>)->Name("BM_softmax_64x512_jit")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rows_build<layernorm_rows>)->Name("BM_layernorm_64x512_build")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rows_realize<layernorm_rows>)->Name("BM_layernorm_64x512_realize")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rows_jit<layernorm_rows>)->Name("BM_layernorm_64x512_jit")->Unit(benchmark::kMicrosecond);

}  // namespace

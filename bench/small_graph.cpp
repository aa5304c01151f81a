// The per-call overhead of a small graph, warm: (a+b).sum() on 16 float32s, built and realized, from C++.
// bench/python_overhead.py runs the same graphs through the Python bindings and prints both side by side.
//   build:        the lazy graph only (two Tensor ops, no schedule, nothing runs)
//   realize:      build + schedule + run the (cached) kernel
//   item:         build + realize + read the scalar back to the host
// The kernel is compiled (or loaded from the disk cache) before timing; what remains is graph building,
// scheduling, lowering lookups and the launch: the fixed cost every call pays.
#include <benchmark/benchmark.h>

#include <vector>

#include "tg/helpers.h"
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

}  // namespace

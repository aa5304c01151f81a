// The per-kernel cost of running kernels that do almost nothing, three ways, for kernels of 16 floats (each
// runs on the calling thread) and of 64K floats (each split over the thread pool):
//   realize:       one kernel per realize() call: schedule, lowering lookups, the launch
//   replay_items:  a TinyJit replay that runs its captured kernels one ExecItem at a time (JIT=2: what a
//                  replay did before the graph executor)
//   replay_graph:  a TinyJit replay through the CPU graph executor: one dispatch of the whole batch
// Each iteration runs kKernels kernels; the counters give microseconds per kernel.
#include <benchmark/benchmark.h>

#include <vector>

#include "tg/helpers.h"
#include "tg/jit.h"
#include "tg/tensor.h"

namespace {

constexpr int kKernels = 200;

tg::Tensor chain(tg::Tensor x, const tg::Tensor& s) {
  for (int i = 0; i < kKernels; i++) x = (x * s + s).realize();  // the same kernel each time: compiled once
  return x;
}

struct Setup {
  explicit Setup(int64_t n) : x(std::vector<float>(static_cast<size_t>(n), 1.f), {n}), s(std::vector<float>(static_cast<size_t>(n), 0.5f), {n}) {
    x.realize(), s.realize();
    for (int i = 0; i < 3; i++) jit({x, s});  // warm-up, capture, one replay
  }
  tg::Tensor x, s;
  tg::TinyJit jit{[](const std::vector<tg::Tensor>& in) { return std::vector<tg::Tensor>{chain(in[0], in[1])}; }, "chain"};
};

Setup& setup(int64_t n) {
  static Setup small(16), large(65536);
  return n == 16 ? small : large;
}

void per_kernel(benchmark::State& state) {
  state.counters["us/kernel"] = benchmark::Counter(static_cast<double>(state.iterations()) * kKernels,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_realize(benchmark::State& state) {
  Setup& s = setup(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(chain(s.x, s.s));
  per_kernel(state);
}
BENCHMARK(BM_realize)->Arg(16)->Arg(65536)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_replay_items(benchmark::State& state) {
  Setup& s = setup(state.range(0));
  tg::Context ctx{{"JIT", 2}};
  for (auto _ : state) benchmark::DoNotOptimize(s.jit({s.x, s.s}));
  per_kernel(state);
}
BENCHMARK(BM_replay_items)->Arg(16)->Arg(65536)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_replay_graph(benchmark::State& state) {
  Setup& s = setup(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(s.jit({s.x, s.s}));
  per_kernel(state);
}
BENCHMARK(BM_replay_graph)->Arg(16)->Arg(65536)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

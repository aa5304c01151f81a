// Elementwise add of 16M float32: tinygrad.cpp's generated CPU kernel versus a plain C++ loop (one
// thread, and two threads: the CPU device runs its kernels on a 2-thread pool). Memory-bound: the
// number to compare is bytes processed (3 x 4 x 16M per iteration: two reads, one write).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "tg/helpers.h"
#include "tg/tensor.h"

namespace {

constexpr int64_t kN = int64_t{16} << 20;
constexpr int64_t kBytes = 3 * 4 * kN;

void BM_tg_add_16M(benchmark::State& state) {
  std::vector<float> ha(kN), hb(kN);
  for (int64_t i = 0; i < kN; i++) {
    ha[i] = static_cast<float>(i & 1023) * 0.5f;
    hb[i] = static_cast<float>(i & 511) * 0.25f;
  }
  tg::Tensor a(ha, {kN}), b(hb, {kN});
  a.realize();
  b.realize();
  { tg::Tensor w = a + b; w.realize(); }  // compile (or load from the disk cache) outside the timing
  tg::GlobalCounters::reset();
  for (auto _ : state) {
    tg::Tensor c = a + b;
    c.realize();
    benchmark::DoNotOptimize(c);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
  state.counters["kernels/iter"] = static_cast<double>(tg::GlobalCounters::kernel_count) / static_cast<double>(state.iterations());
  float last = (a + b).shrink({{kN - 1, kN}}).item<float>();  // a correctness check after the timing
  if (last != ha[kN - 1] + hb[kN - 1]) state.SkipWithError("wrong result");
}
BENCHMARK(BM_tg_add_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// -O3 whatever the build type (RelWithDebInfo is -O2); __restrict__ so the loop vectorizes without checks.
#if defined(__clang__)
#define TG_BENCH_O3
#else
#define TG_BENCH_O3 __attribute__((optimize("O3")))
#endif
TG_BENCH_O3 __attribute__((noinline)) void add_range(const float* __restrict__ a, const float* __restrict__ b,
                                                     float* __restrict__ c, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) c[i] = a[i] + b[i];
}

struct Vectors {
  std::vector<float> a, b, c;
  Vectors() : a(kN), b(kN), c(kN) {
    for (int64_t i = 0; i < kN; i++) {
      a[i] = static_cast<float>(i & 1023) * 0.5f;
      b[i] = static_cast<float>(i & 511) * 0.25f;
    }
  }
};

void BM_cpp_add_16M(benchmark::State& state) {
  Vectors v;
  for (auto _ : state) {
    add_range(v.a.data(), v.b.data(), v.c.data(), 0, kN);
    benchmark::DoNotOptimize(v.c.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(BM_cpp_add_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_cpp_add_16M_2threads(benchmark::State& state) {
  Vectors v;
  for (auto _ : state) {
    // Thread start-up is part of the cost here (~tens of microseconds), small against ~10 ms of work.
    std::thread t([&] { add_range(v.a.data(), v.b.data(), v.c.data(), 0, kN / 2); });
    add_range(v.a.data(), v.b.data(), v.c.data(), kN / 2, kN);
    t.join();
    benchmark::DoNotOptimize(v.c.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(BM_cpp_add_16M_2threads)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

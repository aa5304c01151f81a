// The tinygrad.cpp side of the ops table (scripts/bench_table.sh; bench/ops_table.py times PyTorch and NumPy
// and prints the merged table). Not a Google Benchmark program: it has its own main() and prints one TSV line
// per row on stdout (progress on stderr):
//   id  ms(median)  runs  kernels_per_run  status(OK|WRONG|ERROR)  note
//
//   bench_ops_table [--beam N] [--jit] [--rows SUBSTR[,SUBSTR...]]
// --beam N runs every selected row inside tg::Context{{"BEAM", N}} (compile, first run and the timed runs:
// the setting is in force whenever a kernel could be looked up or compiled). Run it in its own process, as
// the driver does, so that no kernel compiled under another setting can be reused from the in-process cache.
//
// Timing: tg works lazily, so each row first builds and realizes its graph once (the kernels compile, or load
// from the disk cache, outside the timing), then each timed run builds a fresh lazy graph with the same AST
// (the method cache hits) and realizes it: graph building, scheduling and the kernels are all inside.
// Runs repeat until at least 3 runs and 0.5 s, or 2 s in all (at least one run), or 5000 runs; the median is
// reported. The CPU device's kernels are synchronous: realize() returns once they are done. (A row of
// microseconds needs the many runs: with at most 50, tg's layernorm (64, 512) median came out 1.3-1.6x its
// steady state on a Zen 4, as its first runs are cold, while torch's did not change.)
//
// --jit times each row's graph as a TinyJit replay instead (warm-up, capture, one replay first): the captured
// kernels through the CPU graph executor, with no graph building, scheduling or lookups. Where a row's
// kernels take microseconds, this column is the kernels and the other the fixed cost of an eager call.
//
// Correctness: the output of the last timed run is checked on the host (rows and columns of the matmul
// recomputed in double, the whole add, sums and norms per row...). A failed check prints WRONG, so a fast but
// wrong kernel can never look good.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tg/helpers.h"
#include "tg/jit.h"
#include "tg/tensor.h"

namespace {

using Clock = std::chrono::steady_clock;
using tg::Tensor;

// A fixed, cheap generator (the values only need to be reproducible and spread): uniform in [lo, hi).
std::vector<float> host_data(int64_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * static_cast<float>(s >> 40) * (1.f / 16777216.f);
  }
  return v;
}

Tensor device_tensor(const std::vector<float>& v, const tg::Shape& shape) {
  Tensor t(v, shape);
  t.realize();  // copied to the compute device once, outside every timing
  return t;
}

struct Check {
  bool ok = true;
  std::string why;
  void fail(const std::string& w) {
    if (ok) why = w;
    ok = false;
  }
  void close(double got, double ref, double tol, const std::string& what) {
    if (!(std::fabs(got - ref) <= tol)) {  // NaN fails too
      char b[256];
      std::snprintf(b, sizeof b, "%s: got %.7g, expected %.7g (tolerance %.3g)", what.c_str(), got, ref, tol);
      fail(b);
    }
  }
};

struct Row {
  std::string id;
  std::function<Tensor()> build;               // a fresh lazy graph (tg rows); empty for host-only rows
  std::function<void()> host_run;              // host-only rows (the copy reference)
  std::function<void(const Tensor&, Check&)> check;
  std::function<void(Check&)> host_check;
  std::string note;
};

struct Timing {
  std::vector<double> ms;
  double median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    size_t n = s.size();
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  }
};

template <class F> Timing time_runs(F&& run) {
  constexpr int kMinRuns = 3, kMaxRuns = 5000;
  constexpr double kMinTotal = 0.5, kMaxTotal = 2.0;
  Timing t;
  double total = 0;
  while (true) {
    auto st = Clock::now();
    run();
    double s = std::chrono::duration<double>(Clock::now() - st).count();
    t.ms.push_back(s * 1e3);
    total += s;
    int n = static_cast<int>(t.ms.size());
    if ((n >= kMinRuns && total >= kMinTotal) || total >= kMaxTotal || n >= kMaxRuns) break;
  }
  return t;
}

// ---- the rows ---------------------------------------------------------------------------------------------

constexpr int64_t kN = int64_t{16} << 20;      // add, sum, copy

// -O3 whatever the build type (RelWithDebInfo is -O2); __restrict__ so the loop vectorizes without checks.
#if defined(__clang__)
#define TG_BENCH_O3
#else
#define TG_BENCH_O3 __attribute__((optimize("O3")))
#endif
TG_BENCH_O3 __attribute__((noinline)) void copy_range(const float* __restrict__ a, float* __restrict__ c, int64_t begin,
                                                      int64_t end) {
  for (int64_t i = begin; i < end; i++) c[i] = a[i];
}

// softmax over the last axis of (R, C): spot rows against a float64 reference, every row's sum 1
Row softmax_row(int64_t R, int64_t C) {
  auto hx = std::make_shared<std::vector<float>>(host_data(R * C, 15, -4.f, 4.f));
  Tensor x = device_tensor(*hx, {R, C});
  Row r;
  r.id = "softmax_" + std::to_string(R) + "x" + std::to_string(C);
  r.build = [x] { return x.softmax(-1); };
  r.check = [hx, R, C](const Tensor& out, Check& c) {
    std::vector<float> o = out.tolist<float>();
    for (int64_t i : {int64_t{0}, R / 2 + 1, R - 1}) {
      const float* row = hx->data() + i * C;
      double m = *std::max_element(row, row + C), s = 0;
      for (int64_t j = 0; j < C; j++) s += std::exp(static_cast<double>(row[j]) - m);
      for (int64_t j = 0; j < C; j++) {
        double ref = std::exp(static_cast<double>(row[j]) - m) / s;
        c.close(o[i * C + j], ref, 1e-4 * ref + 1e-9, "softmax[" + std::to_string(i) + "," + std::to_string(j) + "]");
      }
    }
    for (int64_t i = 0; i < R; i++) {
      double s = 0;
      for (int64_t j = 0; j < C; j++) s += o[i * C + j];
      if (!(std::fabs(s - 1) <= 1e-4)) {
        c.close(s, 1, 1e-4, "softmax row " + std::to_string(i) + " sum");
        break;
      }
    }
  };
  return r;
}

// layernorm over the last axis of (R, C), no affine: spot rows against a float64 reference
Row layernorm_row(int64_t R, int64_t C) {
  auto hx = std::make_shared<std::vector<float>>(host_data(R * C, 16, -2.f, 3.f));
  Tensor x = device_tensor(*hx, {R, C});
  Row r;
  r.id = "layernorm_" + std::to_string(R) + "x" + std::to_string(C);
  r.build = [x] { return x.layernorm({-1}, 1e-5); };
  r.check = [hx, R, C](const Tensor& out, Check& c) {
    std::vector<float> o = out.tolist<float>();
    for (int64_t i : {int64_t{0}, int64_t{1}, R / 2 + 1, R - 1}) {
      const float* row = hx->data() + i * C;
      double m = 0, v = 0;
      for (int64_t j = 0; j < C; j++) m += row[j];
      m /= static_cast<double>(C);
      for (int64_t j = 0; j < C; j++) v += (row[j] - m) * (row[j] - m);
      v /= static_cast<double>(C);  // biased, as torch's layer_norm
      for (int64_t j = 0; j < C; j++)
        c.close(o[i * C + j], (row[j] - m) / std::sqrt(v + 1e-5), 1e-4, "layernorm[" + std::to_string(i) + "," + std::to_string(j) + "]");
    }
  };
  return r;
}

Row sgemm_row(int64_t n) {
  auto ha = std::make_shared<std::vector<float>>(host_data(n * n, 1 + n));
  auto hb = std::make_shared<std::vector<float>>(host_data(n * n, 2 + n));
  Tensor a = device_tensor(*ha, {n, n}), b = device_tensor(*hb, {n, n});
  Row r;
  r.id = "sgemm_" + std::to_string(n);
  r.build = [a, b] { return a.matmul(b); };
  r.check = [ha, hb, n](const Tensor& out, Check& c) {
    std::vector<float> o = out.tolist<float>();
    const float* A = ha->data();
    const float* B = hb->data();
    // whole rows and columns (first, last, one inside): every tile edge and the ends of both loops
    std::vector<int64_t> lines = {0, n / 2 + 3, n - 1};
    for (int64_t i : lines)
      for (int64_t j = 0; j < n; j++) {
        for (int pass = 0; pass < 2; pass++) {  // pass 0: row i; pass 1: column i
          int64_t r = pass ? j : i, col = pass ? i : j;
          double ref = 0, mag = 0;
          for (int64_t k = 0; k < n; k++) {
            double p = static_cast<double>(A[r * n + k]) * B[k * n + col];
            ref += p;
            mag += std::fabs(p);
          }
          c.close(o[r * n + col], ref, 1e-5 * mag + 1e-6, "C[" + std::to_string(r) + "," + std::to_string(col) + "]");
        }
      }
  };
  return r;
}

// Each row's data is made just before the row runs and freed after it.
struct RowMaker {
  std::string id;
  std::function<Row()> make;
};

std::vector<RowMaker> make_rows() {
  std::vector<RowMaker> rows;
  // 997 and 1000: sizes with no (or a small) power-of-two factor, padded to the register tile
  for (int64_t n : {256, 512, 997, 1000, 1024, 2048}) rows.push_back({"sgemm_" + std::to_string(n), [n] { return sgemm_row(n); }});

  rows.push_back({"add_16M", [] {
    auto ha = std::make_shared<std::vector<float>>(host_data(kN, 11));
    auto hb = std::make_shared<std::vector<float>>(host_data(kN, 12));
    Tensor a = device_tensor(*ha, {kN}), b = device_tensor(*hb, {kN});
    Row r;
    r.id = "add_16M";
    r.build = [a, b] { return a + b; };
    r.check = [ha, hb](const Tensor& out, Check& c) {
      std::vector<float> o = out.tolist<float>();
      for (int64_t i = 0; i < kN; i++)
        if (o[i] != (*ha)[i] + (*hb)[i]) {
          c.close(o[i], (*ha)[i] + (*hb)[i], 0, "c[" + std::to_string(i) + "]");
          break;
        }
    };
    return r;
  }});
  rows.push_back({"sum_16M", [] {
    auto ha = std::make_shared<std::vector<float>>(host_data(kN, 13, 0.f, 1.f));  // all positive: a sum of ~8.4M
    Tensor a = device_tensor(*ha, {kN});
    double ref = 0;
    for (float v : *ha) ref += v;
    Row r;
    r.id = "sum_16M";
    r.build = [a] { return a.sum(); };
    // float32 partial sums in any sane order are within ~1e-6 relative; a serial float loop over 16M
    // values stalls near 2^24 and is off by percents.
    r.check = [ref](const Tensor& out, Check& c) { c.close(out.item<float>(), ref, 1e-4 * ref, "sum"); };
    return r;
  }});
  rows.push_back({"copy_16M", [] {
    auto ha = std::make_shared<std::vector<float>>(host_data(kN, 14));
    auto hc = std::make_shared<std::vector<float>>(kN);
    Row r;
    r.id = "copy_16M";
    r.host_run = [ha, hc] {
      // Thread start-up (~tens of microseconds) is part of the cost, small against ~10 ms of work.
      std::thread t([&] { copy_range(ha->data(), hc->data(), 0, kN / 2); });
      copy_range(ha->data(), hc->data(), kN / 2, kN);
      t.join();
    };
    r.host_check = [ha, hc](Check& c) {
      if (std::memcmp(ha->data(), hc->data(), kN * sizeof(float)) != 0) c.fail("copy differs");
    };
    r.note = "plain C++ loop, 2 threads (not tg)";
    return r;
  }});
  for (auto [r, c] : {std::pair<int64_t, int64_t>{4096, 1024}, {64, 512}}) {
    std::string shape = std::to_string(r) + "x" + std::to_string(c);
    rows.push_back({"softmax_" + shape, [r, c] { return softmax_row(r, c); }});
    rows.push_back({"layernorm_" + shape, [r, c] { return layernorm_row(r, c); }});
  }
  rows.push_back({"conv2d_b32_32to64_28x28_3x3", [] {
    constexpr int64_t B = 32, CI = 32, CO = 64, H = 28, W = 28, K = 3;
    auto hx = std::make_shared<std::vector<float>>(host_data(B * CI * H * W, 17));
    auto hw = std::make_shared<std::vector<float>>(host_data(CO * CI * K * K, 18));
    Tensor x = device_tensor(*hx, {B, CI, H, W}), w = device_tensor(*hw, {CO, CI, K, K});
    Row r;
    r.id = "conv2d_b32_32to64_28x28_3x3";
    r.build = [x, w] { return x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}); };  // stride 1, padding 1: 28x28 out
    r.check = [hx, hw](const Tensor& out, Check& c) {
      if (out.shape() != tg::Shape{B, CO, H, W}) return c.fail("conv2d output shape");
      std::vector<float> o = out.tolist<float>();
      auto ref_at = [&](int64_t n, int64_t co, int64_t y, int64_t x0) {
        double s = 0, mag = 0;
        for (int64_t ci = 0; ci < CI; ci++)
          for (int64_t ky = 0; ky < K; ky++)
            for (int64_t kx = 0; kx < K; kx++) {
              int64_t iy = y + ky - 1, ix = x0 + kx - 1;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              double p = static_cast<double>((*hx)[((n * CI + ci) * H + iy) * W + ix]) * (*hw)[((co * CI + ci) * K + ky) * K + kx];
              s += p;
              mag += std::fabs(p);
            }
        c.close(o[((n * CO + co) * H + y) * W + x0], s, 1e-5 * mag + 1e-6,
                "conv[" + std::to_string(n) + "," + std::to_string(co) + "," + std::to_string(y) + "," + std::to_string(x0) + "]");
      };
      // whole planes (every border and corner) for a few (n, co), then scattered points
      for (auto [n, co] : {std::pair<int64_t, int64_t>{0, 0}, {B - 1, CO - 1}, {7, 33}})
        for (int64_t y = 0; y < H; y++)
          for (int64_t x0 = 0; x0 < W; x0++) ref_at(n, co, y, x0);
      uint64_t s = 99;
      for (int i = 0; i < 2000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t v = s >> 16;
        ref_at(v % B, (v / B) % CO, (v / (B * CO)) % H, (v / (B * CO * H)) % W);
      }
    };
    r.note = "stride 1, padding 1, no bias";
    return r;
  }});
  return rows;
}

std::string clean(std::string s) {
  for (char& ch : s)
    if (ch == '\t' || ch == '\n') ch = ' ';
  return s;
}

void run_row(Row& r, bool jit) {
  std::fprintf(stderr, "  tg: %-28s", r.id.c_str());
  std::fflush(stderr);
  Check c;
  Timing t;
  double kernels = 0;
  std::string status = "OK", note = r.note;
  try {
    if (r.host_run) {
      r.host_run();  // warm-up: pages touched, threads started once
      t = time_runs(r.host_run);
      r.host_check(c);
    } else if (jit) {
      tg::TinyJit step([&](const std::vector<Tensor>&) { return std::vector<Tensor>{r.build()}; }, r.id);
      auto st = Clock::now();
      for (int i = 0; i < 3; i++) step({});  // warm-up (compiles), capture, one replay
      double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - st).count();
      std::optional<Tensor> last;
      t = time_runs([&] {
        last.reset();
        last = step({})[0];
      });
      kernels = static_cast<double>(step.captured_kernels());
      r.check(*last, c);
      char b[64];
      std::snprintf(b, sizeof b, "warm-up, capture and a replay %.0f ms", first_ms);
      note = note.empty() ? b : note + "; " + b;
    } else {
      auto st = Clock::now();
      { Tensor warm = r.build(); warm.realize(); }  // compile (or load from the disk cache) outside the timing
      double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - st).count();
      std::optional<Tensor> last;
      int64_t k0 = tg::GlobalCounters::kernel_count;
      t = time_runs([&] {
        last.reset();  // the previous output is freed (its buffer returns to the allocator's cache) first
        Tensor o = r.build();
        o.realize();
        last = o;
      });
      kernels = static_cast<double>(tg::GlobalCounters::kernel_count - k0) / static_cast<double>(t.ms.size());
      r.check(*last, c);
      char b[64];
      std::snprintf(b, sizeof b, "first run %.0f ms", first_ms);
      note = note.empty() ? b : note + "; " + b;
    }
    if (!c.ok) {
      status = "WRONG";
      note = note + "; " + c.why;
    }
  } catch (const std::exception& e) {
    status = "ERROR";
    note = note + "; " + e.what();
    t.ms = {NAN};
  }
  std::fprintf(stderr, " %10.3f ms  (%zu runs) %s\n", t.median(), t.ms.size(), status.c_str());
  std::printf("%s\t%.6f\t%zu\t%g\t%s\t%s\n", r.id.c_str(), t.median(), t.ms.size(), kernels, status.c_str(), clean(note).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int beam = -1;
  bool jit = false;
  std::vector<std::string> filter;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--beam" && i + 1 < argc) {
      beam = std::atoi(argv[++i]);
    } else if (a == "--jit") {
      jit = true;
    } else if (a == "--rows" && i + 1 < argc) {
      std::string s = argv[++i];
      for (size_t p = 0; p <= s.size();) {
        size_t q = s.find(',', p);
        if (q == std::string::npos) q = s.size();
        if (q > p) filter.push_back(s.substr(p, q - p));
        p = q + 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--beam N] [--jit] [--rows SUBSTR[,SUBSTR...]]\n", argv[0]);
      return 2;
    }
  }
  auto want = [&](const std::string& id) {
    if (filter.empty()) return true;
    for (auto& f : filter)
      if (id.find(f) != std::string::npos) return true;
    return false;
  };
  std::optional<tg::Context> ctx;
  if (beam >= 0) ctx.emplace(std::initializer_list<std::pair<const char*, int>>{{"BEAM", beam}});
  std::fprintf(stderr, "tinygrad.cpp, %s (BEAM=%d)%s\n", beam >= 0 ? "BEAM set" : "default settings", static_cast<int>(tg::BEAM), jit ? ", TinyJit replays" : "");
  for (auto& m : make_rows()) {
    if (!want(m.id)) continue;
    Row r = m.make();
    run_row(r, jit);
  }
  return 0;
}

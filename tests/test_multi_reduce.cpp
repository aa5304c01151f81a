// Kernels with several reduces (hand-built ASTs over a (4, n) float32 input): two or three reduces in one
// kernel, reduces that share a loop, softmax storing the whole row after its reduces; each under several
// opt lists, against the same computation in separate kernels through the Tensor API.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernel_ast.h"
#include "test_util.h"
#include "tg/tg.h"

using namespace tg;

namespace {
// x: 4 rows of n floats, uniform in [lo, hi) from `seed`, and its LOAD as a (4, n) input
std::pair<std::vector<float>, UOpPtr> rows(int64_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::vector<float> x(static_cast<size_t>(4 * n));
  for (auto& v : x) v = std::uniform_real_distribution<float>(lo, hi)(rng);
  return {x, UOp::make(Ops::LOAD, dtypes::float32, {glob(1), view({4, n})})};
}
// the kernel: `value` stored into buffer 0 through a contiguous view of `shape`
UOpPtr store(const Shape& shape, const UOpPtr& value) {
  return UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {glob(0), view(shape), value})});
}
// the source of the kernel `ast` without opts
std::string source_of(const UOpPtr& ast) { return compile_kernel(Kernel(ast, Device::get("CPU").renderer()), "CPU")->kernel.src; }
// a reduce over axis 1
UOpPtr reduce(Ops op, const UOpPtr& x) { return UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{op, {1}}); }

// The opt lists every multi-reduce test runs: none, the reduce unrolled by u, the rows upcast, both.
std::vector<std::vector<Opt>> multi_reduce_opts(int64_t u) {
  return {{}, {{OptOps::UNROLL, 0, u}}, {{OptOps::UPCAST, 0, 4}}, {{OptOps::UPCAST, 0, 2}, {OptOps::UNROLL, 0, u}}};
}

// Runs `ast` on x under each of multi_reduce_opts(u): the output is near `want`.
void expect_ast_near(const UOpPtr& ast, const std::vector<float>& x, const std::vector<float>& want, int64_t u, double atol, double rtol,
                     const std::string& what) {
  for (const auto& opts : multi_reduce_opts(u)) {
    std::vector<float> got = run_ast(ast, x, want.size(), opts);
    for (size_t i = 0; i < want.size(); i++)
      EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << what << " i=" << i << " opts " << opts_str(opts);
  }
}
}  // namespace

// mean, then the variance around it, in one kernel: two reduces over the same axis are two loops.
TEST(KernelMultiReduce, MeanThenVariance) {
  for (int64_t n : {2, 7, 64, 100}) {
    auto [x, load] = rows(n, static_cast<unsigned>(n), -2, 3);
    Shape out{4, 1};
    UOpPtr mean = reduce(Ops::ADD, load)->mul(cnst(1.0 / static_cast<double>(n), out));
    UOpPtr d = load->add(mean->unary(Ops::NEG));
    UOpPtr var = reduce(Ops::ADD, d->mul(d))->mul(cnst(1.0 / static_cast<double>(n), out));
    UOpPtr ast = store(out, var);
    // the same computation in separate kernels, through the Tensor API
    Tensor t = Tensor(x, {4, n});
    std::vector<float> want = (t - t.mean({1}, true)).square().mean({1}).tolist<float>();
    expect_ast_near(ast, x, want, n % 4 == 0 ? 4 : n, 1e-4, 1e-4, "n=" + std::to_string(n));
    std::string src = source_of(ast);
    if (n > 1) {  // two reduces over one axis: two loops (besides the launched dim's)
      EXPECT_EQ(loop_vars(src).size(), 3u) << src;
    }
  }
}

// Two reduces that do not read each other (a sum and a sum of squares) share one loop, and the load
// in it; a reduce of a reduce (MeanThenVariance) keeps a loop of its own.
TEST(KernelMultiReduce, IndependentReducesShareALoop) {
  for (int64_t n : {2, 7, 64, 100}) {
    auto [x, load] = rows(n, static_cast<unsigned>(n) + 300, -2, 3);
    Shape out{4, 1};
    UOpPtr both = reduce(Ops::ADD, load)->add(reduce(Ops::MAX, load->mul(load)));
    UOpPtr ast = store(out, both);
    Tensor t = Tensor(x, {4, n});
    std::vector<float> want = (t.sum({1}) + t.square().max({1})).tolist<float>();
    expect_ast_near(ast, x, want, n % 4 == 0 ? 4 : n, 1e-4, 1e-4, "n=" + std::to_string(n));
    std::string src = source_of(ast);
    if (n > 1) {  // the launched dim's loop and one reduce loop
      EXPECT_EQ(loop_vars(src).size(), 2u) << src;
    }
  }
}

// max, sum of exp, then the expectation of x under the softmax: three reduces in one kernel.
TEST(KernelMultiReduce, ThreeReduces) {
  for (int64_t n : {2, 5, 48}) {
    auto [x, load] = rows(n, static_cast<unsigned>(n) + 100, -4, 4);
    Shape full{4, n}, out{4, 1};
    UOpPtr m = reduce(Ops::MAX, load);
    UOpPtr e = load->add(m->unary(Ops::NEG))->mul(cnst(1.4426950408889634, full))->unary(Ops::EXP2);
    UOpPtr s = reduce(Ops::ADD, e);
    UOpPtr p = e->mul(s->unary(Ops::RECIP));
    UOpPtr ex = reduce(Ops::ADD, p->mul(load));
    UOpPtr ast = store(out, ex);
    Tensor t = Tensor(x, {4, n});
    std::vector<float> want = (t.softmax(1) * t).sum({1}).tolist<float>();
    expect_ast_near(ast, x, want, n % 4 == 0 ? 4 : n, 1e-4, 1e-4, "n=" + std::to_string(n));
  }
}

// softmax in one kernel: the max and the sum of exp are read back over the row they reduced, so the
// STORE runs its own loop over the row after the two reduces' loops (three loops a row, not n^2 work).
TEST(KernelMultiReduce, SoftmaxStoresTheWholeRow) {
  for (int64_t n : {2, 5, 48, 64}) {
    auto [x, load] = rows(n, static_cast<unsigned>(n) + 200, -4, 4);
    Shape full{4, n};
    UOpPtr m = reduce(Ops::MAX, load);
    UOpPtr e = load->add(m->unary(Ops::NEG))->mul(cnst(1.4426950408889634, full))->unary(Ops::EXP2);
    UOpPtr p = e->mul(reduce(Ops::ADD, e)->unary(Ops::RECIP));
    UOpPtr ast = store(full, p);
    std::vector<float> want = Tensor(x, {4, n}).softmax(1).tolist<float>();
    expect_ast_near(ast, x, want, n % 16 == 0 ? 16 : n % 4 == 0 ? 4 : n, 1e-6, 1e-5, "n=" + std::to_string(n));
    EXPECT_EQ(Kernel(ast, Device::get("CPU").renderer()).axis_types(), (std::vector<AxisType>{AxisType::GLOBAL, AxisType::REDUCE}));
    std::string src = source_of(ast);
    if (n > 1) { EXPECT_EQ(loop_vars(src).size(), 4u) << src; }  // the rows, the two reduces, the store's row
  }
}

// softmax's Row loop scales the exps its sum's loop computed, kept in the output, instead of computing
// them again: the Row loop has no EXP2, under every opt list (unrolled, vector, upcast rows).
TEST(KernelMultiReduce, SoftmaxComputesEachExpOnce) {
  for (int64_t n : {5, 48, 64}) {
    auto [x, load] = rows(n, static_cast<unsigned>(n) + 400, -4, 4);
    Shape full{4, n};
    UOpPtr m = reduce(Ops::MAX, load);
    UOpPtr e = load->add(m->unary(Ops::NEG))->mul(cnst(1.4426950408889634, full))->unary(Ops::EXP2);
    UOpPtr ast = store(full, e->mul(reduce(Ops::ADD, e)->unary(Ops::RECIP)));
    std::vector<float> want = Tensor(x, {4, n}).softmax(1).tolist<float>();
    int64_t u = n % 16 == 0 ? 16 : n % 4 == 0 ? 4 : n;
    expect_ast_near(ast, x, want, u, 1e-6, 1e-5, "n=" + std::to_string(n));
    for (const auto& opts : multi_reduce_opts(u)) {
      Kernel k(ast, Device::get("CPU").renderer());
      for (auto& o : opts) k.apply_opt(o);
      std::vector<UOpPtr> uops = k.linearize();
      auto row = std::find_if(uops.begin(), uops.end(), [](const UOpPtr& x) {
        return x->op == Ops::RANGE && std::get<RangeArg>(x->arg).kind == RangeKind::Row;
      });
      if (row == uops.end() && u == n && !opts.empty()) continue;  // the row wholly unrolled: no Row loop, nothing kept
      ASSERT_NE(row, uops.end()) << "n=" << n << " opts " << opts_str(opts);
      EXPECT_EQ(std::count_if(row, uops.end(), [](const UOpPtr& x) { return x->op == Ops::EXP2; }), 0) << "n=" << n << " opts " << opts_str(opts);
      EXPECT_GT(std::count_if(uops.begin(), row, [](const UOpPtr& x) { return x->op == Ops::EXP2; }), 0) << "n=" << n << " opts " << opts_str(opts);
    }
  }
}

// A value the Row loop would read back must be stored as the output's dtype, unchanged: log_softmax's
// row (x - max - log(sum), no transcendental per element) and a softmax rounded to float16 on its way
// out keep computing in the Row loop, and give the reference values.
TEST(KernelMultiReduce, RowReuseOnlyOfTheOutputsValue) {
  std::vector<float> x(4 * 40);
  std::mt19937 rng(41);
  for (auto& v : x) v = std::uniform_real_distribution<float>(-4, 4)(rng);
  Tensor t = Tensor(x, {4, 40});
  Tensor half = t.cast(dtypes::float32).softmax(1).cast(dtypes::float16), logs = t.log_softmax(1);
  std::vector<float> want_half = Tensor(x, {4, 40}).softmax(1).cast(dtypes::float16).cast(dtypes::float32).tolist<float>();
  std::vector<float> got_half = half.cast(dtypes::float32).tolist<float>(), got_log = logs.tolist<float>();
  for (size_t i = 0; i < x.size(); i++) {
    EXPECT_EQ(got_half[i], want_half[i]) << i;
    size_t r = i / 40;
    double mx = -1e30, s = 0;
    for (size_t j = 0; j < 40; j++) mx = std::max(mx, double(x[r * 40 + j]));
    for (size_t j = 0; j < 40; j++) s += std::exp(double(x[r * 40 + j]) - mx);
    EXPECT_NEAR(got_log[i], double(x[i]) - mx - std::log(s), 1e-5) << i;
  }
}

// A reduce that no open loop varies (its input is the same for every launched row) may still have to wait
// for a STORE's loops: the kernel stores x (every element, inside the reduce's loop: Row reuse) and
// x / sqrt(sum over axis 0 of (x - sum over axis 1)^2 + 0.1). The linearizer placed the reduce's
// user (+ 0.1) before the reduce's loop, and the renderer found its accumulator unrendered (differential
// test, seed 85752).
TEST(KernelMultiReduce, UserOfAnInvariantReduceWaitsForItsLoop) {
  std::vector<int8_t> d(64);
  for (size_t i = 0; i < d.size(); i++) d[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 19) - 9);
  Tensor v = Tensor(d, {4, 4, 4});
  Tensor x = (v > 127).cast(dtypes::float32).exp();  // 1 everywhere, from a load
  Tensor c = x - x.sum({-2}).unsqueeze(1);
  Tensor y = x / ((c * c).sum({0}, true) + 0.1).sqrt().expand({4, 4, 4});
  std::vector<float> got = y.tolist<float>();  // float32 out: a cast for printing would fuse into the kernel
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], 1 / std::sqrt(4 * 9 + 0.1), 1e-6) << i;
}

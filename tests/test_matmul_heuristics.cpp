// The kernel optimizer's heuristics on matrix products: register tiles blocked for the cache, few rows
// against wide or tall right operands, the dot tile for a transposed operand, and the column-panel copy
// of a large right operand. Each kernel is also checked against the unoptimized one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "kernel_ast.h"
#include "kernel_opts_util.h"
#include "test_util.h"
#include "tg/tg.h"

using namespace tg;
using namespace kernel_opts_test;
using testing::HasSubstr;
using testing::Not;

namespace {
// got(i, j) == the sum over t of x(i, t) * y(t, j), for i < m, t < k, j < n (a brute-force double sum)
template <class G, class X, class Y>
void expect_sums(G got, X x, Y y, int64_t m, int64_t k, int64_t n, double atol, double rtol, const std::string& what) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double want = 0;
      for (int64_t t = 0; t < k; t++) want += x(i, t) * y(t, j);
      ASSERT_NEAR(got(i, j), want, atol + rtol * std::fabs(want)) << what << "[" << i << "," << j << "]";
    }
}
}  // namespace

// A long matmul gets a register tile, blocked for the cache: the block loop runs outside the output
// loops, with the rows innermost, and the result equals NOOPT.
TEST(KernelOpts, BlockedMatmul) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  std::mt19937 rng(7);
  for (auto [m, kk, n] : std::vector<std::array<int64_t, 3>>{{128, 1024, 64}, {96, 768, 48}}) {
    Tensor out = unpacked_matmul(rand_tensor(rng, {m, kk}, dtypes::float32), rand_tensor(rng, {kk, n}, dtypes::float32));
    ScheduleItem si = kernel_of(out);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    EXPECT_THAT(opts, HasSubstr("SWAP(0, 1)"));
    EXPECT_THAT(opts, HasSubstr("BLOCK(0, "));
    using A = AxisType;
    auto t = k.axis_types();
    ASSERT_GE(t.size(), 4u);
    EXPECT_EQ(std::vector<A>(t.begin(), t.begin() + 4), (std::vector<A>{A::GLOBAL, A::GLOBAL, A::BLOCK, A::REDUCE})) << opts;
    // the loops: the block (dim 2), the threaded columns (each thread's slice, for one block at a time),
    // the rows, the reduce (ridx<dim>_<reduce>: a reduce's range)
    std::string src = compile_kernel(k, "CPU")->kernel.src;
    std::vector<std::string> loops = loop_vars(src);
    ASSERT_EQ(loops.size(), 4u) << src;
    EXPECT_EQ(loops[0], "ridx2");
    EXPECT_EQ(loops[1], "gidx0");
    EXPECT_EQ(loops[3], "ridx3_0");
    expect_close(run(si, k.applied_opts()), run(si, {}), "blocked matmul " + opts);
  }
  // a short reduce or few rows: not blocked
  for (auto [m, kk, n] : std::vector<std::array<int64_t, 3>>{{128, 64, 64}, {8, 1024, 64}}) {
    Kernel k(kernel_of(unpacked_matmul(rand_tensor(rng, {m, kk}, dtypes::float32), rand_tensor(rng, {kk, n}, dtypes::float32))).ast, *ren);
    k.hand_coded_optimizations();
    EXPECT_THAT(opts_str(k.applied_opts()), testing::Not(HasSubstr("BLOCK")));
  }
}

// A short reduce needs no cache blocks, but when B is larger than the L2 cache holds the rows still go
// innermost (SWAP): each tile of rows then reads the panel from the L1 cache, not all of B from memory
// (100 x 64 x 30000 took 3.5x the time). A B the L2 cache holds keeps the loop order.
TEST(KernelOpts, ShortReduceAgainstLargeB) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  std::mt19937 rng(14);
  for (auto [n, swapped] : std::vector<std::pair<int64_t, bool>>{{4096, true}, {512, false}}) {
    Tensor out = unpacked_matmul(rand_tensor(rng, {128, 64}, dtypes::float32), rand_tensor(rng, {64, n}, dtypes::float32));
    ScheduleItem si = kernel_of(out);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    EXPECT_EQ(opts.find("SWAP(0, 1)") != std::string::npos, swapped) << n << " columns: " << opts;
    EXPECT_THAT(opts, testing::Not(HasSubstr("BLOCK")));
    expect_close(run(si, k.applied_opts()), run(si, {}), "short reduce " + opts);
  }
}

// Few rows through a large matrix (a small batch through a Linear). A tile of 8 rows x 2 vectors walks B
// down its columns 128 bytes a row, which DRAM serves at a fraction of its bandwidth (16 x 4096 x 4096
// ran at 30 GFLOP/s). With at least two tiles of rows, the reduce runs in blocks whose rows of B, all of
// their columns, stay in the L2 cache, the row tiles the outermost output loop (the threads') with no SWAP. A matrix-
// vector product spends the whole tile on vectors along the row: 8 of them, 512 contiguous bytes a row.
TEST(KernelOpts, FewRowsReadWholeRowsOfB) {
  auto ren = avx512_renderer();
  std::mt19937 rng(11);
  {
    Tensor out = unpacked_matmul(rand_tensor(rng, {16, 2048}, dtypes::float32), rand_tensor(rng, {2048, 1024}, dtypes::float32));
    ScheduleItem si = kernel_of(out);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    EXPECT_THAT(opts, HasSubstr("BLOCK(0, "));
    EXPECT_THAT(opts, testing::Not(HasSubstr("SWAP")));
    std::vector<std::string> loops = loop_vars(compile_kernel(k, "CPU")->kernel.src);
    ASSERT_EQ(loops.size(), 4u) << opts;
    EXPECT_EQ(loops[0].substr(0, 4), "ridx");  // the block
    EXPECT_EQ(loops[1], "gidx0");  // then the row tiles, split over threads
    expect_close(run(si, k.applied_opts()), run(si, {}), "few rows " + opts);
  }
  for (int64_t m : {1, 2}) {
    Tensor out = unpacked_matmul(rand_tensor(rng, {m, 1024}, dtypes::float32), rand_tensor(rng, {1024, 1024}, dtypes::float32));
    ScheduleItem si = kernel_of(out);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    int64_t along_row = 1;
    for (int d : k.dims_of(AxisType::UPCAST))
      if (k.output_shape()[d] > 1 && k.stride(0, d) != std::optional<int64_t>{0} && *k.stride(0, d) < 1024) along_row *= k.full_shape()[d];
    EXPECT_EQ(along_row, 128) << m << " rows: " << opts_str(k.applied_opts());
    expect_close(run(si, k.applied_opts()), run(si, {}), std::to_string(m) + " rows " + opts_str(k.applied_opts()));
  }
}

// Few rows against wide rows of B (a batch of 16 through a 4096 x 65536 output layer): a step of the
// reduce over all of B's columns no longer fits the few-row L2 block, and an unblocked 8 x 2 tile
// walked B down its columns 128 bytes a row from DRAM (16 x 4096 x 65536: 3 GB/s of B). A tile of 2
// rows x 8 vectors then runs as many rows do: the column tiles split over the threads, the rows
// innermost, the reduce in blocks whose part of the panel the other row tiles read from the L1 cache.
TEST(KernelOpts, FewRowsAgainstWideRowsOfB) {
  std::mt19937 rng(12);
  for (auto [unit, lanes] : std::vector<std::pair<VectorUnit, int64_t>>{{kAVX512, 16}, {VectorUnit{32, 16}, 8}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    for (int64_t m : {15, 16}) {  // (15: padded to 16 for pairs of rows)
      // (B's rows: 16512 floats, one step of the reduce 4 of them, 258 KB: more than half the block)
      constexpr int64_t n = 16512;
      Tensor out = unpacked_matmul(rand_tensor(rng, {m, 512}, dtypes::float32), rand_tensor(rng, {512, n}, dtypes::float32));
      ScheduleItem si = kernel_of(out);
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string opts = opts_str(k.applied_opts());
      int64_t rows = 1, cols = 1;
      size_t b = 0;  // B's view: the load contiguous along the lanes (A's and the output's rows may be padded)
      for (size_t i = 1; i < k.num_views(); i++)
        if (k.is_load_view(i) && k.stride(i, k.vector_dim()) == std::optional<int64_t>{1}) b = i;
      ASSERT_NE(b, 0u) << opts;
      for (int d : k.dims_of(AxisType::UPCAST)) (k.stride(b, d) == std::optional<int64_t>{0} ? rows : cols) *= k.full_shape()[d];
      EXPECT_EQ(rows, 2) << opts;
      EXPECT_EQ(cols, unit.registers / 4 * lanes) << opts;  // 8 vectors on AVX-512, 4 on AVX2
      EXPECT_THAT(opts, HasSubstr("SWAP(0, 1)"));
      EXPECT_THAT(opts, HasSubstr("BLOCK(0, "));
      EXPECT_EQ(k.full_shape()[0], n / cols) << opts;  // the threads' loop: the column tiles
      expect_close(run(si, k.applied_opts()), run(si, {}), std::to_string(m) + " rows against wide B " + opts);
    }
  }
  // B's rows not as wide: the few-row blocks of whole rows of B (FewRowsReadWholeRowsOfB)
  auto ren = avx512_renderer();
  Kernel k(kernel_of(unpacked_matmul(rand_tensor(rng, {16, 512}, dtypes::float32), rand_tensor(rng, {512, 16384}, dtypes::float32))).ast, *ren);
  k.hand_coded_optimizations();
  EXPECT_THAT(opts_str(k.applied_opts()), testing::Not(HasSubstr("SWAP")));
}

// x @ w.T (a Linear layer's product): both operands are contiguous along the reduce, w strided along the
// output's columns. The lanes go along the reduce (partial sums), not along the columns, where each
// vector would gather 16 rows of w (100 x 1000 x 100 took 13x torch's time); the rows of x make the tile.
// Few rows that need several tiles read all of x from the cache, the columns over the threads (SWAP);
// many rows against a large w read it in L2 blocks (BLOCK). A short reduce keeps the register tile.
TEST(KernelOpts, DotTileForTransposedOperand) {
  std::mt19937 rng(13);
  struct Case { int64_t m, k, n; const char* expect; };
  for (auto [unit, lanes] : std::vector<std::pair<VectorUnit, int64_t>>{{kAVX512, 16}, {VectorUnit{32, 16}, 8}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    int64_t rows = unit.registers / 2;  // 16 accumulators on AVX-512, 8 on AVX2
    for (Case c : {Case{rows, 512, 256, ""}, Case{3, 512, 256, "SWAP(0, 1)"}, Case{256, 2048, 100, "BLOCK(0, "}}) {
      Tensor x = rand_tensor(rng, {c.m, c.k}, dtypes::float32), w = rand_tensor(rng, {c.n, c.k}, dtypes::float32);
      ScheduleItem si = kernel_of((x.reshape({c.m, 1, c.k}) * w.reshape({1, c.n, c.k})).sum({2}));
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string opts = opts_str(k.applied_opts()), what = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) + " " + opts;
      int vd = k.vector_dim();
      ASSERT_GE(vd, 0) << what;
      EXPECT_EQ(k.axis_types()[vd], AxisType::UNROLL) << what;  // lanes along the reduce
      EXPECT_EQ(k.full_shape()[vd], lanes) << what;
      int64_t tile_rows = 1;
      for (int d : k.dims_of(AxisType::UPCAST)) tile_rows *= k.full_shape()[d];
      EXPECT_EQ(tile_rows, std::min(c.m == 3 ? int64_t{1} : c.m, rows)) << what;
      EXPECT_THAT(opts, HasSubstr(c.expect)) << what;
      expect_close(run(si, k.applied_opts()), run(si, {}), "dot tile " + what);
    }
  }
  auto ren = avx512_renderer();
  {  // with a bias added (a load contiguous along the columns, after the reduce): the same tile
    Tensor x = rand_tensor(rng, {16, 512}, dtypes::float32), w = rand_tensor(rng, {256, 512}, dtypes::float32), b = rand_tensor(rng, {256}, dtypes::float32);
    ScheduleItem si = kernel_of((x.reshape({16, 1, 512}) * w.reshape({1, 256, 512})).sum({2}) + b);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    ASSERT_GE(k.vector_dim(), 0);
    EXPECT_EQ(k.axis_types()[k.vector_dim()], AxisType::UNROLL) << opts_str(k.applied_opts());
    expect_close(run(si, k.applied_opts()), run(si, {}), "dot tile with a bias " + opts_str(k.applied_opts()));
  }
  // a short reduce (64): lanes along the columns, as before
  Tensor x = rand_tensor(rng, {100, 64}, dtypes::float32), w = rand_tensor(rng, {1000, 64}, dtypes::float32);
  Kernel k(kernel_of((x.reshape({100, 1, 64}) * w.reshape({1, 1000, 64})).sum({2})).ast, *ren);
  k.hand_coded_optimizations();
  ASSERT_GE(k.vector_dim(), 0);
  EXPECT_EQ(k.axis_types()[k.vector_dim()], AxisType::UPCAST) << opts_str(k.applied_opts());
}

// A large product by a matrix reads the matrix from a copy in column panels (Tensor::matmul): two
// kernels, the product's rows innermost with no cache blocks (a panel is one stream), and the values and
// gradients of a plain matmul (brute-force sums here). Small, narrow or integer products are one kernel.
TEST(KernelOpts, PanelMatmul) {
  std::mt19937 rng(10);
  int64_t panel = Device::get("CPU").renderer().matmul_panel(dtypes::float32);
  auto kernels = [](const Tensor& t) {
    std::vector<ScheduleItem> ks;
    for (auto& si : create_schedule({t.lazydata()}))
      if (si.is_kernel()) ks.push_back(si);
    return ks;
  };
  // (8.5 panels of columns: the last one padded with zero columns, cut from the product)
  for (auto [a_shape, n] : std::vector<std::pair<Shape, int64_t>>{{{96, 320}, 256}, {{2, 40, 300}, 288}, {{96, 320}, 8 * panel + panel / 2}}) {
    int64_t k = a_shape.back(), m = prod(a_shape) / k;
    Tensor a = rand_tensor(rng, a_shape, dtypes::float32).requires_grad_(), w = rand_tensor(rng, {k, n}, dtypes::float32).requires_grad_();
    Tensor out = a.matmul(w);
    std::vector<ScheduleItem> ks = kernels(out);
    ASSERT_EQ(ks.size(), 2u) << "the panels, then the product";
    Kernel prod_k(ks[1].ast, Device::get("CPU").renderer());
    prod_k.hand_coded_optimizations();
    std::string opts = opts_str(prod_k.applied_opts());
    EXPECT_THAT(opts, HasSubstr("SWAP("));
    EXPECT_THAT(opts, testing::Not(HasSubstr("BLOCK(")));
    // (the panels are two of the target's vector registers wide: 32 floats on AVX-512)
    EXPECT_EQ(prod_k.full_shape()[prod_k.dims_of(AxisType::GLOBAL)[0]], (n + panel - 1) / panel) << "the threaded loop walks the panels: " << opts;
    // values and gradients against brute-force sums: out = a w, d(out . r)/da = r w^T, /dw = a^T r
    Tensor r = rand_tensor(rng, out.shape(), dtypes::float32);
    (out * r).sum().backward();
    std::vector<float> A = a.tolist<float>(), W = w.tolist<float>(), O = out.tolist<float>(), R = r.tolist<float>();
    std::vector<float> GA = a.grad().tolist<float>(), GW = w.grad().tolist<float>();
    auto at = [](const std::vector<float>& v, int64_t cols) { return [&v, cols](int64_t i, int64_t j) { return double(v[i * cols + j]); }; };
    auto at_t = [](const std::vector<float>& v, int64_t cols) { return [&v, cols](int64_t i, int64_t j) { return double(v[j * cols + i]); }; };
    expect_sums(at(O, n), at(A, k), at(W, n), m, k, n, 1e-4, 1e-5, "out");
    expect_sums(at(GA, k), at(R, n), at_t(W, n), m, n, k, 1e-4, 1e-5, "a.grad");
    expect_sums(at(GW, n), at_t(A, k), at(R, n), k, m, n, 1e-4, 1e-5, "w.grad");
  }
  // a linear layer (the weight transposed: the panels gather its columns) of a broadcast input; a
  // transposed weight is copied for a short reduce too (down to 8), with few rows or a reduce of 4 not
  for (auto [ms, k, kernels_want] : std::vector<std::tuple<int64_t, int64_t, size_t>>{{96, 300, 2}, {96, 64, 2}, {70, 8, 2}, {96, 4, 1}, {32, 64, 1}}) {
    Tensor x = rand_tensor(rng, {1, k}, dtypes::float32).expand({ms, k}), wt = rand_tensor(rng, {256, k}, dtypes::float32);
    Tensor out = x.linear(wt);
    EXPECT_EQ(kernels(out).size(), kernels_want) << ms << "x" << k << " @ (256x" << k << ").T";
    std::vector<float> X = x.tolist<float>(), WT = wt.tolist<float>(), O = out.tolist<float>();
    expect_sums([&, k = k](int64_t i, int64_t j) { return double(O[i * 256 + j]); }, [&, k = k](int64_t i, int64_t t) { return double(X[i * k + t]); },
                [&, k = k](int64_t t, int64_t j) { return double(WT[j * k + t]); }, ms, k, 256, 1e-4, 1e-5, "linear");
  }
  {  // float64: panels of two 8-lane vectors
    Tensor a = rand_tensor(rng, {70, 260}, dtypes::float64), w = rand_tensor(rng, {260, 128}, dtypes::float64);
    Tensor out = a.matmul(w);
    EXPECT_EQ(kernels(out).size(), 2u);
    std::vector<double> A = a.tolist<double>(), W = w.tolist<double>(), O = out.tolist<double>();
    expect_sums([&](int64_t i, int64_t j) { return O[i * 128 + j]; }, [&](int64_t i, int64_t t) { return A[i * 260 + t]; },
                [&](int64_t t, int64_t j) { return W[t * 128 + j]; }, 70, 260, 128, 1e-9, 1e-9, "float64");
  }
  // few rows, a short reduce, too few panels, ints, half
  for (auto [ms, k, n, dt] : std::vector<std::tuple<int64_t, int64_t, int64_t, DType>>{
           {32, 320, 256, dtypes::float32}, {96, 200, 256, dtypes::float32}, {96, 320, 7 * panel, dtypes::float32},
           {96, 320, 256, dtypes::int32}, {96, 320, 256, dtypes::float16}}) {
    Tensor out = rand_tensor(rng, {ms, k}, dt).matmul(rand_tensor(rng, {k, n}, dt));
    EXPECT_EQ(kernels(out).size(), 1u) << ms << "x" << k << " @ " << k << "x" << n << " " << dt.name();
  }
}

// The kernel optimizer's heuristics on convolutions: padded rows, channel tiles (which dim the vector
// lanes are, how the output goes out, blocks of a long reduce), and tiles that fit each target's
// registers. Each kernel is also checked against the unoptimized one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "kernel_ast.h"
#include "kernel_opts_util.h"
#include "test_util.h"

using namespace tg;
using namespace kernel_opts_test;
using testing::HasSubstr;
using testing::Not;

// A conv whose rows are a little short of whole vectors: the heuristics pad them, and unroll the
// 3-wide window, so the padding masks are constants per lane.
TEST(KernelOpts, ConvHeuristics) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  std::mt19937 rng(9);
  // (6 output channels: conv2d packs no weights for a channel tile, whatever the target's vectors)
  Tensor x = rand_tensor(rng, {2, 4, 14, 14}, dtypes::float32), w = rand_tensor(rng, {6, 4, 3, 3}, dtypes::float32);
  ScheduleItem si = kernel_of(x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}));
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, HasSubstr("PADTO("));
  EXPECT_THAT(opts, HasSubstr("UNROLL("));
  EXPECT_GE(k.vector_dim(), 0) << opts;
  std::string src = compile_kernel(k, "CPU")->kernel.src;
  // the image is read as (masked) vectors, never lane by lane (a gated load is a branch in LLVM IR); the
  // weights, which do not vary along the padded row, are read unmasked
  if (is_llvm_ir(src)) {
    EXPECT_THAT(src, HasSubstr("@llvm.masked.load.v16f32"));
    EXPECT_THAT(src, testing::Not(HasSubstr("label %load"))) << src;
  } else {
    EXPECT_THAT(src, HasSubstr("tg_load_masked_float32x16("));
    EXPECT_THAT(src, testing::Not(HasSubstr("? *(data1+"))) << src;
    EXPECT_FALSE(std::regex_search(src, std::regex(R"(\{val[0-9]+,[^}]*0\.0f\})"))) << "a weight broadcast with masked lanes:\n" << src;
  }
  expect_close(run(si, k.applied_opts()), run(si, {}), "conv " + opts);
}

// A conv with one input channel (beautiful_mnist's first) is a register tile along its 24-wide output
// rows, which whole vectors cannot split on AVX-512: 8-lane vectors would leave half of each register's
// lanes idle, so the rows are padded to 32 (a quarter of the work padded) and made of 16-lane vectors.
// (On AVX2, 24 is three whole vectors.)
TEST(KernelOpts, RowsShortOfWholeVectorsPadWhenThatWastesLess) {
  std::mt19937 rng(17);
  Tensor x = rand_tensor(rng, {4, 1, 28, 28}, dtypes::float32), w = rand_tensor(rng, {32, 1, 5, 5}, dtypes::float32);
  ScheduleItem si = conv_kernel_of(x.conv2d(w));
  std::vector<double> want = run(si, {});
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    int64_t lanes = unit.bytes / 4;
    ASSERT_GE(k.vector_dim(), 0) << opts;
    EXPECT_EQ(k.full_shape()[static_cast<size_t>(k.vector_dim())], lanes) << opts;
    EXPECT_EQ(opts.find("PADTO(") != std::string::npos, lanes == 16) << opts;
    expect_close(run(si, k.applied_opts()), want, "24-wide rows, " + opts);
  }
}

// A conv whose output rows are 20 wide would make 4-float vectors along them: conv2d packs the weights with
// the output channels contiguous, and the heuristics tile by channels (16-float vectors of weights, the
// image's columns as broadcast rows; each channel's 5 columns stored as 4 lanes and 1). (The packing
// copy runs first; the kernel is the conv's.)
TEST(KernelOpts, ChannelTileForNarrowConvRows) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  std::mt19937 rng(11);
  Tensor x = rand_tensor(rng, {4, 32, 24, 24}, dtypes::float32);
  Tensor w = rand_tensor(rng, {32, 32, 5, 5}, dtypes::float32);
  Context direct{{"WINO", 0}};  // the direct conv's kernel (5-wide kernels run by Winograd's by default)
  ScheduleItem si = conv_kernel_of(x.conv2d(w));
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, HasSubstr("UPCAST(1, 16) UPCAST(1, 2) UPCAST(3, 5)")) << opts;  // 2 vectors of channels x 5 columns
  ASSERT_GE(k.vector_dim(), 0);
  EXPECT_EQ(k.full_shape()[static_cast<size_t>(k.vector_dim())], 16);
  std::string src = compile_kernel(k, "CPU")->kernel.src;
  EXPECT_THAT(src, HasSubstr(is_llvm_ir(src) ? "load <16 x float>, ptr" : "*(const float32x16*)")) << src;  // the weights, as whole vectors
  expect_close(run(si, k.applied_opts()), run(si, {}), "channel tile " + opts);
}

// With 8-wide output rows both the rows (contiguous in the output) and the channels (contiguous in the
// packed weights) could be the vector lanes: the 16 channels are, as with 5-wide rows (8 columns as lanes
// would need 32 accumulators of 8 floats, more than the registers: beautiful_mnist's 3x3 convs on 10x10
// images ran at half speed).
TEST(KernelOpts, ChannelTileLanesAreTheWiderDim) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  std::mt19937 rng(13);
  Tensor x = rand_tensor(rng, {4, 32, 10, 10}, dtypes::float32);
  Tensor w = rand_tensor(rng, {64, 32, 3, 3}, dtypes::float32);
  ScheduleItem si = conv_kernel_of(x.conv2d(w));  // (4, 2, 32, 8, 8): the channels in 2 blocks of 32
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, HasSubstr("UPCAST(2, 16) UPCAST(2, 2) UPCAST(4, 8)")) << opts;
  ASSERT_GE(k.vector_dim(), 0);
  EXPECT_EQ(k.full_shape()[static_cast<size_t>(k.vector_dim())], 16) << opts;  // the channels (the columns are 8)
  // Each block's weights are one stream: (2 blocks, 32 channels, 32 input channels x 3 x 3) with the
  // block's channels contiguous, the next block after all of the first's (not rows of all 64 channels).
  {
    Kernel plain(si.ast, *ren);
    size_t wv = plain.num_views();
    for (size_t i = 0; i < plain.num_views(); i++)
      if (plain.is_load_view(i) && plain.stride(i, 2) == std::optional<int64_t>{1}) wv = i;
    ASSERT_LT(wv, plain.num_views());
    EXPECT_EQ(plain.full_shape()[1], 2);
    EXPECT_EQ(plain.stride(wv, 1), std::optional<int64_t>{32 * 32 * 3 * 3});
    EXPECT_EQ(plain.stride(wv, 5), std::optional<int64_t>{3 * 3 * 32});  // the input channels
  }
  // The accumulators are 16 channels wide. The output's contiguous dim is the columns: a channel's 8
  // columns (a lane of 8 accumulators) go out as one vector store, not lane by lane (256 scalar stores
  // made LLVM take ~4x longer over the kernel).
  std::map<int, int> accs, stores;  // lanes -> how many
  for (const UOpPtr& u : k.linearize()) {
    if (u->op == Ops::DEFINE_ACC) accs[u->dtype.count]++;
    if (u->op == Ops::STORE) stores[u->src[1]->dtype.count]++;
  }
  EXPECT_EQ(accs, (std::map<int, int>{{16, 16}})) << opts;
  EXPECT_EQ(stores, (std::map<int, int>{{8, 32}})) << opts;
  std::string src = compile_kernel(k, "CPU")->kernel.src;
  EXPECT_THAT(src, HasSubstr(is_llvm_ir(src) ? "store <8 x float>" : "float32x8")) << src;
  expect_close(run(si, k.applied_opts()), run(si, {}), "channel tile " + opts);
}

// The weight gradient's shape (a conv of x by dy, batch and channels swapped): a long reduce over the
// batch and the image, blocked so that each block of dy stays in the cache for every tile of outputs.
TEST(KernelOpts, ChannelTileBlocksALongReduce) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  std::mt19937 rng(12);
  Tensor x = rand_tensor(rng, {8, 64, 24, 24}, dtypes::float32);
  Tensor dy = rand_tensor(rng, {32, 64, 20, 20}, dtypes::float32);
  ScheduleItem si = conv_kernel_of(x.conv2d(dy));  // (8, 32, 5, 5), each a sum over 64 x 20 x 20
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, HasSubstr("UPCAST(1, 16)")) << opts;
  EXPECT_THAT(opts, HasSubstr("BLOCK(0, ")) << opts;
  // The partial sums go out once per block, inside the block's loop: a channel's columns (the lanes of
  // the column copies) still go out together, as 4 lanes and 1, there.
  std::map<int, int> stores;  // lanes -> how many
  std::vector<UOpPtr> uops = k.linearize();
  for (const UOpPtr& u : uops)
    if (u->op == Ops::STORE) stores[u->src[1]->dtype.count]++;
  EXPECT_EQ(stores, (std::map<int, int>{{1, 32}, {4, 32}})) << opts;
  // The block's loop runs outside the thread's slice of outputs (SPECIAL): every tile a thread owns reads
  // one block of dy before the next block (inside it, a slice of one tile read all of dy from memory).
  auto first = [&](auto&& is) { return std::find_if(uops.begin(), uops.end(), is) - uops.begin(); };
  auto block = first([](const UOpPtr& u) { return u->op == Ops::RANGE && std::get<RangeArg>(u->arg).kind == RangeKind::Block; });
  auto special = first([](const UOpPtr& u) { return u->op == Ops::SPECIAL; });
  ASSERT_LT(special, static_cast<std::ptrdiff_t>(uops.size()));
  EXPECT_LT(block, special);
  expect_close(run(si, k.applied_opts()), run(si, {}), "blocked channel tile " + opts);
}

// A 1x1 conv over whole images is a matmul: its view merges the image's rows into one 3136-wide row,
// which makes whole vectors, so the conv is no channel tile and its channels stay one dim of 64 rows,
// which go innermost (each column panel of the image is read once for all of them). Split in channel
// blocks of 32 they were too few rows for that: every block read the whole image from L3 (256->64 on
// 8 56x56 images: 6.2 -> 3.8 ms, torch 3.2).
TEST(KernelOpts, OneByOneConvIsAMatmul) {
  auto ren = avx512_renderer();
  std::mt19937 rng(16);
  Tensor x = rand_tensor(rng, {1, 256, 56, 56}, dtypes::float32), w = rand_tensor(rng, {64, 256, 1, 1}, dtypes::float32);
  ScheduleItem si = conv_kernel_of(x.conv2d(w));
  Kernel k(si.ast, *ren);
  Shape full = k.full_shape();
  EXPECT_NE(std::find(full.begin(), full.end(), 3136), full.end());
  EXPECT_NE(std::find(full.begin(), full.end(), 64), full.end());
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, HasSubstr("SWAP")) << opts;
  expect_close(run(si, k.applied_opts()), run(si, {}), "1x1 conv " + opts);
}

// Weight gradients of larger images: one image's slice of x and dy fills most of a cache block, or more,
// so the blocks are of one image, or of rows of every image (a batch of 32 28x28 images, 32->64 channels:
// 6.4 -> 2.4 ms on AVX-512, 2.9x torch's time before). What decides is the bytes of dy a tile reads, not
// the reduce's length (128->128 channels on 16 28x28 images: 12544 long, 1.6 MB a tile; 14.0 -> 11.4 ms).
TEST(KernelOpts, ChannelTileBlocksByImageOrByRows) {
  auto ren = avx512_renderer();
  std::mt19937 rng(13);
  struct Case { int64_t images, cout; const char* block; };
  // 490 KB per image; 690 KB; and 3 images, a reduce of only 10800 whose tile still reads 1.4 MB of dy
  for (Case c : {Case{8, 32, "BLOCK(0, 1)"}, Case{5, 48, "BLOCK(1, "}, Case{3, 32, "BLOCK(0, 1)"}}) {
    Tensor x = rand_tensor(rng, {2, c.images, 62, 62}, dtypes::float32);
    Tensor dy = rand_tensor(rng, {c.cout, c.images, 60, 60}, dtypes::float32);
    ScheduleItem si = conv_kernel_of(x.conv2d(dy));
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    EXPECT_THAT(opts, HasSubstr(c.block)) << opts;
    expect_close(run(si, k.applied_opts()), run(si, {}), "blocked weight gradient " + opts);
  }
}

// A weight gradient with one input channel (beautiful_mnist's first conv): its sum over the batch and
// the image is split in two kernels, and the first one's output dims are the kernel's rows, which the
// packed dy (4.7 MB) does not vary along, and the batch split, which it does. The threads split the batch
// and the kernel rows run inside it, so each slice of dy is read from memory once, not once per row
// (and 5 rows would give 2 threads 3 and 2 of them).
TEST(KernelOpts, RowsThatReuseTheVectorOperandRunInsideTheThreadedDim) {
  std::mt19937 rng(15);
  Tensor x = rand_tensor(rng, {1, 64, 28, 28}, dtypes::float32);
  Tensor dy = rand_tensor(rng, {32, 64, 24, 24}, dtypes::float32);
  std::vector<ScheduleItem> kernels = reduce_kernels_of(x.conv2d(dy));
  ASSERT_EQ(kernels.size(), 2u);
  std::optional<ScheduleItem> partial = kernels[0];  // the first of the split reduce's two kernels
  std::vector<double> want = run(*partial, {});
  // AVX-512 (its 32 channels are the tile's 2 vectors), AVX2 (4 of its vectors stay an output dim,
  // which has too few items for the threads) and NEON
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}, VectorUnit{16, 32}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(partial->ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
    ASSERT_GE(k.vector_dim(), 0) << opts;  // a channel tile
    size_t dy_view = k.num_views();        // the operand the lanes load
    for (size_t i = 0; i < k.num_views(); i++)
      if (k.is_load_view(i) && k.stride(i, k.vector_dim()) == std::optional<int64_t>{1}) dy_view = i;
    ASSERT_LT(dy_view, k.num_views()) << opts;
    Shape full = k.full_shape();
    std::vector<int> outer;  // the output dims that loop, outermost (threaded) first
    for (int d : k.dims_of(AxisType::GLOBAL))
      if (full[d] > 1) outer.push_back(d);
    ASSERT_GE(outer.size(), 2u) << opts;
    EXPECT_NE(k.stride(dy_view, outer.front()), std::optional<int64_t>{0}) << "the threads split the kernel rows: " << opts;
    EXPECT_GE(full[outer.front()], 64) << "the threads split a dim of few items: " << opts;
    EXPECT_EQ(k.stride(dy_view, outer.back()), std::optional<int64_t>{0}) << opts;
    expect_close(run(*partial, k.applied_opts()), want, "weight gradient's partial sums, " + opts);
  }
}

// A transposed conv (a conv's input gradient) as the channel tile runs it: dy padded by the kernel's
// reach, whose padded rows add nothing. The rows stay a padded view under a `present` mask, so the
// kernel-row loop runs over the rows that exist at each output row (a RANGE with bounds in the row
// index), and dy is read without a gate; a quarter of this 3x3 kernel's multiply-adds were padding.
// Those terms are absent, not 0 x w: an infinite weight gives inf where its row is read, finite values
// (as torch) where that row is padding, rather than 0 x inf = NaN.
TEST(KernelOpts, TransposedConvSkipsThePaddedKernelRows) {
  std::mt19937 rng(16);
  Tensor dy = rand_tensor(rng, {2, 16, 6, 6}, dtypes::float32).abs() + 0.25;  // positive: no inf - inf
  dy.realize();
  std::vector<float> wv = rand_tensor(rng, {16, 32, 3, 3}, dtypes::float32).tolist<float>();
  wv[1] = std::numeric_limits<float>::infinity();  // w[0, 0, 0, 1]: dy channel 0 -> output channel 0, kernel row 0
  Tensor w = Tensor(wv, {16, 32, 3, 3}).realize();
  std::vector<ScheduleItem> kernels;
  for (auto& si : create_schedule({dy.conv_transpose2d(w).lazydata()}))
    if (si.is_kernel()) kernels.push_back(si);
  ASSERT_FALSE(kernels.empty());
  const ScheduleItem& conv = kernels.back();
  for (bool opt : {false, true}) {
    auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
    Kernel k(conv.ast, *ren);
    if (opt) k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    int windows = 0, gated = 0;
    for (const UOpPtr& u : k.linearize()) {
      if (u->op == Ops::RANGE && std::get<RangeArg>(u->arg).kind == RangeKind::Reduce && !u->src[0]->is_const()) windows++;
      if (u->op == Ops::LOAD && u->src.size() == 2) gated++;
    }
    EXPECT_GE(windows, 1) << "the kernel rows' loop runs over all of them: " << opts;
    EXPECT_EQ(gated, 0) << opts;
  }
  std::vector<float> out = dy.conv_transpose2d(w).tolist<float>(), d = dy.tolist<float>();
  // out[0, 0, y, x] = sum over c, ky, kx of dy[0, c, y - ky, x - kx] w[c, 0, ky, kx], present terms only
  auto at = [&](int64_t y, int64_t x) { return out[static_cast<size_t>(y * 8 + x)]; };
  for (int64_t y = 0; y < 8; y++) {
    for (int64_t x = 0; x < 8; x++) {  // (8 columns: the padded ones absent too, never 0 x inf)
      if (y < 6 && x >= 1 && x < 7) {  // the outputs whose kernel row 0, column 1 reads dy
        EXPECT_EQ(at(y, x), std::numeric_limits<float>::infinity()) << y << ", " << x;
        continue;
      }
      double want = 0;
      for (int64_t c = 0; c < 16; c++)
        for (int64_t ky = 0; ky < 3; ky++)
          for (int64_t kx = 0; kx < 3; kx++)
            if (y - ky >= 0 && y - ky < 6 && x - kx >= 0 && x - kx < 6)
              want += double(d[static_cast<size_t>((c * 6 + y - ky) * 6 + x - kx)]) * wv[static_cast<size_t>(((c * 32) * 3 + ky) * 3 + kx)];
      EXPECT_NEAR(at(y, x), want, 1e-3 + 1e-4 * std::fabs(want)) << "row " << y << " reads only rows of w past its inf: " << x;
    }
  }
}

// A transposed conv onto rows of few columns (c4's input gradient: 8 columns, a quarter of a 3x3's
// multiply-adds on padded ones) reads dy unpadded, its padded columns absent under the mask as its padded
// rows: no copy of dy. On AVX-512 the channel tile takes the row whole, 2 vectors by 8 columns, with the
// kernel's 3 columns unrolled: each mask is a constant and only the present terms are multiplied (18 of
// each row's 24 multiply-adds per vector); on AVX2 and NEON the kernel columns' loop is bounded by the
// padding. No gated load on any. A row of 16 columns keeps the padded copy (faster there).
TEST(ConvKernels, FewColumnsTransposedConvReadsItsPaddingUnderMasks) {
  std::mt19937 rng(27);
  for (int64_t size : {6, 8}) {  // 8 and 10 output columns (c4's and c3's input gradients)
    Tensor dy = rand_tensor(rng, {2, 64, size, size}, dtypes::float32), w = rand_tensor(rng, {64, size == 6 ? 64 : 32, 3, 3}, dtypes::float32);
    Tensor dx = dy.conv_transpose2d(w);
    int copies = 0;
    for (const ScheduleItem& si : create_schedule({dx.lazydata()}))
      copies += si.is_kernel() && !reduces(si) && prod(si.outputs[0]->shape()) == 2 * 64 * size * (size + 4);
    EXPECT_EQ(copies, 0) << "dy is read as it is, not copied with padded columns: " << size;
    ScheduleItem si = conv_kernel_of(dx);
    std::vector<double> want = run(si, {});
    for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}, VectorUnit{16, 32}}) {  // AVX-512, AVX2, NEON
      auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string what = std::to_string(size + 2) + " columns, " + std::to_string(unit.registers) + " registers of " + std::to_string(unit.bytes) +
                         " bytes: " + opts_str(k.applied_opts());
      int gated = 0, bounded = 0, multiply_adds = 0;
      for (const UOpPtr& u : k.linearize()) {
        gated += u->op == Ops::LOAD && u->src.size() == 2;
        bounded += u->op == Ops::RANGE && std::get<RangeArg>(u->arg).kind == RangeKind::Reduce && !u->src[0]->is_const();
        multiply_adds += u->op == Ops::MULACC;
      }
      EXPECT_EQ(gated, 0) << what;
      if (unit == kAVX512 && size == 6) {
        EXPECT_THAT(what, HasSubstr("UPCAST(2, 2) UPCAST(4, 8) UNROLL(2, 3)")) << "2 vectors by the whole row, the kernel's columns unrolled";
        EXPECT_EQ(multiply_adds, 2 * 18) << what;
        EXPECT_EQ(bounded, 1) << "the kernel rows' loop: " << what;
      } else {
        EXPECT_EQ(bounded, 2) << "the kernel rows' and columns' loops: " << what;
      }
      expect_close(run(si, k.applied_opts()), want, what);
    }
  }
  // rows of 16 columns: dy copied with its padded columns
  Tensor dy16 = rand_tensor(rng, {2, 64, 14, 14}, dtypes::float32), w16 = rand_tensor(rng, {64, 32, 3, 3}, dtypes::float32);
  int copies = 0;
  for (const ScheduleItem& s16 : create_schedule({dy16.conv_transpose2d(w16).lazydata()}))
    copies += s16.is_kernel() && !reduces(s16) && prod(s16.outputs[0]->shape()) == 2 * 64 * 14 * 18;
  EXPECT_EQ(copies, 1);
}

// A k x 1 kernel's transposed conv (a 5x1 conv's input gradient: dy padded by 4 rows each side): the
// channel tile unrolls the channels, and the kernel rows stay a loop whose bounds skip the padded rows.
// Unrolled, as a short innermost reduce would be, every load of dy was gated on its row (2x the time).
TEST(KernelOpts, ColumnKernelsRowsStayALoopOverThePadding) {
  std::mt19937 rng(21);
  Tensor dy = rand_tensor(rng, {2, 32, 20, 5}, dtypes::float32), w = rand_tensor(rng, {32, 32, 5, 1}, dtypes::float32);
  ScheduleItem si = conv_kernel_of(dy.conv_transpose2d(w));
  std::vector<double> want = run(si, {});
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {  // AVX-512's registers and AVX2's
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string opts = opts_str(k.applied_opts());
    int bounded = 0, gated = 0;
    for (const UOpPtr& u : k.linearize()) {
      if (u->op == Ops::RANGE && std::get<RangeArg>(u->arg).kind == RangeKind::Reduce && !u->src[0]->is_const()) bounded++;
      if (u->op == Ops::LOAD && u->src.size() == 2) gated++;
    }
    EXPECT_THAT(opts, HasSubstr("UNROLL")) << opts;
    EXPECT_EQ(bounded, 1) << "the kernel rows' loop, bounded by the padding: " << opts;
    EXPECT_EQ(gated, 0) << opts;
    expect_close(run(si, k.applied_opts()), want, "column kernel's transposed conv " + opts);
  }
}

// The tiles fit the target's registers: for AVX-512 (32 of 64 bytes), AVX2 (16 of 32) and NEON (32 of 16),
// the vectors are one register wide and the accumulators fill at most half of the registers (the rest
// hold the loaded vectors and broadcasts; AVX-512's tiles on AVX2 spilled, at a third of the speed), and
// at least 8 of them.
// beautiful_mnist's conv shapes (weights packed by channel blocks), weight gradients and matmuls.
TEST(KernelOpts, TilesFitTheTargetsRegisters) {
  std::mt19937 rng(14);
  Context direct{{"WINO", 0}};  // the direct 5x5 convs' kernels (by default they run by Winograd's)
  struct Case { std::string what; Tensor out; };
  std::vector<Case> cases = {
      {"matmul", unpacked_matmul(rand_tensor(rng, {128, 256}, dtypes::float32), rand_tensor(rng, {256, 128}, dtypes::float32))},
      // prime sizes have no factor for the rows or the vectors: both are padded to the tile
      {"127x127 matmul", unpacked_matmul(rand_tensor(rng, {127, 64}, dtypes::float32), rand_tensor(rng, {64, 127}, dtypes::float32))},
      {"5x5 conv, 20-wide rows", rand_tensor(rng, {4, 32, 24, 24}, dtypes::float32).conv2d(rand_tensor(rng, {32, 32, 5, 5}, dtypes::float32))},
      {"5x5 conv, 24-wide rows", rand_tensor(rng, {4, 32, 28, 28}, dtypes::float32).conv2d(rand_tensor(rng, {32, 32, 5, 5}, dtypes::float32))},
      {"3x3 conv, 8-wide rows", rand_tensor(rng, {4, 64, 10, 10}, dtypes::float32).conv2d(rand_tensor(rng, {64, 64, 3, 3}, dtypes::float32))},
      // 10 = 2 x 5: on AVX2 one vector by 5 columns would keep 5 accumulators, too few chains
      {"3x3 conv, 10-wide rows", rand_tensor(rng, {4, 64, 12, 12}, dtypes::float32).conv2d(rand_tensor(rng, {32, 64, 3, 3}, dtypes::float32))},
      {"weight gradient", rand_tensor(rng, {8, 64, 24, 24}, dtypes::float32).conv2d(rand_tensor(rng, {32, 64, 20, 20}, dtypes::float32))},
      // 3 kernel columns are too few rows for the accumulators: the input channels are rows too
      {"3x3 weight gradient", rand_tensor(rng, {16, 32, 8, 8}, dtypes::float32).conv2d(rand_tensor(rng, {64, 32, 6, 6}, dtypes::float32))},
  };
  for (auto& c : cases) {
    ScheduleItem si = conv_kernel_of(c.out);
    std::vector<double> want = run(si, {});
    for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}, VectorUnit{16, 32}}) {  // AVX-512, AVX2, NEON
      auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string what = c.what + ", " + std::to_string(unit.registers) + " registers of " + std::to_string(unit.bytes) + " bytes: " + opts_str(k.applied_opts());
      int64_t acc_bytes = 4;
      for (int d : k.dims_of(AxisType::UPCAST)) acc_bytes *= k.full_shape()[static_cast<size_t>(d)];
      int64_t acc_registers = (acc_bytes + unit.bytes - 1) / unit.bytes;
      // at most half the registers, and at least 8 (a multiply-add's latency times its 2 units: fewer
      // independent accumulators leave them waiting)
      EXPECT_LE(acc_registers, unit.registers / 2) << what;
      EXPECT_GE(acc_registers, std::min(8, unit.registers / 2)) << what;
      ASSERT_GE(k.vector_dim(), 0) << what;
      EXPECT_EQ(k.full_shape()[static_cast<size_t>(k.vector_dim())] * 4, unit.bytes) << what;
      // 24-wide rows are one vector and a remainder on AVX2: the lanes are the channels, 2 vectors of them
      if (c.what == "5x5 conv, 24-wide rows" && unit.bytes == 32) {
        EXPECT_THAT(what, HasSubstr("UPCAST(1, 8) UPCAST(1, 2) "));
      }
      expect_close(run(si, k.applied_opts()), want, what);
    }
  }
}

// ---- the multiply-adds a conv's kernels do ----------------------------------------------------------

// Outputs x reduce of every kernel of `out` that reduces (the multiply-adds of a conv's kernels, a
// window counted whole).
static int64_t reduce_work(const Tensor& out) {
  int64_t work = 0;
  for (const ScheduleItem& si : create_schedule({out.lazydata()}))
    if (reduces(si)) work += prod(Kernel(si.ast, Device::get("CPU").renderer()).full_shape());
  return work;
}

// A strided transposed conv (a strided conv's input gradient) is one stride-1 transposed conv per phase
// of the output, each with the kernel taps that reach it: dilating the input with zeros instead
// multiplied them by 3/4 of the weights at stride 2 (a 7x7 stride-2 stem's input gradient took 0.95 s).
TEST(ConvKernels, StridedTransposedConvMultipliesNoInsertedZeros) {
  std::mt19937 rng(17);
  Tensor dy = rand_tensor(rng, {2, 8, 7, 7}, dtypes::float32), w = rand_tensor(rng, {8, 4, 3, 3}, dtypes::float32);
  Tensor out = dy.conv_transpose2d(w, std::nullopt, 1, {2}, {1}, {1}, {1});  // (2, 4, 14, 14)
  int64_t taps = 2 * 8 * 7 * 7 * 4 * 3 * 3;  // each input element times each weight it meets
  EXPECT_LE(reduce_work(out), taps * 3 / 2);
  // and its gradients, as convs (autograd through the phases' interleave tiled badly)
  dy.requires_grad_(), w.requires_grad_();
  Tensor g = rand_tensor(rng, {2, 4, 14, 14}, dtypes::float32);
  (dy.conv_transpose2d(w, std::nullopt, 1, {2}, {1}, {1}, {1}) * g).sum().backward();
  EXPECT_LE(reduce_work(dy.grad()), taps * 3 / 2);
  EXPECT_LE(reduce_work(w.grad()), taps * 3 / 2);
}

// A strided conv's weight gradient, a conv of x by dy, reads only the rows of x its windows reached: a
// stride-2 1x1 conv of 8x8 images is 1-row windows 2 apart, whose conv over all of x made 2x2 outputs
// of which 3 were cropped.
TEST(ConvKernels, StridedConvWeightGradientComputesOnlyTheKernel) {
  std::mt19937 rng(18);
  Tensor x = rand_tensor(rng, {2, 16, 8, 8}, dtypes::float32), w = rand_tensor(rng, {32, 16, 1, 1}, dtypes::float32);
  Tensor g = rand_tensor(rng, {2, 32, 4, 4}, dtypes::float32);
  w.requires_grad_();
  (x.conv2d(w, std::nullopt, 1, {2}) * g).sum().backward();
  EXPECT_LE(reduce_work(w.grad()), int64_t{16} * 32 * 2 * 4 * 4);
}

// A conv that is no channel tile (one input channel) whose weight gradient is one copies its padded
// image for it: under the padding's masks that gradient ran 20x slower (1->32 channels, 5x5, padding 2
// on 64 28x28 images: 54 ms, torch 4 ms in all).
TEST(ConvKernels, PaddedImageIsCopiedForTheWeightGradientsTile) {
  std::mt19937 rng(19);
  Tensor x = rand_tensor(rng, {4, 1, 12, 12}, dtypes::float32), w = rand_tensor(rng, {32, 1, 5, 5}, dtypes::float32);
  Tensor g = rand_tensor(rng, {4, 32, 12, 12}, dtypes::float32);
  w.requires_grad_();
  (x.conv2d(w, std::nullopt, 1, {1}, {1}, {2}) * g).sum().backward();
  bool copied = false;  // a kernel that writes the padded image (4 x 1 x 16 x 16), reducing nothing
  for (const ScheduleItem& si : create_schedule({w.grad().lazydata()}))
    copied |= si.is_kernel() && !reduces(si) && prod(si.outputs[0]->shape()) == 4 * 16 * 16;
  EXPECT_TRUE(copied);
}

// dy reaching a conv as a permutation of values still to compute (a conv whose output is transposed
// before the loss) is realized once in the order it is computed, and both gradients read it through
// the permutation; it was copied in the conv's layout first (beautiful_mnist's Winograd points' dy:
// rows of 5 tiles, 3.5 -> 4.5 ms). A k x 1 kernel's input gradient pads no column, and reads it as is.
TEST(ConvKernels, PermutedDyIsRealizedInTheOrderItIsComputed) {
  std::mt19937 rng(22);
  Tensor x = rand_tensor(rng, {2, 16, 12, 7}, dtypes::float32), w = rand_tensor(rng, {32, 16, 3, 1}, dtypes::float32);
  x.requires_grad_(), w.requires_grad_();
  Tensor yt = x.conv2d(w, std::nullopt, 1, {1}, {1}, {1, 0}).permute({0, 1, 3, 2});  // (2, 32, 7, 12)
  (yt * yt).sum().backward();
  std::vector<Shape> written;
  for (const ScheduleItem& si : create_schedule({x.grad().lazydata(), w.grad().lazydata()}))
    if (si.is_kernel()) written.push_back(si.outputs[0]->shape());
  EXPECT_NE(std::find(written.begin(), written.end(), Shape{2, 32, 7, 12}), written.end()) << "dy, as computed";
  EXPECT_EQ(std::find(written.begin(), written.end(), Shape{2, 32, 12, 7}), written.end()) << "dy copied in the conv's layout";
  // against the direct gradients: dy = 2 y
  Tensor y = x.conv2d(w, std::nullopt, 1, {1}, {1}, {1, 0}).realize();
  Tensor dy = (y * 2).realize();
  Context noopt{{"NOOPT", 1}};
  std::vector<float> dx = x.grad().tolist<float>(), want = dy.conv_transpose2d(w, std::nullopt, 1, {1}, {1}, {1, 0}).tolist<float>();
  ASSERT_EQ(dx.size(), want.size());
  for (size_t i = 0; i < dx.size(); i++) ASSERT_NEAR(dx[i], want[i], 1e-3 + 1e-4 * std::fabs(want[i])) << i;
}

// A row dim of 3 (an input gradient into an image's 3 channels) and a row of 3 vectors (34 columns
// padded to 48) are a tile of 3 x 3, not 1 x 1: one accumulator waited on each multiply-add (12 -> 1 ms).
TEST(KernelOpts, RegisterTilesNeedNotBePowersOfTwo) {
  auto ren = avx512_renderer();
  std::mt19937 rng(20);
  Tensor dy = rand_tensor(rng, {1, 64, 32, 32}, dtypes::float32), w = rand_tensor(rng, {64, 3, 3, 3}, dtypes::float32);
  ScheduleItem si = conv_kernel_of(dy.conv_transpose2d(w));  // (1, 3, 34, 34)
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  int64_t accumulators = 1;
  for (int d : k.dims_of(AxisType::UPCAST)) accumulators *= k.full_shape()[static_cast<size_t>(d)];
  EXPECT_GE(accumulators / 16, 9) << opts;
  expect_close(run(si, k.applied_opts()), run(si, {}), "3-channel input gradient " + opts);
}

// A grouped conv (a depthwise one here) differentiates as convs too, not through its sliding-window view,
// whose gradient wrote every window's products and summed the overlapping ones (576 channels on 8 14x14
// images: 40 ms for the input gradient, torch's whole step 1.5 ms).
TEST(ConvKernels, GroupedConvGradientsWriteNoWindows) {
  std::mt19937 rng(21);
  Tensor x = rand_tensor(rng, {2, 8, 6, 6}, dtypes::float32), w = rand_tensor(rng, {8, 1, 3, 3}, dtypes::float32);
  Tensor g = rand_tensor(rng, {2, 8, 6, 6}, dtypes::float32);
  x.requires_grad_(), w.requires_grad_();
  (x.conv2d(w, std::nullopt, 8, {1}, {1}, {1}) * g).sum().backward();
  int64_t largest = 0;
  for (const ScheduleItem& si : create_schedule({x.grad().lazydata(), w.grad().lazydata()}))
    if (si.is_kernel()) largest = std::max(largest, prod(si.outputs[0]->shape()));
  EXPECT_LT(largest, 2 * 8 * 6 * 6 * 9);  // the windows' products
}

// A conv with few taps per output pixel (one input channel, 5x5: beautiful_mnist's first) sums its weight
// gradient straight from x's windows and dy, in a window tile: lanes along the rows (8 of AVX-512's 16
// on 24-wide rows), a few channels by the window's columns in registers. As a conv
// of x by dy it read dy through a channel-last copy that took twice the sum's time (9.4 ms of the step).
TEST(ConvKernels, FewTapWeightGradientIsAWindowTile) {
  std::mt19937 rng(22);
  Tensor x = rand_tensor(rng, {8, 1, 28, 28}, dtypes::float32), w = rand_tensor(rng, {32, 1, 5, 5}, dtypes::float32);
  Tensor g = rand_tensor(rng, {8, 32, 24, 24}, dtypes::float32);
  w.requires_grad_();
  Tensor y = x.conv2d(w).relu();
  y.realize();
  y.backward(g);
  for (const ScheduleItem& si : create_schedule({w.grad().lazydata()}))  // (dy itself, g where y > 0, may be one)
    if (si.is_kernel() && !reduces(si) && prod(si.outputs[0]->shape()) == prod(g.shape())) {
      EXPECT_EQ(si.outputs[0]->shape(), g.shape()) << "a copy of dy";
    }
  std::vector<ScheduleItem> ks = reduce_kernels_of(w.grad());
  ASSERT_FALSE(ks.empty());
  auto ren = avx512_renderer();
  Kernel k(ks[0].ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  int64_t accumulators = 1;
  for (int d : k.dims_of(AxisType::UPCAST)) accumulators *= k.full_shape()[static_cast<size_t>(d)];
  EXPECT_THAT(opts, HasSubstr("UNROLL(")) << opts;
  // 4 channels x the window's 5 columns: with the 9 vectors a step reads, 29 of AVX-512's 32 registers
  // (beautiful_mnist's step, Zen 5, 3 alternated runs: 5 x 2, half the registers, 3.4-3.6 ms; 4 x 5 3.0-3.3)
  EXPECT_EQ(accumulators, 20) << opts;
  // the 24-wide rows padded to two whole vectors (3/4 of the lanes used), not 8-lane vectors (half)
  int64_t lanes = 1;
  for (int d : k.dims_of(AxisType::UNROLL)) lanes *= k.full_shape()[static_cast<size_t>(d)];
  EXPECT_EQ(lanes, 16) << opts;
  EXPECT_THAT(opts, HasSubstr("PADTO(")) << opts;
  expect_close(run(ks[0], k.applied_opts()), run(ks[0], {}), "window tile " + opts);
  // and the gradient is the sum over the images and the output pixels
  std::vector<float> xs = x.tolist<float>(), ys = y.tolist<float>(), gs = g.tolist<float>(), dw = w.grad().tolist<float>();
  for (int o = 0; o < 32; o += 7)
    for (int t = 0; t < 25; t += 6) {
      double want = 0;
      for (int n = 0; n < 8; n++)
        for (int oy = 0; oy < 24; oy++)
          for (int ox = 0; ox < 24; ox++) {
            size_t yi = static_cast<size_t>(((n * 32 + o) * 24 + oy) * 24 + ox);
            if (ys[yi] > 0) want += static_cast<double>(gs[yi]) * xs[static_cast<size_t>((n * 28 + oy + t / 5) * 28 + ox + t % 5)];
          }
      EXPECT_NEAR(dw[static_cast<size_t>(o * 25 + t)], want, 1e-3 * (1 + std::abs(want))) << o << "," << t;
    }
}

// A depthwise conv's weight gradient is a window tile too, though x and dy both vary along the channels:
// the window's taps make the tile, each vector of dy feeding 9 multiply-adds, and the 14-wide rows are
// padded to 16 lanes (576 channels on 8 14x14 images: 2-lane vectors, 1.5 -> 0.6 ms).
TEST(ConvKernels, DepthwiseWeightGradientIsAWindowTile) {
  std::mt19937 rng(23);
  Tensor x = rand_tensor(rng, {8, 16, 14, 14}, dtypes::float32), w = rand_tensor(rng, {16, 1, 3, 3}, dtypes::float32);
  Tensor g = rand_tensor(rng, {8, 16, 14, 14}, dtypes::float32);
  w.requires_grad_();
  x.conv2d(w, std::nullopt, 16, {1}, {1}, {1}).backward(g);
  std::vector<ScheduleItem> ks = reduce_kernels_of(w.grad());
  ASSERT_EQ(ks.size(), 1u);
  auto ren = avx512_renderer();
  Kernel k(ks[0].ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, HasSubstr("PADTO(")) << opts;
  EXPECT_THAT(opts, HasSubstr("UNROLL(")) << opts;
  int64_t accumulators = 1;
  for (int d : k.dims_of(AxisType::UPCAST)) accumulators *= k.full_shape()[static_cast<size_t>(d)];
  EXPECT_EQ(accumulators, 9) << opts;
  EXPECT_EQ(k.full_shape()[static_cast<size_t>(k.dims_of(AxisType::UNROLL).back())], 16) << opts;
  expect_close(run(ks[0], k.applied_opts()), run(ks[0], {}), "depthwise window tile " + opts);
}

// The default optimizations (tinygrad's hand_coded_optimizations, for a CPU with vector registers):
//  - a product by a transposed matrix (x @ w.T), both operands contiguous along a long reduce and w strided
//    along the output's contiguous dim, gets a dot tile: lanes along the reduce, rows of x as the tile;
//  - when the output's contiguous dim makes short vectors, a reduce whose loads broadcast gets a channel
//    tile instead: lanes along a dim a load has contiguous (a conv's packed weights), rows along one that
//    load broadcasts (and along a second such dim when the first is short);
//  - a reduce with a load that broadcasts along the output's contiguous dim and varies along the reduce
//    (A in A·B, a conv's image across its output channels) gets a register tile: that output dim
//    becomes vector lanes (twice, when it divides), an output dim along which the vector-loaded operand
//    is reused is upcast up to 8 (as the registers allow), and the reduce is unrolled by 4 (a short one
//    wholly);
//  - a sum of products of two operands contiguous along the reduce, each broadcast along an output dim
//    the other varies along (a conv's weight gradient from x and dy as they are), gets a window tile:
//    lanes along the reduce (a row padded to whole vectors when that fills more lanes), a few of each
//    such dim as the tile, the dim both vary along outermost; with no such pair (a depthwise conv's),
//    the dims one operand alone varies along (its window) make the tile;
//  - another reduce over a dim contiguous in a load keeps vector partial sums (an UNROLL of lanes), 4
//    vectors of them a loop iteration (folded in pairs: a short loop-carried chain); one of at most 16
//    elements (a pooling window) runs unrolled whole, and with a heavy body (a fused batchnorm) over
//    whole vectors of outputs, its output row padded to them when that fills more lanes; a long one with
//    no outputs per step runs its output loops in the loads' memory order;
//  - a reduce whose output is contiguous along a kept dim accumulates a vector of outputs;
//  - an elementwise kernel stores whole vectors along its contiguous dim.
// A register tile over many rows then walks the vector operand's panels with its rows innermost, and
// a long reduce over a scattered panel is blocked for the cache (cache_block).
// Vectors are one of the target's registers wide (Renderer::vector_unit), and a tile keeps its
// accumulators in half its registers: AVX-512's 32 registers of 64 bytes, AVX2's 16 of 32, NEON's 32 of 16.
// Every step goes through apply_opt, so a heuristic can never produce an invalid kernel.
#include <algorithm>
#include <bit>
#include <tuple>

#include "codegen/kernel.h"
#include "tg/error.h"

namespace tg {

namespace {
// the largest power of two <= cap that divides n (1 when none does)
int64_t pow2_divisor(int64_t n, int64_t cap) {
  int64_t top = 1;
  while (top * 2 <= cap) top *= 2;
  for (int64_t a = top; a >= 2; a /= 2)
    if (n % a == 0) return a;
  return 1;
}
// Whether n elements in vectors of `lanes`, padded to whole vectors, leave fewer lanes idle than vectors
// of n's largest power-of-two divisor do: a row of 10 padded to 16 uses 10 of 16 lanes, as vectors of 2
// it would use 2 (a row of 24 padded to 32: 3/4 of them, as vectors of 8: half).
bool padding_fills_more_lanes(int64_t n, int64_t lanes) {
  int64_t used = pow2_divisor(n, lanes), padded = (n + lanes - 1) / lanes * lanes;
  return used < lanes && (padded - n) * lanes < padded * (lanes - used);
}
// Dim d's axis for PADTO, which counts the output and reduce dims together.
int padto_axis(const Kernel& k, int d) {
  int axis = 0;
  for (AxisType t : {AxisType::GLOBAL, AxisType::LOCAL, AxisType::REDUCE})
    for (int e : k.dims_of(t)) axis += e < d;
  return axis;
}
// The most vector accumulators a tile keeps: half the registers (the rest hold the loaded vectors and
// broadcasts: LLVM spills a 12-accumulator tile on AVX2's 16, unrolled over a conv's window), at most 16.
int64_t accumulators_for(VectorUnit unit) { return std::clamp(unit.registers / 2, 2, 16); }
// A multiply-add's latency (4 cycles) times the units that issue them (2): a tile with fewer independent
// accumulators leaves them waiting (a 10-wide conv row on AVX2 as 1 vector x 5 rows ran at 2/3 the speed).
constexpr int64_t kMinChains = 8;
// A reduce of at most this many elements runs unrolled, without a loop.
constexpr int64_t kShortReduce = 16;
// A kernel body of this many ALU ops per element is heavy (a fused batchnorm: 9 to 35; a pool or a
// sum: 0 to 6), and a run of this many bytes short (a 6x6 image: 144).
constexpr int kHeavyBody = 8;
constexpr int64_t kShortRunBytes = 256;
// A heavy kernel's output row of no pairs and at most this many elements runs unrolled whole, beside
// this many channels (see hand_coded_optimizations' pools).
constexpr int64_t kShortOddRow = 7, kChannelsPerStep = 8;
// A tile's output dim of at most this many steps, masked by a load's padding, is unrolled whole.
constexpr int64_t kShortMaskedDim = 8;
// the largest divisor of n that is <= cap
int64_t divisor(int64_t n, int64_t cap) {
  for (int64_t a = std::min(n, cap); a >= 2; a--)
    if (n % a == 0) return a;
  return 1;
}

// A matmul with fewer rows than this reads B in the L2 blocks of cache_block, which keep all of B's
// columns for some of its rows (kBlockBytes).
constexpr int64_t kFewRows = 64, kBlockBytes = 512 * 1024;
// B's rows are too wide for that when one step of the reduce (`step_rows` rows of B, all their
// columns) fills more than half a block: blocks of one step would spend more on reading and writing
// the partial sums than they save. Few rows then run as many rows do (panels of B, the rows innermost)
// with a tile of 2 rows and many vectors (hand_coded_optimizations): each of B's rows is read 512
// contiguous bytes at a time on AVX-512, for every tile of rows, from the L1 cache but for the first
// (16 x 4096 x 65536 read B at 3 GB/s with the few-row tile of 8 rows x 2 vectors, unblocked; 10 GB/s so).
bool wide_rows_of_b(int64_t rows, int64_t cols, int64_t itemsize, int64_t step_rows) {
  return rows < kFewRows && 2 * cols * itemsize * step_rows > kBlockBytes;
}
// A sum of runs that lie apart in memory, one run per output (a batchnorm's statistics split in partial
// sums per channel and pair of images: x's channels 1600 bytes apart, its pairs of images 100 KB), takes
// its output loops in the loads' memory order, the dim they stride along most outermost (where the threads
// split it): consecutive outputs then read consecutive runs, one stream for the prefetcher to follow
// (beautiful_mnist's step, Zen 5, c1's two statistics kernels: 1.5-1.7 -> 1.0-1.2 ms, c2's 0.66-0.72 ->
// 0.60-0.67). The output, one element per run, is too small for its own order to matter.
void outputs_in_memory_order(Kernel& k) {
  auto load_stride = [&](int d) {
    int64_t m = 0;
    if (k.full_shape()[static_cast<size_t>(d)] == 1) return m;  // (a dim of one step has no order)
    for (size_t i = 0; i < k.num_views(); i++)
      if (std::optional<int64_t> s = k.stride(i, d); k.is_load_view(i) && s) m = std::max(m, std::abs(*s));
    return m;
  };
  // a selection sort by SWAPs, the largest stride first (equal ones keep their order); a SWAP exchanges
  // two global dims in place, so the global dims' positions stay these
  const std::vector<int> globals = k.dims_of(AxisType::GLOBAL);
  for (size_t p = 0; p + 1 < globals.size(); p++) {
    size_t best = p;
    for (size_t q = p + 1; q < globals.size(); q++)
      if (load_stride(globals[q]) > load_stride(globals[best])) best = q;
    if (best != p) k.apply_opt({OptOps::SWAP, static_cast<int>(p), static_cast<int64_t>(best)});
  }
}
}  // namespace

// A tile reads a panel of the vector operand (B in A·B: the reduce x the tile's columns) for every tile
// of rows, so the rows go innermost among the output loops (SWAP) and the outermost (threaded) loop
// walks the panels. When the panel's rows lie far apart in memory (B's own rows, 4 KB apart at 1024
// float32 columns) they evict each other from the cache sets: the reduce is then also run in blocks
// (BLOCK) whose part of the panel fits the L1 cache. A packed panel (Tensor::matmul copies B into
// panels for large products, see Renderer::matmul_panel) is one stream and is read whole. Only worth it
// when the reduce is long. Few rows (below) are blocked for another reason, and keep their loop order,
// unless B's rows are too wide for their blocks (wide_rows_of_b).
void Kernel::cache_block(int row, int col, int red) {
  constexpr int64_t kPanelBytes = 32 * 1024;
  Shape full = full_shape();
  std::vector<int> globals = dims_of(AxisType::GLOBAL), reduces = dims_of(AxisType::REDUCE);
  int red_axis = axis_in(AxisType::REDUCE, red), row_axis = axis_in(AxisType::GLOBAL, row);
  if (red_axis == static_cast<int>(reduces.size()) || row_axis == static_cast<int>(globals.size())) return;
  int64_t unrolled = 1, rows = full[row], tile_cols = 1;
  for (int d : dims_of(AxisType::UNROLL)) unrolled *= full[d];
  for (int d : dims_of(AxisType::UPCAST)) {
    if (origin_[d] == origin_[row]) rows *= full[d];
    if (origin_[d] == origin_[col]) tile_cols *= full[d];
  }
  // Few rows (a batch of 16 through a large Linear) read B once per tile of rows, down its columns 128
  // bytes a row: DRAM serves such a walk at a fraction of its bandwidth (16 x 4096 x 4096: 30 GFLOP/s).
  // In blocks, the panels of a block go by in turn, and the block's rows of B stream whole from memory
  // once and stay in the L2 cache for the other row tiles. The row tiles stay the outermost output loop,
  // which the threads split: blocking needs two of them at least.
  int64_t itemsize = view_dtype(output_view()).itemsize();
  bool few_rows = rows < kFewRows && !wide_rows_of_b(rows, full[col] * tile_cols, itemsize, unrolled);
  if (full[row] < 2 || (few_rows && row_axis != 0)) return;  // (one tile of rows reuses nothing)
  int step = red;  // the dim of one step along the reduce: its unrolled part, when there is one
  for (int d : dims_of(AxisType::UNROLL))
    if (origin_[d] == origin_[red]) step = d;
  bool packed = false;  // B's panel rows lie no farther apart than a panel is wide
  for (size_t i = 0; i < num_views(); i++) {
    bool along_cols = false;  // B varies along the tile's columns (some part of the split column dim)
    for (int d = 0; d < shape_len(); d++)
      along_cols |= origin_[d] == origin_[col] && full[d] > 1 && stride(i, d) != std::optional<int64_t>{0};
    if (is_load_view(i) && stride(i, row) == std::optional<int64_t>{0} && along_cols) {
      std::optional<int64_t> s = stride(i, step);
      packed = s && *s <= ren_->matmul_panel(view_dtype(i));
    }
  }
  // the block, in iterations of the reduce loop: a panel of kPanelBytes
  // (with few rows: all the panels of a block's rows of B, kBlockBytes, stay in the L2 cache)
  int64_t bytes_per_step = (few_rows ? full[col] * tile_cols : tile_cols) * itemsize * unrolled;
  int64_t ideal = std::max<int64_t>(1, (few_rows ? kBlockBytes : kPanelBytes) / bytes_per_step), block = ideal;
  while (block > 1 && full[red] % block != 0) block /= 2;
  // much smaller blocks would spend the time saved on reading and writing the partial sums
  bool blocked = !packed && block >= 2 && block >= ideal / 2 && full[red] >= 2 * block;
  // A short reduce needs no blocks: its whole panel fits kPanelBytes. When B is larger than the L2 cache
  // holds, the rows still go innermost, so that every tile of rows reads the panel from the L1 cache
  // rather than all of B from memory (16 x 64 x 30000 ran at 3.2x the time so, 100 x 64 x 30000 at 3.5x).
  bool short_panel = !few_rows && ideal >= full[red] && full[col] * tile_cols * full[red] * unrolled * itemsize > kBlockBytes;
  if (!packed && !blocked && !short_panel) return;
  try {
    Kernel k = *this;
    // the rows innermost among the loops that run (dims of size 1 are no loops)
    int last = row_axis;
    for (int a = 0; a < static_cast<int>(globals.size()); a++)
      if (full[globals[a]] > 1) last = a;
    if (!few_rows && last != row_axis) k.apply_opt({OptOps::SWAP, row_axis, last});
    if (blocked) k.apply_opt({OptOps::BLOCK, red_axis, block});
    *this = std::move(k);
  } catch (const KernelOptError&) {}
}

// A load's valid region (its padding) depends on d: its stride along d is known only ignoring it.
bool Kernel::masked_along(int d) const {
  for (size_t i = 0; i < num_views(); i++)
    if (is_load_view(i) && !stride(i, d) && sts_[i].real_strides(true)[d]) return true;
  return false;
}

// The channel tile (see hand_coded_optimizations). Rows go along a dim where the other loads have no
// padding mask (one mask per row would be a branch per broadcast), unless the tile takes the dim whole
// with the innermost reduce (its masks then constants): the output's contiguous dim if it qualifies,
// else one where the other loads are contiguous, else any (a conv's batch). A reduce whose tile reads
// more than a cache block of the vector operand then runs in blocks that keep their part of the operands
// in the L2 cache (BLOCK): every tile of outputs reads them all (a conv's weight gradient reads dy once
// per input channel and kernel row). The blocks are of the batch, or of image rows when one image's part
// is already more than a block.
bool Kernel::channel_tile(int64_t lanes, bool lanes_along_output) {
  constexpr int64_t kMaxValues = 1024;
  const int64_t max_accumulators = accumulators_for(ren_->vector_unit());
  Shape full = full_shape();
  std::vector<int> globals = dims_of(AxisType::GLOBAL), reduces = dims_of(AxisType::REDUCE);
  auto loads = [&](auto&& f) {
    for (size_t i = 0; i < num_views(); i++)
      if (is_load_view(i)) f(i);
  };
  auto broadcast_somewhere = [&](int d) {
    bool b = false;
    loads([&](size_t i) { b |= stride(i, d) == std::optional<int64_t>{0}; });
    return b;
  };
  int out_vec = -1;
  for (int d : globals)
    if (full[d] > 1 && stride(output_view(), d) == std::optional<int64_t>{1}) out_vec = d;
  // the lanes along the output's contiguous dim only when no load offers another (the tile is for when
  // that dim makes poor vectors), and when allowed
  for (size_t pass = 0, i = 0; pass < (lanes_along_output ? 2u : 1u); i = (i + 1) % num_views(), pass += i == 0) {
    if (!is_load_view(i)) continue;
    int lane_dim = -1;
    for (int d : globals)
      if (lane_dim < 0 && (d != out_vec || pass == 1) && full[d] % lanes == 0 && stride(i, d) == std::optional<int64_t>{1} && broadcast_somewhere(d)) lane_dim = d;
    if (lane_dim < 0) continue;
    int row = -1, rank = -1;
    for (int d : globals) {
      if (d == lane_dim || full[d] < 2 || stride(i, d) != std::optional<int64_t>{0}) continue;
      bool unmasked = true, contiguous = true;
      loads([&](size_t j) {
        if (j == i) return;
        unmasked &= stride(j, d).has_value();
        contiguous &= stride(j, d) == std::optional<int64_t>{1};
      });
      // or a masked output row that two vectors by it hold whole in the accumulators, shorter than the
      // lanes (which it would take as the vector dim): a transposed conv's few columns read with their
      // padding (conv.cpp), unrolled whole with the kernel's columns, so that each mask is a constant
      bool whole = !unmasked && d == out_vec && 2 * full[d] <= max_accumulators && full[d] < lanes;
      int r = whole ? 2 : !unmasked ? -1 : d == out_vec ? 2 : contiguous ? 1 : 0;
      if (r > rank) row = d, rank = r;
    }
    if (row < 0 || rank < 0) continue;
    bool row_masked = masked_along(row);
    try {
      Kernel k = *this;
      k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, lane_dim), lanes});
      // the innermost reduce unrolled (wholly when short: a kernel row), then 2 vectors (or 1) of
      // channels by rows, as many as the accumulators and the kernel's 1024 expanded values allow
      int red = reduces.back();
      // not kernel rows whose loads are masked (a k x 1 kernel's input gradient, its rows padded: their
      // loop's bounds skip the padded rows, where unrolled each load was gated) when another reduce is
      // not (the channels: a 5x1 conv's input gradient, 32 channels on 24x5 images, Zen 5: 3.0 -> 1.55 ms)
      if (masked_along(red) && !(row_masked && full[red] <= 8))
        for (int r : reduces)
          if (full[r] > 1 && !masked_along(r)) red = r;
      int64_t u = pow2_divisor(full[red], 4);
      if ((u == 1 || row_masked) && full[red] <= 8) u = full[red];
      // the dims a second set of rows may go along: broadcast by the vector load, unmasked in the others
      std::vector<int> second;
      for (int d : globals) {
        if (d == lane_dim || d == row || stride(i, d) != std::optional<int64_t>{0}) continue;
        bool unmasked = true;
        loads([&](size_t j) { unmasked &= stride(j, d).has_value(); });
        if (unmasked) second.push_back(d);
      }
      struct Tile {
        int64_t vectors = 1, rows = 1, rows2 = 1;
        int row2 = -1;
        int64_t size() const { return vectors * rows * rows2; }  // accumulators
      };
      // Each candidate: v vectors by r rows, and the accumulators left filled along the second dim that
      // takes the most (a short row dim, a weight gradient's 3 kernel columns, leaves room for its input
      // channels). The preferred tile has the most rows its vectors allow, 2 vectors unless 1 gives
      // more than twice the rows (fewer broadcasts). When it keeps fewer accumulators than the
      // multiply-adds need in flight, the fullest tile is taken instead (a 10-wide row on AVX2: 1 x 5
      // becomes 2 x 2 x 2).
      Tile preferred, fullest;
      for (int64_t v : {int64_t{1}, int64_t{2}}) {
        if (v == 2 && k.full_shape()[lane_dim] % 2 != 0) continue;
        int64_t most_rows = divisor(full[row], std::min(max_accumulators / v, kMaxValues / (lanes * v * u)));
        for (int64_t r = row_masked ? full[row] : 1; r <= most_rows; r++) {
          if (full[row] % r != 0) continue;
          Tile t{v, r, 1, -1};
          int64_t room = std::min(max_accumulators / (v * r), kMaxValues / (lanes * v * u * r));
          for (int d : second)
            if (int64_t r2 = divisor(full[d], room); r2 > t.rows2) t.rows2 = r2, t.row2 = d;
          auto key = [](const Tile& a) { return std::make_tuple(a.size(), a.vectors, a.rows); };
          if (key(t) > key(fullest)) fullest = t;
          if (r == most_rows && (v == 1 || 2 * r >= preferred.rows)) preferred = t;
        }
      }
      Tile best = preferred.size() < std::min(kMinChains, max_accumulators) ? fullest : preferred;
      if (row_masked && best.rows != full[row]) continue;
      int64_t vectors = best.vectors, rows = best.rows, rows2 = best.rows2;
      int row2 = best.row2;
      if (vectors == 2) k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, lane_dim), 2});
      if (rows > 1) k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, row), rows});
      if (row2 >= 0) k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, row2), rows2});
      if (u > 1) k.apply_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), u});
      k.reuse_inside(i);
      // A tile that reads more than a cache block of the vector operand (a weight gradient's dy, not a
      // conv's weights): the outermost reduce dim in blocks whose slice of every load fits kBlockBytes,
      // or when one index of it reads more (a batch of 28x28 images), the next dim in (their rows)
      int64_t tile_bytes = k.sts_[i].footprint() * k.view_dtype(i).itemsize();
      for (int d : k.dims_of(AxisType::GLOBAL))
        if (k.stride(i, d) != std::optional<int64_t>{0}) tile_bytes /= k.full_shape()[d];
      for (size_t r = 0; tile_bytes > kBlockBytes && r + 1 < reduces.size(); r++) {
        int dim = reduces[r];
        int64_t slice = 0;
        loads([&](size_t j) { slice += k.sts_[j].footprint() / std::max<int64_t>(1, full[dim]) * k.view_dtype(j).itemsize(); });
        int64_t block = full[dim];
        while (block > 1 && (full[dim] % block != 0 || block * slice > kBlockBytes)) block--;
        if (block == full[dim]) break;
        if (block * slice > kBlockBytes) continue;
        try { Kernel b = k; b.apply_opt({OptOps::BLOCK, static_cast<int>(r), block}); k = std::move(b); } catch (const KernelOptError&) {}
        break;
      }
      *this = std::move(k);
      return true;
    } catch (const KernelOptError&) {}
  }
  return false;
}

// The output loops in an order that reuses the tile's vector-loaded operand from the cache. The first
// output dim is the one the threads split; each reads its slice of that operand (a conv's packed
// weights, or a weight gradient's packed dy) once per index of every dim outside the dims it varies
// along. When the operand is larger than a cache block and one index of the dims it varies along
// reads at most a block of it, the dims that reuse it go inside those: consecutive work items then
// read the same block (beautiful_mnist's c1 weight gradient: dy of 38 MB in 147 KB slices of the batch
// split, read once per kernel row, with 5 rows for the threads: 7.4 -> 2.8 ms on AVX-512, 14.6 -> 5.3 on
// AVX2). The dim the threads then split must still have work for many cores.
void Kernel::reuse_inside(size_t vector_load) {
  constexpr int64_t kThreadedItems = 64;
  Shape full = full_shape();
  std::vector<int> globals = dims_of(AxisType::GLOBAL), varies, reuses;
  int64_t steps = 1;
  for (int d : globals) {
    if (full[d] == 1) continue;
    bool reused = stride(vector_load, d) == std::optional<int64_t>{0};
    (reused ? reuses : varies).push_back(d);
    if (!reused) steps *= full[d];
  }
  int64_t bytes = sts_[vector_load].footprint() * view_dtype(vector_load).itemsize();
  if (reuses.empty() || varies.empty() || bytes <= kBlockBytes || bytes / steps > kBlockBytes || reuses.front() > varies.back()) return;
  // the first of them becomes the threaded dim: the one with the most items when the first has too few
  // for many cores (AVX2's channel tile leaves 4 vectors of channels outside the batch split)
  auto widest = std::max_element(varies.begin(), varies.end(), [&](int a, int b) { return full[a] < full[b]; });
  if (full[*widest] < kThreadedItems) return;
  if (full[varies.front()] < kThreadedItems) std::rotate(varies.begin(), widest, widest + 1);
  // the target order of the global dims (size-1 dims first), reached by swaps of two of them
  std::vector<int> target, now = globals;
  for (int d : globals)
    if (full[d] == 1) target.push_back(d);
  target.insert(target.end(), varies.begin(), varies.end());
  target.insert(target.end(), reuses.begin(), reuses.end());
  for (size_t p = 0; p < target.size(); p++) {
    size_t q = static_cast<size_t>(std::find(now.begin(), now.end(), target[p]) - now.begin());
    if (q == p) continue;
    apply_opt({OptOps::SWAP, static_cast<int>(p), static_cast<int64_t>(q)});
    std::swap(now[p], now[q]);
  }
}

// The dot tile (see hand_coded_optimizations). x @ w.T, every Linear layer's product, has both operands
// contiguous along the reduce and w strided along the output's columns, where a register tile's lanes
// would gather each vector from 16 rows of w (100 x 1000 x 100 ran 13x torch's time). The lanes go along
// the reduce instead, as partial sums added across the lanes once per output, and the rows of x make the
// tile: each vector loaded from w feeds one multiply-add per row. (Columns in the tile too would be
// vectors along the output's contiguous dim again, see vector_dim.) When w is larger than an L2 block
// and several tiles of rows read it, the reduce runs in blocks of w that stay in the L2 cache.
bool Kernel::dot_tile(int64_t lanes, int col, int red) {
  Shape full = full_shape();
  // the two operands: the loads that vary along the reduce (others, a bias added after it, do not)
  constexpr std::optional<int64_t> kBroadcast{0};
  std::vector<size_t> loads;
  for (size_t i = 0; i < num_views(); i++)
    if (is_load_view(i) && stride(i, red) != kBroadcast) loads.push_back(i);
  if (loads.size() != 2) return false;
  for (size_t i : loads)
    if (stride(i, red) != std::optional<int64_t>{1}) return false;
  size_t w = stride(loads[0], col) == kBroadcast ? loads[1] : loads[0], x = w == loads[0] ? loads[1] : loads[0];
  if (stride(x, col) != kBroadcast || stride(w, col) == kBroadcast || !stride(w, col)) return false;
  // (K = 1000 on AVX-512: 8 lanes.) A short reduce would spend more on adding the lanes of each output
  // than on its multiply-adds (100 x 64 x 1000 took 1.7x the time of the gathering tile).
  int64_t v = pow2_divisor(full[red], lanes);
  if (v < std::max<int64_t>(4, lanes / 2) || full[red] < 8 * v) return false;
  std::vector<int> globals = dims_of(AxisType::GLOBAL);
  int row = -1;  // x varies along it, w does not
  for (int d : globals)
    if (d != col && full[d] > 1 && stride(w, d) == kBroadcast && stride(x, d) != kBroadcast) row = d;
  int64_t rows = row >= 0 ? pow2_divisor(full[row], accumulators_for(ren_->vector_unit())) : 1;
  try {
    Kernel k = *this;
    k.apply_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), v});
    if (rows > 1) k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, row), rows});
    Shape kf = k.full_shape();
    std::vector<int> kreduces = k.dims_of(AxisType::REDUCE);
    int64_t itemsize = view_dtype(w).itemsize();
    if (row >= 0 && full[row] / rows >= 2) {  // several tiles of rows read all of w
      if (full[row] * full[red] * view_dtype(x).itemsize() <= kBlockBytes) {
        // x stays in the L2 cache: the columns go to the threads and the rows innermost, so w streams once
        k.apply_opt({OptOps::SWAP, axis_in(AxisType::GLOBAL, row), axis_in(AxisType::GLOBAL, col)});
      } else if (full[col] * full[red] * itemsize > kBlockBytes && !kreduces.empty()) {
        int r = kreduces.back();  // the reduce's steps, v lanes each
        int64_t ideal = std::max<int64_t>(1, kBlockBytes / (full[col] * v * itemsize)), block = pow2_divisor(kf[r], ideal);
        if (block >= 2 && block >= ideal / 2 && kf[r] >= 2 * block) k.apply_opt({OptOps::BLOCK, k.axis_in(AxisType::REDUCE, r), block});
      }
    }
    *this = std::move(k);
    return true;
  } catch (const KernelOptError&) {
    return false;
  }
}

// The window tile (see hand_coded_optimizations). A sum of products whose operands are both contiguous
// along the reduce, each broadcast along an output dim that the other varies along: a conv's weight
// gradient read straight from dy and x, dw[o, ky, kx] = sum over (n, oy, ox) of dy[n, o, oy, ox] x[n, oy + ky,
// ox + kx], with dy broadcast along the window and x along the channels. The lanes go along the reduce (ox),
// and the tile is a few of each dim: each vector of x feeds the tile's channels, each vector of dy its
// window columns. (c1's weight gradient, 1 input channel: else a vector partial sum per output, 2 loads a
// multiply-add, 3x the time.)
bool Kernel::window_tile(int64_t lanes, int red) {
  constexpr std::optional<int64_t> kBroadcast{0}, kContiguous{1};
  Shape full = full_shape();
  // the strides of the loads' indices, whatever their masks (a padded image's windows are contiguous
  // along the row; their mask becomes the vector read's lane mask)
  auto index_stride = [&](size_t i, int d) { return sts_[i].real_strides(true)[static_cast<size_t>(d)]; };
  std::vector<size_t> loads;  // the operands: the loads that vary along the reduce
  for (size_t i = 0; i < num_views(); i++)
    if (is_load_view(i) && stride(i, red) != kBroadcast) loads.push_back(i);
  if (loads.size() < 2) return false;
  for (size_t i : loads)
    if (index_stride(i, red) != kContiguous) return false;
  // an output dim splits the operands in those broadcast along it and the others; a tile needs two dims
  // that split them the same way, with the roles swapped
  auto broadcast_along = [&](int d) {
    std::vector<bool> b;
    for (size_t i : loads) b.push_back(stride(i, d) == kBroadcast);
    return b;
  };
  int64_t reduce_size = 1;
  for (int r : dims_of(AxisType::REDUCE)) reduce_size *= full[r];
  // vectors of half the registers' lanes at least (c1's 24-wide rows: 8 of AVX-512's 16), a row a little
  // short of them padded (a 14-wide one to 16: at most 1/8 of it), and a reduce long enough that adding
  // up the lanes of each output is a small part of it
  int64_t v = pow2_divisor(full[red], lanes), pad = 0;
  for (int64_t m = lanes; v < std::max<int64_t>(4, lanes / 2) && m >= std::max<int64_t>(4, lanes / 2); m /= 2)
    if (int64_t padded = (full[red] + m - 1) / m * m; (padded - full[red]) * 8 <= padded) pad = v = m;
  // and a row of whole vectors when that fills more lanes: c1's 24-wide rows padded to 32, 3/4 of the
  // lanes, not 8-lane vectors, half (its weight gradient on Zen 5: 3.7 -> 3.0 ms)
  if (v < lanes && full[red] > lanes && padding_fills_more_lanes(full[red], lanes)) pad = v = lanes;
  if (v < std::max<int64_t>(4, lanes / 2) || reduce_size < 64 * v) return false;
  // of the pairs, the one that makes the largest tile that the registers hold (the innermost of equals)
  int64_t acc = accumulators_for(ren_->vector_unit());
  int a = -1, b = -1;
  int64_t na = 1, nb = 1;
  for (int d : dims_of(AxisType::GLOBAL)) {
    std::vector<bool> bd = broadcast_along(d);
    if (full[d] < 2 || std::all_of(bd.begin(), bd.end(), [](bool x) { return x; }) || std::none_of(bd.begin(), bd.end(), [](bool x) { return x; })) continue;
    for (int e : dims_of(AxisType::GLOBAL)) {
      if (e == d || full[e] < 2) continue;
      std::vector<bool> be = broadcast_along(e);
      bool swapped = true;
      for (size_t k = 0; k < be.size(); k++) swapped = swapped && be[k] != bd[k];
      // (the tile's operands are its ne + nd vectors a step, so a tile that leaves them registers may
      // take more than half: c1's 5 window columns x 4 channels, 20 + 9 of AVX-512's 32, not 5 x 2)
      int64_t ne = divisor(full[e], std::min<int64_t>(8, acc / 2));
      int64_t nd = divisor(full[d], std::max<int64_t>({2, acc / ne, (ren_->vector_unit().registers - ne) / (ne + 1)}));
      if (swapped && nd * ne >= na * nb) a = d, b = e, na = nd, nb = ne;
    }
  }
  // No such pair (a depthwise conv's: x and dy both vary along the channels): two dims that only some
  // operands vary along (its window's), so that each vector of the others (dy) feeds the tile.
  if (a < 0)
    for (int d : dims_of(AxisType::GLOBAL)) {
      std::vector<bool> bd = broadcast_along(d);
      if (full[d] < 2 || std::all_of(bd.begin(), bd.end(), [](bool x) { return x; }) || std::none_of(bd.begin(), bd.end(), [](bool x) { return x; })) continue;
      if (b < 0) b = d, nb = divisor(full[d], std::min<int64_t>(8, acc / 2));
      else if (broadcast_along(b) == bd) a = d, na = divisor(full[d], std::max<int64_t>(1, acc / nb));
    }
  if (b < 0 || na * nb < 4) return false;
  try {
    Kernel k = *this;
    if (pad) k.apply_opt({OptOps::PADTO, padto_axis(k, red), pad});
    k.apply_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), v});
    if (nb > 1) k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, b), nb});
    if (na > 1) k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, a), na});
    // the dim all operands vary along (the images of the batch) outermost, where the threads split it:
    // the tile's other dims then reuse one image's dy and x from the cache (c1's weight gradient, which
    // read all of dy from memory for each window row and pair of channels: 5.2 -> 4.1 ms)
    int outer = -1;
    for (int d : dims_of(AxisType::GLOBAL))
      if (full[d] > 1 && std::none_of(loads.begin(), loads.end(), [&](size_t i) { return stride(i, d) == kBroadcast; }) && (outer < 0 || full[d] > full[outer])) outer = d;
    if (int first = axis_in(AxisType::GLOBAL, outer); outer >= 0 && first > 0) k.apply_opt({OptOps::SWAP, 0, first});
    *this = std::move(k);
    return true;
  } catch (const KernelOptError&) {
    return false;
  }
}

void Kernel::hand_coded_optimizations() {
  Shape full = full_shape();
  if (std::any_of(full.begin(), full.end(), [](int64_t d) { return d == 0; })) return;
  DType out = view_dtype(output_view());
  // vectors as wide as the target's registers, and tiles whose accumulators its registers hold
  VectorUnit unit = ren_->vector_unit();
  int lanes = std::max(1, unit.bytes / std::max(1, out.itemsize()));
  auto try_opt = [&](Opt o) {
    try { apply_opt(o); return true; } catch (const KernelOptError&) { return false; }
  };
  auto contiguous_in_output = [&](int d) { return stride(output_view(), d) == std::optional<int64_t>{1}; };
  auto contiguous_in_a_load = [&](int d) {
    for (size_t i = 0; i < num_views(); i++)
      if (is_load_view(i) && stride(i, d) == std::optional<int64_t>{1}) return true;
    return false;
  };
  std::vector<int> globals = dims_of(AxisType::GLOBAL), reduces = dims_of(AxisType::REDUCE);
  // a load that a register tile along d reuses: the same value for every lane, a new one at each step of
  // the reduce (A's row in A·B). A load that only broadcasts (a per-channel scale in a fused batchnorm
  // backward) is read once per output whatever the tile, which would only multiply the kernel's body.
  auto reused_along = [&](int d) {
    for (size_t i = 0; i < num_views(); i++) {
      if (!is_load_view(i) || stride(i, d) != std::optional<int64_t>{0}) continue;
      for (int r : reduces)
        if (full[r] > 1 && stride(i, r) != std::optional<int64_t>{0}) return true;
    }
    return false;
  };
  // the output dim to vectorize: contiguous in the output, the innermost such
  int vec = -1;
  for (int d : globals)
    if (full[d] > 1 && contiguous_in_output(d)) vec = d;

  if (!reduces.empty()) {
    int red = reduces.back();
    // A channel tile, when the output's contiguous dim makes short vectors (a conv's 20-wide rows): the
    // lanes go along a dim that a load has contiguous (a conv's output channels, its weights packed so)
    // and another broadcasts; the rows along a dim that load broadcasts (the image's columns, whose
    // values each feed a whole vector of channels). The stores go lane by lane, once per output.
    // The output's contiguous dim is a poor vector dim when its vectors are short or a load strides along it.
    int64_t out_width = vec >= 0 ? pow2_divisor(full[vec], lanes) : 1;
    bool vec_strided = false;
    for (size_t i = 0; vec >= 0 && i < num_views(); i++)
      if (is_load_view(i) && stride(i, vec) != std::optional<int64_t>{0} && stride(i, vec) != std::optional<int64_t>{1}) vec_strided = true;
    int64_t reduce_size = 1;
    for (int d : reduces) reduce_size *= full[d];
    // A row of no pairs of vectors (24 floats on AVX2: three) would give a register tile of one vector per
    // row, as many broadcasts as multiply-adds: lanes along another dim, if a load offers one (a conv's
    // channels).
    bool one_vector = vec >= 0 && full[vec] % (2 * lanes) != 0;
    // x @ w.T: lanes along the reduce that both operands have contiguous, rows of x as the tile (before
    // the channel tile, which would take a bias added after the reduce for a load contiguous along a column)
    if (out.is_float() && vec_strided && reduce_size >= 4 * lanes && dot_tile(lanes, vec, red)) return;
    if (out.is_float() && (out_width < lanes || vec_strided || one_vector) && reduce_size >= 4 * lanes &&
        channel_tile(lanes, out_width < lanes || vec_strided))
      return;
    if (out.is_float() && window_tile(lanes, red)) return;
    bool tile = vec >= 0 && reused_along(vec) && out.is_float();
    if (tile) {  // matmul-like: register tile
      // rows: a dim along which the operand loaded as vectors is reused (B's rows in A·B, the input
      // image across output channels in a conv), so each vector load feeds several accumulators; the
      // widest such dim (a conv's channels split in blocks: the block, not the few blocks)
      int row = -1;
      for (size_t i = 0; i < num_views() && row < 0; i++) {
        if (!is_load_view(i) || stride(i, vec) == std::optional<int64_t>{0}) continue;  // varies along vec
        for (int d : globals)
          if (d != vec && full[d] > 1 && stride(i, d) == std::optional<int64_t>{0} && (row < 0 || full[d] > full[row])) row = d;
      }
      // a dim a little short of whole vectors (a 28-wide image, a 1000-wide matrix) is padded to them,
      // to pairs of them where that is as cheap: at most 1/8 of the work wasted
      auto pad_for = [&](int d, int64_t multiple) {
        int64_t padded = (full[d] + multiple - 1) / multiple * multiple;
        return full[d] % multiple != 0 && (padded - full[d]) * 8 <= padded && try_opt({OptOps::PADTO, axis_in(AxisType::GLOBAL, d), multiple});
      };
      if (!pad_for(vec, 2 * lanes) && pow2_divisor(full[vec], lanes) < lanes && !pad_for(vec, lanes)) {
        // Otherwise its vectors would leave lanes idle in every multiply-add: padded to whole vectors
        // when the padding wastes less than those lanes (c1's 24-wide rows: 8-lane vectors, half of
        // AVX-512's, or a quarter of the work padded: 5.3 -> 1.8 ms)
        if (padding_fills_more_lanes(full[vec], lanes)) try_opt({OptOps::PADTO, axis_in(AxisType::GLOBAL, vec), lanes});
      }
      full = full_shape();
      int64_t w = pow2_divisor(full[vec], lanes);
      if (w < 2) tile = false;
      if (tile) {
        try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), w});
        // rows x 2 vectors of accumulators; a row count without half as many as a factor (997) padded.
        // Few rows against wide rows of B: 2 rows, and the vectors below along the row (wide_rows_of_b)
        int64_t itemsize = view_dtype(output_view()).itemsize(), step_rows = pow2_divisor(full[red], 4);
        bool wide = row >= 0 && wide_rows_of_b(full[row], full[vec], itemsize, step_rows);
        int64_t rows = wide ? 2 : accumulators_for(unit) / 2;
        if (row >= 0 && pow2_divisor(full[row], rows) < std::max<int64_t>(2, rows / 2)) pad_for(row, rows);
        // A short dim that a load's padding masks vary along (the blocks of Winograd's input gradient,
        // reading dV padded by a tile each side) is unrolled whole first: its masks become constants
        // per step, where looped they gated every load
        for (int d : globals)
          if (d != vec && d != row && full[d] > 1 && full[d] <= kShortMaskedDim && masked_along(d) &&
              try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, d), 0})) {
            rows = std::max<int64_t>(1, rows / full[d]);
            break;
          }
        // (3 rows, a conv's input gradient into an image's 3 channels, are a tile of 3, not 1)
        int64_t tile_rows = row >= 0 ? pow2_divisor(full_shape()[row], rows) : 1;
        if (tile_rows == 1 && row >= 0) tile_rows = divisor(full_shape()[row], rows);
        if (tile_rows > 1) try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, row), tile_rows});
        // the accumulators that few rows leave go to more vectors along the row (all of them in a
        // matrix-vector product): each row of B is then read 512 contiguous bytes at a time, not a
        // strided 128, which DRAM serves at a fraction of its speed
        int64_t cap = std::clamp<int64_t>(accumulators_for(unit) / tile_rows, 2, 8), vectors = pow2_divisor(full_shape()[vec], cap);
        if (vectors == 1) vectors = divisor(full_shape()[vec], cap);  // (a 48-wide padded row: 3 vectors)
        if (vectors > 1) try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), vectors});
        // unroll the reduce by 4, or wholly when it is short (a conv's 3-wide window: its padding
        // masks then become constants per lane)
        // (and wholly when a load's masks vary along it: the Winograd output transform's 8 points read
        // as 8 padded pieces of a concatenation load one of them per lane, not all 8 under gates:
        // 17.6 -> 4.4 ms in beautiful_mnist's step)
        int64_t u = pow2_divisor(full_shape()[red], 4);
        if ((u == 1 || masked_along(red)) && full_shape()[red] <= 8) u = full_shape()[red];
        if (u > 1) try_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), u});
        if (row >= 0) cache_block(row, vec, red);
        return;
      }
    }
    if (contiguous_in_a_load(red)) {  // vector partial sums along the reduce
      int64_t w = pow2_divisor(full[red], lanes);
      // A row shorter than a vector, of no whole vectors, is one vector padded to the next power of two
      // when that fills more lanes (its padding's masks then constants per lane): c4's batchnorm
      // backward, fused with its 2x2 max-pool's, sums rows of 6 as 8 lanes, not 3 pairs (Zen 5, its two
      // kernels: 2.8-3.1 -> 1.7-1.8 ms). (c2's rows of 20 as 32 padded lanes ran no faster than as 5
      // vectors of 4: that kernel waits on memory.)
      int64_t row = full[red], p = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(row)));
      if (row < lanes && w < p && padding_fills_more_lanes(row, p)) {
        Kernel k = *this;  // (both or neither: a padded row summed in a loop only adds work)
        try {
          k.apply_opt({OptOps::PADTO, padto_axis(k, red), p});
          k.apply_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), p});
          *this = std::move(k);
          w = 1;
        } catch (const KernelOptError&) {}
      }
      if (w > 1) try_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), w});
      // and 4 of them (reduce_to_acc folds them in pairs before the accumulator), so a loop-carried
      // max or sum waits for one op per 4 vectors rather than one per vector
      int64_t u = pow2_divisor(full_shape()[red], 4);
      if (w > 1 && u > 1 && full_shape()[red] >= 2 * u) try_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, red), u});
      // A short reduce (a pooling window) unrolled whole: loops of 2 steps cost more than their bodies
      // (a batchnorm + relu + 2x2 max-pool with its count of maxima: 4.0 -> 3.4 ms)
      if (reduce_size <= kShortReduce)
        for (int d : dims_of(AxisType::REDUCE))
          if (full_shape()[d] > 1) try_opt({OptOps::UNROLL, axis_in(AxisType::REDUCE, d), 0});
      // A kernel that computes much per element it reads (a batchnorm, its backward, fused with a
      // pool) waits on its loads and its chains of ops one element at a time: more outputs per step
      // give it independent ones. A short window: 2 outputs along the row (c2's batchnorm + relu + 2x2
      // max-pool with its count of maxima: 4.3 -> 3.0 ms). A long reduce over short runs (6x6 images,
      // 144 bytes, one run per image of the batch): 4 outputs whose runs lie next to each other
      // (channels: c4's batchnorm + max-pool backward, 4.0 -> 1.7 ms). Plain pools and sums keep theirs.
      int alu = 0;
      for (auto& u : ast_->toposort()) alu += is_alu(u->op);
      if (alu >= kHeavyBody && reduce_size <= kShortReduce && vec >= 0) {
        // A row of no whole vectors is padded to them when that fills more lanes (c2's pooled rows of
        // 10: 16 lanes, 10 of them used, each reading its window's row as lanes of two loaded vectors:
        // 2.6 -> 1.0 ms)
        int64_t row = full_shape()[vec];
        bool padded = false;
        if (padding_fills_more_lanes(row, lanes)) {
          Kernel k = *this;  // (both or neither: a padded row of scalars would only add work)
          try {
            k.apply_opt({OptOps::PADTO, axis_in(AxisType::GLOBAL, vec), lanes});
            k.apply_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), lanes});
            *this = std::move(k);
            padded = true;
          } catch (const KernelOptError&) {}
        }
        if (int64_t a = pow2_divisor(row, 2); !padded && a > 1) try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), a});
        else if (!padded && row <= kShortOddRow) {
          // A short row of no pairs (c4's pooled rows of 3) runs whole, and 8 outputs along the dim that its
          // per-channel values vary along (a batchnorm's mean and variance, broadcast along the row): each
          // step computes their rsqrt once for 8 channels and has 24 independent outputs, where it had one
          // (c4's batchnorm + relu + 2x2 max-pool with its count of maxima, Zen 5: 0.97-1.27 -> 0.30-0.33 ms)
          int channels = -1;
          for (int d : globals) {
            bool per_channel = false;
            for (size_t i = 0; i < num_views(); i++)
              per_channel |= is_load_view(i) && stride(i, vec) == std::optional<int64_t>{0} && stride(i, d) != std::optional<int64_t>{0};
            if (d < vec && per_channel && full[d] % kChannelsPerStep == 0) channels = d;
          }
          try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), row});
          if (channels >= 0) try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, channels), kChannelsPerStep});
        }
      } else if (alu >= kHeavyBody) {
        Shape now = full_shape();
        std::vector<int> along = dims_of(AxisType::REDUCE), unrolled = dims_of(AxisType::UNROLL);
        along.insert(along.end(), unrolled.begin(), unrolled.end());
        auto streams = [&](size_t i) {  // the load varies along the reduce
          return std::any_of(along.begin(), along.end(), [&](int r) { return now[r] > 1 && stride(i, r) != std::optional<int64_t>{0}; });
        };
        for (int d : dims_of(AxisType::GLOBAL)) {
          if (now[d] < 4 || now[d] % 4 != 0) continue;
          bool next_runs = true, any = false;  // every load that streams along the reduce has its runs along d adjacent
          for (size_t i = 0; i < num_views(); i++) {
            if (!is_load_view(i) || !streams(i)) continue;
            std::optional<int64_t> sd = stride(i, d);
            next_runs &= sd.has_value() && *sd > 0 && *sd * view_dtype(i).itemsize() <= kShortRunBytes;
            any = true;
          }
          if (any && next_runs && try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, d), 4})) break;
        }
      }
      if (reduce_size > kShortReduce && dims_of(AxisType::UPCAST).empty()) outputs_in_memory_order(*this);
      return;
    }
    if (vec >= 0) {  // a vector of outputs per accumulator
      int64_t w = pow2_divisor(full[vec], lanes);
      if (w > 1) try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), w});
    }
    return;
  }
  if (vec >= 0) {
    // A transpose (x.T.contiguous()): a load contiguous along another dim, and strided along the
    // output's, would gather every vector from w rows, a cache line each. The tile is then square: each
    // row's w lanes are one vector load (the vectorizer's group_loads), shuffled into whole vectors
    // stored along the output's dim (Zen 5, float32: 4096 x 4096 in 6.0 ms, 14.7 gathered; (512, 32, 576)
    // to (512, 576, 32), a conv's layout change, 1.2 ms, 2.3 as a plain vector of gathers). Up to a few
    // loads: each is w x w lanes to compile.
    int across = -1, loads = 0;
    for (size_t i = 0; i < num_views(); i++) {
      if (!is_load_view(i)) continue;
      loads++;
      std::optional<int64_t> along_vec = stride(i, vec);
      if (!along_vec || *along_vec == 0 || *along_vec == 1) continue;
      for (int d : globals)
        if (d != vec && full[d] > 1 && stride(i, d) == std::optional<int64_t>{1}) across = d;
    }
    // A 16 x 16 tile (AVX-512's float32) is square only over many rows: where the output's vectors
    // gather from few of the input's rows, it takes fewer elements of each row per step, rows / 32 and
    // at least 4 (Zen 5, transposes of 16 MB: over 64 rows 0.61-0.66 -> 0.34-0.41 ms, over 256 rows
    // 0.60-0.69 -> 0.49-0.51 with 8; over 32, (512, 32, 576), 1.35-1.48 -> 1.04; beautiful_mnist's
    // packing of c4's dy, (512, 2, 32, 64) to (2, 512, 64, 32), 0.85-0.89 -> 0.38), while from 1024
    // rows on, whole cache lines of each row win (4096 rows: 4 elements 2.6x slower). AVX2's 8 x 8 was
    // best at every size measured (4 x 8 over 32 rows: 1.3 -> 2.0 ms).
    int64_t depth = lanes >= 16 ? std::clamp<int64_t>(static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(full[vec] / 32))), 4, lanes) : lanes;
    int64_t w = pow2_divisor(full[vec], lanes), t = across >= 0 ? pow2_divisor(full[across], depth) : 1;
    bool vectorized = w > 1 && try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, vec), w});
    // (elements of 4 bytes or more: a float16 tile of 32 x 32 lanes took LLVM 19 s to compile, 32 x 8 0.7 s)
    if (vectorized && t > 1 && loads <= 4 && out.itemsize() >= 4) try_opt({OptOps::UPCAST, axis_in(AxisType::GLOBAL, across), t});
  }
}

}  // namespace tg

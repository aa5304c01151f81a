// The kernel optimizer: every OptOps action against the unoptimized kernel (NOOPT) on random shapes,
// random valid action sequences on random ASTs, invalid actions rejected with tg::Error, and the default
// heuristics' choices (register tiles, blocks, vector lanes). Matrix products' tiles and panels:
// test_matmul_heuristics.cpp; conv kernels' channel tiles: test_conv_heuristics.cpp; reduces that are not
// tiles (partial sums, pools, heavy bodies): test_reduce_opts.cpp; kernels with several reduces:
// test_multi_reduce.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "kernel_ast.h"
#include "kernel_opts_util.h"
#include "lazy/lazybuffer.h"
#include "test_util.h"
#include "tg/tg.h"

using namespace tg;
using namespace kernel_opts_test;
using testing::HasSubstr;
using testing::Not;

namespace {

// A random kernel: elementwise, broadcast, reductions, matmul, padding, max, of random sizes.
Tensor random_expr(std::mt19937& rng, int kind) {
  auto sz = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  DType dt = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? dtypes::int32 : dtypes::float32;
  switch (kind % 7) {
    case 0: {  // elementwise with broadcast
      int64_t a = sz(1, 9), b = sz(1, 40);
      return rand_tensor(rng, {a, b}, dt) * rand_tensor(rng, {1, b}, dt) + rand_tensor(rng, {a, 1}, dt);
    }
    case 1: {  // reduce over the last axis
      int64_t a = sz(1, 9), b = sz(1, 70);
      return (rand_tensor(rng, {a, b}, dt) + 1).sum({1});
    }
    case 2: {  // reduce over the first axis
      int64_t a = sz(1, 40), b = sz(1, 20);
      return rand_tensor(rng, {a, b}, dt).sum({0});
    }
    case 3: {  // matmul
      int64_t m = sz(1, 12), k = sz(1, 20), n = sz(1, 40);
      return rand_tensor(rng, {m, k}, dt).matmul(rand_tensor(rng, {k, n}, dt));
    }
    case 4: {  // max over an axis
      int64_t a = sz(1, 9), b = sz(1, 50);
      return rand_tensor(rng, {a, b}, dt).max({1});
    }
    case 5: {  // padded and flipped input
      int64_t a = sz(1, 9), b = sz(1, 30);
      return rand_tensor(rng, {a, b}, dt).flip({1}).pad({{1, 2}, {0, 3}}) * 2;
    }
    default: {  // full sum
      int64_t a = sz(1, 300);
      return rand_tensor(rng, {a}, dt).sum();
    }
  }
}

// A random valid-or-not action on kernel k.
Opt random_opt(std::mt19937& rng, const Kernel& k) {
  static const OptOps kinds[] = {OptOps::UPCAST, OptOps::UPCAST, OptOps::UNROLL, OptOps::UNROLL, OptOps::PADTO, OptOps::SWAP, OptOps::BLOCK};
  static const int64_t amounts[] = {0, 2, 3, 4, 5, 8, 16};
  Opt o{kinds[std::uniform_int_distribution<int>(0, 6)(rng)], 0, amounts[std::uniform_int_distribution<int>(0, 6)(rng)]};
  bool on_reduce = o.op == OptOps::UNROLL || o.op == OptOps::BLOCK;
  int n = static_cast<int>(k.dims_of(on_reduce ? AxisType::REDUCE : AxisType::GLOBAL).size());
  o.axis = std::uniform_int_distribution<int>(0, std::max(0, n - 1))(rng);
  if (o.op == OptOps::PADTO && o.amount < 2) o.amount = 4;
  if (o.op == OptOps::SWAP) o.amount = std::uniform_int_distribution<int>(0, std::max(0, n - 1))(rng);  // the other axis
  return o;
}

}  // namespace

// Each action alone, on every axis and amount it accepts, equals the unoptimized kernel.
TEST(KernelOpts, EachActionEqualsNoopt) {
  std::mt19937 rng(1);
  int checked = 0;
  std::map<OptOps, int> per_op;
  for (int kind = 0; kind < 7; kind++) {
    for (int rep = 0; rep < 3; rep++) {
      auto k = maybe_kernel_of(random_expr(rng, kind));
      if (!k) continue;
      ScheduleItem si = *k;
      std::vector<double> want = run(si, {});
      for (OptOps op : {OptOps::UPCAST, OptOps::UNROLL, OptOps::PADTO, OptOps::SWAP, OptOps::BLOCK})
        for (int axis = 0; axis < 3; axis++)
          for (int64_t amt : {0, 1, 2, 3, 4, 7, 16}) {
            Opt o{op, axis, amt};
            std::vector<double> got;
            try {
              got = run(si, {o});
            } catch (const Error&) {
              continue;  // not valid here (the invalid cases are checked below)
            }
            expect_close(got, want, "kind " + std::to_string(kind) + " " + o.str());
            checked++;
            per_op[o.op]++;
          }
    }
  }
  EXPECT_GE(checked, 100);
  for (OptOps op : {OptOps::UPCAST, OptOps::UNROLL, OptOps::PADTO, OptOps::SWAP, OptOps::BLOCK})
    EXPECT_GE(per_op[op], 3) << optops_name(op) << " was valid too rarely to be tested";
}

// A reduce dim padded under a source that does not map 0 to 0 (exp(0) = 1, 1/0 = inf, x - sum(x)): the
// sum adds only the real elements (the reduce guard), in a loop (the padding skipped), unrolled in part
// (the guard per step), unrolled whole (folded per lane), with a sum inside the summed expression, and
// beside another sum.
TEST(KernelOpts, PaddedReduceOfAnUnsafeSourceAddsOnlyTheRealElements) {
  std::mt19937 rng(12);
  Tensor a = rand_tensor(rng, {6, 20}, dtypes::float32), b = rand_tensor(rng, {6, 20}, dtypes::float32);
  Tensor pos = a.abs() + 0.5;
  pos.realize();
  std::vector<std::pair<std::string, Tensor>> cases{
      {"exp sum", a.exp().sum({1})},
      {"reciprocal sum", (b / pos).sum({1})},
      {"sum of (x - mean)^-1", (pos - pos.mean({1}, true) + 3).reciprocal().sum({1})},
      {"two sums", pos.reciprocal().sum({1}) + a.exp().sum({1})},
      {"sum of x - sum(x)", (a - a.sum({1}, true)).sum({1})},  // (no unsafe op, but sum(x) is not 0 in the padding)
  };
  const std::vector<std::vector<Opt>> plans{
      {{OptOps::PADTO, 1, 32}},
      {{OptOps::PADTO, 1, 32}, {OptOps::UNROLL, 0, 16}},
      {{OptOps::PADTO, 1, 32}, {OptOps::UNROLL, 0, 16}, {OptOps::UNROLL, 0, 0}},
      {{OptOps::PADTO, 1, 8}, {OptOps::UNROLL, 0, 8}, {OptOps::UPCAST, 0, 2}},
      {{OptOps::PADTO, 0, 8}, {OptOps::PADTO, 1, 32}, {OptOps::UPCAST, 0, 8}, {OptOps::UNROLL, 0, 32}},
  };
  for (auto& [what, t] : cases) {
    ScheduleItem si = kernel_of(t);
    std::vector<double> want = run(si, {});
    for (const auto& plan : plans) {
      std::string opts;
      for (const Opt& o : plan) opts += o.str() + " ";
      expect_close(run(si, plan), want, what + ": " + opts);
    }
  }
}

// Random ASTs x random action sequences: at least 500 optimized kernels, each equal to NOOPT (100
// under the sanitizers, which run the same code slower).
TEST(KernelOpts, RandomSequencesEqualNoopt) {
#ifdef TG_SANITIZED
  const int cases = 100;
#else
  const int cases = 500;
#endif
  std::mt19937 rng(2);
  int checked = 0, rejected = 0;
  for (int i = 0; checked < cases; i++) {
    auto k = maybe_kernel_of(random_expr(rng, i));
    if (!k) continue;
    ScheduleItem si = *k;
    std::vector<double> want = run(si, {});
    Kernel probe(si.ast, Device::get("CPU").renderer());
    std::vector<Opt> opts;
    int n = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int j = 0; j < n; j++) {
      Opt o = random_opt(rng, probe);
      try {
        probe.apply_opt(o);
        opts.push_back(o);
      } catch (const Error&) {
        rejected++;
      }
    }
    expect_close(run(si, opts), want, "expr " + std::to_string(i) + " opts " + opts_str(opts));
    checked++;
  }
  EXPECT_GT(rejected, 0);
}

// The default heuristics, on the same random kernels.
TEST(KernelOpts, HeuristicsEqualNoopt) {
  std::mt19937 rng(3);
  for (int i = 0; i < 60; i++) {
    auto item = maybe_kernel_of(random_expr(rng, i));
    if (!item) continue;
    ScheduleItem si = *item;
    Kernel k(si.ast, Device::get("CPU").renderer());
    k.hand_coded_optimizations();
    expect_close(run(si, k.applied_opts()), run(si, {}), "expr " + std::to_string(i) + " opts " + opts_str(k.applied_opts()));
  }
}

TEST(KernelOpts, InvalidActionsRaise) {
  std::mt19937 rng(4);
  Tensor a = rand_tensor(rng, {6, 10}, dtypes::float32);
  ScheduleItem si = kernel_of((a + 1).sum({1}));
  Kernel k(si.ast, Device::get("CPU").renderer());
  auto msg = [&](Opt o) {
    try {
      Kernel kk = k;
      kk.apply_opt(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(msg({OptOps::UPCAST, 0, 4}), HasSubstr("not divisible by 4"));
  EXPECT_THAT(msg({OptOps::UNROLL, 0, 3}), HasSubstr("not divisible by 3"));
  EXPECT_THAT(msg({OptOps::UPCAST, 5, 2}), HasSubstr("out of range"));
  EXPECT_THAT(msg({OptOps::UNROLL, 1, 2}), HasSubstr("out of range"));
  EXPECT_THAT(msg({OptOps::UPCAST, 0, -2}), HasSubstr("positive"));
  EXPECT_THAT(msg({OptOps::LOCAL, 0, 2}), HasSubstr("local dims"));
  EXPECT_THAT(msg({OptOps::GROUP, 0, 2}), HasSubstr("shared memory"));
  EXPECT_THAT(msg({OptOps::GROUPTOP, 0, 2}), HasSubstr("shared memory"));
  EXPECT_THAT(msg({OptOps::PADTO, 0, 3}), HasSubstr("already a multiple"));
  EXPECT_THAT(msg({OptOps::UPCAST, 0, 64}), HasSubstr("at most 32"));
  EXPECT_THAT(msg({OptOps::BLOCK, 0, 0}), HasSubstr("nothing to block"));
  EXPECT_THAT(msg({OptOps::BLOCK, 0, 3}), HasSubstr("not divisible by 3"));
  EXPECT_THAT(msg({OptOps::SWAP, 0, 0}), HasSubstr("must come after"));
  EXPECT_THAT(msg({OptOps::SWAP, 0, 1}), HasSubstr("must come after"));  // one global dim
  EXPECT_THAT(msg({OptOps::SWAP, 1, 0}), HasSubstr("out of range"));
  {
    Kernel kk = k;
    kk.apply_opt({OptOps::BLOCK, 0, 5});
    EXPECT_THAT([&] { try { kk.apply_opt({OptOps::BLOCK, 0, 1}); } catch (const Error& e) { return std::string(e.what()); } return std::string(); }(),
                HasSubstr("already blocked"));
  }
  // a block's partial sum goes through the output: only for a kernel that stores one sum directly
  for (const Tensor& t : {(a + 1).sum({1}) * 2, a.max({1})}) {
    Kernel kk(kernel_of(t).ast, Device::get("CPU").renderer());
    EXPECT_THAT([&] { try { kk.apply_opt({OptOps::BLOCK, 0, 2}); } catch (const Error& e) { return std::string(e.what()); } return std::string(); }(),
                HasSubstr("stores one sum directly"));
  }
  // a max's padding would be 0, which can be larger than every real element
  ScheduleItem sm = kernel_of(a.max({1}));
  Kernel km(sm.ast, Device::get("CPU").renderer());
  EXPECT_THROW(km.apply_opt({OptOps::PADTO, 1, 16}), Error);
  // too many values in registers
  Tensor big = rand_tensor(rng, {64, 64}, dtypes::float32);
  Kernel kb(kernel_of(big + 1).ast, Device::get("CPU").renderer());
  kb.apply_opt({OptOps::UPCAST, 0, 32});
  kb.apply_opt({OptOps::UPCAST, 0, 2});
  EXPECT_THROW(kb.apply_opt({OptOps::UPCAST, 0, 32}), Error);
  // an empty kernel takes no opts
  Kernel kz(kernel_of(Tensor::empty({2, 0}).sum({1}) + a.shrink({{0, 2}, {0, 1}}).reshape({2})).ast, Device::get("CPU").renderer());
  EXPECT_THROW(kz.apply_opt({OptOps::UPCAST, 0, 2}), Error);
}

// One element read past 2^31 (t[n-1]): the kernel's only index is a constant offset, and it is int64.
TEST(KernelOpts, ElementPast2e31IndexesInInt64) {
  const int64_t n = (int64_t{1} << 31) + 16;
  ScheduleItem si = kernel_of(Tensor::empty({n}, dtypes::uint8)[n - 1].contiguous());
  Kernel k(si.ast, Device::get("CPU").renderer());
  std::string src = k.renderer().render(k.name(), k.linearize()).src;
  EXPECT_THAT(src, HasSubstr(is_llvm_ir(src) ? "i64 2147483663" : "2147483663ll")) << src;
  EXPECT_THAT(src, Not(HasSubstr("-2147483633"))) << src;  // the offset wrapped to int32
}

// NOLOCALS is accepted on a device without locals, then LOCAL is refused either way.
TEST(KernelOpts, NoLocals) {
  Tensor a = Tensor::empty({4, 4});
  Kernel k(kernel_of(a + 1).ast, Device::get("CPU").renderer());
  k.apply_opt({OptOps::NOLOCALS, 0, 0});
  EXPECT_THROW(k.apply_opt({OptOps::LOCAL, 0, 2}), Error);
}

TEST(KernelOpts, ShiftToKeepsAxisTypes) {
  std::mt19937 rng(5);
  Tensor out = rand_tensor(rng, {8, 16}, dtypes::float32).matmul(rand_tensor(rng, {16, 32}, dtypes::float32));
  Kernel k(kernel_of(out).ast, Device::get("CPU").renderer());
  ASSERT_EQ(k.full_shape(), (Shape{8, 32, 16}));
  k.apply_opt({OptOps::UPCAST, 1, 16});
  k.apply_opt({OptOps::UPCAST, 0, 4});
  k.apply_opt({OptOps::UNROLL, 0, 4});
  EXPECT_EQ(k.full_shape(), (Shape{2, 2, 4, 16, 4, 4}));
  using A = AxisType;
  EXPECT_EQ(k.axis_types(), (std::vector<A>{A::GLOBAL, A::GLOBAL, A::REDUCE, A::UPCAST, A::UPCAST, A::UNROLL}));
  EXPECT_EQ(k.vector_dim(), 3);
  EXPECT_EQ(k.output_shape(), (Shape{2, 2, 1, 16, 4, 1}));
}

// A transpose gets a tile of whole vectors (loaded along the input's contiguous dim, shuffled into whole
// vectors stored along the output's) rather than gathering each vector from 16 rows; also for short
// output rows (a conv's layout change, (2, 32, 576) to (2, 576, 32)); not for elements under 4 bytes, nor
// with an input that is not strided along the output (an elementwise op, a broadcast). The tile is
// square on AVX2 (8 x 8) and on AVX-512 over 512 rows or more (16 x 16); over fewer rows AVX-512's takes
// rows / 32 elements of each, at least 4. Values equal NOOPT's exactly.
TEST(KernelOpts, SquareTileForTransposes) {
  std::mt19937 rng(14);
  for (auto [unit, lanes] : std::vector<std::pair<VectorUnit, int64_t>>{{kAVX512, 16}, {VectorUnit{32, 16}, 8}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    // the lanes of the second upcast on AVX-512 and on AVX2 (1: none); 36 columns make at most 4
    struct Case { Shape shape; std::vector<int> order; int64_t tile16, tile8; };
    for (const Case& c : {Case{{96, 128}, {1, 0}, 4, 8}, Case{{3, 64, 80}, {0, 2, 1}, 4, 8}, Case{{2, 32, 1024}, {0, 2, 1}, 4, 8},
                          Case{{2, 32, 576}, {0, 2, 1}, 4, 8}, Case{{64, 36}, {1, 0}, 4, 4}, Case{{256, 64}, {1, 0}, 8, 8},
                          Case{{1024, 64}, {1, 0}, 16, 8}}) {
      int64_t tile = lanes == 16 ? c.tile16 : c.tile8;
      Tensor x = rand_tensor(rng, c.shape, dtypes::float32);
      ScheduleItem si = kernel_of(x.permute(c.order).contiguous());
      Kernel k(si.ast, *ren);
      k.hand_coded_optimizations();
      std::string what = shape_str(c.shape) + " " + opts_str(k.applied_opts());
      std::vector<int> ups = k.dims_of(AxisType::UPCAST);
      ASSERT_EQ(ups.size(), tile > 1 ? 2u : 1u) << what;
      EXPECT_EQ(k.full_shape()[ups[0]], lanes) << what;
      if (tile > 1) { EXPECT_EQ(k.full_shape()[ups[1]], tile) << what; }
      std::vector<double> got = run(si, k.applied_opts()), want = run(si, {});
      EXPECT_EQ(got, want) << what;
    }
    // no input strided along the output's rows: one vector wide, as before
    Tensor a = rand_tensor(rng, {96, 128}, dtypes::float32), b = rand_tensor(rng, {128}, dtypes::float32);
    Kernel k(kernel_of(a + b).ast, *ren);
    k.hand_coded_optimizations();
    EXPECT_EQ(k.dims_of(AxisType::UPCAST).size(), 1u) << opts_str(k.applied_opts());
    // 2-byte elements: no square tile (32 x 32 lanes of float16 took LLVM 19 s to compile)
    Kernel kh(kernel_of(rand_tensor(rng, {96, 128}, dtypes::float16).transpose(0, 1).contiguous()).ast, *ren);
    kh.hand_coded_optimizations();
    EXPECT_LE(kh.dims_of(AxisType::UPCAST).size(), 1u) << opts_str(kh.applied_opts());
  }
}

// Gathered lanes at consecutive addresses are read as whole vectors (the vectorizer's group_loads): a
// square-tiled transpose reads each input row's 16 lanes as one vector and shuffles them into the output's
// vectors, where it gathered every vector from 16 rows; a stride-2 gather and its odd partner (a pool's
// window columns) are one vector load each, not 16 lanes each. Values equal NOOPT's.
TEST(KernelOpts, GatheredLanesAreVectorLoads) {
  std::mt19937 rng(15);
  auto ren = avx512_renderer();
  auto load_widths = [&](const ScheduleItem& si, const std::vector<Opt>& opts) {
    Kernel k(si.ast, *ren);
    for (const Opt& o : opts) k.apply_opt(o);
    std::map<int, int> widths;  // lanes -> LOADs of that many
    for (const UOpPtr& u : k.linearize())
      if (u->op == Ops::LOAD) widths[u->dtype.count]++;
    return widths;
  };
  ScheduleItem transpose = kernel_of(rand_tensor(rng, {1024, 64}, dtypes::float32).transpose(0, 1).contiguous());
  Kernel k(transpose.ast, *ren);
  k.hand_coded_optimizations();
  ASSERT_EQ(k.dims_of(AxisType::UPCAST).size(), 2u) << opts_str(k.applied_opts());
  EXPECT_EQ(load_widths(transpose, k.applied_opts()), (std::map<int, int>{{16, 16}})) << opts_str(k.applied_opts());
  EXPECT_EQ(run(transpose, k.applied_opts()), run(transpose, {}));

  ScheduleItem pool = kernel_of(rand_tensor(rng, {8, 64}, dtypes::float32).reshape({8, 32, 2}).max({2}));
  std::vector<Opt> opts = {{OptOps::UPCAST, 0, 16}, {OptOps::UNROLL, 0, 2}};  // (256, 2): its dims merged
  EXPECT_EQ(load_widths(pool, opts), (std::map<int, int>{{16, 2}}));
  EXPECT_EQ(run(pool, opts), run(pool, {}));
}

// A padded transpose: the pad rows' lanes are gated, each row's 4 lanes under one gate, so each row is one
// gated vector load too. In LLVM IR the output's vectors are shuffles of the loaded rows (no insertelement:
// one per lane kept the shuffle port busy, a transpose ran at a quarter of a copy's speed).
TEST(KernelOpts, GatedRowsAreVectorLoadsAndShuffle) {
  std::mt19937 rng(16);
  auto ren = avx512_renderer();
  ScheduleItem si = kernel_of(rand_tensor(rng, {94, 128}, dtypes::float32).pad({{1, 1}, {0, 0}}).transpose(0, 1).contiguous());
  Kernel k(si.ast, *ren);
  k.apply_opt({OptOps::UPCAST, 1, 16});  // (128, 96): 16 of the 96 (x's rows) as the vector
  k.apply_opt({OptOps::UPCAST, 0, 4});  // and 4 columns of x: 16 rows of 4 become 4 vectors of 16
  std::map<int, int> widths;
  for (const UOpPtr& u : k.linearize())
    if (u->op == Ops::LOAD) widths[u->dtype.count]++;
  EXPECT_EQ(widths, (std::map<int, int>{{4, 16}})) << opts_str(k.applied_opts());
  std::string src = compile_kernel(k, "CPU")->kernel.src;
  if (is_llvm_ir(src)) {
    EXPECT_EQ(count_substr(src, "insertelement"), 0u) << src;
    EXPECT_THAT(src, HasSubstr("shufflevector <64 x float>")) << src;
  }
  EXPECT_EQ(run(si, k.applied_opts()), run(si, {}));
}

// A comparison of loaded values, the select it feeds and the casts of masks to numbers are vector ops in
// LLVM IR (a relu's and a max pool's backward), not a compare, a select and a cast per lane.
TEST(KernelOpts, VectorCompareAndWhere) {
  std::mt19937 rng(17);
  for (DType dt : {dtypes::float32, dtypes::int32}) {
    Tensor x = rand_tensor(rng, {4, 64}, dt), g = rand_tensor(rng, {4, 64}, dt);
    ScheduleItem si = kernel_of((x > 0).where(g, x.ne(g).where(x, g)));
    Kernel k(si.ast, Device::get("CPU").renderer());
    k.apply_opt({OptOps::UPCAST, 0, 16});  // (4, 64): one dim of 256
    std::string src = compile_kernel(k, "CPU")->kernel.src;
    if (is_llvm_ir(src)) {
      EXPECT_THAT(src, HasSubstr((dt == dtypes::int32 ? "icmp slt <16 x i32>" : "fcmp olt <16 x float>"))) << src;
      EXPECT_THAT(src, HasSubstr((dt == dtypes::int32 ? "icmp ne <16 x i32>" : "fcmp une <16 x float>"))) << src;
      EXPECT_THAT(src, HasSubstr("select <16 x i1>")) << src;
      EXPECT_EQ(count_substr(src, "extractelement"), 0u) << src;
    }
    EXPECT_EQ(run(si, k.applied_opts()), run(si, {})) << dt.name();
  }
  // a mask made a number (a max pool's backward: (x == max).float() * g) and an integer made a float
  Tensor x = rand_tensor(rng, {4, 64}, dtypes::float32), g = rand_tensor(rng, {4, 64}, dtypes::float32);
  Tensor n = rand_tensor(rng, {4, 64}, dtypes::int32);
  ScheduleItem si = kernel_of((x == g.maximum(x)).cast(dtypes::float32) * g + n.cast(dtypes::float32) + (x < 0).cast(dtypes::int32).cast(dtypes::float32));
  Kernel k(si.ast, Device::get("CPU").renderer());
  k.apply_opt({OptOps::UPCAST, 0, 16});
  std::string src = compile_kernel(k, "CPU")->kernel.src;
  if (is_llvm_ir(src)) {
    EXPECT_THAT(src, HasSubstr("uitofp <16 x i1>")) << src;
    EXPECT_THAT(src, HasSubstr("sitofp <16 x i32>")) << src;
    EXPECT_EQ(count_substr(src, "extractelement"), 0u) << src;
  }
  EXPECT_EQ(run(si, k.applied_opts()), run(si, {}));
}

// Padding read as vectors: contiguous lanes whose validity differs are one read under a lane mask, or
// lane by lane where the vector would leave the readable part of the buffer (the first and last rows
// here: index -1, and one past the end).
TEST(KernelOpts, MaskedVectorLoads) {
  std::mt19937 rng(8);
  for (DType dt : {dtypes::float32, dtypes::int32}) {
    Tensor x = rand_tensor(rng, {4, 30}, dt);
    ScheduleItem si = kernel_of(x.pad({{0, 0}, {1, 1}}) + 1);
    Kernel k(si.ast, Device::get("CPU").renderer());
    k.apply_opt({OptOps::UPCAST, 1, 16});
    std::string src = compile_kernel(k, "CPU")->kernel.src;
    EXPECT_THAT(src, HasSubstr(is_llvm_ir(src) ? "@llvm.masked.load.v16" + std::string(dt == dtypes::int32 ? "i32" : "f32")
                                                : "tg_load_masked_" + dt.vec(16).name() + "(")) << src;
    expect_close(run(si, k.applied_opts()), run(si, {}), "masked vector load " + dt.name());
  }
}

// A short reduce over the pieces of a stack (the Winograd output transform of 8 points, read where
// the 8 products wrote them) runs unrolled whole: each piece's mask is then a constant per value, and
// each value loads one piece. Unrolled by 4 in a loop of 2, every value loaded all 8 under gates
// (beautiful_mnist's transform: 4.4 -> 17.6 ms).
TEST(KernelOpts, StackedPiecesAreUnrolledWhole) {
  std::mt19937 rng(5);
  std::vector<Tensor> pieces;
  for (int p = 0; p < 8; p++) pieces.push_back(rand_tensor(rng, {64, 24}, dtypes::float32).realize());
  Tensor m = rand_tensor(rng, {8, 4}, dtypes::float32).realize();
  Tensor z = (Tensor::stack(pieces).reshape({8, 64 * 24, 1}) * m.reshape({8, 1, 4})).sum({0});
  ScheduleItem si = kernel_of(z);  // one kernel: the stack is not copied first
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string what = std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
    for (int d : k.dims_of(AxisType::REDUCE)) EXPECT_EQ(k.full_shape()[static_cast<size_t>(d)], 1) << what;
    expect_close(run(si, k.applied_opts()), run(si, {}), what);
  }
}

// The input gradient of the same transform: blocks of 4 columns, each the sum over the 8 pieces of two
// views padded by a block each side (tile T's own coefficients and tile T - 1's next ones). The short
// block dim, along which the padding masks vary, is unrolled whole: the masks are constants, no load is
// gated, and the rows stay the threaded loop. As a loop, the blocks went outermost (the register tile's
// rows innermost) and every load was gated (beautiful_mnist's input gradient: 17.8 ms, 4.2 so).
TEST(KernelOpts, ShortMaskedDimsAreUnrolledWhole) {
  std::mt19937 rng(6);
  std::vector<Tensor> pieces;
  for (int p = 0; p < 8; p++) pieces.push_back(rand_tensor(rng, {96, 5}, dtypes::float32).realize());
  Tensor m = rand_tensor(rng, {8, 8}, dtypes::float32).realize();
  Tensor dv = Tensor::stack(pieces).pad({{0, 0}, {0, 0}, {1, 1}}).reshape({8, 96, 7, 1});
  auto view = [&](int64_t from, int64_t col) {
    return dv.shrink({{0, 8}, {0, 96}, {from, from + 6}, {0, 1}}) * m.shrink({{0, 8}, {col, col + 4}}).reshape({8, 1, 1, 4});
  };
  Tensor z = (view(1, 0) + view(0, 4)).sum({0});  // (96, 6, 4)
  ScheduleItem si = kernel_of(z);
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k(si.ast, *ren);
    k.hand_coded_optimizations();
    std::string what = std::to_string(unit.bytes) + "-byte vectors: " + opts_str(k.applied_opts());
    int gated = 0;
    for (const UOpPtr& u : k.linearize()) gated += u->op == Ops::LOAD && u->src.size() == 2;
    EXPECT_EQ(gated, 0) << what;
    int64_t first = k.full_shape()[static_cast<size_t>(k.dims_of(AxisType::GLOBAL).front())];
    EXPECT_EQ(first, 96) << "the threads split the rows: " << what;
    expect_close(run(si, k.applied_opts()), run(si, {}), what);
  }
}

// A large output written once is stored around the caches (non-temporal vector stores, then a fence),
// by plain stores where the address is not aligned to the vector; smaller outputs are plain.
TEST(KernelOpts, StreamingStores) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  auto source = [&](const Tensor& out) {
    Kernel k(kernel_of(out).ast, *ren);
    k.hand_coded_optimizations();
    return compile_kernel(k, "CPU");
  };
  const int64_t n = int64_t{8} << 20;  // 32 MiB of float32: the smallest streaming output
  std::vector<float> ha(static_cast<size_t>(n) + 16), hb(ha.size());
  for (size_t i = 0; i < ha.size(); i++) ha[i] = static_cast<float>(i % 1000) * 0.5f, hb[i] = static_cast<float>(i % 7);
  Tensor a(std::vector<float>(ha.begin(), ha.begin() + n), {n}), b(std::vector<float>(hb.begin(), hb.begin() + n), {n});
  a.realize(), b.realize();
  auto runner = source(a + b);
  const std::string& src = runner->kernel.src;
  bool ir = is_llvm_ir(src);
  if (ir) {
    EXPECT_TRUE(std::regex_search(src, std::regex(R"(store <16 x float> %v[0-9]+, ptr %v[0-9]+, align 64, !nontemporal !0)"))) << src;
    EXPECT_THAT(src, HasSubstr("call void @llvm.x86.sse.sfence()\n  ret void\n}"));
  } else {
    EXPECT_THAT(src, HasSubstr("tg_stream_float32x16((data0+")) << src;
    EXPECT_THAT(src, HasSubstr("tg_stream_fence();\n}"));
  }
  EXPECT_THAT(source(a.shrink({{0, n - 16}}) + 1)->kernel.src, testing::Not(HasSubstr(ir ? "nontemporal" : "tg_stream_")));  // just under 32 MiB
  // both paths of the store: 64-byte aligned (non-temporal) and off by one float (plain)
  for (size_t off : {size_t{0}, size_t{1}}) {
    std::vector<float> out(static_cast<size_t>(n) + 16, -1.f);
    float* o = out.data() + off;
    while (off == 0 && reinterpret_cast<uintptr_t>(o) % 64 != 0) o++;
    if (off == 1 && reinterpret_cast<uintptr_t>(o) % 64 == 0) o++;
    std::vector<void*> bufs{o, ha.data(), hb.data()};
    (*runner->program)(bufs, {}, runner->kernel.global_size, runner->kernel.local_size, true);
    for (int64_t i = 0; i < n; i++)
      ASSERT_EQ(o[i], ha[i] + hb[i]) << "element " << i << (off ? ", unaligned output" : ", aligned output");
  }
  Tensor c = (a + b).contiguous();
  EXPECT_EQ(c.tolist<float>()[12345], ha[12345] + hb[12345]);  // realized through the engine, thread pool and all
}

// The vector code really is vector code: one 16-wide load, fma accumulation, one vector store.
TEST(KernelOpts, RendersVectors) {
  std::mt19937 rng(6);
  Tensor out = rand_tensor(rng, {8, 16}, dtypes::float32).matmul(rand_tensor(rng, {16, 32}, dtypes::float32));
  ScheduleItem si = kernel_of(out);
  Kernel k(si.ast, Device::get("CPU").renderer());
  k.apply_opt({OptOps::UPCAST, 1, 16});
  k.apply_opt({OptOps::UNROLL, 0, 2});
  auto runner = compile_kernel(k, "CPU");
  const std::string& src = runner->kernel.src;
  if (is_llvm_ir(src)) {
    EXPECT_THAT(src, HasSubstr("load <16 x float>, ptr"));
    EXPECT_THAT(src, HasSubstr("store <16 x float>"));
    // fused where the target has fma (as the C's tg_fma_float32x16), else a vector multiply and add
    EXPECT_THAT(src, testing::AnyOf(HasSubstr("call <16 x float> @llvm.fma.v16f32("), HasSubstr("fmul <16 x float>")));
  } else {
    EXPECT_THAT(src, HasSubstr("float32x16 val"));
    EXPECT_THAT(src, HasSubstr("*(const float32x16*)"));
    EXPECT_THAT(src, HasSubstr("*(float32x16*)"));
    EXPECT_THAT(src, HasSubstr("tg_fma_float32x16("));
  }
  expect_close(run(si, k.applied_opts()), run(si, {}), "vector matmul");
}

// A reduce whose output is contiguous along a dim where only a per-channel value broadcasts (a split
// batchnorm-backward sum: out[c, p] = sum_r x[p, c, r] * s[c]) gets no register tile there: x jumps
// from lane to lane, and s is read once per output anyway. Its reduce is read as vectors instead.
TEST(KernelOpts, NoRegisterTileWithoutAReusedLoad) {
  auto ren = avx512_renderer();  // the choices for AVX-512's registers, on any machine
  constexpr int64_t C = 4, P = 32, R = 64;
  std::vector<float> x(static_cast<size_t>(P * C * R)), sc(C);
  std::mt19937 rng(21);
  for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (auto& v : sc) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  Shape full{C, P, R}, out{C, P, 1};
  UOpPtr lx = UOp::make(Ops::LOAD, dtypes::float32, {glob(1), view(full, Shape{R, C * R, 1})});
  UOpPtr ls = UOp::make(Ops::LOAD, dtypes::float32, {glob(2), view(full, Shape{1, 0, 0})});
  UOpPtr red = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {lx->mul(ls)}, ReduceArg{Ops::ADD, {2}});
  UOpPtr ast = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {glob(0), view(out), red})});
  Kernel k(ast, *ren);
  k.hand_coded_optimizations();
  std::string opts = opts_str(k.applied_opts());
  EXPECT_THAT(opts, Not(HasSubstr("UPCAST("))) << opts;
  EXPECT_THAT(opts, HasSubstr("UNROLL(0, 16)")) << opts;
  auto runner = compile_kernel(k, "CPU");
  Buffer bo("CPU", C * P, dtypes::float32), bx("CPU", x.size(), dtypes::float32), bs("CPU", C, dtypes::float32);
  for (Buffer* b : {&bo, &bx, &bs}) b->allocate();
  bx.copyin(x.data());
  bs.copyin(sc.data());
  runner->exec({&bo, &bx, &bs}, {}, true);
  std::vector<float> got(static_cast<size_t>(C * P));
  bo.copyout(got.data());
  for (int64_t c = 0; c < C; c++)
    for (int64_t p = 0; p < P; p++) {
      double want = 0;
      for (int64_t r = 0; r < R; r++) want += static_cast<double>(x[static_cast<size_t>((p * C + c) * R + r)]) * sc[static_cast<size_t>(c)];
      EXPECT_NEAR(got[static_cast<size_t>(c * P + p)], want, 1e-4) << "c=" << c << " p=" << p;
    }
}

// exp2 on float32 vectors is our own branch-free code (libm's is a call per lane): within 2 ulp of
// the host's exp2 everywhere, exact where the result is a power of two, right at the edges (overflow
// to inf, the subnormals, underflow to 0 with ties to even) and for inf/NaN.
TEST(KernelOpts, VectorExp2) {
  std::vector<float> x;
  for (int i = -2000; i < 2000; i++) x.push_back(static_cast<float>(i) * 0.0731f);   // the usual range
  for (int i = -160; i <= 130; i++) x.push_back(static_cast<float>(i));            // exact powers of two
  for (float v : {-149.5f, -149.25f, -126.5f, 127.99f, 128.f, 128.5f, -150.f, -151.f, -1e30f, 1e30f, 1e-30f, -0.f,
                  INFINITY, -INFINITY, NAN, 0.5f, -0.5f, 1e-8f, 2.5f, -2.5f, -150.5f, 129.5f, 4194305.5f, -4194305.5f,
                  -8388609.f, 3e9f, -3e9f, 1e-45f, -1e-45f})
    x.push_back(v);
  while (x.size() % 16) x.push_back(0.25f);
  // EXP2 itself (Tensor::exp2 is exp(x*ln2), whose argument rounding is not the op's error)
  Shape s{static_cast<int64_t>(x.size())};
  UOpPtr ast = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {glob(0), view(s),
      UOp::make(Ops::LOAD, dtypes::float32, {glob(1), view(s)})->unary(Ops::EXP2)})});
  Kernel k(ast, Device::get("CPU").renderer());
  k.apply_opt({OptOps::UPCAST, 0, 16});
  std::string src = compile_kernel(k, "CPU")->kernel.src;
  ASSERT_THAT(src, HasSubstr(is_llvm_ir(src) ? "call <16 x float> @tg_exp2_v16f32(" : "tg_exp2_float32x16("));
  // LLVM for an AVX-512 target scales by 2^n with vscalefps, and with AVX-512DQ splits x = n + f by
  // vreduceps, unclamped (the scalar code below does neither): same bits (on the host's CPU; a named
  // CPU_TARGET's features are LLVM's to say)
  if (const char* target = std::getenv("CPU_TARGET"); !target || !*target || std::string(target) == "native") {
    EXPECT_EQ(src.find("scalef") != std::string::npos, is_llvm_ir(src) && __builtin_cpu_supports("avx512f"));
    EXPECT_EQ(src.find("reduce.ps") != std::string::npos, is_llvm_ir(src) && __builtin_cpu_supports("avx512dq"));
  }
  std::vector<float> got = run_ast(ast, x, x.size(), k.applied_opts());
  // scalar code computes the same bits (one lane of the same function), on both compilers: a value
  // computed in vector code in one kernel and scalar code in another is one value
  Kernel scalar(ast, Device::get("CPU").renderer());
  std::string ssrc = compile_kernel(scalar, "CPU")->kernel.src;
  EXPECT_THAT(ssrc, HasSubstr(is_llvm_ir(ssrc) ? "call float @tg_exp2_f32(" : "tg_exp2_float32("));
  std::vector<float> lanes = run_ast(ast, x, x.size(), {});
  EXPECT_EQ(std::memcmp(lanes.data(), got.data(), x.size() * sizeof(float)), 0) << "scalar and vector exp2 differ";
  for (size_t i = 0; i < x.size(); i++) {
    float want = std::exp2(x[i]), g = static_cast<float>(got[i]);
    if (std::isnan(want)) { EXPECT_TRUE(std::isnan(g)) << x[i]; continue; }
    if (std::isinf(want) || want == 0 || x[i] == std::floor(x[i])) { EXPECT_EQ(g, want) << "exp2(" << x[i] << ")"; continue; }
    EXPECT_LE(std::fabs(g - want), 2 * (std::nextafter(want, INFINITY) - want)) << "exp2(" << x[i] << ") = " << g << ", want " << want;
  }
}

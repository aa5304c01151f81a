// The codegen middle as rewrite passes: graph_rewrite's context, orders and combined matchers, the
// tracer that sees each named pass, the spec check between passes (a malformed graph is caught and the
// pass that made it is named), the typed UOp args, and KernelOptError (distinct from other errors).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codegen/kernel.h"
#include "codegen/passes.h"
#include "codegen/spec.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "engine/search.h"
#include "lazy/lazybuffer.h"
#include "tg/tg.h"
#include "kernel_ast.h"
#include "test_util.h"

using namespace tg;
using testing::HasSubstr;

namespace {

// A pass whose rules count what they see through their context.
struct Counter : RewriteContext {
  int adds = 0;
};

Kernel kernel_of(const Tensor& out) {
  for (auto& si : create_schedule({out.lazydata()}))
    if (si.is_kernel()) return Kernel(si.ast, Device::get(si.outputs[0]->device).renderer());
  throw std::runtime_error("no kernel");
}

// Records the name of each named graph_rewrite on this thread.
struct PassNames : RewriteTracer {
  std::vector<std::string> passes;
  std::set<std::string> rules;
  void on_rewrite(const std::string& pass, const UOpPtr&, const UOpPtr&, const std::vector<RewriteStep>& steps) override {
    passes.push_back(pass);
    for (auto& s : steps) rules.insert(s.rule);
  }
};

}  // namespace

TEST(GraphRewrite, RulesReachThePassContext) {
  PatternMatcher count({{UPat(Ops::ADD, {UPat::var("a"), UPat::var("b")}), [](const Bindings& b) -> UOpPtr {
    b.ctx<Counter>().adds++;
    return nullptr;  // declines: only counts
  }}});
  Counter c;
  auto e = loop_range(0, 4)->add(loop_range(1, 4))->add(3);
  graph_rewrite(e, count, &c);
  EXPECT_EQ(c.adds, 2);
  // a rule asking for a context its pass lacks is a bug in the pass, reported as such
  EXPECT_THROW(graph_rewrite(e, count), InternalError);
}

TEST(GraphRewrite, TopDownSeesTheOriginalSourcesBottomUpTheRewritten) {
  // x*0 -> 0 and (anything)*0 is what a top-down rule sees first; bottom-up, the inner rewrite happens first
  auto x = loop_range(0, 8);
  auto inner = x->add(1);
  auto outer = inner->mul(2);
  std::vector<std::string> order;
  PatternMatcher log({{UPat::ops_of({Ops::ADD, Ops::MUL}), [&order](const Bindings& b) -> UOpPtr {
    order.push_back(b["root"]->op == Ops::ADD ? "add" : "mul");
    return nullptr;
  }}});
  graph_rewrite(outer, log);
  EXPECT_EQ(order, (std::vector<std::string>{"add", "mul"}));
  order.clear();
  graph_rewrite(outer, log, nullptr, {.name = nullptr, .top_down = true});
  EXPECT_EQ(order, (std::vector<std::string>{"mul", "add"}));
  // top-down, a rule replaces a whole subtree before its sources are visited
  int visited_add = 0;
  PatternMatcher cut({{UPat(Ops::MUL, {UPat::var("a"), UPat::cvar("c")}), [](const Bindings& b) -> UOpPtr { return b["c"]; }},
                      {UPat::op(Ops::ADD), [&visited_add](const Bindings&) -> UOpPtr { visited_add++; return nullptr; }}});
  EXPECT_EQ(graph_rewrite(outer, cut, nullptr, {.name = nullptr, .top_down = true})->const_int(), 2);
  EXPECT_EQ(visited_add, 0);
}

TEST(GraphRewrite, CombinedMatchersTryTheLeftRulesFirst) {
  PatternMatcher to_one({{UPat::op(Ops::ADD), [](const Bindings& b) { return UOp::cnst(b["root"]->dtype, 1); }}});
  PatternMatcher to_two({{UPat::op(Ops::ADD), [](const Bindings& b) { return UOp::cnst(b["root"]->dtype, 2); }}});
  auto e = loop_range(0, 4)->add(5);
  EXPECT_EQ(graph_rewrite(e, to_one + to_two)->const_int(), 1);
  EXPECT_EQ(graph_rewrite(e, to_two + to_one)->const_int(), 2);
}

TEST(GraphRewrite, ReplaceRebuildsOnlyWhenSourcesChanged) {
  auto x = loop_range(0, 4), y = loop_range(1, 4);
  auto e = x->add(y);
  EXPECT_EQ(e->replace(e->src), e);  // same sources: the same (hash-consed) node
  auto f = e->replace({y, y});
  EXPECT_EQ(f->op, Ops::ADD);
  EXPECT_EQ(f->src[0], y);
  EXPECT_EQ(substitute(e, {{x.get(), y}}), f);
}

TEST(Passes, EveryPassIsNamedAndSeenByTheTracer) {
  Tensor a = Tensor::arange(64).reshape({8, 8}).cast(dtypes::float32);
  a.realize();
  Kernel k = kernel_of((a * 2).sum({1}));
  k.apply_opt({OptOps::UPCAST, 0, 4});
  PassNames names;
  {
    TracerScope scope(&names);
    k.linearize();
  }
  for (const Pass& p : codegen_passes())
    EXPECT_NE(std::find(names.passes.begin(), names.passes.end(), p.name), names.passes.end()) << p.name << " was not traced";
  // the rules are named, so a trace says which rule changed a node
  EXPECT_FALSE(names.rules.empty());
}

namespace {
// For each accumulator update of the linearized kernel: how many ops lie between the accumulator and its
// new value (1: acc + (everything else); n: a chain of n fmas through it).
std::vector<int> accumulator_chain_lengths(const Kernel& k) {
  std::vector<int> lengths;
  for (const UOpPtr& u : k.linearize()) {
    if (u->op != Ops::ASSIGN || u->src[0]->op != Ops::DEFINE_ACC) continue;
    std::set<const UOp*> on_chain{u->src[0].get()};
    int n = 0;
    for (const UOpPtr& x : u->src[1]->toposort())
      if (std::any_of(x->src.begin(), x->src.end(), [&](const UOpPtr& s) { return on_chain.count(s.get()); })) {
        on_chain.insert(x.get());
        n++;
      }
    lengths.push_back(n);
  }
  return lengths;
}
}  // namespace

// fold_pairwise adds n values in the order of a vector padded to a power of two with the identity and
// halved (value i takes value i + 4 of 5, then i + 2, then i + 1), so a sum gives the same bits unrolled
// as scalars in one kernel and as a padded vector's lanes in another. Fuzz seed 222912: x - x.min(), x
// holding a sum of 5 recomputed in both kernels, gave 4.8e-7 where NumPy gives 0 (the min's kernel
// unrolled the 5 values as ((v0 + v3) + v2) + (v1 + v4); the other padded them to 8 lanes).
TEST(ReduceToAcc, UnrolledValuesAddInThePaddedVectorsOrder) {
  std::vector<UOpPtr> v;
  for (int i = 0; i < 6; i++) v.push_back(UOp::make(Ops::DEFINE_VAR, dtypes::int32, {}, VarArg{"v" + std::to_string(i), 0, 9}));
  EXPECT_EQ(fold_pairwise(Ops::ADD, {v[0], v[1], v[2], v[3], v[4]}), v[0]->add(v[4])->add(v[2])->add(v[1]->add(v[3])));
  EXPECT_EQ(fold_pairwise(Ops::ADD, v), v[0]->add(v[4])->add(v[2])->add(v[1]->add(v[5])->add(v[3])));
  EXPECT_EQ(fold_pairwise(Ops::ADD, {v[0], v[1], v[2], v[3]}), v[0]->add(v[2])->add(v[1]->add(v[3])));
  // the seed's program: v6 - min(v6) is 0 at the minimum
  Tensor x = Tensor(std::vector<int8_t>{-4, 4, -2, 2, 1}, Shape{1, 5});
  Tensor s = (x * x.sigmoid()).sum({0});
  Tensor d = s - s.sum({-1}, false).unsqueeze(-1);
  Tensor m = d.min({-1}, false).unsqueeze(0);
  m.realize();
  std::vector<float> got = (d - m).tolist<float>();
  EXPECT_EQ(got[2], 0.0f) << "the minimum of d, less the minimum";
}

TEST(ReduceToAcc, FewAccumulatorsFoldTheirProductsBeforeTheLoopCarriedAdd) {
  // a sum of squares along rows (a layernorm's variance): one vector accumulator, 4 vectors a step. A
  // chain of 4 fmas through it waits 4 fma latencies a step; the update must be one add.
  Tensor x = Tensor::arange(64 * 512).reshape({64, 512}).cast(dtypes::float32);
  x.realize();
  for (VectorUnit unit : {kAVX512, VectorUnit{32, 16}, VectorUnit{}}) {
    auto ren = with_vector_unit(Device::get("CPU").renderer(), unit);
    Kernel k = kernel_of((x * x).sum({1}));
    k = Kernel(k.ast(), *ren);
    if (unit.bytes > 0) k.hand_coded_optimizations();
    else k.apply_opt({OptOps::UNROLL, 0, 4});  // (no vector registers: the heuristics leave it alone)
    ASSERT_THAT(k.applied_opts(), testing::Contains(testing::Field(&Opt::op, OptOps::UNROLL))) << opts_str(k.applied_opts());
    EXPECT_THAT(accumulator_chain_lengths(k), testing::Each(1)) << opts_str(k.applied_opts()) << " on " << unit.bytes << "-byte registers";
  }
  // a matmul's register tile has accumulators enough to hide the latency: its products chain as fmas,
  // one op each
  Tensor a = Tensor::arange(128 * 128).reshape({128, 128}).cast(dtypes::float32) * 0.001;
  a.realize();
  auto ren = avx512_renderer();
  Kernel k = kernel_of(a.matmul(a));
  k = Kernel(k.ast(), *ren);
  k.hand_coded_optimizations();
  std::vector<int> lengths = accumulator_chain_lengths(k);
  ASSERT_GE(lengths.size(), 4u) << opts_str(k.applied_opts());
  EXPECT_THAT(lengths, testing::Each(testing::Gt(1))) << opts_str(k.applied_opts());
  // and the values are right either way
  Tensor s = (x * x).sum({1});
  std::vector<float> got = s.tolist<float>();
  for (int r : {0, 31, 63}) {
    double want = 0;
    for (int c = 0; c < 512; c++) want += static_cast<double>(r * 512 + c) * (r * 512 + c);
    EXPECT_NEAR(got[r], want, want * 1e-6) << "row " << r;
  }
}

TEST(Spec, TheListedPassesKeepTheGraphValid) {
  Context spec_on{{"SPEC", 1}};
  Tensor a = Tensor::arange(256).reshape({16, 16}).cast(dtypes::float32);
  a.realize();
  for (auto opts : std::vector<std::vector<Opt>>{{}, {{OptOps::UPCAST, 0, 4}}, {{OptOps::UNROLL, 0, 4}}, {{OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}}}) {
    Kernel k = kernel_of((a * a).sum({1}));
    for (auto& o : opts) k.apply_opt(o);
    EXPECT_NO_THROW(run_passes(k, codegen_passes()));
  }
}

TEST(Spec, AMalformedGraphIsCaughtAndThePassNamed) {
  Tensor a = Tensor::arange(16).cast(dtypes::float32);
  a.realize();
  Kernel k = kernel_of(a + 1);
  // a pass that breaks the graph: every float ADD gets an int32 source
  Pass broken{"broken_pass", Stage::Lowered, [](const UOpPtr&, const Kernel& k) {
    PatternMatcher pm({{UPat(Ops::ADD, {UPat::var("a", {Scalar::Float32}), UPat::var("b")}), [](const Bindings& b) -> UOpPtr {
      if (b["b"]->dtype == dtypes::int32) return nullptr;
      return UOp::make(Ops::ADD, b["root"]->dtype, {b["a"], UOp::cnst(dtypes::int32, 1)});
    }}});
    return graph_rewrite(k.lower(), pm);
  }};
  Context spec_on{{"SPEC", 1}};
  try {
    run_passes(k, {broken});
    FAIL() << "the malformed graph was not caught";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken_pass"));
    EXPECT_THAT(e.what(), HasSubstr("ADD"));
  }
  // with SPEC off the check does not run (the renderer would then get the bad graph)
  Context spec_off{{"SPEC", 0}};
  EXPECT_NO_THROW(run_passes(k, {broken}));
}

TEST(Spec, EachStageRejectsWhatBelongsToAnother) {
  Tensor a = Tensor::arange(64).reshape({8, 8}).cast(dtypes::float32);
  a.realize();
  Kernel k = kernel_of(a.sum({1}));
  k.apply_opt({OptOps::UNROLL, 0, 4});
  UOpPtr lowered = k.lower();
  EXPECT_NO_THROW(verify(lowered, Stage::Lowered, "lowerer"));
  // the AST has no loops yet; an accumulated graph has no REDUCE and no UNROLL left
  EXPECT_THROW(verify(lowered, Stage::Ast, "x"), InternalError);
  EXPECT_THROW(verify(lowered, Stage::Accumulated, "x"), InternalError);
  // a bad STORE: a value of the wrong dtype
  auto bad = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {UOp::cnst(dtypes::int32, 0), UOp::cnst(dtypes::float32, 1)}, StoreArg{false})});
  try {
    verify(bad, Stage::Lowered, "hand_made");
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("hand_made"));
    EXPECT_THAT(e.what(), HasSubstr("STORE"));
  }
}

TEST(TypedArgs, SayWhatTheyMean) {
  RangeArg loop{RangeKind::Loop, 2, 5, {}}, red{RangeKind::Reduce, 3, 7, 1};
  EXPECT_EQ(loop.name(), "ridx2");
  EXPECT_EQ(red.name(), "ridx3_1");
  EXPECT_NE(loop, red);
  EXPECT_EQ((SpecialArg{SpecialKind::GlobalIdx, 1, 32}.name()), "gidx1");
  EXPECT_EQ((SpecialArg{SpecialKind::LocalIdx, 0, 8}.name()), "lidx0");
  // args are part of a node's identity: the same op and sources with different args are different nodes
  auto r1 = UOp::make(Ops::RANGE, dtypes::int32, {UOp::index_const(0), UOp::index_const(4)}, loop);
  auto r2 = UOp::make(Ops::RANGE, dtypes::int32, {UOp::index_const(0), UOp::index_const(4)}, red);
  EXPECT_NE(r1, r2);
  EXPECT_EQ(r1, UOp::make(Ops::RANGE, dtypes::int32, {UOp::index_const(0), UOp::index_const(4)}, RangeArg{RangeKind::Loop, 2, 5, {}}));
}

TEST(KernelOptError, InvalidOptsAreDistinctFromOtherErrors) {
  Tensor a = Tensor::arange(12).reshape({3, 4}).cast(dtypes::float32);
  a.realize();
  Kernel k = kernel_of(a.sum({1}));
  try {
    k.apply_opt({OptOps::UPCAST, 0, 5});  // 5 does not divide 3
    FAIL();
  } catch (const KernelOptError& e) {
    EXPECT_THAT(e.what(), HasSubstr("UPCAST"));
  }
  // still a tg::Error for callers that catch every error of the library
  EXPECT_THROW(k.apply_opt({OptOps::UNROLL, 7, 2}), Error);
  static_assert(std::is_base_of_v<Error, KernelOptError>);
  static_assert(!std::is_base_of_v<KernelOptError, InternalError>);
}

// BEAM applies any two of its actions in a row: every valid pair must give a graph that passes the spec
// after each pass and renders (an invalid pair is a KernelOptError, never a broken kernel). This found
// PADTO of a size-1 reduce dim (left by a full UNROLL), which padded the output along the reduce.
TEST(Spec, EveryPairOfBeamActionsKeepsTheGraphValid) {
  Context spec_on{{"SPEC", 1}};
  Tensor a = Tensor::arange(8 * 12).reshape({8, 12}).cast(dtypes::float32), b = Tensor::arange(12 * 6).reshape({12, 6}).cast(dtypes::float32);
  a.realize();
  b.realize();
  std::vector<Tensor> outs{(a * 3.0f).sum({1}), a.exp() + 1, a.matmul(b), a.max({0})};
  int valid = 0;
  for (auto& out : outs) {
    Kernel k0 = kernel_of(out);
    for (const Opt& x : beam_actions()) {
      Kernel k1 = k0;
      try { k1.apply_opt(x); } catch (const KernelOptError&) { continue; }
      for (const Opt& y : beam_actions()) {
        Kernel k2 = k1;
        try { k2.apply_opt(y); } catch (const KernelOptError&) { continue; }
        valid++;
        std::vector<UOpPtr> uops;
        ASSERT_NO_THROW(uops = k2.linearize()) << k2.name() << " with " << opts_to_string(k2.applied_opts());
        ASSERT_NO_THROW(k2.renderer().render(k2.name(), uops)) << k2.name() << " with " << opts_to_string(k2.applied_opts());
      }
    }
  }
  EXPECT_GT(valid, 100);
}

TEST(KernelOptError, PaddingASizeOneDimIsRejected) {
  Tensor a = Tensor::arange(64).reshape({8, 8}).cast(dtypes::float32);
  a.realize();
  Kernel k = kernel_of((a * 3.0f).sum({1}));
  k.apply_opt({OptOps::UNROLL, 0, 0});  // the whole reduce dim unrolled: a reduce dim of size 1 is left
  EXPECT_THROW(k.apply_opt({OptOps::PADTO, 1, 16}), KernelOptError);
}

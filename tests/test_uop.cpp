// The UOp IR: hash-consing, the rewrite engine, and the symbolic rules (checked against brute force).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <regex>

#include "tg/error.h"
#include "tg/tensor.h"
#include "uop/exec_alu.h"
#include "uop/rewrite.h"
#include "test_util.h"

using namespace tg;

namespace {
// Evaluates an integer expression with RANGE nodes bound to values.
int64_t eval(const UOpPtr& u, const std::map<const UOp*, int64_t>& env) {
  if (u->op == Ops::RANGE) return env.at(u.get());
  if (u->op == Ops::CONST) return u->const_int();
  std::vector<Value> vals;
  for (auto& s : u->src) vals.push_back(Value{eval(s, env), 0});
  DType sdt = u->op == Ops::WHERE ? u->src[1]->dtype : u->src[0]->dtype;
  return exec_alu(u->op, u->dtype, vals, sdt).i;
}
}  // namespace

TEST(UOp, HashConsingGivesPointerEquality) {
  auto a = loop_range(0, 4)->add(3), b = loop_range(0, 4)->add(3);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(loop_range(0, 4)->add(3).get(), loop_range(0, 4)->add(4).get());
  EXPECT_NE(UOp::cnst(dtypes::float32, 1).get(), UOp::cnst(dtypes::int32, 1).get());
}

TEST(UOp, BoundsOfIndexMath) {
  auto i = loop_range(0, 10);
  EXPECT_EQ(i->vmin, 0);
  EXPECT_EQ(i->vmax, 9);
  auto e = i->mul(4)->add(3);
  EXPECT_EQ(e->vmin, 3);
  EXPECT_EQ(e->vmax, 39);
  EXPECT_EQ(i->mod(4)->vmax, 3);
  EXPECT_EQ(i->idiv(4)->vmax, 2);
}

// A result that can leave its dtype's range wraps (C semantics), so its bounds are the whole dtype:
// -x of a uint32 in [0, 5] is 0 or wraps near 2^32, never "[0, 0]" (that folded a - b to a).
TEST(UOp, BoundsOfResultsThatWrap) {
  auto x = UOp::make(Ops::CAST, dtypes::uint32, {loop_range(0, 6)});
  auto neg = UOp::make(Ops::NEG, dtypes::uint32, {x});
  EXPECT_EQ(neg->vmin, 0);
  EXPECT_EQ(neg->vmax, 4294967295);
  auto big = UOp::make(Ops::MUL, dtypes::int32, {loop_range(0, 1 << 20), UOp::cnst(dtypes::int32, 1 << 20)});
  EXPECT_EQ(big->vmin, -2147483648);  // can overflow int32: anything
  EXPECT_EQ(big->vmax, 2147483647);
  EXPECT_EQ(loop_range(0, 6)->mul(3)->vmax, 15);  // stays in range: exact
  Tensor a(std::vector<uint32_t>{5, 6, 4000000000u}, {3}), b(std::vector<uint32_t>{1, 2, 500000000u}, {3});
  EXPECT_EQ((a - b).tolist<uint32_t>(), (std::vector<uint32_t>{4, 4, 3500000000u}));
  EXPECT_EQ((a - 1u).tolist<uint32_t>(), (std::vector<uint32_t>{4, 5, 3999999999u}));
}

TEST(UOp, ToposortPutsSourcesFirst) {
  auto i = loop_range(0, 4);
  auto e = i->add(1)->mul(2);
  auto topo = e->toposort();
  ASSERT_EQ(topo.back(), e);
  for (size_t k = 0; k < topo.size(); k++)
    for (auto& s : topo[k]->src) EXPECT_LT(std::find(topo.begin(), topo.end(), s) - topo.begin(), static_cast<long>(k));
}

// str() prints a shared node once (DEBUG=5 printed a training step's ASTs as trees, exponential in
// their sharing, until it ran out of memory), and a deep chain without recursion.
TEST(UOp, StrIsLinearInTheGraph) {
  UOpPtr i = loop_range(0, 4), e = i;
  for (int k = 0; k < 20; k++) e = e->mul(e)->add(k + 100);  // 2^20 paths from the top to i
  std::string s = e->str();
  EXPECT_LT(s.size(), 5000u);
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) n++;
    return n;
  };
  EXPECT_EQ(count(s, "RANGE("), 1u) << s.substr(0, 300);
  EXPECT_EQ(count(s, "MUL("), 20u);
  EXPECT_TRUE(std::regex_search(s, std::regex("\\nx([0-9]+) = ADD\\(int32, MUL\\(int32, x[0-9]+, x[0-9]+\\), CONST\\(int32, 118\\)\\)\\n"))) << s.substr(s.size() - 300);
  UOpPtr chain = i;
  for (int k = 0; k < 200000; k++) chain = chain->add(loop_range(1, 4));
  std::string c = chain->str();
  EXPECT_EQ(count(c, "RANGE("), 2u);
  EXPECT_EQ(count(c, "ADD("), 200000u);
}

TEST(Rewrite, PatternCapturesAndCommutativeMatch) {
  auto x = loop_range(0, 8);
  Bindings b;
  UPat p(Ops::ADD, {UPat::cvar("c"), UPat::var("x")});
  ASSERT_TRUE(match(p, x->add(5), b));  // matched with the sources swapped
  EXPECT_EQ(b["x"], x);
  EXPECT_EQ(b["c"]->const_int(), 5);
  Bindings b2;
  EXPECT_FALSE(match(UPat(Ops::MUL, {UPat::var("x"), UPat::var("x")}), x->mul(x->add(1)), b2));  // same name, different nodes
}

TEST(Rewrite, RulesThatLoopAreReportedNotHung) {
  PatternMatcher flip({{UPat(Ops::ADD, {UPat::var("a"), UPat::var("b")}, "root"),
                        [](const Bindings& b) { return UOp::make(Ops::ADD, b["root"]->dtype, {b["b"], b["a"]}); }}});
  auto e = loop_range(0, 4)->add(loop_range(1, 4));
  EXPECT_THROW(graph_rewrite(e, flip), InternalError);
}

TEST(Rewrite, DeepGraphsDoNotOverflowTheStack) {
  UOpPtr e = loop_range(0, 4);
  for (int i = 0; i < 5000; i++) e = e->add(1);
  UOpPtr s = simplify(e);
  EXPECT_EQ(render_expr(s), "(ridx0+5000)");
}

TEST(Symbolic, FoldsTheIndexExpressionsViewsBuild) {
  auto i = loop_range(0, 3), j = loop_range(1, 4);
  auto flat = i->mul(4)->add(j);
  EXPECT_EQ(simplify(flat->idiv(4)), i);
  EXPECT_EQ(simplify(flat->mod(4)), j);
  EXPECT_EQ(simplify(flat->idiv(2)->mul(2)->add(flat->mod(2))), simplify(flat));
  EXPECT_EQ(render_expr(simplify(flat->add(-2)->lt(4))), "(((ridx0*4)+ridx1)<6)");
  EXPECT_TRUE(simplify(j->lt(4))->is_const(1));  // always true by bounds
  EXPECT_TRUE(simplify(i->add(j)->idiv(8))->is_const(0));
  EXPECT_EQ(render_expr(simplify(flat->mul(2)->add(3)->add(flat))), "(((ridx0*12)+(ridx1*3))+3)");
}

// The index conv's window views build: (ky*31 + x) % 30 and // 30 with ky + x < 30 (coefficients
// reduced modulo the divisor); where the reduced sum can reach the divisor the op stays, and every
// result keeps its value (brute force).
TEST(Symbolic, DivModReduceCoefficients) {
  auto ky = loop_range(0, 3), x = loop_range(1, 28), x2 = loop_range(2, 29);
  auto win = ky->mul(31)->add(x);
  EXPECT_EQ(render_expr(simplify(win->mod(30))), "(ridx0+ridx1)");
  EXPECT_EQ(simplify(win->idiv(30)), ky);
  auto wide = ky->mul(31)->add(x2);  // ky + x2 reaches 30
  for (const UOpPtr& e : {wide->mod(30), wide->idiv(30), win->mul(3)->add(7)->idiv(30), win->mul(7)->mod(13)}) {
    UOpPtr s = simplify(e);
    for (int64_t a = 0; a < 3; a++)
      for (int64_t b = 0; b < 29; b++) {
        std::map<const UOp*, int64_t> env{{ky.get(), a}, {x.get(), std::min<int64_t>(b, 27)}, {x2.get(), b}};
        ASSERT_EQ(eval(e, env), eval(s, env)) << render_expr(e) << " -> " << render_expr(s);
      }
  }
  EXPECT_NE(render_expr(simplify(wide->mod(30))).find("%30"), std::string::npos);
}

// A max pool's window read back over its input: the pooled row (y*20 + x*4 + lane) // 40 of a 20-wide
// row upcast by 4 is y // 2, by the coefficients' common factor (4) and then y's (5, the rest x < 5);
// no division by 40 is left in the kernel. Where the rest can reach the factor the op stays, and every
// result keeps its value (brute force).
TEST(Symbolic, DivModByAFactorOfTheDivisor) {
  auto y = loop_range(0, 20), x = loop_range(1, 5), x6 = loop_range(2, 6);
  for (int64_t lane = 0; lane < 4; lane++) {
    auto row = y->mul(20)->add(x->mul(4))->add(lane);
    EXPECT_EQ(render_expr(simplify(row->idiv(40))), "(ridx0/2)") << lane;
    EXPECT_EQ(render_expr(simplify(row->idiv(2)->mod(10))), render_expr(simplify(x->mul(2)->add(lane / 2)))) << lane;
  }
  EXPECT_EQ(simplify(y->mul(5)->add(x)->idiv(10)), simplify(y->idiv(2)));
  std::vector<UOpPtr> exprs;
  for (const UOpPtr& row : {y->mul(20)->add(x->mul(4))->add(3), y->mul(5)->add(x), y->mul(5)->add(x6), y->mul(6)->add(x->mul(2))->add(1)})
    for (int64_t d : {2, 4, 10, 12, 40}) exprs.insert(exprs.end(), {row->idiv(d), row->mod(d)});
  for (const UOpPtr& e : exprs) {
    UOpPtr s = simplify(e);
    for (int64_t a = 0; a < 20; a++)
      for (int64_t b = 0; b < 6; b++) {
        std::map<const UOp*, int64_t> env{{y.get(), a}, {x.get(), std::min<int64_t>(b, 4)}, {x6.get(), b}};
        ASSERT_EQ(eval(e, env), eval(s, env)) << render_expr(e) << " -> " << render_expr(s);
      }
  }
  EXPECT_NE(render_expr(simplify(y->mul(5)->add(x6)->idiv(10))).find("/10"), std::string::npos);  // x6 reaches 5
}

TEST(Symbolic, ConstantFoldingUsesCSemantics) {
  auto c = [](int64_t v, DType d = dtypes::int32) { return UOp::cnst_int(d, v); };
  EXPECT_EQ(simplify(c(-7)->alu(Ops::IDIV, c(2)))->const_int(), -3);  // C truncates toward zero
  EXPECT_EQ(simplify(c(-7)->alu(Ops::MOD, c(2)))->const_int(), -1);
  EXPECT_EQ(simplify(c(200, dtypes::uint8)->alu(Ops::ADD, c(100, dtypes::uint8)))->const_int(), 44);  // wraps
  EXPECT_EQ(simplify(c(127, dtypes::int8)->alu(Ops::ADD, c(1, dtypes::int8)))->const_int(), -128);
  auto f = UOp::cnst(dtypes::float32, 0.1)->alu(Ops::ADD, UOp::cnst(dtypes::float32, 0.2));
  EXPECT_EQ(simplify(f)->const_value(), static_cast<double>(0.1f + 0.2f));
}

// Random affine index expressions with div/mod: the simplified form agrees with the original everywhere.
TEST(Symbolic, PropertySimplifyPreservesValues) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int t = 0; t < 300; t++) {
    std::vector<UOpPtr> rs{loop_range(0, pick(1, 6)), loop_range(1, pick(1, 6)), loop_range(2, pick(1, 6))};
    UOpPtr e = UOp::index_const(pick(0, 5));
    for (auto& r : rs) e = e->add(r->mul(pick(0, 12)));
    int steps = pick(1, 3);
    for (int s = 0; s < steps; s++) {
      int k = pick(1, 9);
      switch (pick(0, 3)) {
        case 0: e = e->idiv(k); break;
        case 1: e = e->mod(k); break;
        case 2: e = e->mul(k)->add(rs[pick(0, 2)]); break;
        default: e = e->idiv(k)->mul(k)->add(e->mod(k)); break;
      }
    }
    UOpPtr s = simplify(e);
    for (int64_t a = 0; a <= rs[0]->vmax; a++)
      for (int64_t b = 0; b <= rs[1]->vmax; b++)
        for (int64_t c = 0; c <= rs[2]->vmax; c++) {
          std::map<const UOp*, int64_t> env{{rs[0].get(), a}, {rs[1].get(), b}, {rs[2].get(), c}};
          ASSERT_EQ(eval(e, env), eval(s, env)) << render_expr(e) << " -> " << render_expr(s);
        }
  }
}

// x % 0 is 0 (README, Semantics): rules about nested modulo must not treat a 0 modulus as a multiple.
TEST(Symbolic, ModuloByZeroIsNotRewritten) {
  UOpPtr x = loop_range(0, 10);
  for (UOpPtr e : {x->mod(0)->mod(4), x->mod(0)->idiv(2), x->mod(0)}) {
    UOpPtr s = simplify(e);
    for (int64_t a = 0; a < 10; a++) EXPECT_EQ(eval(s, {{x.get(), a}}), 0) << render_expr(e) << " -> " << render_expr(s);
  }
}

TEST(UOp, FloatsHaveNoIntegerBounds) {
  // float comparisons must never fold by bounds (infinite float limits are not integers)
  auto a = UOp::make(Ops::DEFINE_VAR, dtypes::int32, {}, VarArg{"a", 0, 3})->cast(dtypes::float32);
  auto lt = a->alu(Ops::CMPLT, UOp::cnst(dtypes::float32, 2.5));
  EXPECT_EQ(simplify(lt), lt);
  auto ne = a->alu(Ops::CMPNE, a->alu(Ops::ADD, UOp::cnst(dtypes::float32, 1)));
  EXPECT_EQ(simplify(ne)->op, Ops::CMPNE);
}

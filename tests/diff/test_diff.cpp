// The random-graph differential test: programs from tests/diff/program.h, one gtest case a seed, run on
// tg (in a sandboxed child) and in NumPy. `--seeds=FIRST:COUNT` picks the seeds (ctest runs two halves
// in parallel). A failure shows the program, the expected and the actual values; for a minimal C++
// repro run `fuzz_graphs --seed S --count 1`, or set DIFF_SHRINK=1 here.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <climits>
#include <cmath>
#include <string>

#include "check.h"

namespace {

uint64_t g_first = 0, g_count = 250;

tgdiff::Checker& checker() {
  static std::unique_ptr<tgdiff::Checker> c = std::make_unique<tgdiff::Checker>();
  return *c;
}

class Diff : public ::testing::TestWithParam<uint64_t> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Diff);  // --seeds=N:0

TEST_P(Diff, MatchesNumPy) {
  tgdiff::Program p = tgdiff::generate(GetParam());
  tgdiff::Verdict v = checker().check(p);
  if (v.kind == tgdiff::Verdict::Pass) return;
  std::string msg = tgdiff::report(p, v);
  if (const char* s = std::getenv("DIFF_SHRINK"); s && std::strcmp(s, "1") == 0) {
    tgdiff::Program small = checker().shrink(p, v.kind);
    msg += "\nshrunk:\n" + tgdiff::report(small, checker().check(small)) + "\n" + tgdiff::to_cpp(small);
  }
  FAIL() << msg;
}

// The reference itself, on programs whose answers are worked out by hand (tinygrad.cpp's semantics).
TEST(NumpyRef, HandComputed) {
  using tgdiff::DT;
  tgdiff::Program p;
  auto input = [&](DT d, tgdiff::Shape s, std::vector<double> v) {
    tgdiff::Node n;
    n.kind = "input";
    n.dtype = n.cdtype = d;
    n.shape = s;
    if (tgdiff::is_float(d)) n.fdata = v;
    else n.idata.assign(v.begin(), v.end());
    p.nodes.push_back(n);
    return static_cast<int>(p.nodes.size()) - 1;
  };
  auto op = [&](const char* kind, std::vector<int> args, DT d, DT cd, tgdiff::Shape s) {
    tgdiff::Node n;
    n.kind = kind;
    n.args = args;
    n.dtype = d;
    n.cdtype = cd;
    n.shape = s;
    p.nodes.push_back(n);
    return static_cast<int>(p.nodes.size()) - 1;
  };
  int a = input(DT::I32, {6}, {7, -7, 7, -7, INT32_MIN, 5}), b = input(DT::I32, {6}, {2, 2, -2, -2, -1, 0});
  p.outputs.push_back(op("idiv", {a, b}, DT::I32, DT::I32, {6}));  // truncation, INT_MIN/-1 wraps, x/0 == 0
  int h = input(DT::F16, {5}, {2048, 1, 1, 1, 1});
  p.outputs.push_back(op("sum", {h}, DT::F16, DT::F32, {}));  // float32 accumulator: 2052, not 2048
  int x = input(DT::F32, {2}, {1, NAN}), y = input(DT::F32, {2}, {NAN, 2});
  p.outputs.push_back(op("maximum", {x, y}, DT::F32, DT::F32, {2}));  // NaN propagates both ways
  int u = input(DT::U8, {2}, {255, 255});
  p.outputs.push_back(op("sum", {u}, DT::U32, DT::U32, {}));
  int i = input(DT::I32, {2}, {1, 2});
  p.outputs.push_back(op("mean", {i}, DT::F32, DT::I32, {}));
  int c = input(DT::I8, {2}, {100, -128});
  p.outputs.push_back(op("mul", {c, c}, DT::I8, DT::I8, {2}));  // wraps: 10000 % 256, 16384 % 256
  int m = input(DT::F32, {20}, std::vector<double>(20, static_cast<double>(1e30f)));
  p.outputs.push_back(op("mean", {m}, DT::F32, DT::F32, {}));  // exactly 1e30f (NumPy's float32 sum: 2 ulps off)
  int q = input(DT::I8, {3}, {100, 3, -2});
  p.outputs.push_back(op("prod", {q}, DT::I32, DT::I32, {}));  // in int32: -600, not wrapped to int8
  int r3 = input(DT::F32, {3}, {1, 2, 3});
  int padded = op("pad2d", {r3}, DT::F32, DT::F32, {6});
  p.nodes[static_cast<size_t>(padded)].ints = {2, 1};
  p.nodes[static_cast<size_t>(padded)].sub = "reflect";
  p.outputs.push_back(padded);
  int cm = input(DT::F32, {3}, {1, NAN, 0});
  int cmax = op("cummax", {cm}, DT::F32, DT::F32, {3});
  p.nodes[static_cast<size_t>(cmax)].ints = {0};
  p.outputs.push_back(cmax);  // NaN carries forward
  int img = input(DT::F32, {3, 3}, {1, -2, 3, -4, 5, NAN, 7, -8, 9});
  int mp = op("max_pool2d", {img}, DT::F32, DT::F32, {2, 2});  // 2x2 windows, stride 2, padding 1: -inf pads
  p.nodes[static_cast<size_t>(mp)].ints = {2, 2, 1, 1};
  p.outputs.push_back(mp);
  int ap = op("avg_pool2d", {img}, DT::F32, DT::F32, {1, 1});  // a 2x2 window dilated by 2: the corners
  p.nodes[static_cast<size_t>(ap)].ints = {2, 1, 2, 0};
  p.outputs.push_back(ap);
  int ip = input(DT::I8, {2, 2}, {-128, -100, -128, -128});
  int mpi = op("max_pool2d", {ip}, DT::I8, DT::I8, {3, 3});  // stride 1, padding 1: int8's lowest pads
  p.nodes[static_cast<size_t>(mpi)].ints = {2, 1, 1, 1};
  p.outputs.push_back(mpi);
  int zeros = input(DT::F16, {2}, {0.0, -0.0}), one = input(DT::F16, {2}, {1, 1});
  int czero = op("cummax", {zeros}, DT::F16, DT::F16, {2});
  p.nodes[static_cast<size_t>(czero)].ints = {0};
  p.outputs.push_back(op("div", {one, czero}, DT::F16, DT::F16, {2}));  // the later of equal zeros, as torch: -0
  nlohmann::json r = checker().ref.call({{"program", tgdiff::to_json(p)}, {"runs", 0}});
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const nlohmann::json& o = r["outputs"];
  EXPECT_EQ(o[0]["exact"], nlohmann::json({3, -3, -3, 3, INT32_MIN, 0}));
  EXPECT_EQ(o[1]["exact"], nlohmann::json({2052.0}));
  EXPECT_EQ(o[2]["exact"], nlohmann::json({nullptr, nullptr}));
  EXPECT_EQ(o[3]["exact"], nlohmann::json({510}));
  EXPECT_EQ(o[3]["dtype"], "uint32");
  EXPECT_EQ(o[4]["exact"], nlohmann::json({1.5}));
  EXPECT_EQ(o[5]["exact"], nlohmann::json({16, 0}));
  EXPECT_EQ(o[6]["exact"], nlohmann::json({static_cast<double>(1e30f)}));
  EXPECT_EQ(o[7]["exact"], nlohmann::json({-600}));
  EXPECT_EQ(o[8]["exact"], nlohmann::json({3.0, 2.0, 1.0, 2.0, 3.0, 2.0}));
  EXPECT_EQ(o[9]["exact"], nlohmann::json({1.0, nullptr, nullptr}));
  EXPECT_EQ(o[10]["exact"], nlohmann::json({1.0, 3.0, 7.0, nullptr}));  // NaN in its window wins
  EXPECT_EQ(o[11]["exact"], nlohmann::json({5.0}));  // (1 + 3 + 7 + 9) / 4
  EXPECT_EQ(o[12]["exact"], nlohmann::json({-128, -100, -100, -128, -100, -100, -128, -128, -128}));
  EXPECT_EQ(o[13]["exact"], nlohmann::json({"inf", "-inf"}));  // NumPy's float16 cummax alone keeps the earlier
}

// An element that is NaN in some of NumPy's runs and finite in others is ill-conditioned: any value passes
// there. Elsewhere the envelope still holds, and an element NaN in every run must be NaN.
TEST(DiffHarness, IllConditionedElementsPassAnyValue) {
  tgdiff::Program p;
  tgdiff::Node n;
  n.kind = "input";
  n.dtype = n.cdtype = tgdiff::DT::F32;
  n.shape = {3};
  n.fdata = {0, 0, 0};
  p.nodes.push_back(n);
  p.outputs.push_back(0);
  nlohmann::json ref = {{"outputs", {{{"exact", {1.0, 1.0, nullptr}}, {"lo", {1.0, 1.0, nullptr}}, {"hi", {1.0, 1.0, nullptr}},
                                      {"nan", {0, 3, 9}}}}}};
  auto verdict = [&](std::vector<double> v) {
    nlohmann::json got = {{"outputs", {{{"dtype", "float32"}, {"shape", {3}}, {"data", v}}}}};
    return tgdiff::compare(p, ref, got).kind;
  };
  EXPECT_EQ(verdict({1.0, 1.0, NAN}), tgdiff::Verdict::Pass);
  EXPECT_EQ(verdict({1.0, 2.6e23, NAN}), tgdiff::Verdict::Pass);
  EXPECT_EQ(verdict({1.5, 1.0, NAN}), tgdiff::Verdict::Mismatch);
  EXPECT_EQ(verdict({1.0, 1.0, 1.0}), tgdiff::Verdict::Mismatch);
}

// The comparison can fail: one element of tg's answer moved a little (floats by more than a few units of
// roundoff, ints by 1, bools flipped) where NumPy's envelope is tight must be a mismatch.
TEST(DiffHarness, CatchesAWrongElement) {
  int mutated = 0;
  for (uint64_t seed = 0; seed < 40; seed++) {
    tgdiff::Program p = tgdiff::generate(seed);
    nlohmann::json ref = checker().ref.call({{"program", tgdiff::to_json(p)}, {"runs", checker().runs}});
    nlohmann::json got = checker().sandbox.run(p);
    if (!ref["ok"].get<bool>() || !got["ok"].get<bool>() || tgdiff::compare(p, ref, got).kind != tgdiff::Verdict::Pass) continue;
    for (size_t j = 0; j < p.outputs.size(); j++) {
      const nlohmann::json &r = ref["outputs"][j];
      tgdiff::DT d = p.nodes[static_cast<size_t>(p.outputs[j])].dtype;
      for (size_t k = 0; k < r["exact"].size(); k++) {
        const nlohmann::json& e = r["exact"][k];
        if (e.is_null() || e.is_string() || r["lo"][k] != r["hi"][k]) continue;  // NaN, inf, or a wide envelope
        nlohmann::json bad = got;
        nlohmann::json& v = bad["outputs"][j]["data"][k];
        if (d == tgdiff::DT::Bool) v = 1 - v.get<int64_t>();
        else if (!tgdiff::is_float(d)) v = v.get<int64_t>() + 1;
        else {
          double rel = d == tgdiff::DT::F16 ? 1e-2 : d == tgdiff::DT::F32 ? 1e-5 : 1e-12;
          v = v.get<double>() == 0 ? rel : v.get<double>() * (1 + rel);  // past the margin (float16's: 2^-24)
        }
        EXPECT_EQ(tgdiff::compare(p, ref, bad).kind, tgdiff::Verdict::Mismatch) << "seed " << seed << ", output " << j << ", element " << k;
        mutated++;
        break;
      }
    }
  }
  EXPECT_GE(mutated, 20);
}

// The generator keeps meeting what the scheduler's reduce fusion must get right, over the suite's seeds
// (0..499, CMakeLists.txt): a reduce broadcast back against a value its input comes from or goes to
// (x - x.max()), such a value reduced again (softmax's sum, var's mean), several outputs realized together.
TEST(Generator, CoversReduceChainsAndMultiOutput) {
  int bcast = 0, chain = 0, multi = 0;
  for (uint64_t seed = 0; seed < 500; seed++) {
    tgdiff::Program p = tgdiff::generate(seed);
    size_t n = p.nodes.size();
    auto is_reduce = [&](size_t i) {
      const std::string& k = p.nodes[i].kind;
      return k == "sum" || k == "max" || k == "min" || k == "mean";
    };
    std::vector<std::vector<bool>> feeds(n, std::vector<bool>(n, false));  // feeds[i][j]: j is i or feeds it
    for (size_t i = 0; i < n; i++) {
      feeds[i][i] = true;
      for (int a : p.nodes[i].args)
        for (size_t j = 0; j < n; j++)
          if (feeds[static_cast<size_t>(a)][j]) feeds[i][j] = true;
    }
    std::vector<bool> back(n, false);  // an elementwise op of a reduce's result, broadcast back, and x
    for (size_t i = 0; i < n; i++) {
      const tgdiff::Node& b = p.nodes[i];
      if (b.args.size() != 2 || b.kind == "dot" || b.kind == "cat" || b.kind == "stack") continue;
      for (size_t r = 0; r < n; r++) {
        if (!is_reduce(r) || tgdiff::numel(p.nodes[r].shape) >= tgdiff::numel(b.shape)) continue;
        size_t in = static_cast<size_t>(p.nodes[r].args[0]);
        for (size_t k = 0; k < 2; k++) {
          size_t w = static_cast<size_t>(b.args[k]), u = static_cast<size_t>(b.args[1 - k]);
          if (feeds[w][r] && (feeds[u][in] || feeds[in][u])) back[i] = true;
        }
      }
    }
    bool has_back = false, has_chain = false;
    for (size_t i = 0; i < n; i++) {
      has_back = has_back || back[i];
      for (size_t j = 0; j < i && is_reduce(i); j++) has_chain = has_chain || (back[j] && feeds[i][j]);
    }
    bcast += has_back;
    chain += has_chain;
    multi += p.outputs.size() >= 2 && p.corealize;
  }
  std::printf("of 500 programs: %d broadcast a reduce back, %d reduce that again, %d corealize several outputs\n", bcast, chain, multi);
  EXPECT_GE(bcast, 300);
  EXPECT_GE(chain, 250);
  EXPECT_GE(multi, 250);
}

// argmax / argmin (one kernel: the max and the first index that reaches it), cumsum, cummax, prod, any,
// all, pad2d with a mode, and the API's own softmax, log_softmax, logsumexp, var and std (fused row
// kernels) are generated too.
TEST(Generator, CoversArgReducesScansAndNormalizations) {
  std::map<std::string, int> seen;
  int flat = 0;
  for (uint64_t seed = 0; seed < 500; seed++)
    for (const tgdiff::Node& n : tgdiff::generate(seed).nodes) {
      seen[n.kind]++;
      flat += (n.kind == "argmax" || n.kind == "argmin") && n.ints.empty();
    }
  std::printf("of 500 programs:");
  for (const char* k : {"argmax", "argmin", "cumsum", "cummax", "softmax", "log_softmax", "logsumexp", "var", "std", "prod", "any", "all", "pad2d",
                        "max_pool2d", "avg_pool2d"})
    std::printf(" %d %s", seen[k], k);
  std::printf(" (%d argmax/argmin flattened)\n", flat);
  for (const char* k : {"argmax", "argmin", "cumsum", "cummax", "prod", "any", "all", "pad2d"}) EXPECT_GE(seen[k], 10) << k;
  for (const char* k : {"softmax", "log_softmax", "logsumexp", "var", "std", "max_pool2d", "avg_pool2d"}) EXPECT_GE(seen[k], 6) << k;
  EXPECT_GE(flat, 6);
}

INSTANTIATE_TEST_SUITE_P(Seeds, Diff, ::testing::Range(g_first, g_first + g_count),
                         [](const ::testing::TestParamInfo<uint64_t>& i) { return "seed" + std::to_string(i.param); });

}  // namespace

int main(int argc, char** argv) {
  // our flag first: the parameter generator above runs inside InitGoogleTest
  for (int i = 1; i < argc; i++)
    if (std::strncmp(argv[i], "--seeds=", 8) == 0) {
      std::string s = argv[i] + 8;
      size_t colon = s.find(':');
      g_first = std::stoull(s.substr(0, colon));
      if (colon != std::string::npos) g_count = std::stoull(s.substr(colon + 1));
    }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

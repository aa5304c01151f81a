// VIZ: recording named graph_rewrites into a kernel's trace, the trace's JSON, the process's recording
// (VIZ on and off, kernels of real runs, BEAM), and the web server. The page itself is tested in a
// browser by tests/viz/test_viz_page.py.
#include <httplib.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "test_util.h"
#include "tg/helpers.h"
#include "tg/tensor.h"
#include "tg/viz.h"
#include "uop/rewrite.h"
#include "viz/assets.h"
#include "viz/recorder.h"
#include "viz/server.h"
#include "viz/session.h"
#include "viz/trace_json.h"

using namespace tg;
namespace fs = std::filesystem;

namespace {
// ((r*4 + 3) // 4) * 1 + 0: the symbolic rules fold it to r
UOpPtr index_expr() { return loop_range(0, 16)->mul(4)->add(3)->idiv(4)->mul(1)->add(0); }

// The ids of the nodes `root` reaches in a kernel's node table.
std::set<int> reached(const viz::KernelTrace& k, int root) {
  std::set<int> seen{root};
  std::vector<int> stack{root};
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    for (int s : k.nodes[u].src)
      if (seen.insert(s).second) stack.push_back(s);
  }
  return seen;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("tg_test_viz_" + std::to_string(getpid()) + "_" + name)).string();
}

// The process's recording starts empty, writes to a file of the test's own, and is forgotten after, so
// that the test binary neither serves nor leaves a trace at exit.
class VizSession : public ::testing::Test {
 protected:
  void SetUp() override {
    viz::reset();
    file_ = temp_path("session.jsonl");
    ::setenv("VIZ_FILE", file_.c_str(), 1);
  }
  void TearDown() override {
    viz::reset();
    ::unsetenv("VIZ_FILE");
  }
  std::string file_;
};
}  // namespace

// ---- the recorder -------------------------------------------------------------------------------------

TEST(VizRecorder, NamedRewriteIsAPass) {
  UOpPtr e = index_expr();
  viz::KernelRecorder rec("k", e);
  UOpPtr out;
  {
    TracerScope scope(&rec);
    out = graph_rewrite(e, symbolic(), nullptr, {.name = "simplify"});
  }
  ASSERT_EQ(out->op, Ops::RANGE);  // the rules did fold it
  const viz::KernelTrace& k = rec.trace();
  EXPECT_EQ(k.name, "k");
  ASSERT_EQ(k.passes.size(), 1u);
  const viz::Pass& p = k.passes[0];
  EXPECT_EQ(p.name, "simplify");
  EXPECT_EQ(p.before, k.ast);
  EXPECT_EQ(k.nodes[p.after].op, "RANGE");
  EXPECT_EQ(k.nodes[p.after].dtype, dtypes::int32.name());
  EXPECT_EQ(p.after, rec.intern(out)) << "the after root is the node graph_rewrite returned";
  ASSERT_FALSE(p.changes.empty());
  for (const viz::Change& c : p.changes) {
    EXPECT_NE(c.from, c.to);
    EXPECT_NE(c.rule.find("symbolic.cpp:"), std::string::npos) << "unnamed rules are named by file:line: " << c.rule;
  }
  EXPECT_EQ(p.changes.back().to, p.after) << "the last rule applied gave the final root";
}

TEST(VizRecorder, NodeTableStoresEachNodeOnceSourcesFirst) {
  UOpPtr e = index_expr();
  viz::KernelRecorder rec("k", e);
  {
    TracerScope scope(&rec);
    UOpPtr out = graph_rewrite(e, symbolic(), nullptr, {.name = "simplify"});
    graph_rewrite(out, symbolic(), nullptr, {.name = "again"});  // nothing left to do: no new node
  }
  const viz::KernelTrace& k = rec.trace();
  std::set<std::tuple<std::string, std::string, std::string, std::vector<int>>> distinct;
  for (size_t i = 0; i < k.nodes.size(); i++) {
    const viz::Node& n = k.nodes[i];
    EXPECT_TRUE(distinct.insert({n.op, n.dtype, n.arg, n.src}).second) << "node " << i << " (" << n.op << ") is stored twice";
    for (int s : n.src) EXPECT_LT(s, static_cast<int>(i)) << "node " << i << "'s source " << s << " comes after it";
  }
  ASSERT_EQ(k.passes.size(), 2u);
  EXPECT_EQ(k.passes[1].before, k.passes[0].after) << "the same node has the same id in every pass";
  EXPECT_EQ(k.passes[1].after, k.passes[1].before);
  EXPECT_TRUE(k.passes[1].changes.empty());
  // the 16 in RANGE(0, 16) is one node, however many passes and users it has
  int sixteens = 0;
  for (const viz::Node& n : k.nodes) sixteens += n.op == "CONST" && n.arg == "16";
  EXPECT_EQ(sixteens, 1);
}

TEST(VizRecorder, ChangesNameTheirRuleAndNodes) {
  static const PatternMatcher pm({
      Rule{UPat(Ops::MUL, {UPat::var("x"), UPat::cnst(1)}), [](const Bindings& b) { return b["x"]; }, "mul_by_one"},
      Rule{UPat(Ops::ADD, {UPat::var("x"), UPat::cnst(0)}), [](const Bindings& b) { return b["x"]; }},
  });
  UOpPtr r = loop_range(0, 8), e = r->mul(1)->add(0);
  viz::KernelRecorder rec("k", e);
  {
    TracerScope scope(&rec);
    EXPECT_EQ(graph_rewrite(e, pm, nullptr, {.name = "identities"}), r);
  }
  const viz::Pass& p = rec.trace().passes.at(0);
  ASSERT_EQ(p.changes.size(), 2u);  // bottom-up: the MUL first, then the ADD over its result
  EXPECT_EQ(p.changes[0].rule, "mul_by_one");
  EXPECT_EQ(p.changes[0].from, rec.intern(r->mul(1)));
  EXPECT_EQ(p.changes[0].to, rec.intern(r));
  EXPECT_NE(p.changes[1].rule.find("test_viz.cpp:"), std::string::npos) << p.changes[1].rule;
  EXPECT_EQ(p.changes[1].from, rec.intern(r->add(0)));
  EXPECT_TRUE(reached(rec.trace(), p.before).count(p.changes[0].from)) << "the MUL the rule matched is in the graph before";
  EXPECT_TRUE(reached(rec.trace(), p.after).count(p.changes[1].to)) << "what the rule returned is in the graph after";
}

TEST(VizRecorder, UnnamedRewritesAreNotPasses) {
  UOpPtr e = index_expr();
  viz::KernelRecorder rec("k", e);
  {
    TracerScope scope(&rec);
    simplify(e);                         // graph_rewrite with no name
    graph_rewrite(e, symbolic(), nullptr, {.top_down = true});
  }
  EXPECT_TRUE(rec.trace().passes.empty());
}

TEST(VizRecorder, DeepGraphsDoNotRecurse) {
  UOpPtr x = loop_range(0, 4)->cast(dtypes::float32);
  for (int i = 0; i < 100000; i++) x = x->alu(Ops::ADD, UOp::cnst(dtypes::float32, 0.5));
  viz::KernelRecorder rec("deep", x);
  EXPECT_EQ(rec.trace().nodes.size(), 100000u + 5u);  // the chain, the CAST, the RANGE and its 0 and 4, the 0.5
}

// ---- JSON ------------------------------------------------------------------------------------------

namespace {
viz::KernelTrace recorded_kernel() {
  UOpPtr e = index_expr();
  viz::KernelRecorder rec("r_16", e);
  TracerScope scope(&rec);
  graph_rewrite(e, symbolic(), nullptr, {.name = "simplify"});
  rec.trace().src = "void r_16(int* data0) {\n  \"quoted\" \\ and ünïcode\n}\n";
  return rec.trace();
}
void expect_same(const viz::KernelTrace& a, const viz::KernelTrace& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.ast, b.ast);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.error, b.error);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); i++)
    EXPECT_EQ(std::tie(a.nodes[i].op, a.nodes[i].dtype, a.nodes[i].arg, a.nodes[i].src),
              std::tie(b.nodes[i].op, b.nodes[i].dtype, b.nodes[i].arg, b.nodes[i].src));
  ASSERT_EQ(a.passes.size(), b.passes.size());
  for (size_t i = 0; i < a.passes.size(); i++) {
    EXPECT_EQ(std::tie(a.passes[i].name, a.passes[i].before, a.passes[i].after), std::tie(b.passes[i].name, b.passes[i].before, b.passes[i].after));
    ASSERT_EQ(a.passes[i].changes.size(), b.passes[i].changes.size());
    for (size_t j = 0; j < a.passes[i].changes.size(); j++) {
      const viz::Change &x = a.passes[i].changes[j], &y = b.passes[i].changes[j];
      EXPECT_EQ(std::tie(x.from, x.to, x.rule), std::tie(y.from, y.to, y.rule));
    }
  }
}
}  // namespace

TEST(VizJson, KernelRoundTrip) {
  viz::KernelTrace k = recorded_kernel();
  std::string line = viz::to_json(k);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one kernel is one line of a trace file";
  expect_same(viz::kernel_from_json(line), k);
}

TEST(VizJson, FileRoundTripAndCutOffLastLine) {
  viz::Trace t;
  t.kernels = {recorded_kernel(), recorded_kernel()};
  t.kernels[1].name = "E_4";
  t.kernels[1].error = "an error stopped it";
  std::string path = temp_path("roundtrip.jsonl");
  viz::save(t, path);
  int skipped = -1;
  viz::Trace back = viz::load(path, &skipped);
  EXPECT_EQ(skipped, 0);
  ASSERT_EQ(back.kernels.size(), 2u);
  expect_same(back.kernels[0], t.kernels[0]);
  expect_same(back.kernels[1], t.kernels[1]);
  // a run that died while writing its third kernel: the two before it load
  std::ofstream(path, std::ios::app) << viz::to_json(t.kernels[0]).substr(0, 50);
  back = viz::load(path, &skipped);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(back.kernels.size(), 2u);
  fs::remove(path);
}

TEST(VizJson, BadFilesSayWhatIsWrong) {
  std::string path = temp_path("bad.jsonl");
  EXPECT_NE(error_of([&] { viz::load(path); }).find("cannot read the trace file"), std::string::npos);
  std::ofstream(path) << "hello\n";
  EXPECT_NE(error_of([&] { viz::load(path); }).find("is not a trace file"), std::string::npos);
  std::ofstream(path) << "{\"tg_viz\": 99}\n";
  EXPECT_NE(error_of([&] { viz::load(path); }).find("format 99"), std::string::npos);
  // a source that is not an earlier node, in the middle of the file
  std::ofstream(path) << viz::header_line() << "\n"
                      << R"({"name":"E_1","ast":0,"nodes":[["CONST","float32","1",[0]]],"passes":[]})" << "\n"
                      << viz::to_json(recorded_kernel()) << "\n";
  std::string msg = error_of([&] { viz::load(path); });
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an earlier node"), std::string::npos) << msg;
  std::ofstream(path) << viz::header_line() << "\n" << R"({"name":"E_1","ast":3,"nodes":[],"passes":[]})" << "\n" << "{}\n";
  EXPECT_NE(error_of([&] { viz::load(path); }).find("the AST is node 3, but there are 0 nodes"), std::string::npos);
  std::ofstream(path) << viz::header_line() << "\n" << R"({"name":"E_1","nodes":[],"passes":[]})" << "\n" << "{}\n";
  EXPECT_NE(error_of([&] { viz::load(path); }).find("not a VIZ kernel"), std::string::npos);
  fs::remove(path);
}

// ---- the process's recording --------------------------------------------------------------------------

TEST_F(VizSession, OffRecordsNothing) {
  Context ctx{{"VIZ", 0}};
  {
    viz::KernelScope scope("E_4", index_expr());
    EXPECT_FALSE(scope.recording());
    EXPECT_EQ(current_tracer(), nullptr) << "with VIZ=0 graph_rewrite sees no tracer";
    graph_rewrite(index_expr(), symbolic(), nullptr, {.name = "simplify"});
  }
  (Tensor({1.f, 2.f, 3.f}) * 1.25f).realize();
  EXPECT_EQ(viz::kernel_count(), 0u);
  EXPECT_EQ(viz::trace_path(), "");
  EXPECT_FALSE(fs::exists(file_));
}

TEST_F(VizSession, ScopeRecordsPassesAndSourceToTheFile) {
  Context ctx{{"VIZ", 1}};
  {
    viz::KernelScope scope("r_16", index_expr());
    ASSERT_TRUE(scope.recording());
    graph_rewrite(index_expr(), symbolic(), nullptr, {.name = "simplify"});
    scope.set_source("int r_16;");
  }
  EXPECT_EQ(current_tracer(), nullptr) << "the scope uninstalls its tracer";
  viz::Trace t = viz::snapshot();
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].name, "r_16");
  EXPECT_EQ(t.kernels[0].src, "int r_16;");
  ASSERT_EQ(t.kernels[0].passes.size(), 1u);
  EXPECT_EQ(viz::trace_path(), file_);
  viz::Trace on_disk = viz::load(file_);  // written as the kernel ended, not at exit
  ASSERT_EQ(on_disk.kernels.size(), 1u);
  expect_same(on_disk.kernels[0], t.kernels[0]);
}

TEST_F(VizSession, AnErrorKeepsWhatWasRecorded) {
  Context ctx{{"VIZ", 1}};
  auto build = [] {
    viz::KernelScope scope("E_8", index_expr());
    graph_rewrite(index_expr(), symbolic(), nullptr, {.name = "simplify"});
    throw Error("the compiler failed");
  };
  EXPECT_THROW(build(), Error);
  viz::Trace t = viz::load(file_);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].passes.size(), 1u);
  EXPECT_EQ(t.kernels[0].src, "");
  EXPECT_NE(t.kernels[0].error.find("error"), std::string::npos);
}

TEST_F(VizSession, RecordsTheKernelsOfARun) {
  Context ctx{{"VIZ", 1}};
  // constants no other test uses: new kernels, built (and recorded) here rather than found in the method cache
  Tensor x = Tensor({1.f, 2.f, 3.f, 4.f}) * 7.03125f + 0.40625f;
  float s = x.sum().item<float>();
  EXPECT_FLOAT_EQ(s, 7.03125f * 10 + 4 * 0.40625f);
  viz::Trace t = viz::snapshot();
  ASSERT_GE(t.kernels.size(), 1u);
  for (const viz::KernelTrace& k : t.kernels) {
    EXPECT_EQ(k.error, "");
    EXPECT_NE(k.src.find(k.name), std::string::npos) << "the source of " << k.name << " defines it:\n" << k.src;
    EXPECT_EQ(k.nodes[k.ast].op, "SINK") << "the first graph is the scheduler's AST";
  }
  EXPECT_EQ(viz::load(file_).kernels.size(), t.kernels.size());
}

TEST_F(VizSession, BeamCandidatesAreNotRecorded) {
  std::string cache = temp_path("beam_cache");
  ::setenv("CACHEDIR", cache.c_str(), 1);  // a search of our own, not one cached by an earlier run
  ::setenv("BEAM_TIME_LIMIT", "3", 1);
  {
    Context ctx{{"VIZ", 1}, {"BEAM", 1}};
    std::vector<float> v(64);
    for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i);
    (Tensor(v, {8, 8}) * 3.09375f).sum({1}).realize();
  }
  ::unsetenv("BEAM_TIME_LIMIT");
  ::unsetenv("CACHEDIR");
  fs::remove_all(cache);
  viz::Trace t = viz::snapshot();
  ASSERT_EQ(t.kernels.size(), 1u) << "only the kernel the run uses, not the candidates the search compiled";
  EXPECT_NE(t.kernels[0].src, "");
}

// ---- the server ------------------------------------------------------------------------------------

namespace {
std::shared_ptr<const viz::Trace> two_kernels() {
  auto t = std::make_shared<viz::Trace>();
  t->kernels = {recorded_kernel(), recorded_kernel()};
  t->kernels[1].name = "E_4";
  return t;
}
}  // namespace

TEST(VizServer, ServesThePageAndTheTrace) {
  auto t = two_kernels();
  viz::Server srv(t);
  int port = srv.start(0);
  ASSERT_GT(port, 0);
  httplib::Client cli("127.0.0.1", port);
  auto page = cli.Get("/");
  ASSERT_TRUE(page) << "no answer on port " << port;
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<title>VIZ"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"), std::string::npos);
  for (const char* f : {"/viz.js", "/layout.js", "/viz.css", "/dagre.min.js"}) {
    auto r = cli.Get(f);
    ASSERT_TRUE(r) << f;
    EXPECT_EQ(r->status, 200) << f;
    EXPECT_EQ(r->body, std::string(viz::find_asset(f)->data)) << f;
  }
  auto list = cli.Get("/api/kernels");
  ASSERT_TRUE(list);
  auto j = nlohmann::json::parse(list->body);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][1]["name"], "E_4");
  EXPECT_EQ(j["kernels"][0]["passes"], nlohmann::json::array({"simplify"}));
  auto k1 = cli.Get("/api/kernel/1");
  ASSERT_TRUE(k1);
  expect_same(viz::kernel_from_json(k1->body), t->kernels[1]);
  auto missing = cli.Get("/api/kernel/2");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(cli.Get("/nothing.js")->status, 404);
  auto whole = cli.Get("/trace.json");
  ASSERT_TRUE(whole);
  EXPECT_EQ(nlohmann::json::parse(whole->body)["kernels"].size(), 2u);
  srv.stop();
  EXPECT_FALSE(httplib::Client("127.0.0.1", port).Get("/")) << "stopped: nothing answers";
}

TEST(VizServer, PortInUseIsAnError) {
  viz::Server a(two_kernels()), b(two_kernels());
  int port = a.start(0);
  std::string msg = error_of([&] { b.start(port); });
  EXPECT_NE(msg.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << msg;
  EXPECT_NE(msg.find("in use"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { b.start(70000); }).find("not a TCP port"), std::string::npos);
}

TEST(VizServer, StopsRightAfterStart) {
  for (int i = 0; i < 20; i++) {
    viz::Server srv(two_kernels());
    srv.start(0);
  }  // each destructor stops a server whose loop may not have begun yet
}

// BEAM=N: the searched kernel is right, the search keeps to its time limit, and its winner is cached
// on disk so that a second process with the same kernel does not search (counted, not timed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/search.h"
#include "tg/tg.h"

using namespace tg;

namespace {
std::string read_file(const std::string& p) {
  std::ifstream f(p);
  std::string s;
  std::getline(f, s);
  return s;
}
}  // namespace

// Run by BeamCache below in child processes (disabled in a normal run): one BEAM=1 matmul whose AST is
// used by no other test, its value checked, and the number of searches this process ran written out.
TEST(BeamChild, DISABLED_RunOnce) {
  const char* out = std::getenv("TG_BEAM_CHILD_OUT");
  ASSERT_NE(out, nullptr);
  std::vector<float> a(24 * 40), b(40 * 16);
  for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i % 5) - 2;
  for (size_t i = 0; i < b.size(); i++) b[i] = static_cast<float>(i % 3) * 0.5f + 0.125f;
  Tensor ta(a, {24, 40}), tb(b, {40, 16});
  std::vector<float> got;
  {
    Context ctx{{"BEAM", 1}};
    got = (ta.matmul(tb) * 3.75f).tolist<float>();
  }
  for (int i = 0; i < 24; i++)
    for (int j = 0; j < 16; j++) {
      double want = 0;
      for (int k = 0; k < 40; k++) want += static_cast<double>(a[i * 40 + k]) * b[k * 16 + j];
      ASSERT_NEAR(got[i * 16 + j], want * 3.75, 1e-3) << i << "," << j;
    }
  std::ofstream(out) << beam_searches_run() << "\n";
}

TEST(BeamCache, SecondProcessDoesNotSearch) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tg_beam_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string out = (dir / "count").string();
  std::string cmd = "CACHEDIR=" + (dir / "cache").string() + " CACHELEVEL=2 BEAM_TIME_LIMIT=20 TG_BEAM_CHILD_OUT=" + out +
                    " /proc/" + std::to_string(::getpid()) + "/exe --gtest_also_run_disabled_tests --gtest_filter=BeamChild.DISABLED_RunOnce > " +
                    (dir / "log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file((dir / "log").string());
  EXPECT_GE(std::stoi(read_file(out)), 1) << "the first process searches";
  fs::remove(out);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file((dir / "log").string());
  EXPECT_EQ(std::stoi(read_file(out)), 0) << "the second process reads the winner from the disk cache";
  fs::remove_all(dir);
}

TEST(BeamCache, OptsRoundTrip) {
  std::vector<Opt> opts{{OptOps::UPCAST, 1, 16}, {OptOps::UNROLL, 0, 4}, {OptOps::PADTO, 2, 32}};
  EXPECT_EQ(opts_from_string(opts_to_string(opts)), opts);
  EXPECT_TRUE(opts_from_string("").empty());
  EXPECT_THROW(opts_from_string("UPCAST x"), Error);
  EXPECT_THROW(opts_from_string("SPLIT 1 2"), Error);
}

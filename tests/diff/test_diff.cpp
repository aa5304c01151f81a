// The random-graph differential test: programs from tests/diff/program.h, one gtest case a seed, run on
// tg (in a sandboxed child) and in NumPy. `--seeds=FIRST:COUNT` picks the seeds (ctest runs two halves
// in parallel). A failure shows the program, the expected and the actual values; for a minimal C++
// repro run `fuzz_graphs --seed S --count 1`, or set DIFF_SHRINK=1 here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "check.h"

namespace {

uint64_t g_first = 0, g_count = 250;

tgdiff::Checker& checker() {
  static std::unique_ptr<tgdiff::Checker> c = std::make_unique<tgdiff::Checker>();
  return *c;
}

class Diff : public ::testing::TestWithParam<uint64_t> {};

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

// The long differential campaign: random lazy graphs (tests/diff/program.h) on tg against NumPy.
//
//   fuzz_graphs [--seed S] [--count N] [--timeout SECONDS] [--no-shrink] [--print] [--json] [--reuse-child]
//
// --print only lists the programs (and their C++ form) without running them; --json prints them as
// the JSON that tests/diff/numpy_ref.py reads (one request a line, for debugging the reference). --reuse-child runs programs
// in one child until one crashes (faster; see tests/diff/sandbox.h for what that gives up).
// Prints progress, and for each failing seed the verdict, the shrunk program with its expected and
// actual values, and a standalone C++ repro. A crash or hang of one program ends only its sandboxed
// child. At the end, a table of failures by kind and by the ops of the shrunk program. Exit status 1
// when anything failed.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "check.h"

int main(int argc, char** argv) {
  uint64_t seed = 0, count = 1000;
  int timeout = 120;
  bool shrink = true, print = false, json = false, reuse = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::cerr << a << " needs a value\n"; std::exit(2); }
      return argv[++i];
    };
    if (a == "--seed") seed = std::stoull(next());
    else if (a == "--count") count = std::stoull(next());
    else if (a == "--timeout") timeout = std::stoi(next());
    else if (a == "--no-shrink") shrink = false;
    else if (a == "--print") print = true;
    else if (a == "--json") json = true;
    else if (a == "--reuse-child") reuse = true;
    else {
      std::cerr << "usage: fuzz_graphs [--seed S] [--count N] [--timeout SECONDS] [--no-shrink] [--print] [--json] [--reuse-child]\n";
      return 2;
    }
  }
  if (print || json) {
    for (uint64_t s = seed; s < seed + count; s++) {
      tgdiff::Program p = tgdiff::generate(s);
      if (json) std::cout << nlohmann::json({{"program", tgdiff::to_json(p)}, {"runs", 8}}).dump() << "\n";
      else std::cout << "==== seed " << s << "\n" << tgdiff::describe(p) << tgdiff::to_cpp(p);
    }
    return 0;
  }
  tgdiff::Checker checker(timeout, reuse);
  std::map<std::string, int> by_class;
  std::map<std::string, std::vector<uint64_t>> seeds_of;
  int failed = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t s = seed; s < seed + count; s++) {
    tgdiff::Program p = tgdiff::generate(s);
    tgdiff::Verdict v = checker.check(p);
    if (v.kind != tgdiff::Verdict::Pass) {
      failed++;
      std::cout << "\n==== seed " << s << ": " << v.summary << "\n";
      tgdiff::Program small = p;
      tgdiff::Verdict sv = v;
      if (shrink) {
        small = checker.shrink(p, v.kind);
        sv = checker.check(small);
      }
      std::cout << tgdiff::report(small, sv) << "--- C++ repro ---\n" << tgdiff::to_cpp(small) << std::flush;
      std::set<std::string> ops;
      for (const tgdiff::Node& n : small.nodes)
        if (n.kind != "input") ops.insert(n.kind == "scalar" ? "scalar " + n.sub : n.kind);
      std::string cls = std::string(tgdiff::kind_name(v.kind)) + ":";
      for (const std::string& o : ops) cls += " " + o;
      by_class[cls]++;
      seeds_of[cls].push_back(s);
    }
    uint64_t done = s - seed + 1;
    if (done % 50 == 0 || done == count) {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::cerr << "[" << done << "/" << count << "] " << failed << " failing, " << secs << " s\n";
    }
  }
  std::cout << "\n==== " << count << " programs (seeds " << seed << ".." << seed + count - 1 << "), " << failed << " failing\n";
  for (auto& [cls, n] : by_class) {
    std::cout << n << "  " << cls << "  (seeds";
    for (size_t i = 0; i < seeds_of[cls].size() && i < 8; i++) std::cout << " " << seeds_of[cls][i];
    std::cout << (seeds_of[cls].size() > 8 ? " ...)" : ")") << "\n";
  }
  return failed ? 1 : 0;
}

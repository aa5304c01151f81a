// One differential check: a Program on tg (in the sandbox) against NumPy, with the verdict and a report
// that shows the program, the expected and the actual values; and a shrinker for failing programs.
#pragma once
#include <functional>
#include <string>

#include "program.h"
#include "ref_process.h"
#include "sandbox.h"

namespace tgdiff {

struct Verdict {
  enum Kind { Pass, Mismatch, Error, Crash, Timeout, RefError } kind = Pass;
  std::string summary;  // one line: "mismatch in output v7 (float32(2, 3)): 2 of 6 elements differ"
  std::string detail;   // expected and actual values, the first differing elements
};
const char* kind_name(Verdict::Kind k);

struct Checker {
  NumpyRef ref;
  Sandbox sandbox;
  int runs = 8;  // noisy NumPy runs per program (see numpy_ref.py)
  explicit Checker(int timeout_s = 120, bool reuse_child = false) : sandbox(timeout_s, ref.fds(), reuse_child) {}
  Verdict check(const Program& p);
  // The smallest program found (by dropping outputs and nodes, cutting the graph at an earlier value,
  // and replacing a subgraph by an input holding NumPy's values for it) that still fails with the same
  // kind of verdict. At most `budget` programs are run.
  Program shrink(const Program& p, Verdict::Kind kind, int budget = 300);
};

// Compares tg's reply (run_on_tg) with NumPy's (numpy_ref.py): dtypes and shapes exactly, ints and bools
// inside NumPy's envelope (exact unless rounding upstream can change them), floats inside the envelope
// plus a margin of a couple of units of roundoff; NaN only where some NumPy run gives NaN.
Verdict compare(const Program& p, const nlohmann::json& ref_reply, const nlohmann::json& tg_reply);

// The message for a failure: the verdict, the program listing and the values.
std::string report(const Program& p, const Verdict& v);

}  // namespace tgdiff

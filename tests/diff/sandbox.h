// Runs programs on tg in a forked child, so that a crash (SIGSEGV, SIGFPE, an abort) or a hang of one
// program is reported for that program and the next one runs in a fresh child.
//
// The parent never touches the engine (no thread pool, no device): the child is forked from a process
// with one thread. By default every program gets a fresh child, so a result never depends on what ran
// before it (an earlier program's memory corruption, caches); `reuse` keeps one child until a program
// kills it, which is faster but lets such state leak from one program into the next.
#pragma once
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "program.h"

namespace tgdiff {

class Sandbox {
 public:
  // `close_in_child`: descriptors of the parent the child must not hold (the NumPy process's pipes).
  explicit Sandbox(int timeout_s, std::vector<int> close_in_child = {}, bool reuse = false);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  // run_on_tg's reply, or {"ok": false, "crash": "killed by signal 8 (Floating point exception)"} /
  // {"ok": false, "timeout": "no answer within N s"}.
  nlohmann::json run(const Program& p);

 private:
  void start();
  void stop();
  int timeout_s_;
  bool reuse_;
  std::vector<int> close_in_child_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

}  // namespace tgdiff

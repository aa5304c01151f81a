// Small helpers shared by the tg_tests files.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tg/error.h"
#include "uop/uop.h"

// Runs f, expects a tg::Error, and returns its message ("" when none was thrown).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tg::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected tg::Error, got another exception: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected tg::Error, nothing was thrown";
  return "";
}

// How often `sub` occurs in `s` (not overlapping).
inline size_t count_substr(const std::string& s, const std::string& sub) {
  size_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) n++;
  return n;
}

// Whether a rendered CPU kernel is LLVM IR (CPU_COMPILER=llvm) rather than C.
inline bool is_llvm_ir(const std::string& src) { return src.find("define void @") != std::string::npos; }

// The loop variables of a rendered CPU kernel in the order they appear (outermost first), C or LLVM IR.
inline std::vector<std::string> loop_vars(const std::string& src) {
  // an LLVM loop is a block "<variable>_head:"; a C loop a for statement
  std::regex re(is_llvm_ir(src) ? R"(\n([a-z]+[0-9]+(_[0-9]+)*)_head:)" : R"(for \((?:int|long long) ([a-z]+[0-9]+(_[0-9]+)?) = )");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

// A loop RANGE over [0, n) for dim `axis` (its loop order the same), as the lowerer makes them.
inline tg::UOpPtr loop_range(int axis, int64_t n) {
  using namespace tg;
  return UOp::make(Ops::RANGE, dtypes::int32, {UOp::index_const(0), UOp::index_const(n)}, RangeArg{RangeKind::Loop, axis, axis, {}});
}

// Sets (or, with nullopt, unsets) an environment variable for a scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
 private:
  std::string name_;
  std::optional<std::string> old_;
};

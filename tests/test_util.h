// Small helpers shared by the tg_tests files.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>

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

// A loop RANGE over [0, n) for dim `axis` (its loop order the same), as the lowerer makes them.
inline tg::UOpPtr loop_range(int axis, int64_t n) {
  using namespace tg;
  return UOp::make(Ops::RANGE, dtypes::int32, {UOp::index_const(0), UOp::index_const(n)}, RangeArg{RangeKind::Loop, axis, axis, {}});
}

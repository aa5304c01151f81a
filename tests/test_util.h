// Small helpers shared by the tg_tests files.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tg/error.h"

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

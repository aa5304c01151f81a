// Helpers of the bad-input catalogue (tests/test_bad_inputs_*.cpp): every case is one TEST, so under
// ctest (gtest_discover_tests) each runs in its own process and a crash fails only that case.
//
// A value case compares with a literal from bad_inputs_ref.h, which tests/bad_inputs_ref.py computes with
// PyTorch / NumPy (regenerate: /usr/bin/python3 tests/bad_inputs_ref.py > tests/bad_inputs_ref.h).
// An error case expects a tg::Error whose message starts with the op the user called and shows the
// user's shapes.
#pragma once
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bad_inputs_ref.h"
#include "tg/tg.h"

namespace bad_inputs {

// t has r's shape and, elementwise, its values: NaN where r has NaN, the same infinity, else within
// atol + rtol * |r|.
inline void expect_ref(const tg::Tensor& t, const Ref& r, double rtol = 1e-5, double atol = 1e-6) {
  ASSERT_EQ(t.shape(), r.shape);
  std::vector<double> v = t.cast(tg::dtypes::float64).tolist<double>();
  ASSERT_EQ(v.size(), r.values.size());
  for (size_t i = 0; i < v.size(); i++) {
    double want = r.values[i], got = v[i];
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want nan";
    else if (std::isinf(want)) EXPECT_EQ(got, want) << "element " << i;
    else EXPECT_NEAR(got, want, atol + rtol * std::fabs(want)) << "element " << i;
  }
}

// f throws a tg::Error whose message begins with "<op>:" and contains every one of `parts`.
inline void expect_user_error(const std::function<void()>& f, const std::string& op, const std::vector<std::string>& parts = {}) {
  std::string msg;
  try {
    f();
  } catch (const tg::Error& e) {
    msg = e.what();
  } catch (const std::exception& e) {
    FAIL() << "expected tg::Error, got another exception: " << e.what();
  }
  ASSERT_FALSE(msg.empty()) << "expected tg::Error naming " << op << ", nothing was thrown";
  EXPECT_THAT(msg, ::testing::StartsWith(op + ":"));
  for (const std::string& p : parts) EXPECT_THAT(msg, ::testing::HasSubstr(p));
}

// Runs f with CHECK_INDEX=1 (the opt-in range check of index tensors).
inline void checked(const std::function<void()>& f) {
  tg::Context ctx{{"CHECK_INDEX", 1}};
  f();
}

}  // namespace bad_inputs

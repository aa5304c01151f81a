// Bad-input catalogue: arguments PyTorch refuses (pool padding over half the kernel, fill values that do
// not fit the dtype, arange to NaN/inf) are a tg::Error naming the op; the neighbouring valid ones give
// PyTorch's values.
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
Tensor img() { return Tensor::arange(0, 16, 1, dtypes::float32).reshape({1, 1, 4, 4}); }
}  // namespace

TEST(BadInputsInvalid, MaxPoolPaddingOverHalfKernel) {
  expect_user_error([] { (void)img().max_pool2d({2, 2}, {}, {1}, {2}); }, "max_pool2d", {"(1,1,4,4)", "half"});
}
TEST(BadInputsInvalid, MaxPoolPaddingOverHalfDilatedKernel) {
  expect_user_error([] { (void)Tensor::ones({1, 1, 8, 8}).max_pool2d({3, 3}, {}, {2}, {2}); }, "max_pool2d", {"(1,1,8,8)"});
}
TEST(BadInputsInvalid, MaxPoolAsymmetricPaddingOverHalf) {
  expect_user_error([] { (void)img().max_pool2d({2, 2}, {}, {1}, {0, 0, 0, 2}); }, "max_pool2d", {"(1,1,4,4)"});
}
TEST(BadInputsInvalid, MaxPoolNegativePadding) {
  expect_user_error([] { (void)img().max_pool2d({2, 2}, {}, {1}, {-1}); }, "max_pool2d", {"(1,1,4,4)"});
}
TEST(BadInputsInvalid, MaxPoolPaddingHalfKernel) { expect_ref(img().max_pool2d({2, 2}, {}, {1}, {1}), invalid_max_pool_pad_half); }
TEST(BadInputsInvalid, AvgPoolPaddingOverHalfKernel) {
  expect_user_error([] { (void)img().avg_pool2d({3, 3}, {}, {1}, {2}); }, "avg_pool2d", {"(1,1,4,4)", "half"});
}
TEST(BadInputsInvalid, AvgPoolPaddingHalfKernel) { expect_ref(img().avg_pool2d({3, 3}, {}, {1}, {1}), invalid_avg_pool_pad_half); }

TEST(BadInputsInvalid, FullNanInt32) { expect_user_error([] { (void)Tensor::full({2}, NAN, dtypes::int32); }, "full", {"nan", "int32"}); }
TEST(BadInputsInvalid, FullHugeInt32) { expect_user_error([] { (void)Tensor::full({2}, 1e20, dtypes::int32); }, "full", {"int32"}); }
TEST(BadInputsInvalid, Full2Pow31Int32) {
  expect_user_error([] { (void)Tensor::full({2}, 2147483648.0, dtypes::int32); }, "full", {"int32"});
}
// 2^63 rounds from int64's max in double: a bound check against max() alone let it through to wrap
TEST(BadInputsInvalid, Full2e63Int64) { expect_user_error([] { (void)Tensor::full({2}, 0x1p63, dtypes::int64); }, "full", {"9223372036854775808", "int64"}); }
TEST(BadInputsInvalid, Full2e64Uint64) { expect_user_error([] { (void)Tensor::full({2}, 0x1p64, dtypes::uint64); }, "full", {"uint64"}); }
TEST(BadInputsInvalid, FullInfInt64) { expect_user_error([] { (void)Tensor::full({2}, INFINITY, dtypes::int64); }, "full", {"int64"}); }
TEST(BadInputsInvalid, Full300Uint8) { expect_user_error([] { (void)Tensor::full({2}, 300, dtypes::uint8); }, "full", {"300", "uint8"}); }
TEST(BadInputsInvalid, Full128Int8) { expect_user_error([] { (void)Tensor::full({2}, 128, dtypes::int8); }, "full", {"int8"}); }
TEST(BadInputsInvalid, FullHugeHalf) { expect_user_error([] { (void)Tensor::full({2}, 1e20, dtypes::float16); }, "full", {"float16"}); }
TEST(BadInputsInvalid, FullJustOverHalfMax) { expect_user_error([] { (void)Tensor::full({2}, 65519, dtypes::float16); }, "full", {"float16"}); }
TEST(BadInputsInvalid, FullHugeFloat32) { expect_user_error([] { (void)Tensor::full({2}, 1e300, dtypes::float32); }, "full", {"float32"}); }
TEST(BadInputsInvalid, FullIntMin) { expect_ref(Tensor::full({2}, -2147483648.0, dtypes::int32), invalid_full_int_min); }
TEST(BadInputsInvalid, FullUint8MinusOneWraps) { expect_ref(Tensor::full({2}, -1, dtypes::uint8), invalid_full_uint8_neg); }
TEST(BadInputsInvalid, FullHalfInf) { expect_ref(Tensor::full({2}, INFINITY, dtypes::float16), invalid_full_half_inf); }
TEST(BadInputsInvalid, FullFloatNan) { expect_ref(Tensor::full({2}, NAN, dtypes::float32), invalid_full_float_nan); }
TEST(BadInputsInvalid, FullBoolNan) { expect_ref(Tensor::full({2}, NAN, dtypes::bool_), invalid_full_bool_nan); }
TEST(BadInputsInvalid, FullIntTruncates) { expect_ref(Tensor::full({2}, 1.5, dtypes::int32), invalid_full_int_truncates); }
TEST(BadInputsInvalid, FullLikeHugeInt) {
  expect_user_error([] { (void)Tensor({1, 2}).full_like(1e20); }, "full_like", {"int32"});
}
TEST(BadInputsInvalid, ScalarTensorHugeInt) {
  expect_user_error([] { (void)Tensor(1e20, dtypes::int32); }, "Tensor", {"int32"});
}
TEST(BadInputsInvalid, MaskedFillHugeInt) {
  expect_user_error([] { (void)Tensor({1, 2}).masked_fill(Tensor({true, false}), 1e20); }, "masked_fill", {"int32"});
}
TEST(BadInputsInvalid, MaskedFillNanInt) {
  expect_user_error([] { (void)Tensor({1, 2}).masked_fill(Tensor({true, false}), NAN); }, "masked_fill", {"int32"});
}
TEST(BadInputsInvalid, ScatterHugeValue) {
  expect_user_error([] { (void)Tensor({1, 2}).scatter(0, Tensor({0}), 1e20); }, "scatter", {"int32"});
}
TEST(BadInputsInvalid, PadHugeValue) { expect_user_error([] { (void)Tensor({1, 2}).pad({{1, 1}}, 1e20); }, "pad", {"int32"}); }
TEST(BadInputsInvalid, Pad2dHalfOverflow) {
  expect_user_error([] { (void)Tensor::ones({2}, dtypes::float16).pad2d({1, 1}, 1e6); }, "pad2d", {"float16"});
}
TEST(BadInputsInvalid, BitwiseNotUint64) {  // numpy: ~np.uint64([0, 5]) (not representable as doubles)
  EXPECT_EQ(Tensor(std::vector<uint64_t>{0, 5}, {2}).bitwise_not().tolist<uint64_t>(),
            (std::vector<uint64_t>{18446744073709551615ull, 18446744073709551610ull}));
}
TEST(BadInputsInvalid, ScalarAddWraps) {  // a C++ scalar next to a tensor wraps, as torch
  expect_ref(Tensor({1}) + int64_t{3000000000}, invalid_scalar_add_wraps);
}
TEST(BadInputsInvalid, ScalarAddUint8Wraps) {
  expect_ref(Tensor(std::vector<uint8_t>{1}, {1}) + 300, invalid_scalar_add_uint8_wraps);
}

TEST(BadInputsInvalid, ArangeToInf) { expect_user_error([] { (void)Tensor::arange(0, INFINITY); }, "arange", {"inf"}); }
TEST(BadInputsInvalid, ArangeToNan) { expect_user_error([] { (void)Tensor::arange(0, NAN); }, "arange", {"nan"}); }
TEST(BadInputsInvalid, ArangeFromNan) { expect_user_error([] { (void)Tensor::arange(NAN, 5); }, "arange", {"nan"}); }
TEST(BadInputsInvalid, ArangeFromNegInf) { expect_user_error([] { (void)Tensor::arange(-INFINITY, 0); }, "arange", {"inf"}); }
TEST(BadInputsInvalid, ArangeNanStep) { expect_user_error([] { (void)Tensor::arange(0, 5, NAN); }, "arange", {"nan"}); }
TEST(BadInputsInvalid, ArangeZeroStep) { expect_user_error([] { (void)Tensor::arange(0, 5, 0); }, "arange", {"step"}); }
TEST(BadInputsInvalid, ArangeTinyStep) { expect_user_error([] { (void)Tensor::arange(0, 1, 1e-300); }, "arange"); }
TEST(BadInputsInvalid, ArangeWrongDirection) { expect_user_error([] { (void)Tensor::arange(0, 5, -1); }, "arange", {"-1"}); }
TEST(BadInputsInvalid, ArangeInfStep) { expect_ref(Tensor::arange(0, 5, INFINITY), invalid_arange_step_inf); }
TEST(BadInputsInvalid, ArangeEmpty) { expect_ref(Tensor::arange(5, 5, 1), invalid_arange_empty); }
TEST(BadInputsInvalid, ArangeDown) { expect_ref(Tensor::arange(5, 0, -2), invalid_arange_down); }
// a range whose ends are not values of its dtype: torch wraps integers and overflows float16 to inf
TEST(BadInputsInvalid, ArangePastInt32) {
  expect_user_error([] { (void)Tensor::arange(2147483653.0, 2147483656.0); }, "arange", {"2147483653", "int32"});
}
TEST(BadInputsInvalid, ArangeLastPastInt32) {
  expect_user_error([] { (void)Tensor::arange(2147483640.0, 2147483650.0, 3); }, "arange", {"2147483649", "int32"});
}
TEST(BadInputsInvalid, ArangePastUint8) { expect_user_error([] { (void)Tensor::arange(250, 260, 1, dtypes::uint8); }, "arange", {"259", "uint8"}); }
TEST(BadInputsInvalid, ArangeBelowUint8) { expect_user_error([] { (void)Tensor::arange(-3, 3, 1, dtypes::uint8); }, "arange", {"-3", "uint8"}); }
TEST(BadInputsInvalid, ArangePastHalf) { expect_user_error([] { (void)Tensor::arange(0, 70000, 1, dtypes::float16); }, "arange", {"float16"}); }
TEST(BadInputsInvalid, ArangeTo2e63Int64) {
  expect_user_error([] { (void)Tensor::arange(0x1p63 - 4096, 0x1p63 + 4096, 4096, dtypes::int64); }, "arange", {"9223372036854775808", "int64"});
}
// the neighbours that fit: int64 and uint64 ends exactly, a downward integer step, one element of any step
TEST(BadInputsInvalid, ArangeAtTheIntegerEnds) {
  EXPECT_EQ(Tensor::arange(2147483645.0, 2147483648.0).tolist<int32_t>(), (std::vector<int32_t>{2147483645, 2147483646, 2147483647}));
  EXPECT_EQ(Tensor::arange(-0x1p63, -0x1p63 + 3 * 4096, 4096, dtypes::int64).tolist<int64_t>(), (std::vector<int64_t>{INT64_MIN, INT64_MIN + 4096, INT64_MIN + 8192}));
  uint64_t top = uint64_t{1} << 63;
  EXPECT_EQ(Tensor::arange(0x1p63, 0x1p63 + 3 * 4096, 4096, dtypes::uint64).tolist<uint64_t>(), (std::vector<uint64_t>{top, top + 4096, top + 8192}));
  EXPECT_EQ(Tensor::arange(0x1p64 - 4096, 0x1p63, -0x1p62, dtypes::uint64).tolist<uint64_t>(), (std::vector<uint64_t>{UINT64_MAX - 4095, UINT64_MAX - 4095 - (uint64_t{1} << 62)}));
  EXPECT_EQ(Tensor::arange(5, -5, -3, dtypes::int64).tolist<int64_t>(), (std::vector<int64_t>{5, 2, -1, -4}));
  // a step of 2^63, past int64's range itself
  EXPECT_EQ(Tensor::arange(-0x1p63, 0x1p62, 0x1p63, dtypes::int64).tolist<int64_t>(), (std::vector<int64_t>{INT64_MIN, 0}));
  EXPECT_EQ(Tensor::arange(0, 0x1p64 - 4096, 0x1p63, dtypes::uint64).tolist<uint64_t>(), (std::vector<uint64_t>{0, top}));
  EXPECT_EQ(Tensor::arange(255, 250, -2, dtypes::uint8).tolist<uint8_t>(), (std::vector<uint8_t>{255, 253, 251}));
  EXPECT_EQ(Tensor::arange(7, 8, 1e300).tolist<int32_t>(), (std::vector<int32_t>{7}));
}
TEST(BadInputsInvalid, LinspaceNegativeSteps) { expect_user_error([] { (void)Tensor::linspace(0, 1, -1); }, "linspace", {"-1"}); }
TEST(BadInputsInvalid, LinspaceTooManySteps) { expect_user_error([] { (void)Tensor::linspace(0, 1, int64_t{1} << 40); }, "linspace"); }
TEST(BadInputsInvalid, RandintEmptyRange) { expect_user_error([] { (void)Tensor::randint({2}, 5, 5); }, "randint", {"5"}); }
TEST(BadInputsInvalid, DropoutP) { expect_user_error([] { (void)Tensor::ones({2}).dropout(2); }, "dropout", {"2"}); }

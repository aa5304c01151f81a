// Bad-input catalogue: integer division truncates toward zero, x / 0 == 0 and INT_MIN / -1 == INT_MIN
// (wraps), the same in a kernel (data from the host) and in constant folding (both operands constants).
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

TEST(BadInputsIntDiv, ByZero) { expect_ref(Tensor({7, -7, 0}).idiv(Tensor({0, 0, 0})), int_div_by_zero); }
TEST(BadInputsIntDiv, ByZeroFolded) {
  expect_ref(Tensor::full({2}, 7, dtypes::int32).idiv(Tensor::full({2}, 0, dtypes::int32)), int_div_by_zero_folded);
}
TEST(BadInputsIntDiv, MinByMinusOne) { expect_ref(Tensor({INT32_MIN, 5}).idiv(Tensor({-1, -1})), int_div_min_by_neg1); }
TEST(BadInputsIntDiv, MinByMinusOneFolded) {
  expect_ref(Tensor::full({1}, INT32_MIN, dtypes::int32).idiv(Tensor::full({1}, -1, dtypes::int32)), int_div_min_by_neg1_folded);
}
TEST(BadInputsIntDiv, Int64MinByMinusOne) {
  expect_ref(Tensor(std::vector<int64_t>{INT64_MIN}, {1}).idiv(Tensor(std::vector<int64_t>{-1}, {1})), int_div_int64_min);
}
TEST(BadInputsIntDiv, Int8) {
  expect_ref(Tensor(std::vector<int8_t>{-128, 100}, {2}).idiv(Tensor(std::vector<int8_t>{-1, 0}, {2})), int_div_int8_min);
}
TEST(BadInputsIntDiv, Truncates) { expect_ref(Tensor({-7, 7, -7, 7}).idiv(Tensor({2, -2, -2, 2})), int_div_truncates); }
TEST(BadInputsIntDiv, Uint8ByZero) {
  expect_ref(Tensor(std::vector<uint8_t>{200, 3}, {2}).idiv(Tensor(std::vector<uint8_t>{0, 2}, {2})), int_div_uint8_by_zero);
}
TEST(BadInputsIntDiv, ByScalarZero) { expect_ref(Tensor({9, -9}).idiv(Tensor(0)), int_div_scalar_zero); }
TEST(BadInputsIntDiv, MixedFolded) {
  expect_ref((Tensor::full({2}, 7, dtypes::int32) + Tensor({0, 1})).idiv(Tensor::full({2}, 0, dtypes::int32)), int_div_mixed_folded);
}
// a % 0 == a for integers (idiv's a / 0 == 0), where torch raises; never a trap, also for the most negative
// dividend, folded or from the host
TEST(BadInputsIntDiv, ModByZero) {
  EXPECT_EQ((Tensor({7, -7, 0, INT32_MIN}) % Tensor({0, 0, 0, 0})).tolist<int>(), (std::vector<int>{7, -7, 0, INT32_MIN}));
  EXPECT_EQ((Tensor::full({2}, -9, dtypes::int32) % Tensor::full({2}, 0, dtypes::int32)).tolist<int>(), (std::vector<int>{-9, -9}));
  EXPECT_EQ((Tensor(std::vector<uint8_t>{200, 3}, {2}) % Tensor(std::vector<uint8_t>{0, 2}, {2})).tolist<uint8_t>(),
            (std::vector<uint8_t>{200, 1}));
  expect_user_error([] { (void)(Tensor({true}) % Tensor({false})); }, "mod", {"bool"});
}
TEST(BadInputsIntDiv, FloatOperands) {
  expect_user_error([] { (void)Tensor({1.f}).idiv(Tensor({2.f})); }, "idiv", {"float32"});
}

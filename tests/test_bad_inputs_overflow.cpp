// Bad-input catalogue: shapes whose element count (or byte size) does not fit int64 are a tg::Error
// naming the op that makes them, never a tensor whose numel wrapped around.
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
constexpr int64_t k32 = int64_t{1} << 32, k62 = int64_t{1} << 62;
const char* kHuge = "(4294967296,4294967296)";
}  // namespace

TEST(BadInputsOverflow, Zeros) { expect_user_error([] { (void)Tensor::zeros({k32, k32}); }, "zeros", {kHuge}); }
TEST(BadInputsOverflow, Ones) { expect_user_error([] { (void)Tensor::ones({k32, k32}); }, "ones", {kHuge}); }
TEST(BadInputsOverflow, Full) { expect_user_error([] { (void)Tensor::full({k32, k32}, 2); }, "full", {kHuge}); }
TEST(BadInputsOverflow, Empty) { expect_user_error([] { (void)Tensor::empty({k32, k32}); }, "empty", {kHuge}); }
TEST(BadInputsOverflow, Rand) { expect_user_error([] { (void)Tensor::rand({k32, k32}); }, "rand", {kHuge}); }
TEST(BadInputsOverflow, Randn) { expect_user_error([] { (void)Tensor::randn({k32, k32}); }, "randn", {kHuge}); }
TEST(BadInputsOverflow, Randint) { expect_user_error([] { (void)Tensor::randint({k32, k32}, 0, 5); }, "randint", {kHuge}); }
TEST(BadInputsOverflow, Uniform) { expect_user_error([] { (void)Tensor::uniform({k32, k32}); }, "uniform", {kHuge}); }
TEST(BadInputsOverflow, Normal) { expect_user_error([] { (void)Tensor::normal({k32, k32}); }, "normal", {kHuge}); }
TEST(BadInputsOverflow, KaimingUniform) {
  expect_user_error([] { (void)Tensor::kaiming_uniform({k32, k32}); }, "kaiming_uniform", {kHuge});
}
TEST(BadInputsOverflow, ByteSize) {  // 2^62 elements fit int64, their 2^64 bytes do not
  expect_user_error([] { (void)Tensor::zeros({k62}); }, "zeros", {"(4611686018427387904,)", "float32"});
}
TEST(BadInputsOverflow, ZeroDimBesideHugeDims) {  // no elements, but the strides of its views would overflow
  expect_user_error([] { (void)Tensor::zeros({0, k32, k32}); }, "zeros", {"(0,4294967296,4294967296)"});
}
TEST(BadInputsOverflow, ZeroSizeIsFine) { EXPECT_EQ(Tensor::zeros({0, 5}).numel(), 0); }
TEST(BadInputsOverflow, Reshape) {
  expect_user_error([] { (void)Tensor::zeros({0}).reshape({k32, k32, 0}); }, "reshape", {"(0,)", "(4294967296,4294967296,0)"});
}
TEST(BadInputsOverflow, ReshapeInferred) {
  expect_user_error([] { (void)Tensor::zeros({0}).reshape({k32, k32, -1}); }, "reshape", {"(0,)"});
}
TEST(BadInputsOverflow, Expand) {
  expect_user_error([] { (void)Tensor::ones({1, 1}).expand({k32, k32}); }, "expand", {"(1,1)", kHuge});
}
TEST(BadInputsOverflow, PadInt64Max) {
  expect_user_error([] { (void)Tensor::ones({2}).pad({{INT64_MAX, 1}}); }, "pad", {"(2,)"});
}
TEST(BadInputsOverflow, PadByteSize) { expect_user_error([] { (void)Tensor::ones({1}).pad({{k62, 0}}); }, "pad", {"(1,)"}); }
TEST(BadInputsOverflow, Pad2d) { expect_user_error([] { (void)Tensor::ones({2}).pad2d({INT64_MAX, 0}); }, "pad2d", {"(2,)"}); }
TEST(BadInputsOverflow, Repeat) {
  expect_user_error([] { (void)Tensor::ones({2, 2}).repeat({k62, 4}); }, "repeat", {"(2,2)"});
}
TEST(BadInputsOverflow, Cat) {
  expect_user_error([] {
    Tensor big = Tensor::ones({1}, dtypes::uint8).expand({k62});
    (void)Tensor::cat({big, big, big});
  }, "cat", {"(4611686018427387904,)"});
}
TEST(BadInputsOverflow, Stack) {
  expect_user_error([] {
    Tensor big = Tensor::ones({1}, dtypes::uint8).expand({k62});
    (void)Tensor::stack({big, big, big});
  }, "stack", {"(4611686018427387904,)"});
}
TEST(BadInputsOverflow, Meshgrid) {
  expect_user_error([] {
    Tensor t = Tensor::ones({1}, dtypes::uint8).expand({int64_t{1} << 22});
    (void)Tensor::meshgrid({t, t, t});
  }, "meshgrid", {"(4194304,4194304,4194304)"});
}
TEST(BadInputsOverflow, Eye) { expect_user_error([] { (void)Tensor::eye(k32); }, "eye", {"4294967296"}); }
TEST(BadInputsOverflow, OneHot) { expect_user_error([] { (void)Tensor({1, 2}).one_hot(int64_t{1} << 40); }, "one_hot", {"(2,)"}); }
TEST(BadInputsOverflow, FromVector) {
  expect_user_error([] { (void)Tensor(std::vector<float>{1}, {k32, k32}); }, "Tensor", {kHuge});
}
TEST(BadInputsOverflow, FromHost) {
  float v = 1;
  expect_user_error([&] { (void)Tensor::from_host(&v, 1, {k32, k32}, dtypes::float32); }, "from_host", {kHuge});
}
TEST(BadInputsOverflow, FromHostNullPointer) {  // no data behind the pointer: an error, not a crash
  expect_user_error([] { (void)Tensor::from_host(nullptr, 4, {4}, dtypes::float32); }, "from_host", {"null", "(4,)", "float32"});
  expect_user_error([] { (void)Tensor::from_host(nullptr, 4, {2, 2}, dtypes::bool_); }, "from_host", {"null", "(2,2)", "bool"});
  EXPECT_EQ(Tensor::from_host(nullptr, 0, {0, 3}, dtypes::int32).shape(), (Shape{0, 3}));  // nothing to read
}
TEST(BadInputsOverflow, FromHostNegativeDim) {
  float v = 1;
  expect_user_error([&] { (void)Tensor::from_host(&v, 1, {-1}, dtypes::float32); }, "from_host", {"(-1,)"});
}

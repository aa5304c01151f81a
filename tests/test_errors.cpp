// Bad inputs throw tg::Error with a message naming the op and the shapes involved; none of them crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "test_util.h"
#include "runtime/device.h"
#include "tg/error.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

Tensor t23() { return Tensor::ones({2, 3}); }

}  // namespace

TEST(ErrorsShape, BroadcastMismatch) {
  EXPECT_THROW(t23() + Tensor::ones({4}), tg::Error);
  EXPECT_THAT(error_of([] { (void)(t23() + Tensor::ones({4})); }), AllOf(HasSubstr("add"), HasSubstr("(2,3)"), HasSubstr("(4,)")));
  EXPECT_THAT(error_of([] { (void)t23().mul(Tensor::ones({3, 2})); }), AllOf(HasSubstr("mul"), HasSubstr("(2,3)"), HasSubstr("(3,2)")));
}

TEST(ErrorsShape, ReshapeToOtherSize) {
  EXPECT_THROW(t23().reshape({4}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().reshape({4}); }), AllOf(HasSubstr("reshape"), HasSubstr("(2,3)"), HasSubstr("(4,)")));
  EXPECT_THAT(error_of([] { (void)t23().reshape({7, 1}); }), AllOf(HasSubstr("reshape"), HasSubstr("(2,3)"), HasSubstr("(7,1)")));
  EXPECT_THAT(error_of([] { (void)t23().reshape({-1, -1}); }), HasSubstr("reshape"));
}

TEST(ErrorsShape, BadPermute) {
  EXPECT_THROW(t23().permute({0, 0}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().permute({0, 0}); }), AllOf(HasSubstr("permute"), HasSubstr("(2,3)")));
  EXPECT_THROW(t23().permute({1, 0, 2}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().permute({1, 0, 2}); }), AllOf(HasSubstr("permute"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().permute({0}); }), AllOf(HasSubstr("permute"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().permute({0, 2}); }), AllOf(HasSubstr("permute"), HasSubstr("(2,3)")));
}

TEST(ErrorsShape, NegativePad) {
  EXPECT_THROW(t23().pad({{0, 0}, {-1, 0}}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().pad({{0, 0}, {-1, 0}}); }), AllOf(HasSubstr("pad"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().pad({{1, 1}}); }), AllOf(HasSubstr("pad"), HasSubstr("(2,3)")));
}

TEST(ErrorsShape, AxisOutOfRange) {
  EXPECT_THROW(t23().sum({5}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().sum({5}); }), AllOf(HasSubstr("sum"), HasSubstr("5"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().sum({-3}); }), AllOf(HasSubstr("sum"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().max({2}); }), AllOf(HasSubstr("max"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().mean({9}); }), HasSubstr("(2,3)"));
  EXPECT_THAT(error_of([] { (void)t23().sum({0, 0}); }), AllOf(HasSubstr("sum"), HasSubstr("repeated")));
  EXPECT_THAT(error_of([] { (void)t23().unsqueeze(4); }), AllOf(HasSubstr("unsqueeze"), HasSubstr("(2,3)")));
}

TEST(ErrorsShape, ItemOfNonScalar) {
  EXPECT_THROW(Tensor({1, 2}).item<int>(), tg::Error);
  EXPECT_THAT(error_of([] { (void)Tensor({1, 2}).item<int>(); }), AllOf(HasSubstr("item"), HasSubstr("(2,)")));
  EXPECT_THAT(error_of([] { (void)t23().item<float>(); }), AllOf(HasSubstr("item"), HasSubstr("(2,3)")));
}

TEST(ErrorsDevice, UnknownDevice) {
  EXPECT_THROW(Tensor({1}, "FOO"), tg::Error);
  EXPECT_THAT(error_of([] { Tensor t({1}, "FOO"); }), HasSubstr("FOO"));
  EXPECT_THROW(Tensor({1}).to("NOPE"), tg::Error);
  EXPECT_THAT(error_of([] { (void)Tensor({1}).to("NOPE"); }), HasSubstr("NOPE"));
  EXPECT_THAT(error_of([] { (void)Tensor::zeros({2}, dtypes::float32, "NOPE:0"); }), HasSubstr("NOPE"));
  EXPECT_THAT(error_of([] { (void)Device::get("FOO"); }), HasSubstr("FOO"));
}

TEST(ErrorsShape, DotMismatch) {
  EXPECT_THROW(t23().dot(Tensor::ones({4, 5})), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().dot(Tensor::ones({4, 5})); }), AllOf(HasSubstr("dot"), HasSubstr("(2,3)"), HasSubstr("(4,5)")));
  EXPECT_THAT(error_of([] { (void)Tensor({1, 2}).dot(Tensor({1, 2, 3})); }), AllOf(HasSubstr("dot"), HasSubstr("(2,)"), HasSubstr("(3,)")));
  EXPECT_THAT(error_of([] { (void)Tensor(1.0f).dot(Tensor({1.f})); }), HasSubstr("dot"));
}

TEST(ErrorsShape, ExpandNonOneDim) {
  EXPECT_THROW(t23().expand({4, 3}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().expand({4, 3}); }), AllOf(HasSubstr("expand"), HasSubstr("(2,3)"), HasSubstr("(4,3)")));
  EXPECT_THAT(error_of([] { (void)t23().expand({3}); }), AllOf(HasSubstr("expand"), HasSubstr("(2,3)")));
}

TEST(ErrorsShape, ShrinkOutOfRange) {
  EXPECT_THROW(t23().shrink({{0, 2}, {0, 5}}), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().shrink({{0, 2}, {0, 5}}); }), AllOf(HasSubstr("shrink"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().shrink({{1, 0}, {0, 3}}); }), AllOf(HasSubstr("shrink"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().shrink({{-1, 1}, {0, 3}}); }), AllOf(HasSubstr("shrink"), HasSubstr("(2,3)")));
  EXPECT_THAT(error_of([] { (void)t23().shrink({{0, 1}}); }), AllOf(HasSubstr("shrink"), HasSubstr("(2,3)")));
}

TEST(ErrorsDtype, BitcastDifferentSizes) {
  EXPECT_THROW(t23().bitcast(dtypes::int16), tg::Error);
  EXPECT_THAT(error_of([] { (void)t23().bitcast(dtypes::int16); }), AllOf(HasSubstr("bitcast"), HasSubstr("float32"), HasSubstr("int16")));
  EXPECT_THAT(error_of([] { (void)Tensor({1, 2}).bitcast(dtypes::float64); }), AllOf(HasSubstr("bitcast"), HasSubstr("int32"), HasSubstr("float64")));
  // same size is fine
  EXPECT_NO_THROW((void)t23().bitcast(dtypes::int32));
}

TEST(ErrorsCompiler, CompileFailureCarriesSourceAndMessage) {
  const std::string src = "int main( { garbage";
  EXPECT_THROW(Device::get("CPU").compiler().compile(src), tg::Error);
  std::string msg = error_of([&] { (void)Device::get("CPU").compiler().compile(src); });
  EXPECT_THAT(msg, HasSubstr(src));
  EXPECT_THAT(msg, HasSubstr("error"));
}

TEST(ErrorsContext, UnknownKey) {
  int before = DEBUG;
  EXPECT_THROW((Context{{"NOT_A_SETTING", 1}}), tg::Error);
  EXPECT_THAT(error_of([] { Context c{{"NOT_A_SETTING", 1}}; }), HasSubstr("NOT_A_SETTING"));
  // a partially applied override is undone
  EXPECT_THROW((Context{{"DEBUG", 3}, {"NOT_A_SETTING", 1}}), tg::Error);
  EXPECT_EQ(static_cast<int>(DEBUG), before);
}

TEST(ErrorsCreation, BadCreationArguments) {
  EXPECT_THAT(error_of([] { (void)Tensor(std::vector<float>{1, 2, 3}, {2, 2}); }), AllOf(HasSubstr("3"), HasSubstr("(2,2)")));
  EXPECT_THAT(error_of([] { (void)Tensor::zeros({2, -1}); }), HasSubstr("(2,-1)"));
  EXPECT_THAT(error_of([] { (void)Tensor::arange(0, 5, 0); }), HasSubstr("arange"));
  EXPECT_THAT(error_of([] { (void)Tensor::eye(-1); }), HasSubstr("eye"));
  EXPECT_THAT(error_of([] { (void)Tensor::rand({2}, dtypes::int32); }), HasSubstr("rand"));
}

TEST(ErrorsNoCrash, TensorStillUsableAfterErrors) {
  Tensor a = t23();
  EXPECT_THROW(a.reshape({5}), tg::Error);
  EXPECT_THROW(a + Tensor::ones({4}), tg::Error);
  EXPECT_FLOAT_EQ(a.sum().item<float>(), 6.f);
}

// Elementwise math against PyTorch: src/tensor/math.cpp (trigonometry, pow, rounding, clipping,
// activations, logic) and the core ops of elementwise.cpp that test_autograd.cpp does not cover.
#include <gtest/gtest.h>

#include <cmath>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;
namespace dt = tg::dtypes;

namespace {

// Two shapes for unary ops, two broadcasting pairs for binary ones.
void unary(const TgFn& fn, const std::string& expr, const CheckOpts& o = {}) {
  for (const Shape& s : {Shape{4, 5}, Shape{2, 3, 4}}) check_op({s}, fn, expr, o);
}
void binary(const TgFn& fn, const std::string& expr, const CheckOpts& o = {}) {
  check_op({{4, 5}, {4, 5}}, fn, expr, o);
  check_op({{2, 3, 4}, {3, 1}}, fn, expr, o);
}
CheckOpts range(double low, double high) { return {.low = low, .high = high}; }
CheckOpts ints(double low, double high, tg::DType d = dt::int32) { return {.low = low, .high = high, .dtype = d}; }

}  // namespace

// ---- math.cpp ----------------------------------------------------------------------------------

TEST(Math, Trigonometry) {
  unary([](auto& x) { return x[0].rsqrt(); }, "torch.rsqrt(x0)", range(0.1, 3));
  unary([](auto& x) { return x[0].tan(); }, "torch.tan(x0)", range(-1.2, 1.2));
  unary([](auto& x) { return x[0].asin(); }, "torch.asin(x0)", range(-0.95, 0.95));
  unary([](auto& x) { return x[0].acos(); }, "torch.acos(x0)", range(-0.95, 0.95));
  // both sides of atan's |x| = 1 range reduction
  unary([](auto& x) { return x[0].atan(); }, "torch.atan(x0)", range(-6, 6));
  unary([](auto& x) { return x[0].sinh(); }, "torch.sinh(x0)", range(-3, 3));
  unary([](auto& x) { return x[0].cosh(); }, "torch.cosh(x0)", range(-3, 3));
  unary([](auto& x) { return x[0].erf(); }, "torch.erf(x0)", range(-3, 3));
  // integer inputs compute in float, as torch
  check_op({{3, 4}}, [](auto& x) { return x[0].rsqrt(); }, "torch.rsqrt(x0)", ints(1, 9));
  check_op({{3, 4}}, [](auto& x) { return x[0].erf(); }, "torch.erf(x0)", ints(-3, 3));
}

// asinh, acosh and atanh where the textbook log(x + sqrt(x^2 + 1)) has no digits left (large negative
// or tiny x) or overflows (huge x), to 16 ulp relative; their domains' ends and NaN as torch.
TEST(Math, InverseHyperbolic) {
  auto asinh = [](auto& x) { return std::vector{x[0].asinh()}; };
  auto acosh = [](auto& x) { return std::vector{x[0].acosh()}; };
  auto atanh = [](auto& x) { return std::vector{x[0].atanh()}; };
  unary([](auto& x) { return x[0].asinh(); }, "torch.asinh(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].acosh(); }, "torch.acosh(x0)", range(1.05, 6));
  unary([](auto& x) { return x[0].atanh(); }, "torch.atanh(x0)", range(-0.95, 0.95));
  CheckOpts tight{.atol = 0, .rtol = 2e-6, .grad = false};
  check_op_inputs({Tensor({-1e4f, -1e20f, 1e20f, 3e38f, 1e-6f, -1e-20f, 0.f, 0.5f, -30.f, 4096.f, 5793.f, 6000.f})}, asinh,
                  "torch.asinh(x0)", tight);
  check_op_inputs({Tensor({1.f, 1.000001f, 1.5f, 1e20f, 3e38f, 5000.f, 6000.f})}, acosh, "torch.acosh(x0)", tight);
  check_op_inputs({Tensor({1e-7f, -1e-20f, 0.f, 0.999999f, -0.999999f, 0.5f})}, atanh, "torch.atanh(x0)", tight);
  check_op_inputs({Tensor({NAN, INFINITY, -INFINITY})}, asinh, "torch.asinh(x0)", tight);
  check_op_inputs({Tensor({0.5f, -2.f, NAN, INFINITY})}, acosh, "torch.acosh(x0)", tight);
  check_op_inputs({Tensor({1.f, -1.f, 1.5f, -3.f, NAN})}, atanh, "torch.atanh(x0)", tight);
  CheckOpts tight64{.atol = 0, .rtol = 1e-14, .grad = false};
  check_op_inputs({Tensor(std::vector<double>{-1e10, 1e-12, 1e200, -3.5}, {4})}, asinh, "torch.asinh(x0)", tight64);
  check_op_inputs({Tensor(std::vector<double>{1 + 1e-12, 1e200, 7.5}, {3})}, acosh, "torch.acosh(x0)", tight64);
  check_op_inputs({Tensor(std::vector<double>{1e-15, -(1 - 1e-12), 0.25}, {3})}, atanh, "torch.atanh(x0)", tight64);
  // float16 keeps its own limits (x^2 overflows it past 256)
  check_op_inputs({Tensor({-300.f, 1000.f, 0.01f, 60000.f}).cast(dt::float16)}, asinh, "torch.asinh(x0.float()).half()",
                  {.atol = 0, .rtol = 2e-3, .grad = false});
  // gradients near the ends (torch's are the derivative's formulas; float64 finite differences too)
  check_op_inputs({Tensor({-1e3f, 1e-3f, 20.f})}, asinh, "torch.asinh(x0)");
  check_op_inputs({Tensor({1.01f, 1e3f, 3.f})}, acosh, "torch.acosh(x0)");
  check_op_inputs({Tensor({0.99f, -1e-3f, -0.5f})}, atanh, "torch.atanh(x0)");
  fd_check({{6}}, [](auto& x) { return x[0].asinh() * 3 + (x[0] * 0.4).atanh(); }, -2, 2, 1e-6, 1e-5);
  fd_check({{6}}, [](auto& x) { return x[0].acosh(); }, 1.2, 9, 1e-6, 1e-5);
  // integers compute in float, as torch
  check_op({{3, 4}}, [](auto& x) { return x[0].asinh(); }, "torch.asinh(x0)", ints(-9, 9));
}

TEST(Math, PowScalar) {
  unary([](auto& x) { return x[0].pow(2); }, "x0 ** 2");
  unary([](auto& x) { return x[0].pow(3); }, "x0 ** 3");  // odd power of a negative base is negative
  unary([](auto& x) { return x[0].pow(7); }, "x0 ** 7");
  unary([](auto& x) { return x[0].pow(-2); }, "x0 ** -2", range(0.5, 2));
  unary([](auto& x) { return x[0].pow(-3); }, "x0 ** -3", range(-2, -0.5));
  unary([](auto& x) { return x[0].pow(0.5); }, "x0 ** 0.5", range(0.1, 3));
  unary([](auto& x) { return x[0].pow(2.5); }, "x0 ** 2.5", range(0.1, 3));
  unary([](auto& x) { return x[0].pow(-1.5); }, "x0 ** -1.5", range(0.5, 3));
  unary([](auto& x) { return x[0].pow(0.3); }, "x0 ** 0.3", range(0.1, 3));
  unary([](auto& x) { return x[0].pow(0); }, "x0 ** 0");
  // a non-whole power of a negative base is NaN, 0^0 = 1, inf^0 = 1
  check_op_inputs({Tensor({-2.f, 0.f, 4.f, INFINITY})}, [](auto& x) { return std::vector{x[0].pow(0.3), x[0].pow(0)}; },
                  "(x0 ** 0.3, x0 ** 0)", {.grad = false});
  // integer tensors keep their dtype for whole powers and become float otherwise
  Tensor i = Tensor({-3, 2, 5});
  EXPECT_EQ(i.pow(3).dtype(), dt::int32);
  EXPECT_EQ(i.pow(3).tolist<int>(), (std::vector<int>{-27, 8, 125}));
  EXPECT_EQ(i.pow(0).tolist<int>(), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(i.pow(0.5).dtype(), dt::float32);
  check_op({{3, 4}}, [](auto& x) { return x[0].pow(3); }, "x0 ** 3", ints(-20, 20));
  check_op({{3, 4}}, [](auto& x) { return x[0].pow(1.5); }, "x0 ** 1.5", ints(0, 20));
}

TEST(Math, PowTensor) {
  binary([](auto& x) { return x[0].pow(x[1]); }, "x0 ** x1", range(0.2, 2.5));
  // a negative base with whole (integer tensor) exponents gives the signed result
  CheckOpts mixed{.low = -4, .high = 4, .dtypes = {dt::float32, dt::int32}};
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0].pow(x[1]); }, "x0 ** x1", mixed);
  check_op({{2, 3, 4}, {4}}, [](auto& x) { return x[0].pow(x[1]); }, "x0 ** x1", mixed);
  // negative bases with float exponents, zeros, NaN for non-whole powers of negative bases
  Tensor b({-2.f, -2.f, -2.f, 0.f, 0.f, 0.f, 3.f, NAN, INFINITY, -1.5f});
  Tensor e({3.f, 2.f, 0.5f, 0.f, 2.f, -1.f, 0.f, 0.f, 0.f, -3.f});
  check_op_inputs({b, e}, [](auto& x) { return std::vector{x[0].pow(x[1])}; }, "x0 ** x1", {.grad = false});
  // integer ** integer is exact and stays integer
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0].pow(x[1].abs()); }, "x0 ** x1.abs()", ints(-6, 6));
  EXPECT_EQ(Tensor({3, -2}).pow(Tensor({19, 5})).tolist<int>(), (std::vector<int>{1162261467, -32}));
  EXPECT_EQ(Tensor({3, -2}).pow(Tensor({19, 5})).dtype(), dt::int32);
}

TEST(Math, Rounding) {
  // zero gradients, as torch
  unary([](auto& x) { return x[0].trunc(); }, "torch.trunc(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].floor(); }, "torch.floor(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].ceil(); }, "torch.ceil(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].round(); }, "torch.round(x0)", range(-5, 5));
  // the gradient of a product flows through the other factor only
  check_op({{3, 4}}, [](auto& x) { return x[0].floor() * x[0]; }, "torch.floor(x0) * x0", range(-5, 5));
  // ties to even, whole numbers, large values beyond int32, inf and NaN
  Tensor t({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f, -3.51f, 4.f, -7.f, 3e9f, -1e20f, INFINITY, -INFINITY, NAN});
  check_op_inputs({t}, [](auto& x) { return std::vector{x[0].trunc(), x[0].floor(), x[0].ceil(), x[0].round()}; },
                  "(torch.trunc(x0), torch.floor(x0), torch.ceil(x0), torch.round(x0))", {.grad = false});
  check_op_inputs({t.cast(dt::float64)}, [](auto& x) { return std::vector{x[0].floor(), x[0].ceil(), x[0].round()}; },
                  "(torch.floor(x0), torch.ceil(x0), torch.round(x0))", {.grad = false});
  // integer tensors are already whole
  Tensor i({-3, 4});
  EXPECT_EQ(i.floor().dtype(), dt::int32);
  EXPECT_EQ(i.round().tolist<int>(), (std::vector<int>{-3, 4}));
}

TEST(Math, ClipAndSpecialValues) {
  unary([](auto& x) { return x[0].clip(-0.5, 0.8); }, "x0.clamp(-0.5, 0.8)");
  unary([](auto& x) { return x[0].clip(0.3, std::nullopt); }, "x0.clamp(min=0.3)");
  unary([](auto& x) { return x[0].clamp(std::nullopt, -0.2); }, "x0.clamp(max=-0.2)");
  check_op({{4, 5}}, [](auto& x) { return x[0].clip(-3, 3); }, "x0.clamp(-3, 3)", ints(-10, 10));
  EXPECT_EQ(Tensor({-5, 1, 9}).clip(-3, 3).dtype(), dt::int32);
  check_op({{4, 5}}, [](auto& x) { return x[0].clip(-2.5, 2.5); }, "x0.clamp(-2.5, 2.5)", ints(-10, 10));
  // at a bound the gradient passes, as torch.clamp
  check_op_inputs({Tensor({-1.f, 0.f, 0.5f, 1.f, 2.f})}, [](auto& x) { return std::vector{x[0].clip(0, 1)}; }, "x0.clamp(0, 1)");
  // min > max gives max everywhere, as torch
  check_op({{4, 5}}, [](auto& x) { return x[0].clip(1, -1); }, "x0.clamp(1, -1)");

  Tensor s({1.f, NAN, INFINITY, -INFINITY, -0.f, 3e38f});
  check_op_inputs({s}, [](auto& x) { return std::vector{x[0].isnan(), x[0].isinf(), x[0].isinf(true, false), x[0].isinf(false, true)}; },
                  "(torch.isnan(x0), torch.isinf(x0), torch.isposinf(x0), torch.isneginf(x0))");
  check_op_inputs({Tensor({1, -2})}, [](auto& x) { return std::vector{x[0].isnan(), x[0].isinf()}; },
                  "(torch.isnan(x0), torch.isinf(x0))");
  EXPECT_EQ(s.isinf(false, false).tolist<bool>(), std::vector<bool>(6, false));

  check_op({{4, 5}, {4, 5}, {4, 5}}, [](auto& x) { return x[0].lerp(x[1], x[2]); }, "torch.lerp(x0, x1, x2)");
  check_op({{2, 3, 4}, {3, 4}, {4}}, [](auto& x) { return x[0].lerp(x[1], x[2]); }, "torch.lerp(x0, x1, x2)");
}

TEST(Math, Activations) {
  unary([](auto& x) { return x[0].relu6(); }, "F.relu6(x0)", range(-8, 8));
  unary([](auto& x) { return x[0].softplus(); }, "F.softplus(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].softplus(2); }, "F.softplus(x0, beta=2)", range(-5, 5));
  // large inputs: no overflow (torch switches to x above its threshold)
  check_op({{3, 4}}, [](auto& x) { return x[0].softplus(); }, "F.softplus(x0)", range(20, 120));
  unary([](auto& x) { return x[0].gelu(); }, "F.gelu(x0, approximate='tanh')", range(-4, 4));
  unary([](auto& x) { return x[0].quick_gelu(); }, "x0 * torch.sigmoid(1.702 * x0)", range(-4, 4));
  unary([](auto& x) { return x[0].leakyrelu(); }, "F.leaky_relu(x0, 0.01)");
  unary([](auto& x) { return x[0].leakyrelu(0.2); }, "F.leaky_relu(x0, 0.2)");
  unary([](auto& x) { return x[0].elu(); }, "F.elu(x0)", range(-4, 4));
  unary([](auto& x) { return x[0].elu(0.5); }, "F.elu(x0, 0.5)", range(-4, 4));
  unary([](auto& x) { return x[0].celu(1.5); }, "F.celu(x0, 1.5)", range(-4, 4));
  unary([](auto& x) { return x[0].selu(); }, "F.selu(x0)", range(-4, 4));
  // no inf * 0 = NaN gradient from the exp of a large input
  check_op({{3, 4}}, [](auto& x) { return x[0].elu(); }, "F.elu(x0)", range(50, 200));
  unary([](auto& x) { return x[0].swish(); }, "F.silu(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].silu(); }, "F.silu(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].mish(); }, "F.mish(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].hardtanh(); }, "F.hardtanh(x0)");
  unary([](auto& x) { return x[0].hardtanh(-0.5, 0.7); }, "F.hardtanh(x0, -0.5, 0.7)");
  unary([](auto& x) { return x[0].hardsigmoid(); }, "F.hardsigmoid(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].hardswish(); }, "F.hardswish(x0)", range(-5, 5));
  unary([](auto& x) { return x[0].logsigmoid(); }, "F.logsigmoid(x0)", range(-30, 30));
  check_op({{3, 4}}, [](auto& x) { return x[0].logsigmoid(); }, "F.logsigmoid(x0)", range(-200, -50));  // no log(0)
  // the small term past |x| = 17, where 1 + exp(-|x|) rounds to 1: logsigmoid(30) is -9.4e-14, not -0
  CheckOpts tight{.atol = 0, .rtol = 2e-6, .grad = false};
  Tensor tails({30.f, 17.f, 50.f, 88.f, 1e-3f, 0.f, -1e-3f, -17.f, -30.f, -1e4f});
  check_op_inputs({tails}, [](auto& x) { return std::vector{x[0].logsigmoid()}; }, "F.logsigmoid(x0)", tight);
  check_op_inputs({tails}, [](auto& x) { return std::vector{x[0].softplus()}; }, "torch.log1p(torch.exp(x0.double())).float()", tight);
  check_op_inputs({Tensor(std::vector<double>{40, 100, -40, 1e-9}, {4})}, [](auto& x) { return std::vector{x[0].logsigmoid()}; },
                  "F.logsigmoid(x0)", {.atol = 0, .rtol = 1e-13, .grad = false});
  unary([](auto& x) { return x[0].softsign(); }, "F.softsign(x0)", range(-8, 8));
  check_op({{3, 4}}, [](auto& x) { return x[0].softsign(); }, "F.softsign(x0)", ints(-9, 9));
}

TEST(Math, Logical) {
  CheckOpts o = ints(-1, 2);  // -1, 0, 1: zero is false, the others true
  binary([](auto& x) { return x[0].logical_and(x[1]); }, "torch.logical_and(x0, x1)", o);
  binary([](auto& x) { return x[0].logical_or(x[1]); }, "torch.logical_or(x0, x1)", o);
  binary([](auto& x) { return x[0].logical_xor(x[1]); }, "torch.logical_xor(x0, x1)", o);
  binary([](auto& x) { return (x[0] > 0).logical_and(x[1]); }, "torch.logical_and(x0 > 0, x1)", range(-1, 1));
  check_op_inputs({Tensor({0.f, 0.5f, NAN, -0.f}), Tensor({1, 0, 1, 1})},
                  [](auto& x) { return std::vector{x[0].logical_or(x[1]), x[0].logical_xor(x[1])}; },
                  "(torch.logical_or(x0, x1), torch.logical_xor(x0, x1))");
}

// float64 finite differences of the composed backward passes (independent of torch)
TEST(Math, FiniteDifferences) {
  fd_check({{6}}, [](auto& x) { return (x[0] * 3).atan(); }, -2, 2, 1e-6, 1e-5);  // both sides of |x| = 1
  fd_check({{6}}, [](auto& x) { return x[0].asin(); }, -0.9, 0.9, 1e-6, 1e-5);
  fd_check({{6}}, [](auto& x) { return x[0].erf(); }, -2, 2, 1e-6, 1e-5);
  fd_check({{6}, {6}}, [](auto& x) { return x[0].pow(x[1]); }, 0.3, 2, 1e-6, 1e-5);
  fd_check({{6}}, [](auto& x) { return x[0].pow(3) + x[0].pow(-2) + x[0].pow(2.5); }, 0.3, 2, 1e-6, 1e-5);
  fd_check({{6}}, [](auto& x) { return x[0].softplus(2) + x[0].elu() + x[0].gelu() + x[0].mish(); }, -2, 2, 1e-6, 1e-5);
  fd_check({{6}}, [](auto& x) { return x[0].clip(-1, 1) + x[0].round() * x[0]; }, -2, 2, 1e-6, 1e-5);
}

TEST(Math, BadInputs) {
  Tensor f({1.f, 2.f}), i({1, 2});
  EXPECT_THROW(f.clip(std::nullopt, std::nullopt), tg::Error);
  EXPECT_THROW(Tensor({true, false}).clip(0, 1), tg::Error);
  EXPECT_THROW(i.pow(-2), tg::Error);
  EXPECT_THROW(f.celu(0), tg::Error);
  EXPECT_THROW(f.softplus(0), tg::Error);
  EXPECT_THROW(f.pow(Tensor({1.f, 2.f, 3.f})), tg::Error);
  EXPECT_THROW(f.lerp(Tensor({1.f, 2.f, 3.f}), f), tg::Error);
  EXPECT_THROW(f.logical_and(Tensor({true, false, true})), tg::Error);
  try {
    i.pow(-2);
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pow"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos);
  }
}

// ---- the core ops of elementwise.cpp not covered by test_autograd.cpp ----------------------------

TEST(MathCore, Unary) {
  unary([](auto& x) { return x[0].tanh(); }, "torch.tanh(x0)", range(-4, 4));
  unary([](auto& x) { return x[0].cos(); }, "torch.cos(x0)", range(-4, 4));
  unary([](auto& x) { return x[0].exp2(); }, "torch.exp2(x0)", range(-4, 4));
  unary([](auto& x) { return x[0].log2(); }, "torch.log2(x0)", range(0.1, 8));
  unary([](auto& x) { return x[0].abs(); }, "torch.abs(x0)");
  check_op({{4, 5}}, [](auto& x) { return x[0].abs(); }, "torch.abs(x0)", ints(-9, 9));
  check_op_inputs({Tensor({-1.f, 0.f, 2.f})}, [](auto& x) { return std::vector{x[0].abs()}; }, "torch.abs(x0)");
  EXPECT_EQ(Tensor({-3, 4}).abs().dtype(), dt::int32);
}

TEST(MathCore, MaximumMinimum) {
  binary([](auto& x) { return x[0].maximum(x[1]); }, "torch.maximum(x0, x1)");
  binary([](auto& x) { return x[0].minimum(x[1]); }, "torch.minimum(x0, x1)");
  // ties share the gradient equally, as torch
  Tensor a({1.f, 2.f, 3.f, -1.f}), b({1.f, 1.f, 4.f, -1.f});
  check_op_inputs({a, b}, [](auto& x) { return std::vector{x[0].maximum(x[1])}; }, "torch.maximum(x0, x1)");
  check_op_inputs({a, b}, [](auto& x) { return std::vector{x[0].minimum(x[1])}; }, "torch.minimum(x0, x1)");
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0].maximum(x[1]); }, "torch.maximum(x0, x1)", ints(-3, 3));
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0].minimum(x[1]); }, "torch.minimum(x0, x1)", ints(-3, 3));
}

TEST(MathCore, Bitwise) {
  CheckOpts o = ints(-50, 50);
  binary([](auto& x) { return x[0] & x[1]; }, "x0 & x1", o);
  binary([](auto& x) { return x[0] | x[1]; }, "x0 | x1", o);
  binary([](auto& x) { return x[0] ^ x[1]; }, "x0 ^ x1", o);
  unary([](auto& x) { return ~x[0]; }, "~x0", o);
  CheckOpts u8 = ints(0, 256, dt::uint8), b = ints(0, 2, dt::bool_);
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0] & x[1]; }, "x0 & x1", u8);
  check_op({{4, 5}}, [](auto& x) { return ~x[0]; }, "~x0", u8);
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0] | x[1]; }, "x0 | x1", b);
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0] ^ x[1]; }, "x0 ^ x1", b);
  check_op({{4, 5}}, [](auto& x) { return ~x[0]; }, "~x0", b);
}

TEST(MathCore, Shifts) {
  unary([](auto& x) { return x[0] << 3; }, "x0 << 3", ints(-1000, 1000));
  unary([](auto& x) { return x[0].rshift(2); }, "x0 >> 2", ints(-1000, 1000));  // arithmetic for signed, as torch
  check_op({{4, 5}}, [](auto& x) { return x[0] << 3; }, "x0 << 3", ints(0, 256, dt::uint8));  // wraps
  check_op({{4, 5}}, [](auto& x) { return x[0] >> 7; }, "x0 >> 7", ints(0, 256, dt::uint8));
  check_op({{4, 5}}, [](auto& x) { return x[0] << 31; }, "x0 << 31", ints(0, 4, dt::int64));
  check_op({{4, 5}}, [](auto& x) { return x[0] >> 0; }, "x0 >> 0", ints(-9, 9));
}

TEST(MathCore, IntegerDivision) {
  Tensor a({7, -7, 7, -7, 0, 100, -3}), b({2, 2, -2, -2, 5, 7, 4});
  check_op_inputs({a, b}, [](auto& x) { return std::vector{x[0].idiv(x[1])}; }, "torch.div(x0, x1, rounding_mode='trunc')");
  check_op_inputs({Tensor(std::vector<int64_t>{-9, 9, 1}, {3}), Tensor(std::vector<int64_t>{4, 4, 3}, {3})},
                  [](auto& x) { return std::vector{x[0].idiv(x[1])}; }, "torch.div(x0, x1, rounding_mode='trunc')");
  EXPECT_EQ(a.idiv(b).dtype(), dt::int32);
}

TEST(MathCore, TrueDivisionByAnIntScalar) {
  // the scalar at its value, as a float (torch, tinygrad): not wrapped into the tensor's int dtype first,
  // where 200 would be int8's -56 and -2 uint8's 254
  Tensor i8 = Tensor(std::vector<int8_t>{100, 7, -128, 0}, {4}), u8 = Tensor(std::vector<uint8_t>{35, 255, 1, 0}, {4});
  check_op_inputs({i8}, [](auto& x) { return std::vector{x[0] / 200, 200 / x[0].where(x[0], Tensor(std::vector<int8_t>{1}, {1}))}; },
                  "(x0 / 200, 200 / torch.where(x0 != 0, x0, torch.ones_like(x0)))");
  check_op_inputs({u8}, [](auto& x) { return std::vector{x[0] / -2, x[0] / int64_t{1000}}; }, "(x0 / -2, x0 / 1000)");
  check_op_inputs({Tensor({7, -7, 9})}, [](auto& x) { return std::vector{x[0] / 2, -9 / x[0]}; }, "(x0 / 2, -9 / x0)");
  EXPECT_EQ((i8 / 200).dtype(), dt::float32);
  EXPECT_EQ((Tensor({1.f}).cast(dt::float16) / 3).dtype(), dt::float16);  // a float tensor keeps its dtype
  // the other ops keep an int scalar in the tensor's dtype, wrapping as torch does (int8 + 200 adds -56)
  EXPECT_EQ((i8 + 200).dtype(), dt::int8);
  EXPECT_EQ((i8 + 200).tolist<int8_t>(), (std::vector<int8_t>{44, -49, 72, -56}));
}

TEST(MathCore, Remainder) {
  // the divisor's sign, as torch.remainder: every sign pair, exact multiples, a zero dividend
  Tensor a({7, -7, 7, -7, 0, 100, -3, 6, -6}), b({2, 2, -2, -2, 5, 7, 4, 3, -3});
  check_op_inputs({a, b}, [](auto& x) { return std::vector{x[0] % x[1], x[0].mod(x[1])}; },
                  "(torch.remainder(x0, x1), torch.remainder(x0, x1))");
  // int64 past 2^32 (below 2^53: the reference reads them as doubles) and its min, int8 at its ends
  check_op_inputs({Tensor(std::vector<int64_t>{-(int64_t{1} << 40) - 1, (int64_t{1} << 40) + 5, INT64_MIN, (int64_t{1} << 52) + 3}, {4}),
                   Tensor(std::vector<int64_t>{3, -7, 3, -(int64_t{1} << 33)}, {4})},
                  [](auto& x) { return std::vector{x[0] % x[1]}; }, "torch.remainder(x0, x1)");
  check_op_inputs({Tensor(std::vector<int8_t>{-128, 127, -5, 5}, {4}), Tensor(std::vector<int8_t>{-1, -128, 3, -128}, {4})},
                  [](auto& x) { return std::vector{x[0] % x[1]}; }, "torch.remainder(x0, x1)");
  // floats of whole numbers and halves (a quotient never one rounding away from an integer), broadcast,
  // and scalars on either side (an int scalar keeps an int tensor int)
  CheckOpts halves{.low = -40, .high = 40, .grad = false};
  check_op({{4, 5}, {5}}, [](auto& x) { return (x[0] * 2).round() / 2 % ((x[1] / 8).round() * 2 + 0.5); },
           "torch.round(x0 * 2) / 2 % (torch.round(x1 / 8) * 2 + 0.5)", halves);
  check_op({{4, 5}}, [](auto& x) { return x[0] % 3; }, "torch.remainder(x0, 3)", ints(-20, 20));
  check_op({{4, 5}}, [](auto& x) { return 7 % x[0].where(x[0], Tensor(1)); }, "torch.remainder(7, torch.where(x0 != 0, x0, torch.ones_like(x0)))",
           ints(-9, 9));
  check_op({{4, 5}}, [](auto& x) { return x[0] % -2.5; }, "torch.remainder(x0, -2.5)", ints(-20, 20));
  // the most negative dividend by -1 is 0 (torch's own kernel traps on int64's: SIGFPE, so no reference)
  EXPECT_EQ((Tensor(std::vector<int64_t>{INT64_MIN, 5}, {2}) % Tensor(std::vector<int64_t>{-1, -1}, {2})).tolist<int64_t>(),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ((Tensor({INT32_MIN}) % Tensor({-1})).tolist<int>(), (std::vector<int>{0}));
  EXPECT_EQ((Tensor({7, -7}) % 3).dtype(), dt::int32);
  EXPECT_EQ((Tensor({7, -7}) % 2.5).dtype(), dt::float32);
  EXPECT_EQ((Tensor({1.f, -1.f}) % Tensor({0.f, 0.f})).tolist<float>().size(), 2u);  // NaN, as torch: no error
}

TEST(MathCore, FloorDivide) {
  // rounded down, as torch.floor_divide: every sign pair, exact multiples, a zero dividend
  Tensor a({7, -7, 7, -7, 0, 100, -3, 6, -6}), b({2, 2, -2, -2, 5, 7, 4, 3, -3});
  check_op_inputs({a, b}, [](auto& x) { return std::vector{x[0].floor_divide(x[1])}; }, "torch.floor_divide(x0, x1)");
  // int64 past 2^32 (below 2^53: the reference reads them as doubles), int8 at its ends
  check_op_inputs({Tensor(std::vector<int64_t>{-(int64_t{1} << 40) - 1, (int64_t{1} << 40) + 5, (int64_t{1} << 52) + 3}, {3}),
                   Tensor(std::vector<int64_t>{3, -7, -(int64_t{1} << 33)}, {3})},
                  [](auto& x) { return std::vector{x[0].floor_divide(x[1])}; }, "torch.floor_divide(x0, x1)");
  check_op_inputs({Tensor(std::vector<int8_t>{-128, 127, -5, 5}, {4}), Tensor(std::vector<int8_t>{3, -128, 3, -128}, {4})},
                  [](auto& x) { return std::vector{x[0].floor_divide(x[1])}; }, "torch.floor_divide(x0, x1)");
  // past 2^24, where a float32 quotient would be another number: (2^30 + 1) // 3 is 357913941
  EXPECT_EQ(Tensor({(1 << 30) + 1, -(1 << 30) - 1, INT32_MAX}).floor_divide(Tensor({3, 3, -2})).tolist<int>(),
            (std::vector<int>{357913941, -357913942, -1073741824}));
  // a == a // b * b + a % b for every integer pair, a zero divisor included (a // 0 == 0, a % 0 == a)
  Tensor n = Tensor::arange(-12, 13).reshape({25, 1}), d = Tensor::arange(-5, 6).reshape({1, 11});
  EXPECT_TRUE((n.floor_divide(d) * d + n % d == n).all().item<bool>());
  EXPECT_EQ(Tensor({-9, 9, 0}).floor_divide(Tensor({0, 0, 0})).tolist<int>(), (std::vector<int>{0, 0, 0}));
  // floats, broadcast, scalars; an int scalar keeps an int tensor int
  check_op({{4, 5}, {5}}, [](auto& x) { return x[0].floor_divide(x[1].abs() + 0.5); }, "torch.floor_divide(x0, x1.abs() + 0.5)",
           {.grad = false});
  EXPECT_EQ(Tensor({7, -7}).floor_divide(Tensor(2)).tolist<int>(), (std::vector<int>{3, -4}));
  EXPECT_EQ(Tensor({7, -7}).floor_divide(Tensor(2)).dtype(), dt::int32);
  EXPECT_THROW((void)Tensor({true}).floor_divide(Tensor({true})), tg::TypeError);
}

TEST(MathCore, Comparisons) {
  // small integers make ties common
  for (const CheckOpts& o : {ints(-3, 3), CheckOpts{.low = -2, .high = 2}}) {
    binary([](auto& x) { return x[0].le(x[1]); }, "x0 <= x1", o);
    binary([](auto& x) { return x[0] > x[1]; }, "x0 > x1", o);
    binary([](auto& x) { return x[0].ge(x[1]); }, "x0 >= x1", o);
    binary([](auto& x) { return x[0] != x[1]; }, "x0 != x1", o);
  }
  Tensor a({1.f, 2.f, NAN, 3.f, 1.f}), b({1.f, 1.f, NAN, 4.f, NAN});
  check_op_inputs({a, b}, [](auto& x) { return std::vector{x[0] > x[1], x[0] != x[1], x[0] < x[1], x[0] == x[1]}; },
                  "(x0 > x1, x0 != x1, x0 < x1, x0 == x1)");
  // le/ge are (lt | eq), so NaN compares false as in torch
  Tensor c({1.f, 2.f, -INFINITY, 3.f, NAN, 1.f}), d({1.f, 1.f, -INFINITY, INFINITY, NAN, NAN});
  check_op_inputs({c, d}, [](auto& x) { return std::vector{x[0] <= x[1], x[0] >= x[1]}; }, "(x0 <= x1, x0 >= x1)");
  check_op({{4, 5}}, [](auto& x) { return x[0] >= 1; }, "x0 >= 1", ints(-3, 3));
  check_op({{4, 5}}, [](auto& x) { return 0.5 < x[0]; }, "0.5 < x0");
  check_op({{4, 5}}, [](auto& x) { return x[0].logical_not(); }, "torch.logical_not(x0)", ints(-1, 2));
  check_op({{4, 5}}, [](auto& x) { return x[0].logical_not(); }, "torch.logical_not(x0)", ints(0, 2, dt::bool_));
  check_op_inputs({Tensor({0.f, -0.f, 2.f, NAN})}, [](auto& x) { return std::vector{x[0].logical_not()}; }, "torch.logical_not(x0)");
}

TEST(MathCore, WhereWithScalars) {
  unary([](auto& x) { return (x[0] > 0).where(1.5, -2.0); }, "torch.where(x0 > 0, torch.tensor(1.5), torch.tensor(-2.0))");
  unary([](auto& x) { return (x[0] > 0).where(x[0], Tensor(0.5f)); }, "torch.where(x0 > 0, x0, torch.tensor(0.5))");
  unary([](auto& x) { return x[0].where(Tensor(3.f), x[0] * 2); }, "torch.where(x0 != 0, torch.tensor(3.0), x0 * 2)");
  check_op({{4, 5}}, [](auto& x) { return x[0].where(1.0, 0.0); }, "torch.where(x0 != 0, torch.tensor(1.0), torch.tensor(0.0))", ints(-1, 2));
}

TEST(MathCore, BadInputs) {
  Tensor f({1.f, 2.f}), i({1, 2});
  EXPECT_THROW(f & f, tg::Error);
  EXPECT_THROW(f | i, tg::Error);
  EXPECT_THROW(f ^ f, tg::Error);
  EXPECT_THROW(~f, tg::Error);
  EXPECT_THROW(f << 1, tg::Error);
  EXPECT_THROW(f >> 1, tg::Error);
  EXPECT_THROW(i << 32, tg::Error);
  EXPECT_THROW(i >> -1, tg::Error);
  EXPECT_THROW(i.cast(dt::uint8) << 8, tg::Error);
  EXPECT_THROW(f.idiv(f), tg::Error);
  EXPECT_THROW(Tensor({true, false}) % Tensor({true, true}), tg::Error);
  EXPECT_THROW(f.maximum(Tensor({1.f, 2.f, 3.f})), tg::Error);
  EXPECT_THROW(f.le(Tensor({1.f, 2.f, 3.f})), tg::Error);
  EXPECT_THROW(f.where(f, Tensor({1.f, 2.f, 3.f})), tg::Error);
  EXPECT_THROW(Tensor({true, false}) - Tensor({true, true}), tg::Error);
  try {
    (void)(i << 40);
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lshift"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos);
  }
}

// abs(-0.0) is +0.0, as torch (x * sign(x) alone gave -0.0: 1 / abs(-0.0) was -inf), in every float dtype
TEST(Math, AbsOfNegativeZero) {
  for (tg::DType d : {tg::dtypes::float32, tg::dtypes::float16, tg::dtypes::float64}) {
    Tensor x = Tensor(std::vector<float>{-0.0f, 0.0f, -2.5f, 3.0f}, {4}).cast(d);
    check_op_inputs({x}, [](auto& x) { return std::vector<Tensor>{1 / x[0].abs(), x[0].abs()}; }, "(1 / x0.abs(), x0.abs())",
                    {.grad = false});
    EXPECT_FALSE(std::signbit(x.abs().cast(tg::dtypes::float32).tolist<float>()[0])) << d.name();
  }
}

// Autograd: the primitive Functions against PyTorch and finite differences, and the engine's rules
// (accumulation, detach, no-grad, explicit gradients).
#include <gtest/gtest.h>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;

TEST(Primitives, UnaryAgainstTorch) {
  check_op({{3, 4}}, [](auto& x) { return x[0].neg(); }, "-x0");
  check_op({{3, 4}}, [](auto& x) { return x[0].reciprocal(); }, "1/x0", {.low = 0.5, .high = 3});
  check_op({{3, 4}}, [](auto& x) { return x[0].sin(); }, "torch.sin(x0)");
  check_op({{3, 4}}, [](auto& x) { return x[0].relu(); }, "torch.relu(x0)");
  check_op({{3, 4}}, [](auto& x) { return x[0].log(); }, "torch.log(x0)", {.low = 0.1, .high = 3});
  check_op({{3, 4}}, [](auto& x) { return x[0].exp(); }, "torch.exp(x0)");
  check_op({{3, 4}}, [](auto& x) { return x[0].sqrt(); }, "torch.sqrt(x0)", {.low = 0.1, .high = 3});
  check_op({{3, 4}}, [](auto& x) { return x[0].sigmoid(); }, "torch.sigmoid(x0)");
  check_op({{3, 4}}, [](auto& x) { return x[0].sign(); }, "torch.sign(x0)");
  check_op({{2, 3}}, [](auto& x) { return x[0].cast(tg::dtypes::float64) * 2; }, "x0.double() * 2");
  check_op({{2, 3}}, [](auto& x) { return x[0].contiguous() * x[0]; }, "x0 * x0");
  check_op({{2, 3}}, [](auto& x) { return x[0].contiguous_backward() * 3; }, "x0 * 3");
}

TEST(Primitives, BinaryAgainstTorch) {
  check_op({{3, 4}, {3, 4}}, [](auto& x) { return x[0] + x[1]; }, "x0 + x1");
  check_op({{3, 4}, {4}}, [](auto& x) { return x[0] - x[1]; }, "x0 - x1");
  check_op({{3, 1}, {1, 4}}, [](auto& x) { return x[0] * x[1]; }, "x0 * x1");
  check_op({{3, 4}, {3, 4}}, [](auto& x) { return x[0] / x[1]; }, "x0 / x1", {.low = 0.5, .high = 2});
  check_op({{3, 4}, {3, 4}}, [](auto& x) { return x[0].lt(x[1]); }, "x0 < x1");
  check_op({{3, 4}, {3, 4}}, [](auto& x) { return x[0].eq(x[0] * (x[1] > 0).cast(tg::dtypes::float32)); }, "x0 == x0 * (x1 > 0).float()");
  check_op({{3, 4}, {3, 4}}, [](auto& x) { return x[0] ^ x[1]; }, "x0 ^ x1", {.low = -50, .high = 50, .dtype = tg::dtypes::int32});
  check_op({{3, 4}, {3, 4}, {3, 4}}, [](auto& x) { return (x[0] > 0).where(x[1], x[2]); }, "torch.where(x0 > 0, x1, x2)");
}

TEST(Primitives, ReduceAndMovementAgainstTorch) {
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].sum({1}); }, "x0.sum(1)");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].sum(); }, "x0.sum()");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].max({0, 2}); }, "x0.amax((0, 2))");
  check_op({{4}}, [](auto& x) { return (x[0] > 100).where(x[0], Tensor::full({4}, 1.f)).max(); }, "torch.where(x0 > 100, x0, torch.ones(4)).max()");
  check_op({{3, 1}}, [](auto& x) { return x[0].expand({3, 4}); }, "x0.expand(3, 4)");
  check_op({{3, 4}}, [](auto& x) { return x[0].reshape({2, 6}); }, "x0.reshape(2, 6)");
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].permute({2, 0, 1}); }, "x0.permute(2, 0, 1)");
  check_op({{2, 3}}, [](auto& x) { return x[0].pad({{1, 2}, {0, 1}}); }, "F.pad(x0, (0, 1, 1, 2))");
  check_op({{4, 5}}, [](auto& x) { return x[0].shrink({{1, 3}, {0, 4}}); }, "x0[1:3, 0:4]");
  check_op({{4, 5}}, [](auto& x) { return x[0].flip({0, 1}); }, "x0.flip((0, 1))");
}

// The float64 finite-difference check of each primitive's backward.
TEST(Primitives, FiniteDifferences) {
  fd_check({{5}}, [](auto& x) { return x[0].contiguous(); });
  fd_check({{2, 3}}, [](auto& x) { return x[0].permute({1, 0}).contiguous_backward(); });
  fd_check({{5}}, [](auto& x) { return x[0].cast(tg::dtypes::float32).cast(tg::dtypes::float64); }, -2, 2, 1e-3, 1e-3);
  fd_check({{5}}, [](auto& x) { return x[0].neg(); });
  fd_check({{5}}, [](auto& x) { return x[0].reciprocal(); }, 0.5, 2);
  fd_check({{5}}, [](auto& x) { return x[0].sin(); });
  fd_check({{5}}, [](auto& x) { return x[0].relu(); }, 0.1, 2);
  fd_check({{5}}, [](auto& x) { return (-x[0]).relu(); }, 0.1, 2);
  fd_check({{5}}, [](auto& x) { return x[0].log(); }, 0.5, 2);
  fd_check({{5}}, [](auto& x) { return x[0].exp(); });
  fd_check({{5}}, [](auto& x) { return x[0].sqrt(); }, 0.5, 2);
  fd_check({{5}}, [](auto& x) { return x[0].sigmoid(); });
  fd_check({{5}}, [](auto& x) { return x[0].sign() * x[0]; }, 0.1, 2);
  fd_check({{5}, {5}}, [](auto& x) { return x[0].lt(x[1]).where(x[0], x[1]); });
  fd_check({{5}, {5}}, [](auto& x) { return x[0].eq(x[1]).where(x[1], x[0] * x[1]); });
  fd_check({{5}}, [](auto& x) { return (x[0].cast(tg::dtypes::int32) ^ Tensor({1, 2, 3, 4, 5})).cast(tg::dtypes::float64) + x[0]; });
  fd_check({{2, 3}, {3}}, [](auto& x) { return x[0] + x[1]; });
  fd_check({{2, 3}, {3}}, [](auto& x) { return x[0] - x[1]; });
  fd_check({{2, 3}, {2, 1}}, [](auto& x) { return x[0] * x[1]; });
  fd_check({{2, 3}, {2, 3}}, [](auto& x) { return x[0] / x[1]; }, 0.5, 2);
  fd_check({{2, 3}, {2, 3}, {2, 3}}, [](auto& x) { return (x[0] > 0).where(x[1], x[2]); });
  fd_check({{3, 4}}, [](auto& x) { return x[0].sum({1}); });
  fd_check({{3, 4}}, [](auto& x) { return x[0].max({0}); });
  fd_check({{3, 1}}, [](auto& x) { return x[0].expand({3, 4}); });
  fd_check({{3, 4}}, [](auto& x) { return x[0].reshape({4, 3}); });
  fd_check({{2, 3, 4}}, [](auto& x) { return x[0].permute({1, 2, 0}); });
  fd_check({{2, 3}}, [](auto& x) { return x[0].pad({{1, 0}, {2, 1}}); });
  fd_check({{4, 5}}, [](auto& x) { return x[0].shrink({{1, 3}, {2, 5}}); });
  fd_check({{4, 5}}, [](auto& x) { return x[0].flip({1}); });
}

TEST(Autograd, GradientsAccumulateWhenATensorIsUsedTwice) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).requires_grad_();
  (x * x + x).sum().backward();
  EXPECT_EQ(x.grad().tolist<float>(), (std::vector<float>{3, 5, 7}));
  // a second backward adds to .grad, as in tinygrad and torch
  (x * 2).sum().backward();
  EXPECT_EQ(x.grad().tolist<float>(), (std::vector<float>{5, 7, 9}));
}

TEST(Autograd, DetachNoGradAndExplicitGradient) {
  Tensor x = Tensor({1.f, 2.f}).requires_grad_();
  Tensor y = x * x.detach();  // d/dx = x (the detached factor is a constant)
  y.backward(Tensor({1.f, 10.f}));
  EXPECT_EQ(x.grad().tolist<float>(), (std::vector<float>{1, 20}));
  {
    tg::NoGradGuard ng;
    Tensor z = (x * 3).sum();
    EXPECT_THROW(z.backward(), tg::Error);
  }
  Tensor untracked = Tensor({1.f, 2.f});
  EXPECT_FALSE(untracked.requires_grad().has_value());
  EXPECT_FALSE((untracked * 2).requires_grad().has_value());
  EXPECT_TRUE((untracked * x).requires_grad().value());
}

TEST(Autograd, BadInputs) {
  Tensor x = Tensor({1.f, 2.f}).requires_grad_();
  EXPECT_THROW((x * 2).backward(), tg::Error);                    // non-scalar without a gradient
  EXPECT_THROW((x * 2).backward(Tensor({1.f, 2.f, 3.f})), tg::Error);  // wrong gradient shape
  EXPECT_THROW(Tensor({1.f}).grad(), tg::Error);
  EXPECT_THROW(Tensor({1, 2}).requires_grad_(), tg::Error);  // ints have no gradient
  try {
    (x * 2).backward();
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("backward"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(2"), std::string::npos);
  }
}

TEST(Autograd, TrainingGuardScopes) {
  EXPECT_FALSE(Tensor::training);
  {
    tg::TrainingGuard t;
    EXPECT_TRUE(Tensor::training);
  }
  EXPECT_FALSE(Tensor::training);
}

// The issue-2 ops, now with gradients: reductions, matmul and the movement conveniences vs PyTorch.
#include <gtest/gtest.h>

#include "ref.h"

#include <cmath>

using namespace tgtest;
using tg::Tensor;

TEST(CoreOps, Reductions) {
  for (const Shape& s : {Shape{3, 4, 5}, Shape{7, 6}}) {
    check_op({s}, [](auto& x) { return x[0].mean(); }, "x0.mean()");
    check_op({s}, [](auto& x) { return x[0].mean({0}, true); }, "x0.mean(0, keepdim=True)");
    check_op({s}, [](auto& x) { return x[0].min({-1}); }, "x0.amin(-1)");
    check_op({s}, [](auto& x) { return x[0].max({1}, true); }, "x0.amax(1, keepdim=True)");
    check_op({s}, [](auto& x) { return x[0].sum({0, -1}); }, "x0.sum((0, -1))");
    // torch 1.13 has no var(correction=): unbiased=True/False are corrections 1 and 0
    check_op({s}, [](auto& x) { return x[0].var(); }, "x0.var()");
    check_op({s}, [](auto& x) { return x[0].var({1}, true, 0); }, "x0.var(1, unbiased=False, keepdim=True)");
    check_op({s}, [](auto& x) { return x[0].std({0}); }, "x0.std(0)");
    check_op({s}, [](auto& x) { return x[0].std({}, false, 0); }, "x0.std(unbiased=False)");
    // correction 2, composed from plain ops
    check_op({s}, [](auto& x) { return x[0].var({-1}, false, 2); }, "((x0 - x0.mean(-1, keepdim=True))**2).sum(-1) / (x0.shape[-1] - 2)");
  }
  CheckOpts ints{.low = -50, .high = 50, .dtype = tg::dtypes::int32};
  check_op({{4, 5}}, [](auto& x) { return x[0].sum({1}); }, "x0.sum(1)", ints);
  check_op({{4, 5}}, [](auto& x) { return x[0].min({0}); }, "x0.amin(0)", ints);
  check_op({{4, 5}}, [](auto& x) { return x[0].max(); }, "x0.max()", ints);
  check_op({{4, 5}}, [](auto& x) { return x[0].mean({1}); }, "x0.float().mean(1)", ints);
}

// NaN wins a max wherever it is (the kernel's running max must not drop it), as in torch.
TEST(CoreOps, MaxPropagatesNaN) {
  Tensor x = Tensor({1.f, 5.f, NAN, 2.f, 7.f, 3.f, 4.f, 0.f}).reshape({2, 4});
  check_op_inputs({x}, [](auto& t) { return std::vector<Tensor>{t[0].max(), t[0].max({1}), t[0].max({0}), t[0].relu()}; },
                  "(x0.max(), x0.amax(1), x0.amax(0), torch.relu(x0))", {.grad = false});
}

TEST(CoreOps, Matmul) {
  check_op({{5}, {5}}, [](auto& x) { return x[0].dot(x[1]); }, "x0 @ x1");
  check_op({{3, 5}, {5, 4}}, [](auto& x) { return x[0].matmul(x[1]); }, "x0 @ x1");
  check_op({{5}, {5, 4}}, [](auto& x) { return x[0].matmul(x[1]); }, "x0 @ x1");
  check_op({{3, 5}, {5}}, [](auto& x) { return x[0].matmul(x[1]); }, "x0 @ x1");
  check_op({{2, 3, 5}, {2, 5, 4}}, [](auto& x) { return x[0].matmul(x[1]); }, "x0 @ x1");
  check_op({{2, 1, 3, 5}, {4, 5, 2}}, [](auto& x) { return x[0].matmul(x[1]); }, "x0 @ x1");
  EXPECT_THROW(Tensor::ones({3, 4}).matmul(Tensor::ones({5, 2})), tg::Error);
}

// torch's other pad modes (F.pad takes them for the last 1-3 dims of a batched input); gradients too
TEST(CoreOps, PadModes) {
  using tg::PadMode;
  check_op({{2, 3, 5}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {2, 4}}, PadMode::reflect); }, "F.pad(x0, (2, 4), mode='reflect')");
  check_op({{2, 3, 5}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {2, 7}}, PadMode::replicate); }, "F.pad(x0, (2, 7), mode='replicate')");
  check_op({{2, 3, 5}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {5, 1}}, PadMode::circular); }, "F.pad(x0, (5, 1), mode='circular')");
  check_op({{1, 2, 4, 5}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {3, 1}, {0, 2}}, PadMode::reflect); },
           "F.pad(x0, (0, 2, 3, 1), mode='reflect')");
  check_op({{1, 2, 4, 5}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {1, 3}, {2, 2}}, PadMode::replicate); },
           "F.pad(x0, (2, 2, 1, 3), mode='replicate')");
  check_op({{1, 2, 4, 5}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {4, 0}, {2, 3}}, PadMode::circular); },
           "F.pad(x0, (2, 3, 4, 0), mode='circular')");
  check_op({{1, 1, 3, 4, 2}}, [](auto& x) { return x[0].pad({{0, 0}, {0, 0}, {2, 1}, {1, 3}, {1, 1}}, PadMode::reflect); },
           "F.pad(x0, (1, 1, 1, 3, 2, 1), mode='reflect')");
  check_op({{2, 3}}, [](auto& x) { return x[0].pad({{1, 1}, {2, 0}}, PadMode::constant, -3.5); }, "F.pad(x0, (2, 0, 1, 1), value=-3.5)");
  // integers, and torch's limits: reflect less than the dim, circular at most the dim, replicate a nonempty dim
  EXPECT_EQ(Tensor({1, 2, 3}).pad({{2, 2}}, PadMode::reflect).tolist<int>(), (std::vector<int>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_THROW((void)Tensor({1, 2, 3}).pad({{3, 0}}, PadMode::reflect), tg::Error);
  EXPECT_THROW((void)Tensor({1, 2, 3}).pad({{0, 4}}, PadMode::circular), tg::Error);
  EXPECT_THROW((void)Tensor::ones({2, 0}).pad({{0, 0}, {1, 0}}, PadMode::replicate), tg::Error);
  EXPECT_THROW((void)Tensor({1, 2, 3}).pad({{-1, 0}}, PadMode::replicate), tg::Error);
  EXPECT_THROW((void)Tensor({1, 2, 3}).pad({{1, 0}, {1, 0}}, PadMode::replicate), tg::Error);
  EXPECT_THROW((void)Tensor({1, 2, 3}).pad({{1, 0}}, PadMode::replicate, 2.0), tg::Error);
}

TEST(CoreOps, MovementConveniences) {
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].transpose(0, 2); }, "x0.transpose(0, 2)");
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].flatten(1); }, "x0.flatten(1)");
  check_op({{2, 1, 4, 1}}, [](auto& x) { return x[0].squeeze(); }, "x0.squeeze()");
  check_op({{2, 1, 4}}, [](auto& x) { return x[0].squeeze(1); }, "x0.squeeze(1)");
  check_op({{2, 4}}, [](auto& x) { return x[0].unsqueeze(-1); }, "x0.unsqueeze(-1)");
  check_op({{3, 1}}, [](auto& x) { return x[0].expand({2, -1, 4}); }, "x0.expand(2, -1, 4)");
  check_op({{2, 3}}, [](auto& x) { return x[0].pad({{1, 1}, {2, 0}}, -3.5); }, "F.pad(x0, (2, 0, 1, 1), value=-3.5)");
  check_op({{2, 6}}, [](auto& x) { return x[0].reshape({3, -1}); }, "x0.reshape(3, -1)");
}

// Optimizers against torch.optim: the same parameters and the same gradients for a few steps must give
// the same parameters. LAMB (not in torch) is checked against its formula written in torch ops.
#include <gtest/gtest.h>

#include <sstream>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;
namespace optim = tg::nn::optim;

namespace {

constexpr int kSteps = 3;
const std::vector<Shape> kParamShapes = {{3, 4}, {}};  // a matrix and a scalar (lr must broadcast to ())

// Inputs: the parameters, then kSteps gradients for each of them.
std::vector<Shape> input_shapes() {
  std::vector<Shape> s = kParamShapes;
  for (int k = 0; k < kSteps; k++) s.insert(s.end(), kParamShapes.begin(), kParamShapes.end());
  return s;
}

// tg: copies of the parameters, each step's gradients set by hand, then step().
using MakeOpt = std::function<std::unique_ptr<optim::Optimizer>(const std::vector<Tensor>&)>;
std::vector<Tensor> run_tg(std::vector<Tensor>& x, const MakeOpt& make) {
  size_t n = kParamShapes.size();
  std::vector<Tensor> ps;
  for (size_t i = 0; i < n; i++) ps.push_back(x[i].detach().requires_grad_());  // a new handle: the input stays as it was
  auto opt = make(ps);
  tg::TrainingGuard tr;
  for (int k = 0; k < kSteps; k++) {
    opt->zero_grad();
    for (size_t i = 0; i < n; i++) ps[i].set_grad(x[n * (k + 1) + i]);
    opt->step();
  }
  return ps;
}

// torch: the same steps with torch.optim.<ctor> (ctor sees the parameter list as `ps`).
std::string torch_steps(const std::string& ctor) {
  size_t n = kParamShapes.size();
  std::ostringstream gs, ps;
  gs << "[";
  for (int k = 0; k < kSteps; k++) {
    gs << "[";
    for (size_t i = 0; i < n; i++) gs << "x" << n * (k + 1) + i << ",";
    gs << "],";
  }
  gs << "]";
  ps << "[";
  for (size_t i = 0; i < n; i++) ps << "x" << i << ".clone().requires_grad_(True),";
  ps << "]";
  return "(lambda ps: (lambda opt: [([setattr(p, 'grad', g.clone()) for p, g in zip(ps, gs)], opt.step()) for gs in " + gs.str() +
         "] and tuple(p.detach() for p in ps))(torch.optim." + ctor + "))(" + ps.str() + ")";
}

void check_optimizer(const MakeOpt& make, const std::string& ctor, CheckOpts opts = {}) {
  opts.grad = false;
  check_op_multi(input_shapes(), [&](std::vector<Tensor>& x) { return run_tg(x, make); }, torch_steps(ctor), opts);
}

}  // namespace

TEST(OptimTorch, SGD) {
  check_optimizer([](auto& p) { return std::make_unique<optim::SGD>(p, 0.1); }, "SGD(ps, lr=0.1)");
  check_optimizer([](auto& p) { return std::make_unique<optim::SGD>(p, 0.1, 0.9); }, "SGD(ps, lr=0.1, momentum=0.9)");
  check_optimizer([](auto& p) { return std::make_unique<optim::SGD>(p, 0.1, 0.9, 0.0, true); },
                  "SGD(ps, lr=0.1, momentum=0.9, nesterov=True)");
  check_optimizer([](auto& p) { return std::make_unique<optim::SGD>(p, 0.05, 0.8, 0.1, true); },
                  "SGD(ps, lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=True)");
  check_optimizer([](auto& p) { return std::make_unique<optim::SGD>(p, 0.1, 0.0, 0.2); }, "SGD(ps, lr=0.1, weight_decay=0.2)");
}

TEST(OptimTorch, AdamAndAdamW) {
  check_optimizer([](auto& p) { return std::make_unique<optim::Adam>(p, 0.01); }, "Adam(ps, lr=0.01)");
  check_optimizer([](auto& p) { return std::make_unique<optim::Adam>(p, 0.1, 0.8, 0.99, 1e-6); },
                  "Adam(ps, lr=0.1, betas=(0.8, 0.99), eps=1e-6)");
  check_optimizer([](auto& p) { return std::make_unique<optim::AdamW>(p, 0.01, 0.9, 0.999, 1e-8, 0.1); },
                  "AdamW(ps, lr=0.01, weight_decay=0.1)");
}

// LAMB: Adam's update plus decoupled weight decay, scaled by the trust ratio ||w|| / ||update||.
TEST(OptimTorch, LAMBFormula) {
  const std::string step =
      "lambda s, g: (lambda t, m, v: (lambda up: (lambda r1, r2: (s[0] - 0.02 * torch.where(r1 > 0, torch.where(r2 > 0, r1 / r2, 1.0), 1.0)"
      " * up, m, v, t))(s[0].square().sum().sqrt(), up.square().sum().sqrt()))((m / (1 - 0.9 ** t)) / ((v / (1 - 0.99 ** t)).sqrt() + 1e-6)"
      " + 0.1 * s[0]))(s[3] + 1, 0.9 * s[1] + 0.1 * g, 0.99 * s[2] + 0.01 * g * g)";
  std::string expr = "__import__('functools').reduce(" + step + ", [x1, x2, x3], (x0, torch.zeros_like(x0), torch.zeros_like(x0), 0))[0]";
  check_op({{4, 5}, {4, 5}, {4, 5}, {4, 5}},
           [](auto& x) {
             Tensor p = x[0].detach().requires_grad_();
             optim::LAMB opt({p}, 0.02, 0.9, 0.99, 1e-6, 0.1);
             tg::TrainingGuard tr;
             for (int k = 1; k <= 3; k++) {
               p.set_grad(x[k]);
               opt.step();
             }
             return p;
           },
           expr, {.grad = false});
}

// lr is a tensor: a schedule changes it between steps without rebuilding the optimizer.
TEST(OptimTorch, LearningRateIsATensor) {
  Tensor p = Tensor(std::vector<float>{1.f, 2.f}, {2}).requires_grad_();
  optim::SGD opt({p}, 0.1);
  tg::TrainingGuard tr;
  p.set_grad(Tensor(std::vector<float>{1.f, 1.f}, {2}));
  opt.step();
  opt.lr.assign(Tensor(std::vector<float>{0.5f}, {}));
  opt.step();
  expect_close(to_doubles(p), {1 - 0.1 - 0.5, 2 - 0.1 - 0.5}, 1e-6, 1e-6, "sgd with a changed lr");
  EXPECT_EQ(opt.lr.shape(), Shape{});
}

// A real backward pass feeds the optimizer; BatchNorm's running stats are buffers the step realizes.
TEST(OptimTorch, StepAfterBackward) {
  Tensor w = Tensor(std::vector<float>{0.5f, -1.f, 2.f}, {3});
  Tensor frozen = Tensor::zeros({3}).requires_grad_(false);
  optim::Adam opt({w, frozen, w}, 0.1);  // duplicates are dropped
  EXPECT_EQ(opt.params.size(), 1u);
  EXPECT_EQ(opt.buffers.size(), 1u);
  tg::TrainingGuard tr;
  for (int i = 0; i < 50; i++) {
    opt.zero_grad();
    (w * w).sum().backward();
    opt.step();
  }
  for (double v : to_doubles(w)) EXPECT_LT(std::abs(v), 0.2) << "Adam minimizes sum(w^2)";
}

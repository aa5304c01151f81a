// Acceptance: small models trained with Adam on synthetic data converge. An MLP on a linearly separable
// 3-class problem and a CNN (Conv2d, BatchNorm, max_pool2d, Linear) telling horizontal from vertical
// bars; each must bring its loss under a stated threshold in a few seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "ref.h"

using tg::Tensor;
namespace nn = tg::nn;

namespace {

double accuracy(const Tensor& logits, const std::vector<int>& labels) {
  std::vector<int> pred = logits.argmax(1).cast(tg::dtypes::int32).tolist<int>();
  int ok = 0;
  for (size_t i = 0; i < labels.size(); i++) ok += pred[i] == labels[i];
  return static_cast<double>(ok) / static_cast<double>(labels.size());
}

struct MLP : nn::Module {
  nn::Linear l1{8, 32}, l2{32, 3};
  MLP() {
    register_module("l1", l1);
    register_module("l2", l2);
  }
  Tensor operator()(const Tensor& x) const { return l2(l1(x).relu()); }
};

struct CNN : nn::Module {
  nn::Conv2d c1{1, 8, 3, 1, 1};
  nn::BatchNorm2d bn{8};
  nn::Linear fc{8 * 4 * 4, 2};
  CNN() {
    register_module("c1", c1);
    register_module("bn", bn);
    register_module("fc", fc);
  }
  Tensor operator()(const Tensor& x) const { return fc(bn(c1(x)).relu().max_pool2d({2, 2}).flatten(1)); }
};

// `steps` of training on the whole (X, Y); returns the last loss, printed with the time taken.
template <class Model>
double train(const char* name, Model& model, nn::optim::Optimizer& opt, const Tensor& X, const Tensor& Y, int steps) {
  tg::TrainingGuard tr;
  auto t0 = std::chrono::steady_clock::now();
  double loss = 0;
  for (int step = 0; step < steps; step++) {
    opt.zero_grad();
    Tensor l = model(X).sparse_categorical_crossentropy(Y);
    l.backward();
    opt.step();
    loss = l.item<float>();
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: loss %.4f after %d steps, %.2f s\n", name, loss, steps, secs);
  return loss;
}

}  // namespace

TEST(Train, MLPConverges) {
  tg::Tensor::manual_seed(1);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  const int n = 256;
  std::vector<float> xs(n * 8), wt(8 * 3);
  for (float& v : wt) v = nd(rng);
  for (float& v : xs) v = nd(rng);
  std::vector<int> ys(n);
  for (int i = 0; i < n; i++) {  // the label is the argmax of a fixed random linear map
    float best = -1e9f;
    for (int c = 0; c < 3; c++) {
      float s = 0;
      for (int k = 0; k < 8; k++) s += xs[i * 8 + k] * wt[k * 3 + c];
      if (s > best) best = s, ys[i] = c;
    }
  }
  Tensor X(xs, {n, 8}), Y(ys, {n});
  MLP model;
  nn::optim::Adam opt(nn::state::get_parameters(model), 0.02);
  double loss = train("MLP", model, opt, X, Y, 150);
  EXPECT_LT(loss, 0.15);
  EXPECT_GT(accuracy(model(X), ys), 0.97);
}

TEST(Train, CNNConverges) {
  tg::Tensor::manual_seed(2);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pos(0, 7), cls(0, 1);
  std::normal_distribution<float> noise(0, 0.3f);
  const int n = 64;
  std::vector<float> xs(n * 64);
  std::vector<int> ys(n);
  for (int i = 0; i < n; i++) {  // class 0: a horizontal bar, class 1: a vertical bar, anywhere, in noise
    ys[i] = cls(rng);
    int p = pos(rng);
    for (int r = 0; r < 8; r++)
      for (int c = 0; c < 8; c++) xs[i * 64 + r * 8 + c] = noise(rng) + (((ys[i] == 0 ? r : c) == p) ? 1.f : 0.f);
  }
  Tensor X(xs, {n, 1, 8, 8}), Y(ys, {n});
  CNN model;
  nn::optim::Adam opt(nn::state::get_parameters(model), 0.02);  // running stats ride along as buffers
  EXPECT_EQ(opt.buffers.size(), 3u);
  double loss = train("CNN", model, opt, X, Y, 60);
  EXPECT_LT(loss, 0.1);
  EXPECT_EQ(model.bn.num_batches_tracked->item<int64_t>(), 60);
  // evaluation with the running statistics classifies as well
  tg::TrainingGuard eval(false);
  EXPECT_GT(accuracy(model(X), ys), 0.95);
}

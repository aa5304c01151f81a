// The main job: train a small MLP on Fashion-MNIST on the CPU and report test accuracy.
//
// Each step picks a random batch with an integer-tensor index (a data-dependent load: its cost is the
// batch, not the 60000-image dataset), runs forward and backward, and lets Adam update the weights.
// Usage: fashion_mnist [steps=600] [batch=128]. Run with DEBUG=2 to see every kernel.
#include <tg/datasets.h>
#include <tg/nn.h>
#include <tg/optim.h>
#include <tg/state.h>
#include <tg/tg.h>

#include <cstdio>
#include <cstdlib>

using tg::Tensor;
namespace nn = tg::nn;

struct MLP : nn::Module {
  nn::Linear l1{784, 256}, l2{256, 10};
  MLP() {
    register_module("l1", l1);
    register_module("l2", l2);
  }
  Tensor operator()(const Tensor& x) const { return l2(l1(x.flatten(1)).relu()); }
};

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 600;
  int64_t batch = argc > 2 ? std::atoll(argv[2]) : 128;
  Tensor::manual_seed(1337);

  auto data = nn::datasets::fashion_mnist();
  // the whole dataset as float in [0, 1), made once
  Tensor X_train = (data.X_train.cast(tg::dtypes::float32) / 255.0f).realize();
  Tensor X_test = (data.X_test.cast(tg::dtypes::float32) / 255.0f).realize();
  Tensor Y_train = data.Y_train.realize(), Y_test = data.Y_test.realize();
  int64_t n_train = X_train.shape()[0];

  MLP model;
  nn::optim::Adam opt(nn::state::get_parameters(model), 1e-3);
  double t0 = tg::now_s();
  for (int step = 1; step <= steps; step++) {
    tg::TrainingGuard training;
    Tensor samples = Tensor::randint({batch}, 0, n_train);
    Tensor loss = model(X_train.index({samples})).sparse_categorical_crossentropy(Y_train.index({samples}));
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step % 100 == 0 || step == steps)
      std::printf("step %4d  loss %.4f  %.1f ms/step\n", step, loss.item<float>(), (tg::now_s() - t0) * 1e3 / step);
  }
  tg::NoGradGuard no_grad;
  float acc = (model(X_test).argmax(1) == Y_test).cast(tg::dtypes::float32).mean().item<float>();
  std::printf("test accuracy %.2f%%  (%d steps of %lld in %.1f s)\n", acc * 100, steps, static_cast<long long>(batch),
              tg::now_s() - t0);
  return acc > 0.80 ? 0 : 1;
}

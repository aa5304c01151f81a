// tinygrad's beautiful_mnist model, shared by the example (beautiful_mnist.cpp) and the benches that
// measure its training step (bench/compile_time.cpp, bench/pipeline.cpp).
#pragma once
#include <tg/tg.h>

// tinygrad's model: two 5x5 and two 3x3 convolutions, BatchNorm and max-pooling after each pair.
struct BeautifulMnistModel : tg::nn::Module {
  tg::nn::Conv2d c1{1, 32, 5}, c2{32, 32, 5}, c3{32, 64, 3}, c4{64, 64, 3};
  tg::nn::BatchNorm bn1{32}, bn2{64};
  tg::nn::Linear l{576, 10};
  BeautifulMnistModel() {
    register_module("c1", c1), register_module("c2", c2), register_module("bn1", bn1);
    register_module("c3", c3), register_module("c4", c4), register_module("bn2", bn2), register_module("l", l);
  }
  tg::Tensor operator()(const tg::Tensor& x) const {
    tg::Tensor h = bn1(c2(c1(x).relu()).relu()).max_pool2d();
    h = bn2(c4(c3(h).relu()).relu()).max_pool2d();
    return l(h.flatten(1));
  }
};

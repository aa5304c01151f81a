// Datasets, as tinygrad's nn/datasets.py: tensors ready to train on.
#pragma once
#include <string>

#include "tg/tensor.h"

namespace tg::nn::datasets {

struct MNISTLike {
  Tensor X_train, Y_train, X_test, Y_test;  // X: uint8 (N, 1, 28, 28); Y: int32 (N,)
};

// Fashion-MNIST from the four idx files (gzip-compressed or not) in `dir`, by default where Debian's
// dataset-fashion-mnist package puts them. Missing or malformed files are a tg::Error.
MNISTLike fashion_mnist(const std::string& dir = "/usr/share/datasets/fashion-mnist", const std::string& device = "");

// One idx file (the format of MNIST and Fashion-MNIST), gzip-compressed or not, as a uint8 tensor of
// the shape its header gives.
Tensor load_idx(const std::string& path, const std::string& device = "");

}  // namespace tg::nn::datasets

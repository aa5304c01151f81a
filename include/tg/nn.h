// tg::nn: tinygrad's layers (nn/__init__.py): Linear, Conv1d/Conv2d, ConvTranspose2d, BatchNorm, LayerNorm,
// LayerNorm2d, GroupNorm, InstanceNorm, RMSNorm, Embedding, with tinygrad's names, defaults and init.
//
// C++ has no reflection, so a Module lists its tensors itself: each layer registers its tensors under
// tinygrad's (and PyTorch's) names at construction, and a model registers its child modules:
//
//   struct MLP : tg::nn::Module {
//     tg::nn::Linear l1{784, 128}, l2{128, 10};
//     MLP() { register_module("l1", l1); register_module("l2", l2); }  // -> "l1.weight", "l1.bias", ...
//     Tensor operator()(const Tensor& x) const { return l2(l1(x).relu()); }
//   };
//
// The registry holds Tensor handles, which share their data with the layer's members: change a weight
// in place with `layer.weight.assign(t)` (as optimizers and load_state_dict do), never by rebinding the
// member (`layer.weight = t` would leave the registry pointing at the old tensor). For the same reason
// register_module copies the child's list when called, so children must be fully built first (members
// are, by the time a constructor body runs). Copying a Module gives a second handle to the same tensors.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/tensor.h"

namespace tg::nn {

class Module {
 public:
  virtual ~Module() = default;
  // Adds `t` under `name` (a duplicate name is a tg::Error) and returns the registered handle.
  Tensor& register_tensor(const std::string& name, Tensor t);
  // Adds every tensor of `child` as "name.<its name>".
  void register_module(const std::string& name, const Module& child);
  // Every registered tensor in registration order: parameters and state (running stats).
  const std::deque<std::pair<std::string, Tensor>>& named_tensors() const { return tensors_; }
  std::map<std::string, Tensor> state_dict() const;
  // The tensors that are trained: all but those marked requires_grad(false), such as running stats.
  std::vector<Tensor> parameters() const;

 private:
  std::deque<std::pair<std::string, Tensor>> tensors_;  // a deque keeps returned references valid
};

// y = x @ weight.T + bias. weight (out_features, in_features), both uniform in +-1/sqrt(in_features).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
};

// Convolution over the trailing dims of (N, C, *spatial); the kernel's rank picks 1-D or 2-D (or 3-D).
// stride/padding/dilation are one value for every dim or one per dim (padding also (begin, end) pairs,
// see Tensor::conv2d). weight (out, in/groups, *kernel) and bias uniform in +-1/sqrt(in * prod(kernel)).
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, const std::vector<int64_t>& kernel_size,
         const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
         const std::vector<int64_t>& dilation = {1}, int64_t groups = 1, bool bias = true);
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true)
      : Conv2d(in_channels, out_channels, {kernel_size, kernel_size}, {stride}, {padding}, {dilation}, groups, bias) {}
  Tensor operator()(const Tensor& x) const;
  std::vector<int64_t> kernel_size, stride, padding, dilation;
  int64_t groups;
  Tensor weight;
  std::optional<Tensor> bias;
};

// A Conv2d with a 1-D kernel (tinygrad's Conv1d).
class Conv1d : public Conv2d {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true)
      : Conv2d(in_channels, out_channels, std::vector<int64_t>{kernel_size}, {stride}, {padding}, {dilation}, groups, bias) {}
};

// Transposed convolution. weight (in, out/groups, *kernel), init as Conv2d.
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, const std::vector<int64_t>& kernel_size,
                  const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                  const std::vector<int64_t>& output_padding = {0}, const std::vector<int64_t>& dilation = {1},
                  int64_t groups = 1, bool bias = true);
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
                  int64_t output_padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true)
      : ConvTranspose2d(in_channels, out_channels, {kernel_size, kernel_size}, {stride}, {padding}, {output_padding},
                        {dilation}, groups, bias) {}
  Tensor operator()(const Tensor& x) const;
  std::vector<int64_t> kernel_size, stride, padding, output_padding, dilation;
  int64_t groups;
  Tensor weight;
  std::optional<Tensor> bias;
};

// Batch normalization over dim 1 of (N, C, ...). With Tensor::training it normalizes by the batch's
// statistics and (track_running_stats) updates running_mean / running_var (unbiased) with `momentum`;
// otherwise it uses the running statistics (or the batch's when they are not tracked). The running
// statistics are lazy updates: given to the optimizer (state::get_parameters(model), every tensor, as
// tinygrad) each step() realizes them with the weights; otherwise the next training call realizes the
// previous update first, so their graph never grows beyond one step.
class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t sz, double eps = 1e-5, bool affine = true, bool track_running_stats = true,
                     double momentum = 0.1);
  Tensor operator()(const Tensor& x) const;
  int64_t num_features;
  double eps, momentum;
  bool track_running_stats;
  std::optional<Tensor> weight, bias;
  std::optional<Tensor> running_mean, running_var, num_batches_tracked;  // state, requires_grad(false)
};
using BatchNorm2d = BatchNorm;
using BatchNorm3d = BatchNorm;

// Normalizes over the trailing normalized_shape dims, then weight * x + bias.
class LayerNorm : public Module {
 public:
  LayerNorm(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm(Shape{normalized_shape}, eps, elementwise_affine) {}
  Tensor operator()(const Tensor& x) const;
  Shape normalized_shape;
  double eps;
  std::optional<Tensor> weight, bias;
};

// LayerNorm over the channels of (N, C, H, W).
class LayerNorm2d : public LayerNorm {
 public:
  using LayerNorm::LayerNorm;
  Tensor operator()(const Tensor& x) const;
};

// Normalizes each of num_groups channel groups of (N, C, ...), then a per-channel affine.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  int64_t num_groups, num_channels;
  double eps;
  std::optional<Tensor> weight, bias;
};

// Normalizes each channel of each sample of (N, C, ...), then a per-channel affine.
class InstanceNorm : public Module {
 public:
  explicit InstanceNorm(int64_t num_features, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  int64_t num_features;
  double eps;
  std::optional<Tensor> weight, bias;
};

// x * rsqrt(mean(x^2, -1) + eps) * weight, computed in float and cast back to x's dtype.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor operator()(const Tensor& x) const;
  double eps;
  Tensor weight;
};

// A lookup table: idx (any shape, integer) -> (*idx.shape, embed_size). weight glorot-uniform.
// It reads rows as Tensor::index does: by default a negative idx counts from the end and one still out of
// range gives a zero row; with CHECK_INDEX=1 any idx outside [0, vocab_size) is a tg::Error (as torch).
class Embedding : public Module {
 public:
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx) const;
  int64_t vocab_size, embed_size;
  Tensor weight;
};

}  // namespace tg::nn

// tinygrad's layers (nn/__init__.py): init, names and forward semantics.
#include <algorithm>
#include <cmath>

#include "tensor/internal.h"
#include "tg/nn.h"

namespace tg::nn {

namespace {

int64_t prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// (1, -1, 1, ...): a per-channel vector broadcast over (N, C, *spatial).
Shape channel_shape(int ndim) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[1] = -1;
  return s;
}

void check_channels(const char* op, const Tensor& x, int64_t channels) {
  TG_CHECK(x.ndim() >= 2 && x.shape()[1] == channels, op, ": expected input of shape (N, ", channels, ", ...), got ", x.shape());
}

Tensor channel_affine(const Tensor& x, const std::optional<Tensor>& w, const std::optional<Tensor>& b) {
  if (!w || !b) return x;
  Shape s = channel_shape(x.ndim());
  return x * w->reshape(s) + b->reshape(s);
}

// weight = 1, bias = 0 over `shape`: the identity affine every normalization layer starts from.
void register_affine(Module& m, const Shape& shape, std::optional<Tensor>& weight, std::optional<Tensor>& bias) {
  weight = m.register_tensor("weight", Tensor::ones(shape));
  bias = m.register_tensor("bias", Tensor::zeros(shape));
}

// Each of `groups` channel groups of each sample of (N, C, ...) normalized, then the per-channel affine
// (GroupNorm; InstanceNorm is one group a channel).
Tensor group_norm(const Tensor& x, int64_t groups, double eps, const std::optional<Tensor>& w, const std::optional<Tensor>& b) {
  Tensor y = x.reshape({x.shape()[0], groups, -1}).layernorm({-1}, eps).reshape(x.shape());
  return channel_affine(y, w, b);
}

void check_conv_args(const char* op, int64_t in, int64_t out, const std::vector<int64_t>& k, int64_t groups) {
  TG_CHECK(in > 0 && out > 0 && groups > 0 && in % groups == 0 && out % groups == 0, op, ": in_channels ", in, " and out_channels ",
           out, " must be positive multiples of groups ", groups);
  TG_CHECK(!k.empty() && std::all_of(k.begin(), k.end(), [](int64_t d) { return d > 0; }), op, ": bad kernel_size ", k);
}

// (N, C, *spatial) with as many spatial dims as the kernel and C channels.
void check_conv_input(const char* op, const Tensor& x, int64_t channels, size_t spatial) {
  TG_CHECK(x.ndim() == static_cast<int>(spatial) + 2 && x.shape()[1] == channels, op, ": expected input of shape (N, ", channels,
           ", ", spatial, " spatial dims), got ", x.shape(), " (", x.dtype().name(), ")");
}

}  // namespace

// ---- Linear ---------------------------------------------------------------------------------------------

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias)
    : weight(register_tensor("weight", Tensor::uniform({out_features, in_features}, -1 / std::sqrt(double(in_features)),
                                               1 / std::sqrt(double(in_features))))) {
  TG_CHECK(in_features > 0 && out_features >= 0, "Linear: bad sizes in_features=", in_features, " out_features=", out_features);
  double bound = 1 / std::sqrt(static_cast<double>(in_features));
  if (has_bias) bias = register_tensor("bias", Tensor::uniform({out_features}, -bound, bound));
}

Tensor Linear::operator()(const Tensor& x) const {
  TG_CHECK(x.ndim() >= 1 && x.shape().back() == weight.shape()[1], "Linear: expected input of shape (..., ", weight.shape()[1],
           "), got ", x.shape());
  return x.linear(weight, bias);  // tg::Tensor::linear takes (out, in) weights, as torch
}

// ---- convolutions -----------------------------------------------------------------------------------------

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, const std::vector<int64_t>& ks, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups, bool has_bias)
    : kernel_size(ks), stride(stride), padding(padding), dilation(dilation), groups(groups),
      weight(Tensor::empty({0})) {
  check_conv_args("Conv2d", in_channels, out_channels, ks, groups);
  double scale = 1 / std::sqrt(static_cast<double>(in_channels * prod(ks)));
  Shape ws{out_channels, in_channels / groups};
  ws.insert(ws.end(), ks.begin(), ks.end());
  weight = register_tensor("weight", Tensor::uniform(ws, -scale, scale));
  if (has_bias) bias = register_tensor("bias", Tensor::uniform({out_channels}, -scale, scale));
}

Tensor Conv2d::operator()(const Tensor& x) const {
  check_conv_input("Conv2d", x, weight.shape()[1] * groups, kernel_size.size());
  return x.conv2d(weight, bias, groups, stride, dilation, padding);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, const std::vector<int64_t>& ks,
                                 const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                 const std::vector<int64_t>& output_padding, const std::vector<int64_t>& dilation,
                                 int64_t groups, bool has_bias)
    : kernel_size(ks), stride(stride), padding(padding), output_padding(output_padding), dilation(dilation), groups(groups),
      weight(Tensor::empty({0})) {
  check_conv_args("ConvTranspose2d", in_channels, out_channels, ks, groups);
  double scale = 1 / std::sqrt(static_cast<double>(in_channels * prod(ks)));  // tinygrad scales by in_channels here too
  Shape ws{in_channels, out_channels / groups};
  ws.insert(ws.end(), ks.begin(), ks.end());
  weight = register_tensor("weight", Tensor::uniform(ws, -scale, scale));
  if (has_bias) bias = register_tensor("bias", Tensor::uniform({out_channels}, -scale, scale));
}

Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  check_conv_input("ConvTranspose2d", x, weight.shape()[0], kernel_size.size());
  return x.conv_transpose2d(weight, bias, groups, stride, dilation, padding, output_padding);
}

// ---- normalization ----------------------------------------------------------------------------------------

BatchNorm::BatchNorm(int64_t sz, double eps, bool affine, bool track_running_stats, double momentum)
    : num_features(sz), eps(eps), momentum(momentum), track_running_stats(track_running_stats) {
  TG_CHECK(sz > 0, "BatchNorm: bad number of features ", sz);
  if (affine) {
    register_affine(*this, Shape{sz}, weight, bias);
  }
  if (track_running_stats) {  // state, not parameters: buffers (a constant would stay one: 0 + 1 folds to 1)
    running_mean = register_tensor("running_mean", Tensor::zeros({sz}).contiguous().requires_grad_(false));
    running_var = register_tensor("running_var", Tensor::ones({sz}).contiguous().requires_grad_(false));
    num_batches_tracked = register_tensor("num_batches_tracked", Tensor::zeros({}, dtypes::int64).contiguous().requires_grad_(false));
  }
}

Tensor BatchNorm::operator()(const Tensor& x) const {
  int64_t sz = num_features;
  check_channels("BatchNorm", x, sz);
  Shape mask = channel_shape(x.ndim());
  if (track_running_stats && !Tensor::training) {
    Tensor invstd = (*running_var + eps).rsqrt();
    return x.batchnorm(weight, bias, *running_mean, invstd);
  }
  std::vector<int> axes;
  for (int i = 0; i < x.ndim(); i++)
    if (i != 1) axes.push_back(i);
  Tensor mean = x.mean(axes);
  Tensor y = x - mean.detach().reshape(mask);  // d(var)/d(mean) is 0: no gradient through this mean
  Tensor var = (y * y).mean(axes);
  if (track_running_stats) {  // training: running statistics with the unbiased variance, as PyTorch
    double n = static_cast<double>(x.numel() / sz);
    Tensor rm = *running_mean, rv = *running_var, nb = *num_batches_tracked;  // handles: assign updates the module
    // the previous update, if no optimizer realized it: keeps the lazy graph from chaining every step
    rm.realize();
    rv.realize();
    nb.realize();
    rm.assign(((1 - momentum) * rm + momentum * mean.detach()).cast(rm.dtype()));
    rv.assign(((1 - momentum) * rv + momentum * n / std::max(n - 1, 1.0) * var.detach()).cast(rv.dtype()));
    nb.assign(nb + 1);
  }
  return x.batchnorm(weight, bias, mean, (var + eps).rsqrt());
}

LayerNorm::LayerNorm(const Shape& normalized_shape, double eps, bool elementwise_affine)
    : normalized_shape(normalized_shape), eps(eps) {
  TG_CHECK(!normalized_shape.empty(), "LayerNorm: normalized_shape must not be empty");
  if (elementwise_affine) {
    register_affine(*this, normalized_shape, weight, bias);
  }
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  size_t k = normalized_shape.size();
  TG_CHECK(x.shape().size() >= k && Shape(x.shape().end() - static_cast<long>(k), x.shape().end()) == normalized_shape,
           "LayerNorm: last dimensions of ", x.shape(), " must match ", normalized_shape);
  std::vector<int> axes;
  for (size_t i = 0; i < k; i++) axes.push_back(-1 - static_cast<int>(i));
  Tensor y = x.layernorm(axes, eps);
  return weight ? y * *weight + *bias : y;
}

Tensor LayerNorm2d::operator()(const Tensor& x) const {
  TG_CHECK(x.ndim() == 4, "LayerNorm2d: expected input of shape (N, C, H, W), got ", x.shape());
  return LayerNorm::operator()(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : num_groups(num_groups), num_channels(num_channels), eps(eps) {
  TG_CHECK(num_groups > 0 && num_channels > 0 && num_channels % num_groups == 0, "GroupNorm: num_channels ", num_channels,
           " must be a positive multiple of num_groups ", num_groups);
  if (affine) {
    register_affine(*this, Shape{num_channels}, weight, bias);
  }
}

Tensor GroupNorm::operator()(const Tensor& x) const {
  check_channels("GroupNorm", x, num_channels);
  return group_norm(x, num_groups, eps, weight, bias);
}

InstanceNorm::InstanceNorm(int64_t num_features, double eps, bool affine) : num_features(num_features), eps(eps) {
  TG_CHECK(num_features > 0, "InstanceNorm: bad number of features ", num_features);
  if (affine) {
    register_affine(*this, Shape{num_features}, weight, bias);
  }
}

Tensor InstanceNorm::operator()(const Tensor& x) const {
  check_channels("InstanceNorm", x, num_features);
  return group_norm(x, num_features, eps, weight, bias);
}

RMSNorm::RMSNorm(int64_t dim, double eps) : eps(eps), weight(register_tensor("weight", Tensor::ones({dim}))) {
  TG_CHECK(dim > 0, "RMSNorm: bad dim ", dim);
}

Tensor RMSNorm::operator()(const Tensor& x) const {
  TG_CHECK(x.ndim() >= 1 && x.shape().back() == weight.shape()[0], "RMSNorm: expected input of shape (..., ", weight.shape()[0],
           "), got ", x.shape());
  Tensor xf = x.cast(dtypes::float32);  // normalized in float (tinygrad's x.float())
  Tensor n = xf * (xf.square().mean({-1}, true) + eps).rsqrt();
  return n.cast(x.dtype()) * weight;
}

// ---- Embedding --------------------------------------------------------------------------------------------

Embedding::Embedding(int64_t vocab_size, int64_t embed_size)
    : vocab_size(vocab_size), embed_size(embed_size), weight(register_tensor("weight", Tensor::glorot_uniform({vocab_size, embed_size}))) {
  TG_CHECK(vocab_size > 0 && embed_size > 0, "Embedding: bad sizes vocab_size=", vocab_size, " embed_size=", embed_size);
}

// A row gather (work proportional to the output; tinygrad v0.9 multiplies by a one-hot instead).
Tensor Embedding::operator()(const Tensor& idx) const {
  TG_CHECK_AS(TypeError, idx.dtype().is_int(), "Embedding: indices must be integers, got ", idx.dtype().name(), " of shape ", idx.shape());
  tg::detail::check_index_range(idx, 0, vocab_size, "Embedding", tg::detail::cat("vocab_size ", vocab_size));
  if (idx.numel() == 0) {
    Shape out = idx.shape();
    out.push_back(embed_size);
    return Tensor::zeros(out, weight.dtype(), weight.device());
  }
  return weight.index({idx});
}

}  // namespace tg::nn

"""tg.nn: tinygrad's layers as plain Python classes.

A layer keeps its tensors as ordinary attributes (`self.weight`, `self.bias`), so tg.nn.state's
get_parameters / get_state_dict find them by walking a model's attributes, as tinygrad does: a user's own
class holding layers (in attributes, lists, tuples or dicts) needs no registration. The math is Tensor ops
(C++), one call each; initialization follows tinygrad (and tinygrad.cpp's C++ nn, which has the same).
"""
import math
from typing import Optional, Tuple, Union

from tg.dtype import dtypes
from tg.helpers import prod
from tg.tensor import Tensor
from tg.nn import datasets, optim, state  # noqa: F401


def _pair(x, n: int = 2) -> Tuple[int, ...]:
  return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class Linear:
  """y = x @ weight.T + bias. weight (out_features, in_features) and bias uniform in +-1/sqrt(in_features)."""
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None

  def __call__(self, x: Tensor) -> Tensor: return x.linear(self.weight.transpose(), self.bias)


class Conv2d:
  """Convolution over the trailing dims of (N, C, *spatial); the kernel's rank picks 1-D, 2-D or 3-D.
  weight (out, in/groups, *kernel_size) and bias uniform in +-1/sqrt(in/groups * prod(kernel_size))."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple[int, ...]], stride=1, padding=0,
               dilation=1, groups: int = 1, bias: bool = True):
    self.kernel_size = _pair(kernel_size)
    self.stride, self.dilation, self.groups, self.padding = stride, dilation, groups, padding
    scale = 1 / math.sqrt(in_channels // groups * prod(self.kernel_size))
    self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-scale, high=scale)
    self.bias = Tensor.uniform(out_channels, low=-scale, high=scale) if bias else None

  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, groups=self.groups, stride=self.stride, dilation=self.dilation, padding=self.padding)


def Conv1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, dilation=1, groups=1, bias=True) -> Conv2d:
  """A Conv2d with a 1-D kernel, as tinygrad's Conv1d."""
  return Conv2d(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)


class ConvTranspose2d(Conv2d):
  """Transposed convolution. weight (in, out/groups, *kernel_size), initialized as Conv2d's."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple[int, ...]], stride=1, padding=0,
               output_padding=0, dilation=1, groups: int = 1, bias: bool = True):
    super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
    scale = 1 / math.sqrt(in_channels * prod(self.kernel_size))
    self.weight = Tensor.uniform(in_channels, out_channels // groups, *self.kernel_size, low=-scale, high=scale)
    self.output_padding = output_padding

  def __call__(self, x: Tensor) -> Tensor:
    return x.conv_transpose2d(self.weight, self.bias, groups=self.groups, stride=self.stride, dilation=self.dilation,
                              padding=self.padding, output_padding=self.output_padding)


def ConvTranspose1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, output_padding=0, dilation=1,
                    groups=1, bias=True) -> ConvTranspose2d:
  """A ConvTranspose2d with a 1-D kernel."""
  return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation, groups, bias)


class BatchNorm:
  """Batch normalization over dim 1 of (N, C, ...).

  With Tensor.training it normalizes by the batch's statistics and (track_running_stats) updates
  running_mean / running_var (unbiased) with `momentum`; otherwise it uses the running statistics. The
  updates are lazy assigns: an optimizer given get_parameters(model) realizes them with each step; if not,
  the next training call realizes the previous ones first, so their graph never grows past one step."""
  def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True, momentum: float = 0.1):
    self.sz, self.eps, self.track_running_stats, self.momentum = sz, eps, track_running_stats, momentum
    self.weight, self.bias = (Tensor.ones(sz), Tensor.zeros(sz)) if affine else (None, None)
    # state as buffers: a constant would stay one (0 + 1 folds to 1), and assign updates a buffer in place
    self.num_batches_tracked = Tensor.zeros(1, dtype=dtypes.int, requires_grad=False).contiguous()
    if track_running_stats:
      self.running_mean, self.running_var = Tensor.zeros(sz, requires_grad=False).contiguous(), Tensor.ones(sz, requires_grad=False).contiguous()

  def calc_stats(self, x: Tensor) -> Tuple[Tensor, Tensor]:
    """The (mean, var) this call normalizes by."""
    if self.track_running_stats and not Tensor.training: return self.running_mean, self.running_var
    axes = tuple(a for a in range(x.ndim) if a != 1)
    mean = x.mean(axis=axes)
    y = x - mean.detach().reshape(1, -1, *[1] * (x.ndim - 2))
    return mean, (y * y).mean(axis=axes)

  def __call__(self, x: Tensor) -> Tensor:
    _check_channels("BatchNorm", x, self.sz)
    mean, var = self.calc_stats(x)
    if self.track_running_stats and Tensor.training:
      self.running_mean.realize(self.running_var, self.num_batches_tracked)  # the previous step's updates, if still pending
      n = x.numel() / x.shape[1]
      self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * mean.detach())
      self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * n / max(n - 1, 1) * var.detach())
      self.num_batches_tracked += 1
    return x.batchnorm(self.weight, self.bias, mean, var.add(self.eps).rsqrt())


BatchNorm2d = BatchNorm3d = BatchNorm


class LayerNorm:
  """Normalizes over the trailing normalized_shape dims, then weight * x + bias."""
  def __init__(self, normalized_shape: Union[int, Tuple[int, ...]], eps: float = 1e-5, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis, self.eps, self.elementwise_affine = tuple(-1 - i for i in range(len(self.normalized_shape))), eps, elementwise_affine
    self.weight, self.bias = (Tensor.ones(*self.normalized_shape), Tensor.zeros(*self.normalized_shape)) if elementwise_affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
      raise ValueError(f"LayerNorm: input of shape {x.shape} does not end with normalized_shape {self.normalized_shape}")
    x = x.layernorm(axis=self.axis, eps=self.eps)
    return x * self.weight + self.bias if self.elementwise_affine else x


class LayerNorm2d(LayerNorm):
  """LayerNorm over the channels of (N, C, H, W)."""
  def __call__(self, x: Tensor) -> Tensor: return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _check_channels(layer: str, x: Tensor, channels: int):
  if x.ndim < 2 or x.shape[1] != channels: raise ValueError(f"{layer}: expected input of shape (N, {channels}, ...), got {x.shape}")


def _channel_affine(x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor]) -> Tensor:
  if weight is None: return x
  shape = (1, -1, *[1] * (x.ndim - 2))
  return x * weight.reshape(shape) + bias.reshape(shape)


class GroupNorm:
  """Normalizes each of num_groups channel groups of (N, C, ...), then a per-channel affine."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight, self.bias = (Tensor.ones(num_channels), Tensor.zeros(num_channels)) if affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    _check_channels("GroupNorm", x, self.num_channels)
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(eps=self.eps).reshape(x.shape)
    return _channel_affine(x, self.weight, self.bias)


class InstanceNorm:
  """Normalizes each channel of each sample of (N, C, ...), then a per-channel affine."""
  def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True):
    self.num_features, self.eps = num_features, eps
    self.weight, self.bias = (Tensor.ones(num_features), Tensor.zeros(num_features)) if affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    _check_channels("InstanceNorm", x, self.num_features)
    x = x.reshape(x.shape[0], self.num_features, -1).layernorm(eps=self.eps).reshape(x.shape)
    return _channel_affine(x, self.weight, self.bias)


class RMSNorm:
  """x * rsqrt(mean(x^2, -1) + eps) * weight, computed in float and cast back to x's dtype."""
  def __init__(self, dim: int, eps: float = 1e-6):
    self.eps, self.weight = eps, Tensor.ones(dim)

  def _norm(self, x: Tensor) -> Tensor: return x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()

  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim == 0 or x.shape[-1] != self.weight.shape[0]:
      raise ValueError(f"RMSNorm: expected input of shape (..., {self.weight.shape[0]}), got {x.shape}")
    return self._norm(x.float()).cast(x.dtype) * self.weight


class Embedding:
  """A lookup table: idx (any shape, integer) -> (*idx.shape, embed_size). weight glorot-uniform.
  Rows are read as t[idx] reads: a negative idx counts from the end, one still out of range gives a zero row."""
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_sz, self.embed_sz = vocab_size, embed_size
    self.weight = Tensor.glorot_uniform(vocab_size, embed_size)

  def __call__(self, idx: Tensor) -> Tensor:
    if not idx.dtype.is_int(): raise TypeError(f"Embedding: indices must be integers, got {idx.dtype.name} of shape {idx.shape}")
    return self.weight[idx]


__all__ = ["Linear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "BatchNorm", "BatchNorm2d", "BatchNorm3d",
           "LayerNorm", "LayerNorm2d", "GroupNorm", "InstanceNorm", "RMSNorm", "Embedding", "optim", "state", "datasets"]

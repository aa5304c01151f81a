# Network ops: matmul, convolutions, pools, normalization, attention, losses, interpolation, against
# PyTorch (forward and backward).
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tg import Tensor
from helpers import helper_test_op

MATMUL = {
  "dot_1d":          [(45,), (45,)],
  "matmul_2d":       [(45, 65), (65, 100)],
  "matmul_vec_mat":  [(64,), (64, 99)],
  "matmul_mat_vec":  [(10, 64), (64,)],
  "matmul_batched":  [(8, 45, 65), (8, 65, 30)],
  "matmul_broadcast": [(2, 1, 3, 5), (4, 5, 2)],
  "matmul_vec_batched": [(3,), (1, 3, 3, 5)],
}


@pytest.mark.parametrize("name", list(MATMUL))
def test_matmul(name):
  helper_test_op(MATMUL[name], lambda x, y: x.matmul(y), lambda x, y: x.matmul(y), atol=1e-5)


def test_dot_method():
  helper_test_op([(4, 5), (5, 3)], lambda x, y: x @ y, lambda x, y: x.dot(y), atol=1e-5)


def test_matmul_operator():
  helper_test_op([(4, 5), (5, 3)], lambda x, y: x @ y, atol=1e-5)


def test_linear():
  helper_test_op([(4, 7), (5, 7), (5,)], lambda x, w, b: F.linear(x, w, b), lambda x, w, b: x.linear(w.T, b), atol=1e-5)


def test_matvecmat():
  helper_test_op([(4,), (4, 4), (4,)], lambda x, m, y: (x @ m) @ y, atol=1e-5)


CONV2D = {
  # name: (shapes, torch kwargs, tg kwargs, options)
  "simple":       ([(1, 4, 9, 9), (4, 4, 3, 3)], {}, {}, dict(grad_rtol=1e-5)),
  "bias":         ([(1, 4, 9, 9), (4, 4, 3, 3), (4,)], {}, {}, dict(grad_rtol=1e-5)),
  "1x1":          ([(2, 4, 5, 5), (6, 4, 1, 1)], {}, {}, {}),
  "batched":      ([(3, 2, 7, 8), (4, 2, 3, 3)], {}, {}, {}),
  "stride2":      ([(2, 3, 11, 14), (4, 3, 3, 3)], dict(stride=2), dict(stride=2), {}),
  "stride_2_1":   ([(2, 3, 11, 14), (4, 3, 3, 3)], dict(stride=(2, 1)), dict(stride=(2, 1)), {}),
  "padding1":     ([(2, 3, 7, 7), (4, 3, 3, 3)], dict(padding=1), dict(padding=1), {}),
  "padding_2_1":  ([(2, 3, 7, 7), (4, 3, 3, 3)], dict(padding=(2, 1)), dict(padding=(2, 1)), {}),
  "dilation2":    ([(2, 3, 11, 14), (4, 3, 3, 3)], dict(dilation=2), dict(dilation=2), {}),
  "dilation_2_1": ([(2, 3, 11, 14), (4, 3, 3, 3)], dict(dilation=(2, 1)), dict(dilation=(2, 1)), {}),
  "groups":       ([(2, 6, 5, 5), (9, 2, 3, 3)], dict(groups=3), dict(groups=3), dict(grad_rtol=1e-5)),
  "depthwise":    ([(2, 4, 6, 6), (4, 1, 3, 3)], dict(groups=4), dict(groups=4), {}),
  "all_options":  ([(2, 4, 9, 10), (6, 2, 3, 2), (6,)], dict(stride=2, padding=1, dilation=(1, 2), groups=2),
                   dict(stride=2, padding=1, dilation=(1, 2), groups=2), {}),
  # narrow rows and many channels: the channel tile, its weights packed in blocks of 32 channels (2 blocks),
  # or of 16 (48 channels)
  "channel_blocks":    ([(2, 8, 10, 10), (64, 8, 3, 3), (64,)], dict(padding=1), dict(padding=1), {}),
  "channel_blocks_48": ([(2, 16, 9, 9), (48, 16, 3, 3)], {}, {}, {}),
}


@pytest.mark.parametrize("name", list(CONV2D))
def test_conv2d(name):
  shps, tk, gk, opts = CONV2D[name]
  helper_test_op(shps, lambda *a: F.conv2d(*a, **tk), lambda x, *r: x.conv2d(*r, **gk), atol=1e-4, **opts)


def test_conv2d_asymmetric_padding():
  # tinygrad's 4-tuple padding is pad2d order (left, right, top, bottom)
  helper_test_op([(2, 3, 6, 7), (4, 3, 3, 3)], lambda x, w: F.conv2d(F.pad(x, (2, 0, 1, 2)), w),
                 lambda x, w: x.conv2d(w, padding=(2, 0, 1, 2)), atol=1e-4)


def test_conv1d():
  helper_test_op([(2, 3, 11), (6, 3, 4)], lambda x, w: F.conv1d(x, w), lambda x, w: x.conv2d(w), atol=1e-4)


def test_conv1d_stride_padding_groups():
  helper_test_op([(2, 4, 12), (6, 2, 3), (6,)], lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, groups=2),
                 lambda x, w, b: x.conv2d(w, b, stride=2, padding=1, groups=2), atol=1e-4)


def test_conv3d():
  helper_test_op([(1, 2, 5, 5, 5), (3, 2, 2, 2, 2)], lambda x, w: F.conv3d(x, w), lambda x, w: x.conv2d(w), atol=1e-4)


CONV_T = {
  "simple":   ([(2, 4, 9, 9), (4, 4, 3, 3)], {}, dict(grad_rtol=1e-5)),
  "bias":     ([(2, 4, 9, 9), (4, 4, 3, 3), (4,)], {}, {}),
  "stride":   ([(2, 4, 4, 5), (4, 4, 3, 3)], dict(stride=(2, 1)), {}),
  "padding":  ([(2, 4, 6, 6), (4, 3, 3, 3)], dict(padding=1), {}),
  "dilation": ([(2, 4, 6, 6), (4, 3, 3, 3)], dict(dilation=2), {}),
  "groups":   ([(2, 4, 5, 5), (4, 3, 3, 3)], dict(groups=2), {}),
  "output_padding": ([(2, 4, 5, 5), (4, 3, 3, 3)], dict(stride=2, output_padding=1), {}),
}


@pytest.mark.parametrize("name", list(CONV_T))
def test_conv_transpose2d(name):
  shps, kw, opts = CONV_T[name]
  helper_test_op(shps, lambda *a: F.conv_transpose2d(*a, **kw), lambda x, *r: x.conv_transpose2d(*r, **kw), atol=1e-4, **opts)


POOL = {
  "max_2":            (lambda x: F.max_pool2d(x, 2), lambda x: x.max_pool2d(2), {}),
  "max_3x2":          (lambda x: F.max_pool2d(x, (3, 2)), lambda x: x.max_pool2d((3, 2)), {}),
  "max_stride1":      (lambda x: F.max_pool2d(x, 3, stride=1), lambda x: x.max_pool2d(3, stride=1), {}),
  "max_stride_gt_k":  (lambda x: F.max_pool2d(x, 2, stride=3), lambda x: x.max_pool2d(2, stride=3), {}),
  "max_dilation":     (lambda x: F.max_pool2d(x, 2, stride=1, dilation=2), lambda x: x.max_pool2d(2, stride=1, dilation=2), {}),
  "max_padding":      (lambda x: F.max_pool2d(x, 3, stride=2, padding=1), lambda x: x.max_pool2d(3, stride=2, padding=1), {}),
  "avg_2":            (lambda x: F.avg_pool2d(x, 2), lambda x: x.avg_pool2d(2), dict(rtol=1e-5)),
  "avg_3x3":          (lambda x: F.avg_pool2d(x, 3), lambda x: x.avg_pool2d((3, 3)), dict(rtol=1e-5)),
  "avg_stride1":      (lambda x: F.avg_pool2d(x, 2, stride=1), lambda x: x.avg_pool2d(2, stride=1), dict(rtol=1e-5)),
  "avg_padding":      (lambda x: F.avg_pool2d(x, 3, stride=1, padding=1), lambda x: x.avg_pool2d(3, stride=1, padding=1), dict(rtol=1e-5)),
  "avg_padding_not_counted": (lambda x: F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False),
                              lambda x: x.avg_pool2d(3, stride=1, padding=1, count_include_pad=False), dict(rtol=1e-5)),
  "global_avg":       (lambda x: F.adaptive_avg_pool2d(x, 1), lambda x: x.mean(axis=(2, 3), keepdim=True), {}),
}


@pytest.mark.parametrize("name", list(POOL))
def test_pool2d(name):
  tf, gf, opts = POOL[name]
  helper_test_op([(4, 2, 11, 14)], tf, gf, **opts)


def test_layernorm():
  helper_test_op([(4, 5, 8)], lambda x: F.layer_norm(x, (8,), eps=1e-5), lambda x: x.layernorm(eps=1e-5), atol=1e-5, grad_atol=1e-4)


def test_layernorm_two_axes():
  helper_test_op([(4, 5, 8)], lambda x: F.layer_norm(x, (5, 8)), lambda x: x.layernorm(axis=(-2, -1)), atol=1e-5)


def test_batchnorm_inference():
  # x.batchnorm(weight, bias, mean, invstd): the running-stats form of F.batch_norm
  def tf(x, w, b, m, v):
    r = lambda t: t.reshape(1, -1, 1, 1)
    return (x - r(m)) / r(v.abs() + 0.1).sqrt() * r(w) + r(b)
  def gf(x, w, b, m, v): return x.batchnorm(w, b, m, (v.abs() + 0.1).rsqrt())
  helper_test_op([(4, 3, 5, 5), (3,), (3,), (3,), (3,)], tf, gf, atol=1e-5, grad_atol=1e-4)


def test_batchnorm_batch_stats():
  # training-style normalization from the batch's own statistics (biased variance), as BatchNorm computes it
  def tf(x): return F.batch_norm(x, None, None, training=True, eps=1e-5)
  def gf(x):
    m = x.mean(axis=(0, 2, 3))
    v = ((x - m.reshape(1, -1, 1, 1)) ** 2).mean(axis=(0, 2, 3))
    return x.batchnorm(None, None, m, (v + 1e-5).rsqrt())
  helper_test_op([(4, 3, 5, 5)], tf, gf, atol=1e-5, grad_atol=1e-4)


def test_dropout_eval_is_identity():
  # Tensor.training is off: dropout passes values and gradients through unchanged
  helper_test_op([(8, 9)], lambda x: F.dropout(x, 0.5, training=False), lambda x: x.dropout(0.5))


def _sdpa_reference(q, k, v, mask=None, causal=False):
  # torch 1.13 has no F.scaled_dot_product_attention: compose it
  s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
  if causal:
    L, S = q.shape[-2], k.shape[-2]
    s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
  if mask is not None:
    s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
  return s.softmax(-1) @ v


def test_scaled_dot_product_attention():
  helper_test_op([(2, 3, 6, 8), (2, 3, 6, 8), (2, 3, 6, 8)], _sdpa_reference,
                 lambda q, k, v: q.scaled_dot_product_attention(k, v), atol=1e-5)


def test_scaled_dot_product_attention_causal():
  helper_test_op([(2, 3, 6, 8), (2, 3, 6, 8), (2, 3, 6, 8)], lambda q, k, v: _sdpa_reference(q, k, v, causal=True),
                 lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True), atol=1e-5)


def test_scaled_dot_product_attention_float_mask():
  helper_test_op([(2, 3, 6, 8), (2, 3, 5, 8), (2, 3, 5, 4), (2, 3, 6, 5)], lambda q, k, v, m: _sdpa_reference(q, k, v, m),
                 lambda q, k, v, m: q.scaled_dot_product_attention(k, v, attn_mask=m), atol=1e-5)


def test_scaled_dot_product_attention_bool_mask():
  mask = np.random.RandomState(1).rand(6, 6) > 0.3
  np.fill_diagonal(mask, True)  # every row keeps something
  helper_test_op([(2, 6, 8), (2, 6, 8), (2, 6, 8)], lambda q, k, v: _sdpa_reference(q, k, v, torch.from_numpy(mask)),
                 lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=Tensor(mask)), atol=1e-5)


CLASSES = np.random.RandomState(3).randint(0, 10, (12,)).astype(np.int32)


def _cls():
  return torch.tensor(CLASSES, dtype=torch.int64), Tensor(CLASSES)


LOSSES = {
  "sparse_cce": (lambda x, y: F.cross_entropy(x, y), lambda x, y: x.sparse_categorical_crossentropy(y)),
  "sparse_cce_sum": (lambda x, y: F.cross_entropy(x, y, reduction="sum"), lambda x, y: x.sparse_categorical_crossentropy(y, reduction="sum")),
  "sparse_cce_none": (lambda x, y: F.cross_entropy(x, y, reduction="none"), lambda x, y: x.sparse_categorical_crossentropy(y, reduction="none")),
  "sparse_cce_smoothing": (lambda x, y: F.cross_entropy(x, y, label_smoothing=0.3),
                           lambda x, y: x.sparse_categorical_crossentropy(y, label_smoothing=0.3)),
  "sparse_cce_ignore": (lambda x, y: F.cross_entropy(x, y, ignore_index=int(CLASSES[0])),
                        lambda x, y: x.sparse_categorical_crossentropy(y, ignore_index=int(CLASSES[0]))),
  "cross_entropy_indices": (lambda x, y: F.cross_entropy(x, y), lambda x, y: x.cross_entropy(y)),
  "nll_loss": (lambda x, y: F.nll_loss(F.log_softmax(x, 1), y), lambda x, y: x.log_softmax(axis=1).nll_loss(y)),
  "nll_loss_sum": (lambda x, y: F.nll_loss(F.log_softmax(x, 1), y, reduction="sum"),
                   lambda x, y: x.log_softmax(axis=1).nll_loss(y, reduction="sum")),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_class_index_loss(name):
  tf, gf = LOSSES[name]
  ty, gy = _cls()
  helper_test_op([(12, 10)], lambda x: tf(x, ty), lambda x: gf(x, gy), atol=1e-5)


def test_nll_loss_weight():
  ty, gy = _cls()
  w = np.random.RandomState(4).uniform(0.1, 2, 10).astype(np.float32)
  helper_test_op([(12, 10)], lambda x: F.nll_loss(F.log_softmax(x, 1), ty, weight=torch.from_numpy(w)),
                 lambda x: x.log_softmax(axis=1).nll_loss(gy, weight=Tensor(w)), atol=1e-5)


def test_cross_entropy_probabilities():
  helper_test_op([(12, 10), (12, 10)], lambda x, y: F.cross_entropy(x, y.softmax(1)), lambda x, y: x.cross_entropy(y.softmax(1)), atol=1e-5)


def test_binary_crossentropy():
  helper_test_op([(8, 10), (8, 10)], lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.clip(0, 1)),
                 lambda x, y: x.sigmoid().binary_crossentropy(y.clip(0, 1)), atol=1e-5)


def test_binary_crossentropy_logits():
  helper_test_op([(8, 10), (8, 10)], lambda x, y: F.binary_cross_entropy_with_logits(x, y.clip(0, 1)),
                 lambda x, y: x.binary_crossentropy_logits(y.clip(0, 1)), atol=1e-5)


def test_binary_crossentropy_logits_sum():
  helper_test_op([(8, 10), (8, 10)], lambda x, y: F.binary_cross_entropy_with_logits(x, y.clip(0, 1), reduction="sum"),
                 lambda x, y: x.binary_crossentropy_logits(y.clip(0, 1), reduction="sum"), atol=1e-4)


def test_mse_composed():
  helper_test_op([(8, 10), (8, 10)], lambda x, y: F.mse_loss(x, y), lambda x, y: ((x - y) ** 2).mean())

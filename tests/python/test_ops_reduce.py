# Reductions, scans, softmax family, argmax/topk against PyTorch (forward and backward).
import pytest
import torch

from tg import Tensor
from helpers import helper_test_op

X4 = (3, 4, 5, 6)
X3 = (15, 25, 35)

REDUCE = {
  "sum_full":         ([(45, 3)], lambda x: x.sum(), None, {}),
  "sum_scalar":       ([()], lambda x: x.sum(), None, {}),
  "sum_axis3":        ([X4], lambda x: x.sum(3), lambda x: x.sum(axis=3), {}),
  "sum_axis13":       ([X4], lambda x: x.sum((1, 3)), lambda x: x.sum(axis=(1, 3)), {}),
  "sum_axis_neg":     ([X4], lambda x: x.sum(-2), lambda x: x.sum(axis=-2), {}),
  "sum_keepdim":      ([X4], lambda x: x.sum(1, keepdim=True), lambda x: x.sum(axis=1, keepdim=True), {}),
  "sum_large":        ([(256, 300)], lambda x: x.sum(), None, dict(atol=1e-3)),
  "prod":             ([(4, 5)], lambda x: x.prod(), None, {}),
  "prod_axis":        ([X4], lambda x: x.prod(1), lambda x: x.prod(axis=1), {}),
  "prod_keepdim":     ([X4], lambda x: x.prod(3, keepdim=True), lambda x: x.prod(axis=3, keepdim=True), {}),
  "max_full":         ([(45, 3)], lambda x: x.max(), None, {}),
  "max_axis":         ([X4], lambda x: x.amax(1), lambda x: x.max(axis=1), {}),
  "max_keepdim":      ([X4], lambda x: x.amax((0, 2), keepdim=True), lambda x: x.max(axis=(0, 2), keepdim=True), {}),
  "max_ties":         (None, lambda x: x.max(), None, dict(vals=[[1.0, 3.0, 3.0, 2.0]])),
  "min_full":         ([(45, 3)], lambda x: x.min(), None, {}),
  "min_axis":         ([X4], lambda x: x.amin(2), lambda x: x.min(axis=2), {}),
  "min_keepdim":      ([X4], lambda x: x.amin(-1, keepdim=True), lambda x: x.min(axis=-1, keepdim=True), {}),
  "mean_full":        ([X4], lambda x: x.mean(), None, {}),
  "mean_axis":        ([X4], lambda x: x.mean((1, 2)), lambda x: x.mean(axis=(1, 2)), {}),
  "mean_keepdim":     ([X4], lambda x: x.mean(0, keepdim=True), lambda x: x.mean(axis=0, keepdim=True), {}),
  "var_full":         ([X3], lambda x: x.var(), None, {}),
  "var_axis0":        ([X3], lambda x: x.var(0), lambda x: x.var(axis=0), {}),
  "var_axis12":       ([X3], lambda x: x.var((1, 2)), lambda x: x.var(axis=(1, 2)), {}),
  "var_keepdim":      ([X3], lambda x: x.var(2, keepdim=True), lambda x: x.var(axis=2, keepdim=True), {}),
  # torch 1.13 has no var(correction=): correction 0 is unbiased=False, others are composed
  "var_correction0":  ([X3], lambda x: x.var(2, unbiased=False), lambda x: x.var(axis=2, correction=0), {}),
  "var_correction2":  ([X3], lambda x: ((x - x.mean(1, keepdim=True)) ** 2).sum(1) / (x.shape[1] - 2),
                       lambda x: x.var(axis=1, correction=2), {}),
  "std_full":         ([X3], lambda x: x.std(), None, {}),
  "std_axis":         ([X3], lambda x: x.std(0), lambda x: x.std(axis=0), {}),
  "std_keepdim":      ([X3], lambda x: x.std((0, 2), keepdim=True), lambda x: x.std(axis=(0, 2), keepdim=True), {}),
  "std_correction0":  ([X3], lambda x: x.std(1, unbiased=False), lambda x: x.std(axis=1, correction=0), {}),
  "logsumexp":        ([(45, 65)], lambda x: torch.logsumexp(x, 0), lambda x: x.logsumexp(0), dict(atol=1e-6, grad_atol=1e-7)),
  "logsumexp_keepdim": ([(45, 65)], lambda x: torch.logsumexp(x, 1, keepdim=True), lambda x: x.logsumexp(1, keepdim=True), dict(grad_atol=1e-7)),
  "softmax":          ([(45, 65)], lambda x: x.softmax(1), lambda x: x.softmax(), dict(atol=1e-7, grad_atol=1e-7)),
  "softmax_axis0":    ([(10, 10, 10)], lambda x: x.softmax(0), None, dict(atol=1e-7, grad_atol=2e-7)),
  "softmax_scalar":   ([()], lambda x: x.softmax(0), None, dict(atol=1e-7, grad_atol=1e-7)),
  "log_softmax":      ([(45, 65)], lambda x: x.log_softmax(1), lambda x: x.log_softmax(), dict(atol=1e-6, grad_atol=1e-6)),
  "log_softmax_axis1": ([(10, 10, 10)], lambda x: x.log_softmax(1), None, dict(atol=1e-6, grad_atol=1e-6)),
  "softmax_large":    ([(4, 20)], lambda x: (x * 100).softmax(1), lambda x: (x * 100).softmax(1), dict(atol=1e-6, grad_atol=1e-4)),
  "cumsum_1d":        ([(20,)], lambda x: x.cumsum(0), lambda x: x.cumsum(axis=0), {}),
  "cumsum_axis1":     ([(20, 30)], lambda x: x.cumsum(1), lambda x: x.cumsum(axis=1), dict(atol=1e-5)),
  "cumsum_axis0_3d":  ([(5, 6, 7)], lambda x: x.cumsum(0), lambda x: x.cumsum(axis=0), {}),
  "cumsum_long":      ([(600,)], lambda x: x.cumsum(0), lambda x: x.cumsum(axis=0), dict(atol=1e-4)),
  "normalize_by_sum": ([(8, 9)], lambda x: x / x.sum(1, keepdim=True), lambda x: x / x.sum(axis=1, keepdim=True), dict(low=0.5, high=2)),
  "sum_of_relu":      ([(45, 65)], lambda x: x.relu().sum(0), lambda x: x.relu().sum(axis=0), {}),
}


@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce(name):
  shps, tf, gf, opts = REDUCE[name]
  helper_test_op(shps, tf, gf, **opts)


def test_cumprod():
  helper_test_op([(5, 6)], lambda x: x.cumprod(1), lambda x: x.cumprod(axis=1))
  helper_test_op([(40, 3)], lambda x: x.cumprod(0), lambda x: x.cumprod(0), low=0.9, high=1.1)
  # integers in cumsum's dtype (int32 stays int32, as tinygrad's sum; torch widens to int64)
  helper_test_op(None, lambda x: x.cumprod(0).int(), lambda x: x.cumprod(0), vals=[[3, -2, 0, 5]], forward_only=True)


def test_cummax():
  helper_test_op([(5, 6)], lambda x: torch.cummax(x, 1).values, lambda x: _first(x.cummax(axis=1)))


def _first(r):
  return r[0] if isinstance(r, tuple) else r


def test_int_sum():
  helper_test_op(None, lambda x: x.sum(1).int(), lambda x: x.sum(axis=1), vals=[[[1, -2, 3], [40, 50, -60]]], forward_only=True)


def test_int_max():
  helper_test_op(None, lambda x: x.max(), vals=[[0, -2 ** 31, 7, 5]], forward_only=True)


def test_any():
  helper_test_op(None, lambda x: x.any(1), lambda x: x.any(axis=1), vals=[[[True, False], [False, False]]], forward_only=True)


def test_all():
  helper_test_op(None, lambda x: x.all(1), lambda x: x.all(axis=1), vals=[[[True, False], [True, True]]], forward_only=True)


ARG = {
  "argmax_full":  (lambda x: x.argmax().int(), lambda x: x.argmax()),
  "argmax_axis0": (lambda x: x.argmax(0).int(), lambda x: x.argmax(axis=0)),
  "argmax_keepdim": (lambda x: x.argmax(1, keepdim=True).int(), lambda x: x.argmax(axis=1, keepdim=True)),
  "argmin_full":  (lambda x: x.argmin().int(), lambda x: x.argmin()),
  "argmin_axis1": (lambda x: x.argmin(1).int(), lambda x: x.argmin(axis=1)),
}


@pytest.mark.parametrize("name", list(ARG))
def test_argmax_argmin(name):
  tf, gf = ARG[name]
  helper_test_op([(10, 20)], tf, gf, forward_only=True)


def test_argmax_first_of_ties():
  helper_test_op(None, lambda x: x.argmax().int(), lambda x: x.argmax(), vals=[[1.0, 2.0, 2.0, 0.0]], forward_only=True)


def test_topk_values_and_indices():
  helper_test_op([(5, 5, 4)], lambda x: x.topk(3, 1).values, lambda x: x.topk(3, 1)[0])
  helper_test_op([(5, 5, 4)], lambda x: x.topk(3, 1).indices.int(), lambda x: x.topk(3, 1)[1], forward_only=True)


def test_sort_values_and_indices():
  # padded lengths, both orders, with the values' gradient; indices as torch's stable sort
  helper_test_op([(4, 13)], lambda x: x.sort(dim=1, stable=True).values, lambda x: x.sort(dim=1)[0])
  helper_test_op([(6, 5)], lambda x: x.sort(dim=0, descending=True, stable=True).values, lambda x: x.sort(dim=0, descending=True)[0])
  helper_test_op([(4, 13)], lambda x: x.sort(dim=-1, stable=True).indices.int(), lambda x: x.sort()[1], forward_only=True)
  helper_test_op([(4, 13)], lambda x: torch.argsort(x, dim=-1, descending=True).int(), lambda x: x.argsort(descending=True), forward_only=True)


def test_sort_is_stable_and_orders_nan():
  vals = [[2.0, float("nan"), 1.0, 2.0, float("-inf"), float("nan"), 1.0]]
  for descending in (False, True):
    t, i = Tensor(vals).sort(descending=descending)
    ref = torch.tensor(vals).sort(descending=descending, stable=True)
    assert torch.equal(torch.tensor(i.numpy()).long(), ref.indices)
    assert torch.allclose(torch.tensor(t.numpy()), ref.values, equal_nan=True)


def test_topk_smallest():
  helper_test_op([(8, 6)], lambda x: x.topk(2, 0, largest=False).values, lambda x: x.topk(2, 0, largest=False)[0])

# Movement and shaping ops, concatenation, indexing, gather/scatter against PyTorch (forward and backward).
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tg import Tensor, dtypes
from helpers import helper_test_op

MOVE = {
  "reshape":         ([(4, 3, 6, 6)], lambda x: x.reshape((12, 6, 6)), None, {}),
  "reshape_neg1":    ([(4, 3, 6, 6)], lambda x: x.reshape((-1, 3, 6, 6)), None, {}),
  "reshape_scalar":  ([()], lambda x: x.reshape((1, 1)), None, {}),
  "reshape_to_scalar": ([(1,)], lambda x: x.reshape(()), None, {}),
  "permute":         ([(1, 2, 3, 4)], lambda x: x.permute((3, 0, 2, 1)), None, {}),
  "permute_neg":     ([(3, 4, 5)], lambda x: x.permute((-1, 0, 1)), None, {}),
  "transpose":       ([(3, 4)], lambda x: x.transpose(1, 0), None, {}),
  "transpose_3d":    ([(3, 4, 5)], lambda x: x.transpose(0, 2), None, {}),
  "T":               ([(3, 4)], lambda x: x.T, None, {}),
  "expand":          ([(4, 3, 1, 6)], lambda x: x.expand((4, 3, 2, 6)), None, {}),
  "expand_new_dims": ([(4, 3, 1, 6)], lambda x: x.expand((6, 1, 4, 3, 2, 6)), None, {}),
  "expand_scalar":   ([()], lambda x: x.expand((4, 3, 2)), None, {}),
  "expand_neg1":     ([(3, 1)], lambda x: x.expand((2, -1, 4)), None, {}),
  "flip0":           ([(4, 3, 6, 6)], lambda x: x.flip((0,)), None, {}),
  "flip013":         ([(4, 3, 6, 6)], lambda x: x.flip((0, 1, 3)), None, {}),
  "flip_neg":        ([(4, 3, 6, 6)], lambda x: x.flip((-1,)), None, {}),
  "pad":             ([(3, 3, 3, 3)], lambda x: F.pad(x, (1, 2, 3, 4)), lambda x: x.pad(((0, 0), (0, 0), (3, 4), (1, 2))), {}),
  "pad_value":       ([(3, 3, 3)], lambda x: F.pad(x, (1, 2, 0, 1), value=5.0), lambda x: x.pad(((0, 0), (0, 1), (1, 2)), value=5.0), {}),
  "pad_negative":    ([(3, 3, 3, 3)], lambda x: F.pad(x, (-1, 2, -2, 1)), lambda x: x.pad(((0, 0), (0, 0), (-2, 1), (-1, 2))), {}),
  "pad_negative_flat": ([(3, 3, 3, 3)], lambda x: F.pad(x, (-1, 2, -2, 1)), lambda x: x.pad((-1, 2, -2, 1)), {}),
  "pad_none_dims":   ([(3, 4)], lambda x: F.pad(x, (1, 1)), lambda x: x.pad((None, (1, 1))), {}),
  "pad2d":           ([(2, 3, 4, 4)], lambda x: F.pad(x, (1, 2, 0, 3)), lambda x: x.pad2d((1, 2, 0, 3)), {}),
  "pad_reflect":     ([(2, 3, 4, 5)], lambda x: F.pad(x, (1, 4, 3, 0), mode="reflect"), lambda x: x.pad((1, 4, 3, 0), mode="reflect"), {}),
  "pad_replicate":   ([(2, 3, 5)], lambda x: F.pad(x, (6, 2), mode="replicate"), lambda x: x.pad((None, None, (6, 2)), mode="replicate"), {}),
  "pad_circular":    ([(2, 3, 4, 5)], lambda x: F.pad(x, (5, 0, 1, 4), mode="circular"), lambda x: x.pad(((0, 0), (0, 0), (1, 4), (5, 0)), mode="circular"), {}),
  "shrink":          ([(4, 3, 6, 6)], lambda x: x[1:3, :, 2:5, 0:6], lambda x: x.shrink(((1, 3), (0, 3), (2, 5), (0, 6))), {}),
  "shrink_none":     ([(4, 6)], lambda x: x[:, 1:4], lambda x: x.shrink((None, (1, 4))), {}),
  "squeeze":         ([(2, 1, 4, 1)], lambda x: x.squeeze(), None, {}),
  "squeeze_dim":     ([(2, 1, 4)], lambda x: x.squeeze(1), None, {}),
  "unsqueeze":       ([(2, 4)], lambda x: x.unsqueeze(0), None, {}),
  "unsqueeze_neg":   ([(2, 4)], lambda x: x.unsqueeze(-1), None, {}),
  "flatten":         ([(2, 3, 4)], lambda x: x.flatten(), None, {}),
  "flatten_start":   ([(2, 3, 4, 5)], lambda x: x.flatten(1), None, {}),
  "flatten_range":   ([(2, 3, 4, 5)], lambda x: x.flatten(1, 2), None, {}),
  "unflatten":       ([(2, 12)], lambda x: x.unflatten(1, (3, 4)), None, {}),
  "repeat":          ([(4, 6, 3)], lambda x: x.repeat(2, 1, 3), lambda x: x.repeat((2, 1, 3)), {}),
  "repeat_new_dims": ([(2, 3)], lambda x: x.repeat(2, 1, 3), lambda x: x.repeat((2, 1, 3)), {}),
  "tril":            ([(4, 5)], lambda x: x.tril(), None, {}),
  "tril_diag":       ([(4, 5)], lambda x: x.tril(-1), lambda x: x.tril(-1), {}),
  "triu":            ([(4, 5)], lambda x: x.triu(), None, {}),
  "triu_diag":       ([(2, 4, 5)], lambda x: x.triu(2), lambda x: x.triu(2), {}),
  "roll":            ([(4, 5)], lambda x: x.roll(2, 1), lambda x: x.roll(2, 1), {}),
  "roll_two_dims":   ([(4, 5)], lambda x: x.roll((1, -2), (0, 1)), lambda x: x.roll((1, -2), (0, 1)), {}),
  "contiguous":      ([(4, 5)], lambda x: x.T.contiguous() * 2, None, {}),
}


# Known deviations from tinygrad (reported), each a strict xfail: it turns into a failure once fixed.
XFAIL = {}


def params(names):
  return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=XFAIL[n])) if n in XFAIL else n for n in names]


@pytest.mark.parametrize("name", params(MOVE))
def test_movement(name):
  shps, tf, gf, opts = MOVE[name]
  helper_test_op(shps, tf, gf, **opts)


@pytest.mark.parametrize("dim", [-2, 0, 1, 2])
def test_cat(dim):
  helper_test_op([(4, 5, 3), (4, 5, 3), (4, 5, 3)], lambda x, y, z: torch.cat((x, y, z), dim),
                 lambda x, y, z: x.cat(y, z, dim=dim))


def test_cat_uneven():
  helper_test_op([(2, 1, 3), (2, 4, 3)], lambda x, y: torch.cat((x, y), 1), lambda x, y: Tensor.cat(x, y, dim=1))


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_stack(dim):
  helper_test_op([(5, 6), (5, 6), (5, 6)], lambda x, y, z: torch.stack((x, y, z), dim),
                 lambda x, y, z: Tensor.stack(x, y, z, dim=dim))


def test_split_sizes():
  helper_test_op([(10, 4)], lambda x: x.split([1, 4, 5])[1] * 2, lambda x: x.split([1, 4, 5])[1] * 2)
  helper_test_op([(10, 4)], lambda x: x.split(3, 0)[-1], lambda x: x.split(3, 0)[-1])


def test_chunk():
  helper_test_op([(4, 13)], lambda x: x.chunk(6, 1)[2], lambda x: x.chunk(6, 1)[2])


def test_split_count():
  a = Tensor.arange(10).split(3)
  assert [t.shape for t in a] == [(3,), (3,), (3,), (1,)]
  np.testing.assert_equal(a[3].numpy(), np.array([9], dtype=np.int32))


def test_meshgrid():
  helper_test_op([(3,), (4,)], lambda x, y: torch.meshgrid(x, y, indexing="ij")[1] * 2, lambda x, y: x.meshgrid(y, indexing="ij")[1] * 2)


INDEX = {
  "int":           ([(5, 6)], lambda x: x[2]),
  "neg_int":       ([(5, 6)], lambda x: x[-1]),
  "int_int":       ([(5, 6)], lambda x: x[2, 3]),
  "slice":         ([(7, 5, 10)], lambda x: x[1:5]),
  "slice_neg":     ([(7, 5, 10)], lambda x: x[-3:, :-1]),
  "slice_step":    ([(7, 5, 10)], lambda x: x[::2, ::3, ::4]),
  "slice_step_start": ([(7, 5, 10)], lambda x: x[1:5:2, 3, ::4]),
  "slice_oob":     ([(7, 5)], lambda x: x[2:100, -100:3]),
  "none":          ([(3, 4)], lambda x: x[None, :, None]),
  "none_int":      ([(7, 5, 10)], lambda x: x[1:5:2, None, None, 3, None, ::4]),
  "ellipsis":      ([(3, 3, 3, 3)], lambda x: x[..., 0]),
  "ellipsis_mid":  ([(3, 3, 3, 3)], lambda x: x[0, ..., 1:3]),
  "ellipsis_none": ([(3, 3, 3, 3)], lambda x: x[None, 0:3, ..., 0, None]),
  "list":          ([(5, 6)], lambda x: x[[0, 3, 3, -1]]),
  "list_2d":       ([(5, 6)], lambda x: x[[0, 1], [2, 5]]),
  "list_slice":    ([(5, 6, 7)], lambda x: x[:, [4, 0, 2], 1:3]),
  "list_nested":   ([(5, 6)], lambda x: x[[[0, 1], [2, 3]]]),  # a tuple of per-dim indices (tinygrad, torch)
}


@pytest.mark.parametrize("name", params(INDEX))
def test_index(name):
  shps, f = INDEX[name]
  helper_test_op(shps, f)


def test_index_tensor():
  i = np.array([[0, 2], [4, 1]], dtype=np.int32)
  helper_test_op([(5, 6)], lambda x: x[torch.tensor(i, dtype=torch.int64)], lambda x: x[Tensor(i)])


def test_index_two_tensors_broadcast():
  helper_test_op([(2, 3)], lambda x: x[torch.tensor([[0, 1, -1], [-1, -2, 0]]), torch.tensor([2, 1, -1])],
                 lambda x: x[Tensor([[0, 1, -1], [-1, -2, 0]]), Tensor([2, 1, -1])])


def test_index_tensor_and_slice():
  i = np.array([3, 0], dtype=np.int32)
  helper_test_op([(4, 5, 6)], lambda x: x[1:3, torch.tensor(i, dtype=torch.int64), ::2], lambda x: x[1:3, Tensor(i), ::2])


def test_negative_step_slices():
  a = np.random.randn(10, 10, 10).astype(np.float32)
  t = Tensor(a)
  np.testing.assert_allclose(t[::-1].numpy(), a[::-1])
  np.testing.assert_allclose(t[:, 2:0:-1, 3:1:-2].numpy(), a[:, 2:0:-1, 3:1:-2])
  np.testing.assert_allclose(t[4:0:-3, 2:0:-1, -1:-5:-2].numpy(), a[4:0:-3, 2:0:-1, -1:-5:-2])


def test_setitem_int():
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  t = Tensor(a.copy())
  t[1] = 7.0
  a[1] = 7.0
  np.testing.assert_equal(t.numpy(), a)


def test_setitem_slice_tensor():
  a = np.arange(24, dtype=np.float32).reshape(4, 6)
  t = Tensor(a.copy())
  v = np.full((2, 3), -1.5, dtype=np.float32)
  t[1:3, ::2] = Tensor(v)
  a[1:3, ::2] = v
  np.testing.assert_equal(t.numpy(), a)


def test_setitem_broadcast():
  a = np.zeros((3, 4), dtype=np.float32)
  t = Tensor(a.copy())
  row = np.arange(4, dtype=np.float32)
  t[:, :] = Tensor(row)
  a[:, :] = row
  np.testing.assert_equal(t.numpy(), a)


def _randint_index(shape, high, seed=0):
  b = torch.from_numpy(np.random.RandomState(seed).randint(0, high, size=shape).astype(np.int64))
  return b, Tensor(b.numpy().astype(np.int32), dtype=dtypes.int32)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather(dim):
  b, a = _randint_index((3, 4, 5), 3)
  helper_test_op([(4, 5, 6)], lambda x: x.gather(dim, b), lambda x: x.gather(dim, a))


def test_gather_negative_dim():
  b, a = _randint_index((4, 2), 5)
  helper_test_op([(4, 5)], lambda x: x.gather(-1, b), lambda x: x.gather(-1, a))


def test_scatter():
  # a permutation along dim 1 so no two sources hit the same place (torch leaves the winner unspecified)
  idx = np.stack([np.random.RandomState(i).permutation(5)[:4] for i in range(3)]).astype(np.int64)
  b, a = torch.from_numpy(idx), Tensor(idx.astype(np.int32))
  helper_test_op([(3, 5), (3, 4)], lambda x, s: x.scatter(1, b, s), lambda x, s: x.scatter(1, a, s), forward_only=True)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
  idx = np.array([[1, 0, 2, 0], [2, 2, 1, 0], [0, 1, 1, 1]], dtype=np.int64)
  b, a = torch.from_numpy(idx), Tensor(idx.astype(np.int32))
  helper_test_op([(3, 5), (3, 4)], lambda x, s: x.scatter_reduce(1, b, s, reduce, include_self=include_self),
                 lambda x, s: x.scatter_reduce(1, a, s, reduce, include_self=include_self), forward_only=True)


def test_scatter_reduce_errors():
  with pytest.raises(RuntimeError, match="scatter_reduce: reduce must be"):
    Tensor([1.0, 2.0]).scatter_reduce(0, Tensor([0]), Tensor([1.0]), "max")


def test_masked_fill():
  helper_test_op([(4, 5), (4, 5)], lambda x, m: x.masked_fill(m > 0, -3.0), lambda x, m: x.masked_fill(m > 0, -3.0))


def test_one_hot():
  helper_test_op(None, lambda x: F.one_hot(x.long(), 5).int(), lambda x: x.one_hot(5), vals=[[0, 3, 1, 4, 4]], forward_only=True)


def test_one_hot_2d():
  helper_test_op(None, lambda x: F.one_hot(x.long(), 4).int(), lambda x: x.one_hot(4), vals=[[[0, 3], [1, 2]]], forward_only=True)


def test_pad_mode_errors():
  t = Tensor.ones(2, 3)
  with pytest.raises(Exception, match="reflect"):
    t.pad((3, 0), mode="reflect")  # reflect pads less than the dim
  with pytest.raises(Exception, match="circular"):
    t.pad((0, 4), mode="circular")
  with pytest.raises(Exception, match="no value"):
    t.pad((1, 1), mode="replicate", value=2.0)
  with pytest.raises(Exception, match="'wrap' is not one of"):
    t.pad((1, 1), mode="wrap")

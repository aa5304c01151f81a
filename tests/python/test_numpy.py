# NumPy interop: every dtype both ways, non-contiguous input, 0-d and empty arrays, big arrays, tolist/item.
import math

import numpy as np
import pytest

import tg
from tg import Tensor, dtypes

NP_DTYPES = {
  "bool": (np.bool_, dtypes.bool), "int8": (np.int8, dtypes.int8), "uint8": (np.uint8, dtypes.uint8),
  "int16": (np.int16, dtypes.int16), "uint16": (np.uint16, dtypes.uint16), "int32": (np.int32, dtypes.int32),
  "uint32": (np.uint32, dtypes.uint32), "int64": (np.int64, dtypes.int64), "uint64": (np.uint64, dtypes.uint64),
  "float16": (np.float16, dtypes.float16), "float32": (np.float32, dtypes.float32), "float64": (np.float64, dtypes.float64),
}


def _sample(npdt, shape=(3, 5)):
  rng = np.random.RandomState(7)
  if npdt == np.bool_: return rng.rand(*shape) > 0.5
  if np.issubdtype(npdt, np.integer):
    info = np.iinfo(npdt)
    a = rng.randint(0, 1000, size=shape).astype(npdt)
    a.flat[0], a.flat[1] = info.min, info.max  # the extremes survive the round trip
    return a
  a = (rng.randn(*shape) * 100).astype(npdt)
  a.flat[0], a.flat[1], a.flat[2] = np.inf, -np.inf, np.finfo(npdt).tiny
  return a


@pytest.mark.parametrize("name", list(NP_DTYPES))
def test_roundtrip_dtype(name):
  npdt, tgdt = NP_DTYPES[name]
  a = _sample(npdt)
  t = Tensor(a)
  assert t.dtype == tgdt
  assert t.shape == a.shape
  b = t.numpy()
  assert b.dtype == a.dtype
  np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("name", list(NP_DTYPES))
def test_roundtrip_through_kernel(name):
  # the data also survives a kernel (a contiguous copy of a permuted view), not just a buffer copy
  npdt, _ = NP_DTYPES[name]
  a = _sample(npdt, (4, 6))
  np.testing.assert_array_equal(Tensor(a).T.contiguous().numpy(), a.T)


def test_nan_roundtrip():
  a = np.array([np.nan, 1.0, -np.nan], np.float32)
  np.testing.assert_array_equal(np.isnan(Tensor(a).numpy()), [True, False, True])


def test_numpy_dtype_kwarg_casts():
  a = np.array([1.7, -2.2, 3.0], np.float64)
  t = Tensor(a, dtype=dtypes.int32)
  assert t.dtype == dtypes.int32
  np.testing.assert_array_equal(t.numpy(), np.array([1, -2, 3], np.int32))


@pytest.mark.parametrize("how", ["transpose", "step", "negative_step", "fortran", "broadcast_to", "column"])
def test_non_contiguous_input(how):
  base = np.arange(60, dtype=np.float32).reshape(6, 10)
  a = {"transpose": base.T, "step": base[::2, 1::3], "negative_step": base[::-1, ::-2],
       "fortran": np.asfortranarray(base), "broadcast_to": np.broadcast_to(base[0], (4, 10)), "column": base[:, 3]}[how]
  assert not a.flags.c_contiguous
  t = Tensor(a)
  np.testing.assert_array_equal(t.numpy(), np.ascontiguousarray(a))
  np.testing.assert_array_equal((t * 2).numpy(), a * 2)


def test_input_is_copied():
  a = np.arange(5, dtype=np.float32)
  t = Tensor(a)
  t.realize()
  a[:] = -1
  np.testing.assert_array_equal(t.numpy(), np.arange(5, dtype=np.float32))


def test_output_is_independent():
  t = Tensor(np.arange(5, dtype=np.float32))
  b = t.numpy()
  b[:] = -1
  np.testing.assert_array_equal(t.numpy(), np.arange(5, dtype=np.float32))


def test_0d():
  t = Tensor(np.array(3.5, np.float32))
  assert t.shape == ()
  assert t.numpy().shape == ()
  assert t.numpy() == np.float32(3.5)
  assert t.item() == 3.5
  assert Tensor(np.float64(2.0)).dtype in (dtypes.float64, dtypes.float32)


def test_0d_from_python():
  assert Tensor(2).dtype == dtypes.int32 and Tensor(2).shape == ()
  assert Tensor(2.5).dtype == dtypes.float32
  assert Tensor(True).dtype == dtypes.bool
  assert Tensor(2.5).item() == 2.5


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 2)])
def test_empty(shape):
  a = np.zeros(shape, np.float32)
  t = Tensor(a)
  assert t.shape == shape
  assert t.numel() == 0
  b = t.numpy()
  assert b.shape == shape and b.dtype == np.float32
  assert (t + 1).numpy().shape == shape
  assert t.tolist() == a.tolist()


def test_empty_reduce():
  assert Tensor(np.zeros((3, 0), np.float32)).sum(axis=1).tolist() == [0.0, 0.0, 0.0]


def test_big_roundtrip():
  # 16M elements: must be a bulk copy (a per-element Python loop would take minutes)
  a = np.random.RandomState(0).rand(1 << 24).astype(np.float32)
  t = Tensor(a)
  b = t.numpy()
  np.testing.assert_array_equal(b, a)
  c = (t + 1).numpy()
  np.testing.assert_allclose(c, a + np.float32(1), rtol=1e-7)


def test_tolist():
  assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
  assert Tensor([[1.5, 2.0]]).tolist() == [[1.5, 2.0]]
  assert Tensor([True, False]).tolist() == [True, False]
  assert Tensor(3).tolist() == 3
  v = Tensor(np.array([1, 2], np.int64)).tolist()
  assert v == [1, 2] and all(type(x) is int for x in v)


def test_item_types():
  assert type(Tensor(3).item()) is int
  assert type(Tensor(3.5).item()) is float
  assert type(Tensor(True).item()) is bool
  assert Tensor([[7.25]]).item() == 7.25
  assert Tensor(np.array([2 ** 40], np.int64)).item() == 2 ** 40
  assert math.isnan(Tensor(float("nan")).item())


def test_python_lists():
  t = Tensor([[1, 2, 3], [4, 5, 6]])
  assert t.dtype == dtypes.int32 and t.shape == (2, 3)
  assert Tensor([1.0, 2]).dtype == dtypes.float32
  assert Tensor([True, False]).dtype == dtypes.bool
  assert Tensor([1, 2], dtype=dtypes.float16).dtype == dtypes.float16
  assert Tensor([]).shape == (0,)


def test_numpy_scalar_ops():
  # NumPy scalars combine with tensors as Python numbers do
  t = Tensor([1.0, 2.0])
  np.testing.assert_allclose((t * np.float32(2)).numpy(), [2.0, 4.0])
  np.testing.assert_allclose((t + np.int64(1)).numpy(), [2.0, 3.0])


def test_half_precision_values():
  a = np.array([0.1, 65504, -1e-5, 1 / 3], np.float16)
  np.testing.assert_array_equal(Tensor(a).numpy(), a)
  np.testing.assert_array_equal(Tensor(a.astype(np.float32)).cast(dtypes.float16).numpy(), a)

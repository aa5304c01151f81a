# The module's surface: dtypes, Device, Context, GlobalCounters, creation functions, random numbers,
# autograd attributes, Tensor properties and printing.
import math
import pickle

import numpy as np
import pytest
import torch

import tg
from tg import Context, Device, GlobalCounters, Tensor, dtypes
from tg.helpers import DEBUG, NOOPT


def test_imports():
  import tg.nn, tg.nn.optim, tg.nn.state, tg.nn.datasets  # noqa: F401
  for name in ("Tensor", "dtypes", "Device", "Context", "GlobalCounters"):
    assert hasattr(tg, name), name


# ---- dtypes ------------------------------------------------------------------------------------------

ALL = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]
SIZES = [1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8]


@pytest.mark.parametrize("name,size", list(zip(ALL, SIZES)))
def test_dtype_members(name, size):
  d = getattr(dtypes, name)
  assert d.itemsize == size
  assert d.name == name
  assert d == getattr(dtypes, name) and hash(d) == hash(getattr(dtypes, name))
  assert Tensor.ones(2, dtype=d).dtype == d
  assert Tensor.ones(2, dtype=d).numpy().dtype == np.dtype(name if name != "bool" else np.bool_)


def test_dtype_aliases():
  assert dtypes.float == dtypes.float32 and dtypes.half == dtypes.float16 and dtypes.double == dtypes.float64
  assert dtypes.int == dtypes.int32 and dtypes.long == dtypes.int64 and dtypes.uchar == dtypes.uint8
  assert dtypes.default_float == dtypes.float32 and dtypes.default_int == dtypes.int32
  assert dtypes.float32 != dtypes.float64


def test_dtype_predicates():
  assert dtypes.is_float(dtypes.float16) and not dtypes.is_float(dtypes.int32)
  assert dtypes.is_int(dtypes.uint8) and not dtypes.is_int(dtypes.bool)
  assert dtypes.is_unsigned(dtypes.uint32) and not dtypes.is_unsigned(dtypes.int32)


def test_dtype_by_name():
  assert Tensor([1, 2], dtype="float16").dtype == dtypes.float16


def test_dtype_pickle():
  assert pickle.loads(pickle.dumps(dtypes.int16)) == dtypes.int16


def test_promotion():
  assert (Tensor([1], dtype=dtypes.int8) + Tensor([1], dtype=dtypes.int16)).dtype == dtypes.int16
  assert (Tensor([1], dtype=dtypes.uint8) + Tensor([1], dtype=dtypes.int8)).dtype == dtypes.int16
  assert (Tensor([1], dtype=dtypes.int32) + Tensor([1.0], dtype=dtypes.float16)).dtype == dtypes.float16
  assert (Tensor([1], dtype=dtypes.int32) + 1.5).dtype == dtypes.float32
  assert (Tensor([1], dtype=dtypes.int8) + 1).dtype == dtypes.int8
  assert (Tensor([1.0], dtype=dtypes.float16) * 2.0).dtype == dtypes.float16
  assert (Tensor([1, 2]) / 2).dtype == dtypes.float32
  assert Tensor([1, 2]).exp().dtype == dtypes.float32


# ---- Device --------------------------------------------------------------------------------------------

def test_device():
  assert isinstance(Device.DEFAULT, str) and Device.DEFAULT
  t = Tensor([1.0])
  assert t.device == Device.DEFAULT
  assert Tensor([1.0], device=Device.DEFAULT).device == Device.DEFAULT
  assert Tensor([1.0]).to(Device.DEFAULT).numpy().tolist() == [1.0]
  assert Device.canonicalize(Device.DEFAULT.lower()) == Device.DEFAULT


# ---- Context and GlobalCounters ---------------------------------------------------------------------------

def test_context_restores():
  before = NOOPT.value
  with Context(NOOPT=1):
    assert NOOPT.value == 1
    np.testing.assert_allclose((Tensor.ones(8, 8) @ Tensor.ones(8, 8)).numpy(), np.full((8, 8), 8.0))
  assert NOOPT.value == before


def test_context_restores_on_exception():
  before = DEBUG.value
  with pytest.raises(ZeroDivisionError):
    with Context(DEBUG=0):
      1 / 0
  assert DEBUG.value == before


def test_context_unknown_key():
  with pytest.raises(ValueError):
    Context(NO_SUCH_SETTING=1)


def test_global_counters():
  a = Tensor(np.arange(16, dtype=np.float32))
  a.realize()
  GlobalCounters.reset()
  assert GlobalCounters.kernel_count == 0 and GlobalCounters.global_ops == 0
  (a * 2 + 1).realize()
  assert GlobalCounters.kernel_count == 1
  assert GlobalCounters.global_ops >= 16 and GlobalCounters.global_mem >= 16 * 4 * 2
  (a.sum() + a.max()).realize()
  assert GlobalCounters.kernel_count >= 2
  GlobalCounters.reset()
  assert GlobalCounters.kernel_count == 0


def test_schedule_cache_in_an_eager_loop():
  # the same graph over new inputs each call: scheduled once, then from the schedule cache, each call's values
  rng = np.random.default_rng(3)
  xs = [rng.standard_normal((8, 32)).astype(np.float32) for _ in range(4)]
  ts = [Tensor(x).realize() for x in xs]
  GlobalCounters.reset()
  with Context(SCHEDULE_CACHE=1):
    outs = [t.softmax(-1).numpy() for t in ts]
  assert GlobalCounters.schedules == 4 and GlobalCounters.schedule_hits >= 3
  for x, o in zip(xs, outs):
    np.testing.assert_allclose(o, torch.softmax(torch.from_numpy(x), -1).numpy(), rtol=1e-5, atol=1e-6)
  GlobalCounters.reset()
  with Context(SCHEDULE_CACHE=0):
    ts[0].softmax(-1).numpy()
  assert GlobalCounters.schedule_hits == 0


def test_lazy_until_realized():
  GlobalCounters.reset()
  t = Tensor([1.0, 2.0, 3.0, 4.0]) + 1  # (a constant plus 1 would fold to a constant: no kernel)
  assert GlobalCounters.kernel_count == 0  # nothing ran yet
  t.realize()
  assert GlobalCounters.kernel_count == 1
  t.numpy()
  assert GlobalCounters.kernel_count == 1  # already realized


# ---- creation --------------------------------------------------------------------------------------------

def test_creation_functions():
  np.testing.assert_array_equal(Tensor.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
  np.testing.assert_array_equal(Tensor.ones((2, 3)).numpy(), np.ones((2, 3), np.float32))
  np.testing.assert_array_equal(Tensor.full((2, 2), 7).numpy(), np.full((2, 2), 7, np.int32))
  np.testing.assert_array_equal(Tensor.full((2, 2), 1.5).numpy(), np.full((2, 2), 1.5, np.float32))
  np.testing.assert_array_equal(Tensor.eye(3).numpy(), np.eye(3, dtype=np.float32))
  np.testing.assert_array_equal(Tensor.arange(5).numpy(), np.arange(5, dtype=np.int32))
  np.testing.assert_allclose(Tensor.arange(1, 2, 0.25).numpy(), np.arange(1, 2, 0.25, dtype=np.float32))
  np.testing.assert_allclose(Tensor.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5, dtype=np.float32))
  t = Tensor([[1, 2], [3, 4]])
  np.testing.assert_array_equal(t.zeros_like().numpy(), np.zeros((2, 2), np.int32))
  np.testing.assert_array_equal(t.ones_like(dtype=dtypes.float32).numpy(), np.ones((2, 2), np.float32))
  np.testing.assert_array_equal(t.full_like(9).numpy(), np.full((2, 2), 9, np.int32))
  assert Tensor.empty(3, 4).shape == (3, 4)


def test_random_functions():
  Tensor.manual_seed(42)
  a = Tensor.rand(1000).numpy()
  Tensor.manual_seed(42)
  b = Tensor.rand(1000).numpy()
  np.testing.assert_array_equal(a, b)  # reproducible
  assert a.min() >= 0 and a.max() < 1 and 0.4 < a.mean() < 0.6
  n = Tensor.randn(20000).numpy()
  assert abs(n.mean()) < 0.05 and 0.95 < n.std() < 1.05
  r = Tensor.randint(1000, low=3, high=7).numpy()
  assert r.min() >= 3 and r.max() <= 6 and set(np.unique(r)) == {3, 4, 5, 6}
  u = Tensor.uniform(1000, low=-2, high=-1).numpy()
  assert u.min() >= -2 and u.max() < -1
  assert Tensor.rand(3, 4).shape == (3, 4)
  assert Tensor.kaiming_uniform(8, 8).shape == (8, 8)


def test_dropout_training(training):
  x = Tensor.ones(1000)
  y = x.dropout(0.25).numpy()
  kept = y != 0
  assert 0.65 < kept.mean() < 0.85
  np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)


# ---- autograd attributes ---------------------------------------------------------------------------------

def test_requires_grad_and_grad():
  x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  assert x.requires_grad is True
  assert x.grad is None
  (x * x).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
  assert Tensor([1.0]).requires_grad in (None, False)


def test_grad_accumulates():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * 3).sum().backward()
  (x * 3).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_detach_stops_gradient():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * x.detach()).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0])


def test_backward_returns_self_and_shared_subgraph():
  x = Tensor([1.0, -2.0], requires_grad=True)
  y = x * 2
  z = (y * y + y).sum()
  assert z.backward() is z
  tx = torch.tensor([1.0, -2.0], requires_grad=True)
  ty = tx * 2
  (ty * ty + ty).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_no_grad_flag():
  prev = Tensor.no_grad
  Tensor.no_grad = True
  try:
    x = Tensor([1.0], requires_grad=True)
    y = x * 2
    assert y.requires_grad in (None, False)
  finally:
    Tensor.no_grad = prev


# ---- properties, assign, printing -------------------------------------------------------------------------

def test_properties():
  t = Tensor.ones(2, 3, 4)
  assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
  assert t.ndim == 3 and t.numel() == 24 and len(t) == 2
  assert t.size() == (2, 3, 4) and t.size(1) == 3
  assert t.dtype == dtypes.float32
  assert t.nbytes() == 96
  assert t.element_size() == 4


def test_len_of_scalar():
  with pytest.raises(TypeError):
    len(Tensor(1.0))


def test_assign():
  w = Tensor.zeros(3).contiguous().realize()
  w.assign(Tensor([1.0, 2.0, 3.0])).realize()
  np.testing.assert_array_equal(w.numpy(), [1.0, 2.0, 3.0])
  with pytest.raises(ValueError):
    w.assign(Tensor([1.0, 2.0]))


def test_inplace_operators():
  t = Tensor([1.0, 2.0]).contiguous().realize()
  t += 1
  t *= 2
  np.testing.assert_array_equal(t.numpy(), [4.0, 6.0])


def test_repr():
  r = repr(Tensor([1.0, 2.0]))
  assert "Tensor" in r or "tensor" in r


def test_realize_returns_self():
  t = Tensor([1.0]) + 1
  assert t.realize() is t


def test_bool_of_tensor():
  assert bool(Tensor(1.0)) and not bool(Tensor(0.0))
  with pytest.raises(RuntimeError):  # as torch
    bool(Tensor([1.0, 2.0]))


def test_realize_many():
  # tinygrad's Tensor.realize(a, b): one schedule for both, and one kernel with two outputs (two with FUSE=0)
  x = Tensor([1.0, 1.0, 1.0, 1.0])
  a, b = x * 2, x * 3
  GlobalCounters.reset()
  Tensor.realize(a, b)
  assert GlobalCounters.kernel_count == 1
  GlobalCounters.reset()
  np.testing.assert_array_equal(a.numpy(), np.full(4, 2.0, np.float32))
  np.testing.assert_array_equal(b.numpy(), np.full(4, 3.0, np.float32))
  assert GlobalCounters.kernel_count == 0  # both were realized already


def test_no_device_memory_leak():
  # tensors dropped by Python free their device buffers: repeated work leaves mem_used where it was
  import gc
  x = Tensor(np.ones(1000, np.float32)).realize()

  def work(i):  # the same few kernels every round (a constant that changed would compile a new kernel each time)
    (x * 2 + Tensor(np.full(1000, i, np.float32))).realize()
    Tensor(np.ones((64, 64), np.float32)).realize()
    g = Tensor(np.ones(10, np.float32), requires_grad=True)
    (g * g).sum().backward()
    g.grad.numpy()
    (x + 1).tolist()

  for i in range(5): work(i)
  gc.collect()
  before = GlobalCounters.mem_used
  for i in range(100): work(i)
  gc.collect()
  assert GlobalCounters.mem_used == before


def test_threads():
  # Python threads may use tg at once (realize releases the GIL): each gets its own right answers
  import threading
  errors = []

  def work(k):
    try:
      for i in range(20):
        r = (Tensor(np.full(64, k + i, np.float32)) * 2 + 1).sum().item()
        if r != 64 * (2 * (k + i) + 1): errors.append((k, i, r))
    except Exception as e:  # noqa: BLE001 -- reported below
      errors.append(repr(e))

  threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert errors == []

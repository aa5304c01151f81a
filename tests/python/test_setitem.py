"""t[index] = value against PyTorch (Tensor.index_put assigned in place), for every index form: ints,
slices with any step, None, Ellipsis, index tensors and lists (one or several, adjacent or not, any
integer dtype), bool masks; values broadcast. Index tensors select distinct positions here (torch leaves
the winner of a repeated position unspecified). Past torch: an index tensor entry out of range writes
nothing (as scatter; CHECK_INDEX=1 raises), and tensors of 2^31 elements and more are written at their
first and last element."""
import numpy as np
import pytest
import torch

from tg import Context, Tensor, dtypes

SHAPE = (4, 5, 6)


def check_setitem(index_tg, index_torch=None, value=-1.5, numpy_ref=False):
  # torch is the reference (it lays out ints beside index tensors as tg does); NumPy where torch lacks a
  # form (negative steps) and agrees with torch on the layout
  index_torch = index_tg if index_torch is None else index_torch
  a = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
  if numpy_ref:
    want = a.copy()
    want[index_torch] = value
  else:
    want = torch.from_numpy(a.copy())
    want[index_torch] = torch.as_tensor(value) if not isinstance(value, np.ndarray) else torch.from_numpy(value)
    want = want.numpy()
  t = Tensor(a.copy())
  t[index_tg] = Tensor(value) if isinstance(value, np.ndarray) else value
  np.testing.assert_equal(t.numpy(), want)


def both(*idx):  # the same index tensors for tg (int32) and torch (int64)
  return tuple(Tensor(np.array(i, dtype=np.int32)) for i in idx), tuple(torch.tensor(i, dtype=torch.int64) for i in idx)


@pytest.mark.parametrize("index", [
  1, -1, (1, 2), (slice(None), 3), (slice(1, 4, 2), slice(None, None, -2), 0), (Ellipsis, 2), (None, 1), (1, None, slice(0, 3)),
  (slice(5, 0, -2), Ellipsis, slice(None, None, 3)), (slice(2, 2),),
])
def test_basic(index):
  check_setitem(index, numpy_ref=True)


@pytest.mark.parametrize("make", [
  lambda: both([0, 3, 1]),
  lambda: both([[0, 2], [3, 1]]),
  lambda: both([0, 3], [4, 1]),                 # two adjacent index tensors
  lambda: both([0, 3], [4, 1], [5, 0]),         # three
  lambda: both([-1, -4]),                       # negative entries count from the end
])
def test_index_tensors(make):
  tg_idx, torch_idx = make()
  check_setitem(tg_idx, torch_idx)


def test_index_tensors_mixed_with_basic_indices():
  (i,), (ti,) = both([0, 3])
  (j,), (tj,) = both([4, 1])
  check_setitem((slice(1, 3), i), (slice(1, 3), ti))
  check_setitem((i, slice(None, None, -1), j), (ti.numpy(), slice(None, None, -1), tj.numpy()), numpy_ref=True)  # B first
  check_setitem((2, slice(None), j), (2, slice(None), tj))
  check_setitem((Ellipsis, j), (Ellipsis, tj))
  check_setitem((i, None, slice(1, 5, 2)), (ti, None, slice(1, 5, 2)))
  check_setitem((i, 2, j), (ti, 2, tj))


def test_lists_arrays_and_dtypes():
  check_setitem([0, 2], torch.tensor([0, 2]))
  check_setitem((slice(None), [1, 4]), (slice(None), torch.tensor([1, 4])))
  for npdt in (np.int8, np.uint8, np.int16, np.int64, np.uint32, np.uint64):
    check_setitem(Tensor(np.array([3, 1], dtype=npdt)), torch.tensor([3, 1]))


def test_bool_masks():
  m = np.zeros(SHAPE[:2], dtype=bool)
  m[1, 2] = m[3, 0] = m[0, 4] = True
  check_setitem(Tensor(m), torch.from_numpy(m))
  m1 = np.array([True, False, True, False])
  check_setitem((Tensor(m1), 2), (torch.from_numpy(m1), 2))


def test_values_broadcast():
  (i,), (ti,) = both([0, 3])
  check_setitem((i,), (ti,), np.arange(6, dtype=np.float32))                 # (2, 5, 6) <- (6,)
  check_setitem((slice(None), ti.numpy().tolist()), (slice(None), ti), np.arange(12, dtype=np.float32).reshape(1, 2, 6))
  check_setitem((1, slice(0, 2)), (1, slice(0, 2)), np.arange(12, dtype=np.float32).reshape(2, 6))
  t = Tensor.zeros(4, 5).contiguous()
  with pytest.raises(ValueError):
    t[Tensor([0, 1])] = Tensor.ones(3)  # (3,) does not broadcast to (2, 5)


def test_many_positions():  # past 16 positions the write is a scatter, below a where each: the same answer
  for count in (5, 18):
    idx = np.random.RandomState(count).permutation(SHAPE[0] * SHAPE[1])[:count]
    i, j = idx // SHAPE[1], idx % SHAPE[1]
    check_setitem((Tensor(i.astype(np.int32)), Tensor(j.astype(np.int64))), (torch.from_numpy(i), torch.from_numpy(j)),
                  np.arange(count * 6, dtype=np.float32).reshape(count, 6))


def test_repeated_positions_last_wins():  # tg's rule (torch leaves it unspecified): as a loop of writes would
  for count in (6, 30):
    idx = np.random.RandomState(count).randint(0, 5, size=count)
    vals = np.arange(count, dtype=np.float32)
    want = np.zeros(5, dtype=np.float32)
    for k, v in zip(idx, vals): want[k] = v
    t = Tensor.zeros(5).contiguous()
    t[Tensor(idx.astype(np.int32))] = Tensor(vals)
    np.testing.assert_equal(t.numpy(), want)


def test_out_of_range_entries_write_nothing():
  t = Tensor([1.0, 2.0, 3.0])
  t[Tensor([5, -4, 1])] = 9.0  # entries 5 and -4 are past either end: only position 1 is written
  np.testing.assert_equal(t.numpy(), [1.0, 9.0, 3.0])
  t = Tensor.zeros(2, 3).contiguous()
  t[Tensor([1, 1]), Tensor([2, 3])] = 7.0
  np.testing.assert_equal(t.numpy(), [[0, 0, 0], [0, 0, 7]])
  t = Tensor([1.0, 2.0, 3.0])
  t[Tensor(np.array([2**32 + 1], dtype=np.int64))] = 5.0  # not narrowed onto element 1
  np.testing.assert_equal(t.numpy(), [1.0, 2.0, 3.0])
  t = Tensor.zeros(40).contiguous()
  t[Tensor(np.arange(-45, 45, 2, dtype=np.int32))] = 1.0  # the scatter path: only the 20 in-range entries write
  want = np.zeros(40, dtype=np.float32)
  want[np.arange(-39, 40, 2)] = 1.0
  np.testing.assert_equal(t.numpy(), want)
  with Context(CHECK_INDEX=1):
    with pytest.raises(IndexError, match="index_put: index 60 out of range"):
      t[Tensor([5, 60])] = 1.0  # the largest entry is named


def test_gradient_flows_through_setitem():
  x = Tensor.ones(3, 4, requires_grad=True)
  y = x * 2
  y[Tensor([2, 0]), 1] = 0.0
  y.sum().backward()
  g = np.full((3, 4), 2.0, dtype=np.float32)
  g[2, 1] = g[0, 1] = 0
  np.testing.assert_equal(x.grad.numpy(), g)


# ---- 2^31 elements and more: the plain build's pytest only (2 GiB a tensor) ------------------------------

def test_setitem_past_2e31():
  n = 2**31 + 16
  a = np.zeros(n, dtype=np.uint8)
  a[0], a[-1] = 1, 9
  t = Tensor(a)
  del a
  t[n - 1] = 7          # basic: one lazy where over the whole tensor
  t[0] = 3
  assert (t[0].item(), t[n - 1].item(), t[n - 2].item()) == (3, 7, 0)
  t[Tensor(np.array([n - 2, 1], dtype=np.int64))] = 5     # advanced: a scatter to positions past 2^31
  assert (t[1].item(), t[n - 2].item(), t[n - 1].item(), t[0].item()) == (5, 5, 7, 3)
  t[-1:] = 2
  assert t[n - 1].item() == 2 and t.dtype == dtypes.uint8

# The rest of tinygrad's Tensor API: interpolate (torch.nn.functional.interpolate's modes, sizes and
# align_corners, forward and backward), max_pool2d and avg_pool2d(ceil_mode=True), multinomial (tinygrad's sampling,
# checked by its statistics), xor, sequential, replace, repeat_interleave, unfold, to_, eye(n, m), inference_mode and the
# per-device methods, and each one's errors.
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import helper_test_op
import tg
from tg import Tensor, dtypes

# ---- interpolate ------------------------------------------------------------------------------------------
INTERP = [  # (input shape, size, mode, align_corners)
  ((2, 3, 5, 7), (8, 3), "nearest", False),
  ((2, 3, 5, 7), (8, 3), "nearest-exact", False),
  ((1, 2, 4, 6), (9, 13), "nearest", False),
  ((2, 3, 5, 7), (8, 3), "bilinear", False),
  ((2, 3, 5, 7), (8, 3), "bilinear", True),
  ((1, 2, 4, 5), (11, 2), "bilinear", False),
  ((1, 2, 4, 5), (1, 1), "bilinear", True),
  ((2, 3, 9), (4,), "linear", False),
  ((2, 3, 4), (10,), "linear", True),
  ((1, 2, 3, 4, 5), (5, 2, 7), "trilinear", False),
  ((1, 1, 3, 4, 2), (2, 6, 3), "trilinear", True),
]


@pytest.mark.parametrize("shape,size,mode,ac", INTERP, ids=[f"{m}-{s}-{a}" for _, s, m, a in INTERP])
def test_interpolate(shape, size, mode, ac):
  kw = {"align_corners": ac} if "linear" in mode else {}
  helper_test_op([shape], lambda x: F.interpolate(x, size=size, mode=mode, **kw),
                 lambda x: x.interpolate(size, mode=mode, align_corners=ac), atol=1e-5)


def test_interpolate_linear_over_all_given_dims():
  # tinygrad's "linear" resizes every dim it is given a size for: bilinear over two, with any leading dims
  helper_test_op([(3, 5, 7)], lambda x: F.interpolate(x[None], size=(4, 9), mode="bilinear")[0],
                 lambda x: x.interpolate((4, 9), mode="linear"), atol=1e-5)


def test_interpolate_dtypes():
  x = Tensor(np.arange(12, dtype=np.int32).reshape(1, 1, 3, 4))
  near = x.interpolate((6, 8), mode="nearest")
  assert near.dtype == dtypes.int32
  np.testing.assert_equal(near.numpy(), F.interpolate(torch.arange(12).reshape(1, 1, 3, 4).float(), size=(6, 8)).int().numpy())
  assert x.interpolate((6, 8)).dtype == dtypes.float32


@pytest.mark.parametrize("call", [
  lambda x: x.interpolate((2, 2), mode="bicubic"),
  lambda x: x.interpolate((2, 2, 2, 2, 2)),
  lambda x: x.interpolate(()),
  lambda x: x.interpolate((0, 2)),
  lambda x: x.interpolate((2,), mode="bilinear"),
  lambda x: x.interpolate((2, 2), mode="trilinear"),
  lambda x: x.interpolate((2, 2), mode="nearest", align_corners=True),
], ids=["mode", "too_many", "empty", "zero", "bilinear_1", "trilinear_2", "nearest_align"])
def test_interpolate_errors(call):
  with pytest.raises(ValueError, match="interpolate"):
    call(Tensor.ones(1, 2, 3, 4))


# ---- max_pool2d(ceil_mode=True) ---------------------------------------------------------------------------
POOLS = [  # (input shape, kernel, stride, padding, dilation)
  ((1, 2, 7, 9), 2, 2, 0, 1),
  ((1, 2, 7, 9), 3, 2, 1, 1),
  ((2, 1, 7, 9), 3, 2, 0, 1),
  ((1, 2, 7, 9), (2, 3), (2, 2), (1, 1), 1),
  ((1, 2, 7, 9), 3, 3, 1, 2),
  ((1, 2, 5, 5), 2, 1, 0, 1),
  ((1, 1, 6, 6), 3, 2, 1, 1),  # the last window would start in the padding: torch drops it
]


@pytest.mark.parametrize("shape,k,s,p,d", POOLS)
def test_max_pool2d_ceil_mode(shape, k, s, p, d):
  kk = k if isinstance(k, tuple) else (k, k)
  helper_test_op([shape], lambda x: F.max_pool2d(x, k, s, p, d, ceil_mode=True),
                 lambda x: x.max_pool2d(kk, s, d, p, ceil_mode=True))


# torch's avg_pool2d has no dilation: the cases with dilation 1
@pytest.mark.parametrize("shape,k,s,p,d", [c for c in POOLS if c[4] == 1])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_ceil_mode(shape, k, s, p, d, count_include_pad):
  kk = k if isinstance(k, tuple) else (k, k)
  helper_test_op([shape], lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=True, count_include_pad=count_include_pad),
                 lambda x: x.avg_pool2d(kk, s, d, p, ceil_mode=True, count_include_pad=count_include_pad), rtol=1e-5)


def test_max_pool2d_ceil_mode_ints():
  x = np.arange(35, dtype=np.int32).reshape(1, 1, 5, 7)
  got = Tensor(x).max_pool2d((2, 2), ceil_mode=True)
  np.testing.assert_equal(got.numpy(), F.max_pool2d(torch.tensor(x).float(), 2, ceil_mode=True).int().numpy())
  assert got.dtype == dtypes.int32


# ---- multinomial ------------------------------------------------------------------------------------------
def test_multinomial_with_replacement_frequencies():
  Tensor.manual_seed(1)
  w = np.array([1.0, 2.0, 0.0, 3.0, 4.0], np.float32)
  n = 40000
  s = Tensor(w).multinomial(n, replacement=True)
  assert s.shape == (n,) and s.dtype == dtypes.int32
  freq = np.bincount(s.numpy(), minlength=5) / n
  np.testing.assert_allclose(freq, w / w.sum(), atol=0.01)
  assert freq[2] == 0  # a weight of 0 is never drawn
  # torch draws from the same distribution
  tf = np.bincount(torch.multinomial(torch.tensor(w), n, replacement=True).numpy(), minlength=5) / n
  np.testing.assert_allclose(freq, tf, atol=0.015)


def test_multinomial_2d_rows():
  Tensor.manual_seed(2)
  w = np.array([[0.0, 1.0, 0.0], [5.0, 0.0, 5.0]], np.float32)
  s = Tensor(w).multinomial(1000, replacement=True).numpy()
  assert s.shape == (2, 1000)
  assert (s[0] == 1).all()
  assert set(np.unique(s[1])) == {0, 2}
  assert abs((s[1] == 0).mean() - 0.5) < 0.06


def test_multinomial_without_replacement():
  Tensor.manual_seed(3)
  w = np.array([[1.0, 0.0, 2.0, 4.0], [3.0, 3.0, 0.0, 3.0]], np.float32)
  s = Tensor(w).multinomial(3).numpy()
  assert s.shape == (2, 3)
  for row, ws in zip(s, w):
    assert len(set(row.tolist())) == 3          # no category twice
    assert set(row.tolist()) == set(np.nonzero(ws)[0].tolist())  # exactly the non-zero ones
  # the first draw follows the weights
  w1 = np.array([1.0, 3.0, 0.0, 4.0], np.float32)
  many = Tensor(np.tile(w1, (20000, 1))).multinomial(2).numpy()
  np.testing.assert_allclose(np.bincount(many[:, 0], minlength=4) / 20000, w1 / w1.sum(), atol=0.015)
  assert (many[:, 0] != many[:, 1]).all()


def test_multinomial_one_sample_default():
  Tensor.manual_seed(4)
  s = Tensor([0.0, 0.0, 1.0]).multinomial()
  assert s.shape == (1,) and s.item() == 2


@pytest.mark.parametrize("call,exc", [
  (lambda: Tensor.ones(2, 2, 2).multinomial(), ValueError),
  (lambda: Tensor(1.0).multinomial(), ValueError),
  (lambda: Tensor.ones(3).multinomial(0), ValueError),
  (lambda: Tensor.ones(3).multinomial(4, replacement=False), ValueError),
  (lambda: Tensor([True, False]).multinomial(), TypeError),
], ids=["3d", "0d", "zero_samples", "too_many_without_replacement", "bool"])
def test_multinomial_errors(call, exc):
  with pytest.raises(exc, match="multinomial") as e:
    call()
  assert isinstance(e.value, RuntimeError) and isinstance(e.value, AssertionError)  # torch's and tinygrad v0.9's types


# ---- xor, sequential, replace -----------------------------------------------------------------------------
def test_xor():
  a, b = [-1, -2, 3, 7], [1, 0, 3, 2]
  want = torch.tensor(a) ^ torch.tensor(b)
  np.testing.assert_equal(Tensor(a).xor(Tensor(b)).numpy(), want.numpy())
  np.testing.assert_equal((Tensor(a) ^ Tensor(b)).numpy(), want.numpy())
  np.testing.assert_equal(Tensor(a).xor(5).numpy(), (torch.tensor(a) ^ 5).numpy())
  np.testing.assert_equal((5 ^ Tensor(a)).numpy(), (5 ^ torch.tensor(a)).numpy())
  np.testing.assert_equal(Tensor([True, True, False]).xor(Tensor([True, False, False])).numpy(), [False, True, False])
  with pytest.raises(TypeError):
    Tensor([1.0]).xor(Tensor([2.0]))


def test_sequential():
  helper_test_op([(3, 4)], lambda x: torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())(x * 2),
                 lambda x: (x * 2).sequential([Tensor.relu, lambda t: t.tanh()]))
  assert Tensor([1.0]).sequential([]).numpy().tolist() == [1.0]


def test_replace():
  t = Tensor.ones(2, 3)
  alias = t
  r = t.replace(Tensor.arange(6).reshape(2, 3))
  assert r is t and alias.dtype == dtypes.int32
  np.testing.assert_equal(alias.numpy(), np.arange(6).reshape(2, 3))
  with pytest.raises(ValueError, match="replace"):
    t.replace(Tensor.ones(3, 2))
  with pytest.raises(ValueError, match="replace"):
    t.replace(Tensor.ones(2, 3, requires_grad=True))
  w = Tensor.ones(2, requires_grad=True)
  y = w * 2
  with pytest.raises(ValueError, match="replace"):
    y.replace(Tensor.zeros(2))


# ---- repeat_interleave, to_ ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,repeats,dim", [((3, 4), 2, 0), ((3, 4), 3, 1), ((3, 4), 2, -1), ((2, 3), 2, None), ((3,), 0, 0), ((), 3, None)])
def test_repeat_interleave(shape, repeats, dim):
  helper_test_op([shape], lambda x: x.repeat_interleave(repeats, dim=dim), lambda x: x.repeat_interleave(repeats, dim=dim))


def test_repeat_interleave_errors():
  with pytest.raises(ValueError, match="repeat_interleave"):
    Tensor.ones(2).repeat_interleave(-1)
  with pytest.raises(IndexError, match="repeat_interleave"):
    Tensor.ones(2).repeat_interleave(2, dim=1)


@pytest.mark.parametrize("shape,args", [((2, 9), (1, 2, 3)), ((2, 9), (-1, 4, 1)), ((3, 10, 2), (1, 5, 2)), ((7,), (0, 7, 4)), ((), (0, 1, 1))])
def test_unfold(shape, args):
  helper_test_op([shape], lambda x: x.unfold(*args), lambda x: x.unfold(*args))


def test_unfold_errors():
  with pytest.raises(RuntimeError, match="unfold: size 6 is more than the 5 entries"):
    Tensor.ones(5).unfold(0, 6, 1)
  with pytest.raises(RuntimeError, match="unfold: step 0"):
    Tensor.ones(5).unfold(0, 2, 0)
  with pytest.raises(IndexError, match="unfold"):
    Tensor.ones(5).unfold(1, 1, 1)


def test_to_in_place():
  t = Tensor([1.0, 2.0], requires_grad=True)
  alias = t
  assert t.to_(tg.Device.DEFAULT) is t and alias.requires_grad
  np.testing.assert_equal(alias.numpy(), [1.0, 2.0])


# ---- eye(n, m), inference_mode, device methods ------------------------------------------------------------
@pytest.mark.parametrize("n,m", [(3, None), (3, 5), (5, 3), (0, 4), (4, 0), (1, 1)])
def test_eye(n, m):
  want = torch.eye(n) if m is None else torch.eye(n, m)
  got = Tensor.eye(n) if m is None else Tensor.eye(n, m)
  np.testing.assert_equal(got.numpy(), want.numpy())
  assert Tensor.eye(n, m, dtype=dtypes.int32).dtype == dtypes.int32


def test_eye_errors():
  with pytest.raises(ValueError, match="eye"):
    Tensor.eye(2, -1)
  with pytest.raises(TypeError, match="eye: m"):
    Tensor.eye(2, dtypes.int32)  # tinygrad takes dtype by keyword only; a positional one is m


def test_inference_mode():
  assert not Tensor.no_grad
  with Tensor.inference_mode():
    assert Tensor.no_grad
    with Tensor.inference_mode(False):
      assert not Tensor.no_grad
    assert Tensor.no_grad
  assert not Tensor.no_grad

  @Tensor.inference_mode()
  def f(): return Tensor.no_grad
  assert f() and not Tensor.no_grad


def test_device_methods():
  # tinygrad's rule: a method per device, lowercased, that is to(device)
  t = Tensor([1.0, 2.0])
  for d in tg.Device.backends():
    assert hasattr(Tensor, d.lower())
  np.testing.assert_equal(t.cpu().numpy(), [1.0, 2.0])
  assert t.cpu().device == "CPU"

# Autograd where torch's rules are specific: a comparison's result does not require grad (backward from
# it is a RuntimeError, and no gradient flows through it), an integer or bool cast cuts the graph, and
# pow's derivatives at a base of 0 and at negative bases (inf, 0 or NaN as torch's), for tensor and
# number exponents, on either side.
import numpy as np
import pytest
import torch

from helpers import helper_test_op
import tg
from tg import Tensor

COMPARISONS = {
  "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
  "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_comparison_does_not_require_grad(name):
  op = COMPARISONS[name]
  x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  xt = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
  assert op(x, 2.0).requires_grad is False and op(xt, 2.0).requires_grad is False
  # backward from a comparison's value: RuntimeError in torch, in tinygrad and here
  with pytest.raises(RuntimeError):
    op(xt, 2.0).float().sum().backward()
  with pytest.raises(RuntimeError):
    op(x, 2.0).float().sum().backward()
  assert x.grad is None


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_comparison_passes_no_gradient(name):
  # x * (x op 0.5): the gradient is the mask alone, none flows through the comparison
  op = COMPARISONS[name]
  helper_test_op([(4, 5)], lambda x: x * op(x, 0.5), lambda x: x * op(x, 0.5))
  helper_test_op([(4, 5), (4, 5)], lambda x, y: torch.where(op(x, y), x, y), lambda x, y: op(x, y).where(x, y))


def test_method_comparisons_and_logic():
  x = Tensor([1.0, -2.0], requires_grad=True)
  for r in [x.lt(0), x.eq(1), x.ne(1), x.isnan(), x.logical_not(), (x > 0).logical_and(x < 2)]:
    assert r.requires_grad is False
    with pytest.raises(RuntimeError):
      r.float().sum().backward()


def test_int_cast_cuts_the_graph():
  x = Tensor([1.5, 2.5], requires_grad=True)
  xt = torch.tensor([1.5, 2.5], requires_grad=True)
  assert x.int().requires_grad is False and xt.int().requires_grad is False
  with pytest.raises(RuntimeError):
    xt.int().float().sum().backward()
  with pytest.raises(RuntimeError):
    x.int().float().sum().backward()
  with pytest.raises(RuntimeError):
    x.bool().float().sum().backward()
  assert x.half().requires_grad is True  # float casts keep it


def test_backward_without_graph_message():
  with pytest.raises(tg.TensorValueError, match="does not require grad"):
    (Tensor([1.0], requires_grad=True) > 0).float().sum().backward()


# ---- pow ------------------------------------------------------------------------------------------------
BASES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0]
EXPONENTS = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, -1.0, -2.0, -0.5, -1.5]


def _grid():
  b, e = np.meshgrid(np.array(BASES, np.float32), np.array(EXPONENTS, np.float32), indexing="ij")
  return b.ravel(), e.ravel()


def _close(got, want, what):
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=what)


def test_pow_tensor_exponent_grads():
  b, e = _grid()
  bt, et = torch.tensor(b, requires_grad=True), torch.tensor(e, requires_grad=True)
  bg, eg = Tensor(b, requires_grad=True), Tensor(e, requires_grad=True)
  wt, wg = bt.pow(et), bg.pow(eg)
  _close(wg.numpy(), wt.detach().numpy(), "forward")
  wt.sum().backward()
  wg.sum().backward()
  _close(bg.grad.numpy(), bt.grad.numpy(), "d/dbase")
  _close(eg.grad.numpy(), et.grad.numpy(), "d/dexponent")


def _check_unary_grad(x, f, what):
  """f of one tensor against torch: the forward value and the gradient of its sum."""
  x = np.array(x, np.float32)
  xt, xg = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
  wt, wg = f(xt), f(xg)
  _close(wg.numpy(), wt.detach().numpy(), f"forward {what}")
  wt.sum().backward()
  wg.sum().backward()
  _close(xg.grad.numpy(), xt.grad.numpy(), f"gradient of {what}")


@pytest.mark.parametrize("e", EXPONENTS + [4.0, -3.0, 0.25, 7.0])
def test_pow_number_exponent_grads(e):
  _check_unary_grad(BASES, lambda x: x ** e, f"x**{e}")


@pytest.mark.parametrize("base", [2.0, 0.0, -2.0, 0.5])
def test_pow_number_base_grads(base):
  _check_unary_grad(EXPONENTS, lambda e: base ** e, f"{base}**e")


def test_pow_random_positive():
  helper_test_op([(3, 4), (3, 4)], lambda x, y: x.pow(y), lambda x, y: x.pow(y), low=0.5, high=2.0)
  helper_test_op([(3, 4)], lambda x: x.pow(2.7), lambda x: x.pow(2.7), low=0.5, high=2.0)


def test_pow_chain_rule():
  # the gradient flowing in is multiplied in, and a pow inside a larger graph is differentiated once
  helper_test_op([(5,)], lambda x: (x.pow(3) * 2 + x.pow(2)).exp().sum() * x, lambda x: (x.pow(3) * 2 + x.pow(2)).exp().sum() * x,
                 low=-1, high=1, atol=1e-5)


def test_pow_ints_have_no_grad():
  assert (Tensor([1, 2, 3]) ** 2).numpy().tolist() == [1, 4, 9]
  assert (Tensor([1, 2]) ** Tensor([3, 2])).numpy().tolist() == [1, 4]


def test_relu_gradient_is_zero_where_the_output_is_not_positive():
  # torch's relu backward selects the gradient (threshold_backward): an inf or NaN gradient where the
  # output is 0 gives 0 there, not 0 x inf = NaN; so do leaky_relu's and relu6's (composed from relu)
  xs, gs = [-1.0, 0.0, 2.0, -3.0, 4.0], [float("nan"), float("inf"), float("inf"), -float("inf"), float("nan")]
  for f in [lambda t: t.relu(), lambda t: t.relu() * 3]:
    x, xt = Tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    f(x).backward(Tensor(gs))
    f(xt).backward(torch.tensor(gs))
    np.testing.assert_equal(x.grad.numpy(), xt.grad.numpy())


def test_division_and_its_gradients_are_correctly_rounded():
  # x / y is the float nearest the quotient (NumPy's and torch's bits; x / x is 1), not x times a rounded
  # 1/y; the divisor's gradient divides twice as torch's does: -g x / (y y) overflows y y past 2^64 and
  # underflows it below 2^-75, where the gradient itself is a float
  rng = np.random.default_rng(5)
  xs = np.concatenate([rng.standard_normal(97), [3e19, 1e-20, 7.0, 1e-30]]).astype(np.float32)
  ys = np.concatenate([rng.standard_normal(97), [2e19, 1e-20, 3.0, 3e-30]]).astype(np.float32)
  gs = rng.standard_normal(101).astype(np.float32)
  x, y = Tensor(xs, requires_grad=True), Tensor(ys, requires_grad=True)
  xt, yt = torch.tensor(xs, requires_grad=True), torch.tensor(ys, requires_grad=True)
  out = x / y
  np.testing.assert_equal(out.numpy(), xs / ys)
  np.testing.assert_equal((x / x).numpy(), np.ones(101, np.float32))
  out.backward(Tensor(gs))
  (xt / yt).backward(torch.tensor(gs))
  np.testing.assert_equal(x.grad.numpy(), xt.grad.numpy())
  np.testing.assert_allclose(y.grad.numpy(), yt.grad.numpy(), rtol=1e-6)
  assert np.isfinite(y.grad.numpy()).all()

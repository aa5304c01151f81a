# Elementwise ops (unary, binary, ternary, comparisons, casts, activations) against PyTorch: forward values
# and input gradients, as tinygrad's test/test_ops.py.
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tg
from tg import Tensor, dtypes
from helpers import helper_test_op

S = (45, 65)  # tinygrad's shape for elementwise tests

# name -> (shapes, torch_fxn, tg_fxn or None (same spelling), options)
UNARY = {
  "neg":         ([S], lambda x: -x, None, {}),
  "abs":         ([S], lambda x: x.abs(), None, {}),
  "sign":        ([S], lambda x: x.sign(), None, {}),
  "exp":         ([S], lambda x: x.exp(), None, {}),
  "exp_scalar":  ([()], lambda x: x.exp(), None, {}),
  "exp2":        ([S], torch.exp2, lambda x: x.exp2(), {}),
  "log":         ([S], lambda x: x.log(), None, dict(low=0.05, high=4)),
  "log2":        ([S], torch.log2, lambda x: x.log2(), dict(low=0.05, high=4)),
  "sqrt":        ([S], lambda x: x.sqrt(), None, dict(low=0.05, high=4)),
  "rsqrt":       ([S], lambda x: x.rsqrt(), None, dict(low=0.05, high=4)),
  "reciprocal":  ([S], lambda x: x.reciprocal(), None, dict(low=0.5, high=3)),
  "square":      ([S], lambda x: x.square(), None, {}),
  "sin":         ([S], lambda x: x.sin(), None, {}),
  "cos":         ([S], lambda x: x.cos(), None, {}),
  "tan":         ([S], lambda x: x.tan(), None, dict(low=-1.2, high=1.2, grad_atol=1e-3)),
  "asin":        ([S], lambda x: x.asin(), None, dict(low=-0.95, high=0.95, grad_atol=1e-3)),
  "acos":        ([S], lambda x: x.acos(), None, dict(low=-0.95, high=0.95, grad_atol=1e-3)),
  "atan":        ([S], lambda x: x.atan(), None, {}),
  "sinh":        ([S], lambda x: x.sinh(), None, dict(grad_atol=1e-6)),
  "cosh":        ([S], lambda x: x.cosh(), None, dict(grad_atol=1e-6)),
  "tanh":        ([S], lambda x: x.tanh(), None, dict(grad_atol=1e-6)),
  "tanh_extreme": ([S], lambda x: x.tanh(), None, dict(low=-300, high=300, grad_atol=1e-6)),
  "asinh":       ([S], lambda x: x.asinh(), None, dict(grad_atol=1e-6)),
  "acosh":       ([S], lambda x: x.acosh(), None, dict(low=1.05, high=4, grad_atol=1e-4)),
  "atanh":       ([S], lambda x: x.atanh(), None, dict(low=-0.9, high=0.9, grad_atol=1e-4)),
  "erf":         ([S], torch.erf, lambda x: x.erf(), {}),
  "trunc":       ([S], lambda x: x.trunc(), None, dict(low=-5, high=5, forward_only=True)),
  "floor":       ([S], lambda x: x.floor(), None, dict(low=-5, high=5, forward_only=True)),
  "ceil":        ([S], lambda x: x.ceil(), None, dict(low=-5, high=5, forward_only=True)),
  "round":       ([S], lambda x: x.round(), None, dict(low=-5, high=5, forward_only=True)),
  "round_half":  (None, lambda x: x.round(), None, dict(vals=[[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]], forward_only=True)),
  "relu":        ([S], lambda x: x.relu(), None, {}),
  "relu6":       ([S], F.relu6, lambda x: x.relu6(), dict(low=-8, high=8)),
  "sigmoid":     ([S], torch.sigmoid, lambda x: x.sigmoid(), {}),
  "sigmoid_extreme": ([S], torch.sigmoid, lambda x: x.sigmoid(), dict(low=-300, high=300)),
  "logsigmoid":  ([S], F.logsigmoid, lambda x: x.logsigmoid(), {}),
  "hardsigmoid": ([S], F.hardsigmoid, lambda x: x.hardsigmoid(), dict(low=-5, high=5)),
  "gelu_tanh":   ([S], lambda x: F.gelu(x, approximate="tanh"), lambda x: x.gelu(), {}),
  "quick_gelu":  ([S], lambda x: x * torch.sigmoid(1.702 * x), lambda x: x.quick_gelu(), {}),
  "softplus":    ([S], F.softplus, lambda x: x.softplus(), dict(grad_atol=1e-6)),
  "softplus_beta3": ([S], lambda x: F.softplus(x, beta=3), lambda x: x.softplus(beta=3), dict(grad_atol=1e-6)),
  "mish":        ([S], F.mish, lambda x: x.mish(), {}),
  "silu":        ([S], F.silu, lambda x: x.silu(), {}),
  "swish":       ([S], F.silu, lambda x: x.swish(), {}),
  "elu":         ([S], F.elu, lambda x: x.elu(), {}),
  "elu_alpha":   ([S], lambda x: F.elu(x, alpha=0.1), lambda x: x.elu(alpha=0.1), {}),
  "celu":        ([S], lambda x: F.celu(x, 2.0), lambda x: x.celu(2.0), {}),
  "selu":        ([S], F.selu, lambda x: x.selu(), {}),
  "leaky_relu":  ([S], lambda x: F.leaky_relu(x, 0.01), lambda x: x.leaky_relu(0.01), {}),
  "leaky_relu_0.2": ([S], lambda x: F.leaky_relu(x, 0.2), lambda x: x.leaky_relu(0.2), {}),
  "hardtanh":    ([S], lambda x: F.hardtanh(x, -1.5, 1.5), lambda x: x.hardtanh(-1.5, 1.5), dict(grad_atol=1e-6)),
  "hardswish":   ([S], F.hardswish, lambda x: x.hardswish(), dict(low=-5, high=5)),
  "softsign":    ([S], F.softsign, lambda x: x.softsign(), {}),
  "clip":        ([S], lambda x: x.clip(-0.8, 1.1), None, {}),
  "clamp_min":   ([S], lambda x: x.clamp(min=-0.5), lambda x: x.clamp(min_=-0.5), {}),
  "pow_2":       ([S], lambda x: x ** 2, None, {}),
  "pow_3":       ([S], lambda x: x ** 3, None, {}),
  "pow_neg1":    ([S], lambda x: x ** -1, None, dict(low=0.5, high=2)),
  "pow_half":    ([S], lambda x: x ** 0.5, None, dict(low=0.1, high=4)),
  "pow_0":       ([S], lambda x: x ** 0, None, {}),
  "rpow":        ([S], lambda x: 2.0 ** x, None, {}),
  "isnan":       (None, lambda x: x.isnan(), None, dict(vals=[[1.0, math.nan, math.inf, -math.inf, 0.0]], forward_only=True)),
  "isinf":       (None, lambda x: x.isinf(), None, dict(vals=[[1.0, math.nan, math.inf, -math.inf, 0.0]], forward_only=True)),
  "exp_inf_nan": (None, lambda x: x.exp(), None, dict(vals=[[math.inf, -math.inf, math.nan]], forward_only=True)),
  "logical_not": (None, lambda x: x.logical_not(), None, dict(vals=[[True, False, True]], forward_only=True)),
  "relu_scalar": ([()], lambda x: x.relu(), None, {}),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name):
  shps, tf, gf, opts = UNARY[name]
  helper_test_op(shps, tf, gf, **opts)


BINARY = {
  "add":           ([S, S], lambda x, y: x + y, None, {}),
  "add_broadcast": ([(45, 65), (45, 1)], lambda x, y: x + y, None, {}),
  "add_broadcast2": ([(1, 65), (45, 1)], lambda x, y: x + y, None, {}),
  "add_rank":      ([(3, 4, 5), (5,)], lambda x, y: x + y, None, {}),
  "add_scalar":    ([S], lambda x: x + 2.5, None, {}),
  "radd_scalar":   ([S], lambda x: 2.5 + x, None, {}),
  "sub":           ([S, S], lambda x, y: x - y, None, {}),
  "rsub_scalar":   ([S], lambda x: 3 - x, None, {}),
  "mul":           ([S, S], lambda x, y: x * y, None, {}),
  "mul_scalar":    ([S], lambda x: x * -1.5, None, {}),
  "div":           ([S, S], lambda x, y: x / y, None, dict(low=0.5, high=2)),
  "div_scalar":    ([S], lambda x: x / 3, None, {}),
  "rdiv_scalar":   ([S], lambda x: 2 / x, None, dict(low=0.5, high=2)),
  "pow_tensor":    ([S, S], lambda x, y: x ** y, None, dict(low=0.5, high=2)),
  "maximum":       ([S, S], torch.maximum, lambda x, y: x.maximum(y), {}),
  "minimum":       ([S, S], torch.minimum, lambda x, y: x.minimum(y), {}),
  "maximum_scalar": ([S], lambda x: torch.maximum(x, torch.tensor(0.3)), lambda x: x.maximum(0.3), {}),
  "lerp":          ([S, S], lambda x, y: torch.lerp(x, y, 0.3), lambda x, y: x.lerp(y, 0.3), {}),
  "lerp_tensor_w": ([S, S, S], lambda x, y, w: torch.lerp(x, y, w), lambda x, y, w: x.lerp(y, w), {}),
  "add3":          ([S, S, S], lambda x, y, z: x + y + z, None, {}),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name):
  shps, tf, gf, opts = BINARY[name]
  helper_test_op(shps, tf, gf, **opts)


CMP = {
  "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
  "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
}


@pytest.mark.parametrize("op", list(CMP))
def test_comparison(op):
  # values drawn from a few integers so equality happens
  vals = [[[0., 1., 2., 1.], [2., 2., 0., 1.]], [[0., 2., 1., 1.], [2., 0., 0., 2.]]]
  helper_test_op(None, CMP[op], vals=vals, forward_only=True)


@pytest.mark.parametrize("op", ["lt", "gt", "eq"])
def test_comparison_scalar(op):
  f = {"lt": lambda x: x < 0.5, "gt": lambda x: x > 0.5, "eq": lambda x: x == 1.0}[op]
  helper_test_op(None, f, vals=[[0.0, 0.5, 1.0, 2.0]], forward_only=True)


def test_comparison_backward_is_zero():
  # a comparison has no gradient path: (x < y).where(x, y) routes the gradient to one of them
  helper_test_op([S, S], lambda x, y: torch.where(x < y, x, y), lambda x, y: (x < y).where(x, y))


def test_where():
  helper_test_op([S, S, S], lambda c, x, y: torch.where(c > 0.5, x, y), lambda c, x, y: (c > 0.5).where(x, y))


def test_where_scalars():
  helper_test_op([S], lambda x: torch.where(x > 0, x, torch.tensor(-1.0)), lambda x: (x > 0).where(x, -1.0))


def test_where_broadcast():
  helper_test_op([(4, 1), (1, 5), (4, 5)], lambda c, x, y: torch.where(c > 0, x, y), lambda c, x, y: (c > 0).where(x, y))


INT_BINARY = {
  "int_add":     lambda x, y: x + y,
  "int_mul":     lambda x, y: x * y,
  "bitwise_and": lambda x, y: x & y,
  "bitwise_or":  lambda x, y: x | y,
  "bitwise_xor": lambda x, y: x ^ y,
}


@pytest.mark.parametrize("op", list(INT_BINARY))
def test_int_binary(op):
  vals = [[[5, -3, 12, 0], [7, 100, -64, 9]], [[3, 6, -5, 1], [2, 7, 11, -9]]]
  helper_test_op(None, INT_BINARY[op], vals=vals, forward_only=True)


def test_bitwise_not():
  helper_test_op(None, lambda x: ~x, vals=[[5, -3, 0, 2 ** 31 - 1]], forward_only=True)


def test_int_truediv_is_float():
  helper_test_op(None, lambda x, y: x / y, vals=[[7, -7, 9, 1], [2, 2, -4, 3]], forward_only=True)


def test_int_truediv_by_int_scalar():
  # the scalar at its value, as a float (torch, tinygrad): not wrapped into the tensor's dtype first (200
  # would be int8's -56, -2 uint8's 254); the other operators keep it in the tensor's dtype, as torch
  for dt, tdt, vals, s in ((dtypes.int8, torch.int8, [100, 7, -128, 3], 200), (dtypes.uint8, torch.uint8, [35, 255, 1, 3], -2)):
    a, t = Tensor(vals, dtype=dt), torch.tensor(vals, dtype=tdt)
    np.testing.assert_allclose((a / s).numpy(), (t / s).numpy(), rtol=1e-6)
    np.testing.assert_allclose((s / a).numpy(), (s / t).numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.div(s).numpy(), (t / s).numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.div(s, reverse=True).numpy(), (s / t).numpy(), rtol=1e-6)
    np.testing.assert_equal(a.div(s, rounding_mode="floor").numpy(), torch.div(t, s, rounding_mode="floor").numpy())
    np.testing.assert_equal((a + s).numpy(), (t + s).numpy())


def test_idiv_truncates():
  # idiv is C's integer division, truncating toward zero (tinygrad's)
  helper_test_op(None, lambda x, y: torch.div(x, y, rounding_mode="trunc"), lambda x, y: x.idiv(y),
                 vals=[[7, -7, 9, 1], [2, 2, -4, 3]], forward_only=True)


def test_int_floordiv_floors():
  # // on integers rounds down, as Python, torch.floor_divide and our own % (tinygrad's truncates, a TODO
  # in its source): x == x // y * y + x % y holds for every sign pair
  helper_test_op(None, lambda x, y: torch.floor_divide(x, y), lambda x, y: x // y,
                 vals=[[7, -7, 9, 1, -6, 0], [2, 2, -4, 3, 3, -5]], forward_only=True)
  helper_test_op(None, lambda x, y: torch.floor_divide(x, y), lambda x, y: x.floor_divide(y),
                 vals=[[7, -7, 9, 1], [2, 2, -4, 3]], forward_only=True)
  x, y = Tensor([7, -7, 7, -7, 2**30 + 1]), Tensor([2, 2, -2, -2, -3])
  np.testing.assert_equal((x // y * y + x % y).numpy(), x.numpy())
  np.testing.assert_equal((x // y).numpy(), [3, -4, -4, 3, -357913942])
  np.testing.assert_equal((Tensor([-7, 7]) // 2).numpy(), [-4, 3])
  np.testing.assert_equal((-7 // Tensor([2, -2])).numpy(), [-4, 3])


def test_shifts():
  helper_test_op(None, lambda x: x << 3, vals=[[1, 5, 100, 7]], forward_only=True)
  helper_test_op(None, lambda x: x >> 2, vals=[[1, 5, 100, 7]], forward_only=True)


CASTS = {
  "float_to_int32":  (dtypes.int32, torch.int32, dict(low=-50, high=50)),
  "float_to_uint8":  (dtypes.uint8, torch.uint8, dict(low=0, high=200)),
  "float_to_bool":   (dtypes.bool, torch.bool, dict(low=-1, high=1)),
  "float_to_half":   (dtypes.float16, torch.float16, {}),
  "float_to_double": (dtypes.float64, torch.float64, {}),
  "float_to_int64":  (dtypes.int64, torch.int64, dict(low=-1e6, high=1e6)),
}


@pytest.mark.parametrize("name", list(CASTS))
def test_cast(name):
  tgd, td, opts = CASTS[name]
  helper_test_op([(8, 9)], lambda x: x.to(td), lambda x: x.cast(tgd), forward_only=True, **opts)


def test_cast_backward():
  # a float->float cast passes the gradient through (as a cast back)
  helper_test_op([S], lambda x: x.to(torch.float64).exp().to(torch.float32), lambda x: x.cast(dtypes.float64).exp().cast(dtypes.float32))


def test_int_to_float_cast():
  helper_test_op(None, lambda x: x.float() / 3, lambda x: x.float() / 3, vals=[[1, -2, 3, 2 ** 20]], forward_only=True)


def test_bitcast():
  helper_test_op(None, lambda x: x.view(torch.int32), lambda x: x.bitcast(dtypes.int32), vals=[[1.0, -2.5, 0.0, math.inf]], forward_only=True)


def test_chain_fused():
  # a long elementwise chain (one kernel) with every input's gradient
  helper_test_op([S, S], lambda x, y: ((x * y).relu() + (x - y).sigmoid() * 2).tanh() / (1 + y.abs()))


def test_mul_naninf():
  helper_test_op(None, lambda x, y: x * y, vals=[[math.inf, -math.inf, math.nan, 0.0], [0.0, 2.0, 1.0, math.inf]], forward_only=True)


# Smooth functions at exactly 0 (and -0.0): the gradient there is the derivative, not a 0 from a
# sign(x) * f(|x|) formulation whose pieces both have a zero (sub)gradient at 0.
AT_ZERO = {
  "erf": (torch.erf, lambda x: x.erf()), "atan": (torch.atan, lambda x: x.atan()), "asin": (torch.asin, lambda x: x.asin()),
  "acos": (torch.acos, lambda x: x.acos()), "softplus": (F.softplus, lambda x: x.softplus()),
  "tanh": (torch.tanh, lambda x: x.tanh()), "sin": (torch.sin, lambda x: x.sin()), "tan": (torch.tan, lambda x: x.tan()),
  "sinh": (torch.sinh, lambda x: x.sinh()), "sigmoid": (torch.sigmoid, lambda x: x.sigmoid()),
  "gelu": (lambda x: F.gelu(x, approximate="tanh"), lambda x: x.gelu()), "mish": (F.mish, lambda x: x.mish()),
  "silu": (F.silu, lambda x: x.silu()), "elu": (F.elu, lambda x: x.elu()), "selu": (F.selu, lambda x: x.selu()),
  "celu": (F.celu, lambda x: x.celu()), "exp": (torch.exp, lambda x: x.exp()),
}
@pytest.mark.parametrize("name", list(AT_ZERO))
def test_gradient_at_zero(name):
  tf, gf = AT_ZERO[name]
  helper_test_op(None, tf, gf, vals=[[0.0, -0.0, 0.25, -0.25]])


def test_sign_nan():  # NaN, as NumPy and tinygrad (torch gives 0)
  assert math.isnan(Tensor([math.nan]).sign().item())
  assert math.isnan(Tensor([math.nan]).abs().item())


MORE_BINARY = {
  # Python's % and // follow the sign of the divisor (floor), on floats as torch's remainder / floor_divide
  "float_mod":      (lambda x, y: torch.remainder(x, y), lambda x, y: x % y, dict(forward_only=True)),
  "float_floordiv": (lambda x, y: torch.floor_divide(x, y), lambda x, y: x // y, dict(forward_only=True)),
  "logical_and":    (lambda x, y: (x > 0).logical_and(y > 0), lambda x, y: (x > 0).logical_and(y > 0), dict(forward_only=True)),
  "logical_or":     (lambda x, y: (x > 0).logical_or(y > 0), lambda x, y: (x > 0).logical_or(y > 0), dict(forward_only=True)),
  "logical_xor":    (lambda x, y: (x > 0).logical_xor(y > 0), lambda x, y: (x > 0).logical_xor(y > 0), dict(forward_only=True)),
  "div_rounding_floor": (lambda x, y: torch.div(x, y, rounding_mode="floor"), lambda x, y: x.div(y, rounding_mode="floor"), dict(forward_only=True)),
  "div_rounding_trunc": (lambda x, y: torch.div(x, y, rounding_mode="trunc"), lambda x, y: x.div(y, rounding_mode="trunc"), dict(forward_only=True)),
}


@pytest.mark.parametrize("name", list(MORE_BINARY))
def test_more_binary(name):
  tf, gf, opts = MORE_BINARY[name]
  helper_test_op([(8, 9), (8, 9)], tf, gf, low=-5, high=5, **opts)


def test_int_mod_python_sign():
  helper_test_op(None, lambda x, y: torch.remainder(x, y), lambda x, y: x % y, vals=[[-7, 7, 5, -5], [2, -2, 3, -3]], forward_only=True)


def test_int_div_rounding_is_exact():
  # past 2^24 a float32 quotient rounds: floor/trunc of integers must not go through it
  a, b = [2**30 + 1, -(2**30) - 1, 7, -7, 2**31 - 1, -(2**31), 5, -6], [3, 3, 2, 2, -2, 7, -1, 4]
  for mode in ("floor", "trunc"):
    helper_test_op(None, lambda x, y: torch.div(x, y, rounding_mode=mode), lambda x, y: x.div(y, rounding_mode=mode), vals=[a, b],
                   forward_only=True)
  helper_test_op(None, lambda x, y: torch.div(x, y, rounding_mode="floor"), lambda x, y: x.div(y, rounding_mode="floor"),
                 vals=[[2**40 + 3, -(2**40) - 3], [5, 5]], forward_only=True)


def test_isinf_one_sided():
  helper_test_op(None, lambda x: torch.isposinf(x), lambda x: x.isinf(detect_negative=False),
                 vals=[[1.0, math.inf, -math.inf, math.nan]], forward_only=True)
  helper_test_op(None, lambda x: torch.isneginf(x), lambda x: x.isinf(detect_positive=False),
                 vals=[[1.0, math.inf, -math.inf, math.nan]], forward_only=True)

# Bad inputs from Python raise Python exceptions (never a crash, never a C++ abort): wrong shapes,
# wrong types, out-of-range indices, unsupported NumPy arrays, item() and backward() misuse.
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tg
from tg import Tensor, dtypes

# What tg raises for a shape error (tg::Error from a shape check). Pinned: see test_shape_error_type.
ShapeError = ValueError


def test_shape_error_type():
  with pytest.raises(Exception) as e:
    Tensor.ones(2, 3).reshape(4, 2)
  assert type(e.value) is ShapeError or issubclass(type(e.value), ShapeError), type(e.value)
  assert "reshape" in str(e.value)


# ---- wrong shapes -------------------------------------------------------------------------------------

def test_reshape_incompatible():
  with pytest.raises(ShapeError, match="reshape"):
    Tensor.ones(2, 3).reshape(4, 2)


def test_reshape_two_minus_ones():
  with pytest.raises(ShapeError):
    Tensor.ones(2, 3).reshape(-1, -1)


def test_matmul_mismatch():
  with pytest.raises(ShapeError):
    Tensor.ones(3, 4).matmul(Tensor.ones(5, 2))
  with pytest.raises(ShapeError):
    Tensor.ones(3, 4) @ Tensor.ones(5, 2)


def test_matmul_scalar():
  with pytest.raises(ShapeError):
    Tensor(3.0) @ Tensor(2.0)


def test_broadcast_failure():
  with pytest.raises(ShapeError):
    Tensor.ones(3, 4) + Tensor.ones(2, 4)
  with pytest.raises(ShapeError):
    Tensor.ones(3, 4) * Tensor.ones(5)


def test_expand_failure():
  with pytest.raises(ShapeError):
    Tensor.ones(3, 2).expand(3, 4)


def test_permute_bad_order():
  with pytest.raises(ShapeError):
    Tensor.ones(2, 3).permute(0, 0)
  with pytest.raises(ShapeError):
    Tensor.ones(2, 3).permute(0, 1, 2)


def test_conv_weight_mismatch():
  # input has 3 channels, the weight expects 4
  with pytest.raises(ShapeError):
    Tensor.ones(1, 3, 8, 8).conv2d(Tensor.ones(2, 4, 3, 3))


def test_conv_groups_mismatch():
  with pytest.raises(ShapeError):
    Tensor.ones(1, 4, 8, 8).conv2d(Tensor.ones(3, 2, 3, 3), groups=2)  # 3 out channels not divisible by 2 groups


def test_cat_mismatch():
  with pytest.raises(ShapeError):
    Tensor.ones(2, 3).cat(Tensor.ones(2, 4), dim=0)


def test_stack_mismatch():
  with pytest.raises(ShapeError):
    Tensor.stack(Tensor.ones(2, 3), Tensor.ones(3, 2))


def test_where_broadcast_failure():
  with pytest.raises(ShapeError):
    (Tensor.ones(3, 4) > 0).where(Tensor.ones(2, 4), 0.0)


def test_nested_list_ragged():
  with pytest.raises(ValueError):
    Tensor([[1, 2], [3]])


# ---- wrong types --------------------------------------------------------------------------------------

def test_tensor_from_str():
  with pytest.raises(TypeError):
    Tensor("abc")


def test_tensor_from_object():
  with pytest.raises(TypeError):
    Tensor(object())


def test_tensor_from_list_of_str():
  with pytest.raises(TypeError):
    Tensor(["a", "b"])


def test_add_str():
  with pytest.raises(TypeError):
    Tensor([1.0, 2.0]) + "x"
  with pytest.raises(TypeError):
    "x" + Tensor([1.0, 2.0])


def test_mul_none():
  with pytest.raises(TypeError):
    Tensor([1.0, 2.0]) * None


def test_reshape_str():
  with pytest.raises(TypeError):
    Tensor.ones(2, 3).reshape("a")


def test_reshape_float_dim():
  with pytest.raises(TypeError):
    Tensor.ones(2, 3).reshape(3.0, 2)


def test_dtype_garbage():
  with pytest.raises(TypeError):
    Tensor([1, 2], dtype="garbage")
  with pytest.raises(TypeError):
    Tensor([1, 2], dtype=42)
  with pytest.raises(TypeError):
    Tensor.ones(2).cast(object())


def test_sum_axis_str():
  with pytest.raises(TypeError):
    Tensor.ones(2, 3).sum(axis="x")


def test_index_with_float():
  with pytest.raises(IndexError):  # as torch and NumPy
    Tensor.ones(3)[1.5]


def test_index_with_str():
  with pytest.raises(TypeError):
    Tensor.ones(3)["a"]


# ---- out-of-range indices and axes --------------------------------------------------------------------

def test_index_out_of_range():
  t = Tensor([1.0, 2.0, 3.0])
  with pytest.raises(IndexError):
    t[5]
  with pytest.raises(IndexError):
    t[-4]


def test_too_many_indices():
  with pytest.raises(IndexError):
    Tensor.ones(2, 2)[0, 0, 0]


def test_index_out_of_range_second_dim():
  with pytest.raises(IndexError):
    Tensor.ones(2, 3)[:, 3]


def test_two_ellipsis():
  with pytest.raises(IndexError):
    Tensor.ones(2, 3)[..., ...]


def test_axis_out_of_range():
  with pytest.raises(IndexError):
    Tensor.ones(2, 3).sum(axis=2)
  with pytest.raises(IndexError):
    Tensor.ones(2, 3).softmax(axis=-3)
  with pytest.raises(IndexError):
    Tensor.ones(2, 3).cumsum(axis=5)


def test_setitem_out_of_range():
  t = Tensor.zeros(3).contiguous()
  with pytest.raises(IndexError):
    t[3] = 1.0


# ---- NumPy arrays -------------------------------------------------------------------------------------

def test_numpy_non_contiguous_works():
  a = np.arange(24, dtype=np.float32).reshape(4, 6)
  for view in (a.T, a[::2, 1::3], a[:, ::-1], np.asfortranarray(a)):
    assert not view.flags.c_contiguous
    np.testing.assert_equal(Tensor(view).numpy(), np.ascontiguousarray(view))


@pytest.mark.parametrize("arr", [np.zeros(3, np.complex64), np.zeros(3, np.complex128), np.array([1, "a"], dtype=object),
                                 np.array(["2020-01-01"], dtype="datetime64[D]"), np.array(["ab", "c"]),
                                 np.zeros(2, dtype=[("a", np.int32), ("b", np.float32)])],
                         ids=["complex64", "complex128", "object", "datetime64", "unicode", "structured"])
def test_numpy_unsupported_dtype(arr):
  with pytest.raises(TypeError, match="not supported"):
    Tensor(arr)


# ---- item(), backward(), gradients --------------------------------------------------------------------

def test_item_multi_element():
  with pytest.raises(ValueError, match="item"):
    Tensor([1.0, 2.0]).item()


def test_item_empty():
  with pytest.raises(ValueError):
    Tensor.ones(0).item()


def test_backward_non_scalar():
  x = Tensor([1.0, 2.0], requires_grad=True)
  with pytest.raises(ValueError, match="scalar"):
    (x * 2).backward()


def test_backward_without_grad_inputs():
  # nothing requires grad: tinygrad raises (there is nothing to differentiate)
  with pytest.raises(ValueError):
    (Tensor([1.0, 2.0]) * 2).sum().backward()


def test_int_tensor_requires_grad_backward():
  # an integer tensor cannot carry a gradient
  with pytest.raises(TypeError):
    x = Tensor([1, 2], requires_grad=True)
    x.sum().backward()


def test_unknown_device():
  with pytest.raises(ValueError, match="NOSUCHDEVICE"):
    Tensor([1.0], device="NOSUCHDEVICE").realize()


def test_bad_arange():
  with pytest.raises(ValueError):
    Tensor.arange(0, 10, 0)


def test_negative_shape():
  with pytest.raises(ValueError):
    Tensor.ones(-1, 3)


def test_errors_are_catchable_and_state_survives():
  # after many errors, the module still works
  for _ in range(20):
    with pytest.raises(Exception):
      Tensor.ones(2, 3).reshape(7)
  np.testing.assert_equal((Tensor([1.0, 2.0]) + 1).numpy(), np.array([2.0, 3.0], np.float32))


# ---- no crash: the risky ones in a child interpreter ---------------------------------------------------

CHILD = textwrap.dedent("""
  import numpy as np, tg
  from tg import Tensor, dtypes
  cases = [
    lambda: Tensor.ones(2, 3).reshape(4, 2),
    lambda: Tensor.ones(3, 4) @ Tensor.ones(5, 2),
    lambda: Tensor("abc"),
    lambda: Tensor([1.0]) + "x",
    lambda: Tensor([1.0, 2.0, 3.0])[5],
    lambda: Tensor.ones(2, 2)[0, 0, 0],
    lambda: Tensor(np.zeros(3, np.complex64)),
    lambda: Tensor(np.array([object()], dtype=object)),
    lambda: Tensor([1.0, 2.0]).item(),
    lambda: (Tensor([1.0, 2.0], requires_grad=True) * 2).backward(),
    lambda: Tensor.ones(1, 3, 8, 8).conv2d(Tensor.ones(2, 4, 3, 3)),
    lambda: Tensor([1, 2], dtype="garbage"),
    lambda: Tensor.ones(2, 3).sum(axis=7),
    lambda: Tensor.ones(2, 3).pad(((1, 1),)),
    lambda: Tensor.ones(2, 3).shrink(((0, 5), (0, 3))),
    lambda: Tensor.ones(2, 3).expand(4, 4),
    lambda: Tensor.ones(2, 3).flip(3),
    lambda: Tensor.ones(4).gather(0, Tensor([[0]])),
    lambda: Tensor.ones(1, 1, 2, 3).max_pool2d(kernel_size=(5, 5)),
    lambda: Tensor.ones(3).topk(5),
    lambda: Tensor.ones(3).one_hot(0),
    lambda: Tensor.ones(2, 2).split([1, 5]),
    lambda: Tensor.ones(2, 3).transpose(0, 5),
  ]
  n = 0
  for i, c in enumerate(cases):
    try:
      c()
    except (TypeError, ValueError, IndexError, RuntimeError, AssertionError) as e:
      n += 1
    else:
      print("no exception from case", i)
  print("raised", n, "of", len(cases))
""")


@pytest.mark.subprocess
def test_bad_inputs_do_not_crash_interpreter():
  env = dict(os.environ)
  r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
  assert r.returncode == 0, f"child died with {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-3000:]}"
  n = CHILD.count("lambda:")
  assert f"raised {n} of {n}" in r.stdout, r.stdout + r.stderr[-2000:]


def test_int_pow_negative_method():
  with pytest.raises(ValueError, match="negative power"):
    Tensor([2]).pow(-1)


def test_int_pow_negative_operator():
  # ** is .pow: the same error (it gave 0, 1/2 truncated, before 5f33c0f)
  with pytest.raises(ValueError, match="negative power"):
    Tensor([2]) ** -1


# ---- 0-d inputs: every reduction and norm takes the axes torch takes, and refuses the rest ---------------
# (torch treats a 0-d tensor as one element along dims 0 and -1; layer_norm and batch_norm refuse it)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

_ZERO_DIM_OPS = {
  "sum": (lambda t, a, k: t.sum(a, keepdim=k), lambda x, a, k: x.sum(a, keepdim=k)),
  "prod": (lambda t, a, k: t.prod(a, keepdim=k), lambda x, a, k: x.prod(a, keepdim=k)),
  "max": (lambda t, a, k: t.max(a, keepdim=k), lambda x, a, k: x.amax(a, keepdim=k)),
  "min": (lambda t, a, k: t.min(a, keepdim=k), lambda x, a, k: x.amin(a, keepdim=k)),
  "mean": (lambda t, a, k: t.mean(a, keepdim=k), lambda x, a, k: x.mean(a, keepdim=k)),
  "var": (lambda t, a, k: t.var(a, keepdim=k), lambda x, a, k: x.var(a, keepdim=k)),
  "std": (lambda t, a, k: t.std(a, keepdim=k), lambda x, a, k: x.std(a, keepdim=k)),
  "any": (lambda t, a, k: t.any(a, keepdim=k), lambda x, a, k: x.bool().any(a, keepdim=k)),
  "all": (lambda t, a, k: t.all(a, keepdim=k), lambda x, a, k: x.bool().all(a, keepdim=k)),
  "argmax": (lambda t, a, k: t.argmax(a, keepdim=k), lambda x, a, k: x.argmax(a, keepdim=k)),
  "argmin": (lambda t, a, k: t.argmin(a, keepdim=k), lambda x, a, k: x.argmin(a, keepdim=k)),
  "logsumexp": (lambda t, a, k: t.logsumexp(a, keepdim=k), lambda x, a, k: x.logsumexp(a, keepdim=k)),
  "cumsum": (lambda t, a, k: t.cumsum(a), lambda x, a, k: x.cumsum(a)),
  "cumprod": (lambda t, a, k: t.cumprod(a), lambda x, a, k: x.cumprod(a)),
  # torch 1.13's cummax ignores the dim of a 0-d tensor (any dim passes); its dim rule is cumsum's
  "cummax": (lambda t, a, k: t.cummax(a), lambda x, a, k: x.cumsum(a) * 0 + x.cummax(a).values),
  "softmax": (lambda t, a, k: t.softmax(a), lambda x, a, k: x.softmax(a)),
  "log_softmax": (lambda t, a, k: t.log_softmax(a), lambda x, a, k: x.log_softmax(a)),
  "topk": (lambda t, a, k: t.topk(1, a)[0], lambda x, a, k: x.topk(1, a).values),
  "layernorm": (lambda t, a, k: t.layernorm(a), lambda x, a, k: F.layer_norm(x, x.shape[a:] if x.ndim else (1,))),
  "batchnorm": (lambda t, a, k: t.batchnorm(None, None, Tensor([1.0]), Tensor([2.0]), a),
                lambda x, a, k: F.batch_norm(x, torch.tensor([1.0]), torch.tensor([0.25]), eps=0.0)),
}


@pytest.mark.parametrize("op", list(_ZERO_DIM_OPS))
@pytest.mark.parametrize("axis", [0, -1, 1, -2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_zero_dim_reductions_and_norms_follow_torch(op, axis, keepdim):
  tg_fn, torch_fn = _ZERO_DIM_OPS[op]
  try:
    want = torch_fn(torch.tensor(3.0), axis, keepdim)
  except (RuntimeError, IndexError, ValueError):
    with pytest.raises((IndexError, ValueError, RuntimeError)):
      tg_fn(Tensor(3.0), axis, keepdim).numpy()
    return
  got = tg_fn(Tensor(3.0), axis, keepdim)
  assert got.shape == tuple(want.shape)
  np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("layer", ["LayerNorm", "BatchNorm", "GroupNorm", "InstanceNorm", "RMSNorm"])
def test_zero_dim_norm_layers_raise(layer):
  from tg import nn
  m = {"LayerNorm": lambda: nn.LayerNorm(1), "BatchNorm": lambda: nn.BatchNorm(1), "GroupNorm": lambda: nn.GroupNorm(1, 1),
       "InstanceNorm": lambda: nn.InstanceNorm(1), "RMSNorm": lambda: nn.RMSNorm(1)}[layer]()
  with pytest.raises((ValueError, IndexError)):
    m(Tensor(3.0)).numpy()


# ---- index tensors of any integer type keep their values; bools are 0 or 1 after every op -------------------

def test_int64_index_past_2e32_is_out_of_range():
  t = Tensor([10.0, 20.0, 30.0])
  idx = np.array([2**32 + 1, -(2**32) + 1, 1, -1], dtype=np.int64)
  np.testing.assert_equal(t[Tensor(idx)].numpy(), [0.0, 0.0, 20.0, 30.0])
  np.testing.assert_equal(t[idx].numpy(), [0.0, 0.0, 20.0, 30.0])
  np.testing.assert_equal(t[Tensor(np.array([2**64 - 1, 2], dtype=np.uint64))].numpy(), [0.0, 30.0])
  with tg.Context(CHECK_INDEX=1):
    with pytest.raises(IndexError, match="index -4294967295 out of range"):
      t[Tensor(idx)]
    with pytest.raises(IndexError, match="index 4294967297 out of range"):
      t[Tensor(idx[:1])]


def test_bitcast_to_bool_reads_any_nonzero_byte_as_true():
  b = Tensor(np.array([0, 1, 2, 255], dtype=np.uint8)).bitcast(dtypes.bool)
  np.testing.assert_equal(b.where(1.0, 0.0).numpy(), [0.0, 1.0, 1.0, 1.0])
  np.testing.assert_equal(b.numpy(), [False, True, True, True])
  assert bytes(b.numpy().view(np.uint8)) == b"\x00\x01\x01\x01"  # stored as 0 or 1
  want = torch.tensor([0, 1, 2, 255], dtype=torch.uint8).view(torch.bool)
  np.testing.assert_equal(b.logical_not().numpy(), (~want).numpy())
  s = Tensor(np.array([-1, 0, 64], dtype=np.int8)).bitcast(dtypes.bool)
  np.testing.assert_equal((s & Tensor([True, True, True])).numpy(), [True, False, True])


def test_trig_of_large_arguments_match_numpy():
  x = np.array([3000.5, -12345.25, 999999.0, 65536.0, 1e6 - 0.0625], dtype=np.float32)
  for name in ("sin", "cos", "tan"):
    want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(getattr(Tensor(x), name)().numpy(), want, rtol=3e-7, atol=0, err_msg=name)

# The exceptions tg raises are the Python types its own API documents (ValueError for shapes and values,
# IndexError, TypeError) and also what torch's users (RuntimeError) and tinygrad v0.9's users
# (AssertionError, its checks being asserts; IndexError for indices and 0-d cat) catch around the same
# mistake. Each case also checks that torch raises the type claimed for it.
import numpy as np
import pytest
import torch

import tg
from tg import Tensor
from tg.nn.state import safe_load


def test_classes():
  assert issubclass(tg.TensorError, RuntimeError) and issubclass(tg.TensorError, AssertionError)
  for cls, base in [(tg.TensorValueError, ValueError), (tg.TensorIndexError, IndexError), (tg.TensorTypeError, TypeError)]:
    assert issubclass(cls, tg.TensorError) and issubclass(cls, base)
    assert issubclass(cls, RuntimeError) and issubclass(cls, AssertionError)


def _raises_all(fn, *types):
  """fn raises an exception that is an instance of every one of types; returns it."""
  with pytest.raises(Exception) as e:
    fn()
  for t in types:
    assert isinstance(e.value, t), f"{type(e.value).__name__} is not a {t.__name__}: {e.value}"
  return e.value


SHAPE_MISTAKES = [  # (what, tg call, the same in torch)
  ("matmul", lambda: Tensor.ones(3, 4).matmul(Tensor.ones(5, 2)), lambda: torch.ones(3, 4).matmul(torch.ones(5, 2))),
  ("@", lambda: Tensor.ones(3, 4) @ Tensor.ones(5, 2), lambda: torch.ones(3, 4) @ torch.ones(5, 2)),
  ("dot", lambda: Tensor.ones(3).dot(Tensor.ones(4)), lambda: torch.ones(3).dot(torch.ones(4))),
  ("0-d matmul", lambda: Tensor(2.0) @ Tensor(3.0), lambda: torch.tensor(2.0) @ torch.tensor(3.0)),
  ("0-d dot", lambda: Tensor(2.0).dot(Tensor.ones(3)), lambda: torch.tensor(2.0).dot(torch.ones(3))),
  ("gather ranks", lambda: Tensor.ones(2, 3).gather(1, Tensor([0, 1])), lambda: torch.ones(2, 3).gather(1, torch.tensor([0, 1]))),
  ("reshape", lambda: Tensor.ones(2, 3).reshape(4, 2), lambda: torch.ones(2, 3).reshape(4, 2)),
  ("broadcast", lambda: Tensor.ones(3, 4) + Tensor.ones(2, 4), lambda: torch.ones(3, 4) + torch.ones(2, 4)),
  ("expand", lambda: Tensor.ones(3, 2).expand(3, 4), lambda: torch.ones(3, 2).expand(3, 4)),
  ("cat shapes", lambda: Tensor.ones(2, 3).cat(Tensor.ones(2, 4)), lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)])),
  ("conv channels", lambda: Tensor.ones(1, 3, 8, 8).conv2d(Tensor.ones(2, 4, 3, 3)),
   lambda: torch.nn.functional.conv2d(torch.ones(1, 3, 8, 8), torch.ones(2, 4, 3, 3))),
]


@pytest.mark.parametrize("what,call,torch_call", SHAPE_MISTAKES, ids=[w for w, _, _ in SHAPE_MISTAKES])
def test_shape_mistakes(what, call, torch_call):
  e = _raises_all(call, tg.TensorValueError, ValueError, RuntimeError, AssertionError)
  assert str(e)
  with pytest.raises(RuntimeError):
    torch_call()


INDEX_MISTAKES = [
  ("index out of range", lambda: Tensor.ones(3)[5], lambda: torch.ones(3)[5]),
  ("too many indices", lambda: Tensor.ones(2, 2)[0, 0, 0], lambda: torch.ones(2, 2)[0, 0, 0]),
  ("float index", lambda: Tensor.ones(3)[1.5], lambda: torch.ones(3)[1.5]),
  ("float tensor index", lambda: Tensor.ones(3)[Tensor([0.0, 1.0])], lambda: torch.ones(3)[torch.tensor([0.0, 1.0])]),
  ("float list index", lambda: Tensor.ones(3)[[0.5]], lambda: np.ones(3)[[0.5]]),  # NumPy's answer (torch truncates 0.5 to 0)
  ("mask shape", lambda: Tensor.ones(2, 3)[Tensor([True, False, True])], lambda: torch.ones(2, 3)[torch.tensor([True, False, True])]),
  ("sum axis", lambda: Tensor.ones(2).sum(3), lambda: torch.ones(2).sum(3)),
]


@pytest.mark.parametrize("what,call,torch_call", INDEX_MISTAKES, ids=[w for w, _, _ in INDEX_MISTAKES])
def test_index_mistakes(what, call, torch_call):
  _raises_all(call, tg.TensorIndexError, IndexError, RuntimeError, AssertionError)
  with pytest.raises(IndexError):
    torch_call()


def test_cat_zero_dim():
  # tinygrad v0.9 raises IndexError (it indexes the missing dim), torch RuntimeError: both catch ours
  _raises_all(lambda: Tensor.cat(Tensor(1.0), Tensor(2.0)), tg.TensorIndexError, IndexError, RuntimeError)
  _raises_all(lambda: Tensor.ones(2).cat(Tensor(2.0)), IndexError, RuntimeError)
  with pytest.raises(RuntimeError):
    torch.cat([torch.tensor(1.0), torch.tensor(2.0)])
  np.testing.assert_equal(Tensor.stack(Tensor(1.0), Tensor(2.0)).numpy(), [1.0, 2.0])  # stacking 0-d tensors is fine


TYPE_MISTAKES = [
  ("bitwise on floats", lambda: Tensor.ones(2) & Tensor.ones(2), lambda: torch.ones(2) & torch.ones(2)),
  ("requires_grad on ints", lambda: Tensor([1, 2]).requires_grad_(), lambda: torch.tensor([1, 2]).requires_grad_()),
  ("gather float index", lambda: Tensor.ones(2, 3).gather(1, Tensor([[0.0]])), lambda: torch.ones(2, 3).gather(1, torch.tensor([[0.0]]))),
]


@pytest.mark.parametrize("what,call,torch_call", TYPE_MISTAKES, ids=[w for w, _, _ in TYPE_MISTAKES])
def test_type_mistakes(what, call, torch_call):
  _raises_all(call, tg.TensorTypeError, TypeError, RuntimeError, AssertionError)
  with pytest.raises(RuntimeError):
    torch_call()


def test_item_of_many():
  _raises_all(lambda: Tensor.ones(2).item(), tg.TensorValueError, ValueError, RuntimeError)
  with pytest.raises(ValueError):
    torch.ones(2).item()


def test_binding_checks_are_tensor_errors():
  # checks made while reading Python arguments raise the same classes as the C++ API's
  _raises_all(lambda: Tensor.ones(2, 3).reshape(None, None, None), tg.TensorValueError, RuntimeError)
  _raises_all(lambda: Tensor.ones(2, 3).pad(((1, 1),), mode="reflect"), tg.TensorValueError)
  _raises_all(lambda: Tensor.ones(3)[::0], ValueError, RuntimeError)
  _raises_all(lambda: Tensor.ones(2).sum(axis=2 ** 40), tg.TensorIndexError)


def test_message_kept():
  with pytest.raises(RuntimeError, match=r"matmul: cannot multiply shapes \(3,4\) and \(5,2\)"):
    Tensor.ones(3, 4) @ Tensor.ones(5, 2)
  with pytest.raises(AssertionError, match="matmul"):
    Tensor.ones(3, 4) @ Tensor.ones(5, 2)


def test_other_kinds_unchanged():
  with pytest.raises(OSError):
    safe_load("/nonexistent/file.safetensors")
  assert issubclass(tg.JitError, RuntimeError)

# Index forms that tinygrad programs and torch accept: tuples inside an index and inside a list of indices
# (read as torch reads them), bare and 0-d bool masks, and the IndexError for float indices. Forward values
# and gradients against torch; writes (t[idx] = v) against torch too.
import numpy as np
import pytest
import torch

from helpers import helper_test_op
from tg import Tensor

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

# (name, index builder given a module `m` that makes index tensors: torch.tensor or tg.Tensor)
CASES = [
  ("tuple_first", lambda m: ((1, 0), m([0, 1]), m([2, 3]))),
  ("tuple_of_tuples", lambda m: ((2,), (1,), (0,))),  # three index arrays of shape (1,), one per dim
  ("list_tensor_and_tuple", lambda m: [m([0, 1]), (1, 1)]),
  ("list_list_and_tuple", lambda m: [[0, 1], (1, 1)]),
  ("list_int_and_tuple", lambda m: [0, (1, 1)]),
  ("tuple_in_middle", lambda m: (slice(None), (2, 0, 1))),
  ("nested_tuple_2d", lambda m: ((0, 1), ((0, 2), (1, 1)))),
  ("tuple_with_ellipsis", lambda m: (Ellipsis, (3, 0))),
  ("tuple_with_none", lambda m: (None, (1, 0), slice(1, 3))),
  ("bare_true", lambda m: True),
  ("bare_false", lambda m: False),
  ("int_then_false", lambda m: (0, False)),
  ("ellipsis_true", lambda m: (Ellipsis, True)),
  ("bool_tensor_0d", lambda m: m(True)),
  ("bool_tensor_0d_false", lambda m: (1, m(False))),
  ("list_of_bools", lambda m: [True, False]),
]


@pytest.mark.parametrize("name,idx", CASES, ids=[c[0] for c in CASES])
def test_getitem_forms(name, idx):
  x = X if name != "tuple_of_tuples" else np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  want = torch.tensor(x)[idx(torch.tensor)]
  got = Tensor(x)[idx(Tensor)]
  assert got.shape == tuple(want.shape), (got.shape, want.shape)
  np.testing.assert_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name,idx", [c for c in CASES if c[0] in ("tuple_first", "list_tensor_and_tuple", "nested_tuple_2d", "bare_true")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_getitem_forms_backward(name, idx):
  helper_test_op([(2, 3, 4)], lambda x: x[idx(torch.tensor)], lambda x: x[idx(Tensor)])


@pytest.mark.parametrize("name,idx", [c for c in CASES if c[0] in ("tuple_first", "list_int_and_tuple", "tuple_in_middle", "bare_true",
                                                                    "bare_false", "int_then_false")], ids=lambda c: c if isinstance(c, str) else "")
def test_setitem_forms(name, idx):
  want = torch.tensor(X)
  want[idx(torch.tensor)] = -1.0
  got = Tensor(X)
  got[idx(Tensor)] = -1.0
  np.testing.assert_equal(got.numpy(), want.numpy())


def test_numpy_agrees_on_tuples():
  # the forms NumPy and torch read the same way
  for idx in [((1, 0), [0, 1], [2, 3]), ((1,), (2,), (3,)), (slice(None), (2, 0, 1))]:
    np.testing.assert_equal(Tensor(X)[idx].numpy(), X[idx])


@pytest.mark.parametrize("idx", [1.5, [0.5], Tensor([0.0, 1.0]), Tensor([[1.0]]), Tensor(1.0), (0, 1.0)],
                         ids=["float", "float_list", "float_tensor", "float_tensor_2d", "float_tensor_0d", "float_in_tuple"])
def test_float_index_is_index_error(idx):
  with pytest.raises(IndexError):
    Tensor(X)[idx]
  with pytest.raises(IndexError):
    t = Tensor(X)
    t[idx] = 0.0


def test_float_tensor_index_torch_agrees():
  with pytest.raises(IndexError):
    torch.tensor(X)[torch.tensor([0.0, 1.0])]


def test_bool_mask_shape_mismatch_is_index_error():
  with pytest.raises(IndexError):
    Tensor(X)[Tensor([True, False, True])]
  with pytest.raises(IndexError):
    torch.tensor(X)[torch.tensor([True, False, True])]


def test_long_list_is_one_index():
  # torch reads a list of 32 or more entries as one index tensor, even holding sequences
  idx = [[0, 1]] * 32
  want = torch.tensor(X)[idx]
  got = Tensor(X)[idx]
  assert got.shape == tuple(want.shape)
  np.testing.assert_equal(got.numpy(), want.numpy())

# Tensor.einsum against torch.einsum: forward values and the gradient of every operand, for torch's
# formula forms (explicit and implicit outputs, transposes, traces and diagonals, outer products, "...",
# broadcasting size-1 dims, three operands), its errors, and that a matmul-shaped formula runs as the same
# one kernel as matmul.
import numpy as np
import pytest
import torch

from helpers import helper_test_op
import tg
from tg import Tensor, GlobalCounters

FORMULAS = [
  ("ij,jk->ik", [(3, 4), (4, 5)]),
  ("ij,jk", [(3, 4), (4, 5)]),
  ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
  ("ij->ji", [(3, 4)]),
  ("ij->", [(3, 4)]),
  ("ij->j", [(3, 4)]),
  ("ii->i", [(4, 4)]),
  ("ii", [(4, 4)]),
  ("i,j->ij", [(3,), (4,)]),
  ("i,i->", [(5,), (5,)]),
  ("i,i", [(5,), (5,)]),
  ("ij,ij->ij", [(3, 4), (3, 4)]),
  ("ij,ij->", [(3, 4), (3, 4)]),
  ("ij,kj->ik", [(3, 4), (5, 4)]),
  ("ji,jk->ik", [(4, 3), (4, 5)]),
  ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
  ("...ij->...ji", [(2, 3, 4)]),
  ("i...->...", [(3, 2, 4)]),
  ("...i,...i", [(2, 1, 3), (5, 3)]),
  ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]),
  ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
  ("i,j,k->ijk", [(2,), (3,), (4,)]),
  ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
  ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]),
  ("iij->j", [(3, 3, 4)]),
  ("bii->bi", [(2, 3, 3)]),
  ("bii->b", [(2, 3, 3)]),
  ("ijk->kji", [(2, 3, 4)]),
  ("ij,j->i", [(3, 4), (4,)]),
  ("i,ij->j", [(3,), (3, 4)]),
  ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
  ("bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)]),
  ("Ab,bC->AC", [(3, 4), (4, 2)]),
  ("i,i->i", [(3,), (1,)]),
  (" ij , jk -> ik ", [(3, 4), (4, 5)]),
  ("ij->ij", [(3, 4)]),
]


@pytest.mark.parametrize("formula,shapes", FORMULAS, ids=[f for f, _ in FORMULAS])
def test_einsum_vs_torch(formula, shapes):
  helper_test_op(shapes, lambda *xs: torch.einsum(formula, *xs), lambda *xs: Tensor.einsum(formula, *xs), atol=1e-5)


def test_einsum_operands_as_list():
  helper_test_op([(3, 4), (4, 5)], lambda a, b: torch.einsum("ij,jk->ik", [a, b]), lambda a, b: Tensor.einsum("ij,jk->ik", [a, b]), atol=1e-5)


def test_einsum_ints():
  a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(12, dtype=np.int32).reshape(3, 4)
  got = Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(b))
  np.testing.assert_equal(got.numpy(), a @ b)
  assert got.dtype == tg.dtypes.int32


def test_einsum_acc_dtype():
  a = Tensor([[1, 2], [3, 4]])
  got = Tensor.einsum("ij,ij->", a, a, acc_dtype=tg.dtypes.float32)
  assert got.dtype == tg.dtypes.float32 and got.item() == 30.0


@pytest.mark.parametrize("formula,shapes", [("ij,jk->ik", [(16, 8), (8, 12)]), ("bij,bjk->bik", [(2, 16, 8), (2, 8, 12)]),
                                             ("ij,kj->ik", [(16, 8), (12, 8)])])
def test_einsum_matmul_is_one_kernel(formula, shapes):
  xs = [Tensor.rand(*s).realize() for s in shapes]
  GlobalCounters.reset()
  out = Tensor.einsum(formula, *xs).realize()
  assert GlobalCounters.kernel_count == 1, f"{formula}: {GlobalCounters.kernel_count} kernels"
  want = torch.einsum(formula, *[torch.tensor(x.numpy()) for x in xs]).numpy()
  np.testing.assert_allclose(out.numpy(), want, atol=1e-5, rtol=1e-5)


# ---- errors: tg.TensorValueError, also what torch (RuntimeError) and tinygrad (ValueError/AssertionError) raise ----

@pytest.mark.parametrize("formula,shapes,match", [
  ("ij,jk->ik", [(3, 4)], "2 operands"),                      # fewer operands than the formula names
  ("ij->ij", [(3, 4), (3, 4)], "1 operand"),                   # more
  ("ij,jk->ik", [(3, 4), (5, 6)], "does not broadcast"),       # sizes of j differ
  ("ii->i", [(3, 4)], "sizes don't match"),                    # a diagonal of a non-square pair
  ("ijk->i", [(3, 4)], "dims"),                                # more subscripts than dims
  ("ij->i", [(3, 4, 5)], "dims"),                              # fewer, without an ellipsis
  ("ij->k", [(3, 4)], "does not appear"),                      # an output subscript no input has
  ("ij->ii", [(3, 3)], "more than once"),                      # repeated in the output
  ("i1->i", [(3, 4)], "invalid subscript"),                    # not a letter
  ("i.j->i", [(3, 4)], "ellipsis"),                            # a lone dot
  ("...i...->i", [(3, 4)], "more than one ellipsis"),
  ("ij->i->j", [(3, 4)], "more than one"),
])
def test_einsum_errors(formula, shapes, match):
  xs = [Tensor.ones(*s) for s in shapes]
  with pytest.raises(tg.TensorValueError, match=match) as e:
    Tensor.einsum(formula, *xs)
  assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
  assert str(e.value).startswith("einsum:")
  with pytest.raises(RuntimeError):  # and torch raises RuntimeError for each
    torch.einsum(formula, *[torch.ones(*s) for s in shapes])


def test_einsum_no_operands():
  with pytest.raises(ValueError, match="einsum"):
    Tensor.einsum("ij")
  with pytest.raises(TypeError):
    Tensor.einsum("ij,jk", Tensor.ones(2, 2), 3)

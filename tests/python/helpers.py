# helper_test_op: one op on the same random inputs in PyTorch and in tg, forward values and (unless
# forward_only) the gradient of every input after backward() of the output's sum, at tinygrad's
# tolerances (test/test_ops.py): forward atol 1e-6 rtol 1e-3, gradients atol 1e-4 rtol 1e-3.
import numpy as np
import torch

import tg

# torch's dtypes the inputs and outputs may have -> NumPy's (what tg's .numpy() gives)
_TORCH_TO_NP = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16,
                torch.int32: np.int32, torch.int64: np.int64, torch.int16: np.int16, torch.int8: np.int8,
                torch.uint8: np.uint8, torch.bool: np.bool_}


def prepare_inputs(shps, vals=None, low=-2.0, high=2.0, forward_only=False):
  """Torch leaves and tg tensors holding the same data: uniform floats in [low, high) for each shape in
  `shps`, or the given `vals` (Python ints become int32, as tinygrad's tests do)."""
  if shps is None:
    ts = [torch.tensor(v) for v in vals]
    ts = [t.type(torch.int32) if t.dtype == torch.int64 else t for t in ts]
  else:
    ts = [torch.tensor(np.random.uniform(low=low, high=high, size=s).astype(np.float32)) for s in shps]
  grad = not forward_only
  if grad: ts = [t.requires_grad_(True) if t.is_floating_point() else t for t in ts]
  tst = [tg.Tensor(t.detach().numpy(), requires_grad=(grad and t.is_floating_point())) for t in ts]
  return ts, tst


def compare(what, got, want, atol, rtol):
  got, want = np.asarray(got), np.asarray(want)
  assert got.shape == want.shape, f"{what}: shape mismatch: tg={got.shape} torch={want.shape}"
  assert got.dtype == want.dtype, f"{what}: dtype mismatch: tg={got.dtype} torch={want.dtype}"
  if np.issubdtype(got.dtype, np.floating):
    np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=what)
  else:
    np.testing.assert_equal(got, want, err_msg=what)


def _outputs(x):
  return list(x) if isinstance(x, (tuple, list)) else [x]


def helper_test_op(shps, torch_fxn, tg_fxn=None, atol=1e-6, rtol=1e-3, grad_atol=1e-4, grad_rtol=1e-3,
                   forward_only=False, vals=None, low=-2.0, high=2.0):
  """torch_fxn(*torch_inputs) against tg_fxn(*tg_inputs) (tg_fxn defaults to torch_fxn: many ops have the
  same spelling). Either may return a tuple of tensors (topk); the backward pass uses the first."""
  if tg_fxn is None: tg_fxn = torch_fxn
  ts, tst = prepare_inputs(shps, vals, low, high, forward_only)

  want = _outputs(torch_fxn(*ts))
  got = _outputs(tg_fxn(*tst))
  assert len(got) == len(want), f"tg returned {len(got)} outputs, torch {len(want)}"
  for i, (g, w) in enumerate(zip(got, want)):
    assert isinstance(g, tg.Tensor), f"output {i}: tg returned {type(g).__name__}, not a tg.Tensor"
    compare(f"forward output {i}", g.numpy(), w.detach().numpy(), atol, rtol)

  if forward_only or not any(t.requires_grad for t in ts): return
  diff = [i for i, t in enumerate(ts) if t.requires_grad]
  tout = _outputs(torch_fxn(*ts))[0]
  torch_grads = torch.autograd.grad(tout.sum(), [ts[i] for i in diff], allow_unused=True)
  _outputs(tg_fxn(*tst))[0].sum().backward()
  for i, tgrad in zip(diff, torch_grads):
    want_g = np.zeros(tuple(ts[i].shape), np.float32) if tgrad is None else tgrad.detach().numpy()
    g = tst[i].grad
    if g is None:
      assert not np.any(want_g), f"input {i}: tg has no gradient, torch's is nonzero"
      continue
    compare(f"gradient of input {i}", g.numpy(), want_g, grad_atol, grad_rtol)


def np_dtype(t):
  """The NumPy dtype of a torch tensor (for building expected values)."""
  return _TORCH_TO_NP[t.dtype]

"""tg.Tensor: the C++ Tensor (tg._tg.Tensor), plus tinygrad's training/inference scopes.

`Tensor.training` and `Tensor.no_grad` are class properties backed by C++'s per-thread flags (as torch's
grad mode: setting them in one Python thread does not change another's). `Tensor.train(mode=True)` and
`Tensor.test(mode=True)` set them for a `with` block or a decorated function, as tinygrad's do.
"""
import functools
from contextlib import ContextDecorator

from tg._tg import Tensor


class _train(ContextDecorator):
  """with Tensor.train(): ... -- Tensor.training is `mode` inside (dropout and BatchNorm read it)."""
  def __init__(self, mode: bool = True): self.mode = mode
  def __enter__(self): self.prev, Tensor.training = Tensor.training, self.mode
  def __exit__(self, *exc): Tensor.training = self.prev


class _test(ContextDecorator):
  """with Tensor.test(): ... -- Tensor.no_grad is `mode` inside (no graph for backward is built)."""
  def __init__(self, mode: bool = True): self.mode = mode
  def __enter__(self): self.prev, Tensor.no_grad = Tensor.no_grad, self.mode
  def __exit__(self, *exc): Tensor.no_grad = self.prev


def _sequential(self, ll):
  """self through each callable of ll in turn (tinygrad's Tensor.sequential)."""
  return functools.reduce(lambda x, f: f(x), ll, self)


def _to_(self, device):
  """Moves this tensor's data to `device` in place (tinygrad's to_): every reference to it sees the moved data."""
  return self.replace(self.detach().to(device))


Tensor.train = _train
Tensor.test = _test
Tensor.sequential = _sequential
Tensor.to_ = _to_

__all__ = ["Tensor"]

"""tg.Tensor: the C++ Tensor (tg._tg.Tensor), plus tinygrad's training/inference scopes.

`Tensor.training` and `Tensor.no_grad` are class properties backed by C++'s per-thread flags (as torch's
grad mode: setting them in one Python thread does not change another's). `Tensor.train(mode=True)` and
`Tensor.test(mode=True)` (also named `inference_mode`, tinygrad v0.9's name) set them for a `with` block
or a decorated function, as tinygrad's do.
"""
import functools
from contextlib import ContextDecorator

from tg._tg import Device, Tensor


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


class _inference_mode(_test):
  """tinygrad v0.9's name for the same scope as Tensor.test: Tensor.no_grad is `mode` inside."""


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
Tensor.inference_mode = _inference_mode

# tinygrad gives Tensor a method per device it knows (t.clang(), t.cuda()); ours are named after the
# devices tg has, so a program naming one of them keeps working and one naming another fails loudly.
for _dev in Device.backends():
  if not hasattr(Tensor, _dev.lower()): setattr(Tensor, _dev.lower(), functools.partialmethod(Tensor.to, _dev))
del _dev

__all__ = ["Tensor"]

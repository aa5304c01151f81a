"""tg.jit: TinyJit, tinygrad's decorator, over the C++ TinyJit (include/tg/jit.h).

  @TinyJit
  def step(x, y): ...; return loss          # loss = step(x, y): warm-up, capture, then replays

The Tensor arguments (positional, keyword in name order, and inside lists, tuples and dicts) are the inputs;
other arguments are part of the capture, as in any tracing JIT. The function returns Tensors, in any
structure of tuples, lists and dicts, or None. What cannot be replayed raises JitError (a RuntimeError).
"""
import functools
import inspect

from tg._tg import JitError, _TinyJit
from tg.tensor import Tensor


def _tensors_in(x, out):
  if isinstance(x, Tensor): out.append(x)
  elif isinstance(x, (list, tuple)):
    for y in x: _tensors_in(y, out)
  elif isinstance(x, dict):
    for k in sorted(x): _tensors_in(x[k], out)
  return out


def _flatten_return(x, name):
  """(the Tensors in x, a function that rebuilds x's structure from new Tensors)"""
  if x is None: return [], lambda ts: None
  if isinstance(x, Tensor): return [x], lambda ts: ts[0]
  if isinstance(x, (list, tuple)):
    parts = [_flatten_return(y, name) for y in x]
    sizes = [len(p[0]) for p in parts]
    def rebuild(ts, parts=parts, sizes=sizes, kind=type(x)):
      out, i = [], 0
      for (_, r), n in zip(parts, sizes): out.append(r(ts[i:i + n])); i += n
      return kind(out)
    return [t for p in parts for t in p[0]], rebuild
  if isinstance(x, dict):
    keys = list(x)
    flat, rebuild_values = _flatten_return([x[k] for k in keys], name)
    return flat, lambda ts: dict(zip(keys, rebuild_values(ts)))
  raise JitError(f"{name}: returned a {type(x).__name__}, not a Tensor; a replay cannot compute it (return Tensors, "
                 "tuples, lists or dicts of them)")


class TinyJit:
  def __init__(self, fxn, name=None):
    self.fxn = fxn
    self.name = name or getattr(fxn, "__name__", "TinyJit")
    self._jit = _TinyJit(self._run, self.name)
    self._call, self._rebuild = None, None
    try:
      self._signature = inspect.signature(fxn)
    except (TypeError, ValueError):  # a builtin: arguments in the order given
      self._signature = None
    functools.update_wrapper(self, fxn)

  def __get__(self, obj, objtype=None):
    # a method: one capture per instance (a capture bakes in its instance: tinygrad shares one per class)
    if obj is None: return self
    key = f"__tinyjit_{id(self)}"
    jits = getattr(obj, "__dict__", None)
    if jits is None: return functools.partial(self.__call__, obj)
    if key not in jits: jits[key] = TinyJit(self.fxn.__get__(obj, objtype), self.name)
    return jits[key]

  @property
  def cnt(self) -> int: return self._jit.cnt

  @property
  def captured_kernels(self) -> int: return self._jit.captured_kernels

  def reset(self):
    self._jit.reset()
    self._rebuild = None

  def _run(self, inputs):  # the C++ side runs the function: warm-up and capture
    args, kwargs = self._call
    flat, self._rebuild = _flatten_return(self.fxn(*args, **kwargs), self.name)
    return flat

  def _inputs(self, args, kwargs):
    # positional arguments only (the usual replay): in the parameters' order already, as binding them would
    # say (a replay's fixed cost was half signature binding)
    if not kwargs:
      return list(args) if all(isinstance(x, Tensor) for x in args) else _tensors_in(list(args), [])
    # by parameter, in the signature's order: f(a, b) and f(b=.., a=..) pass the same inputs in the same order
    if self._signature is not None:
      try:
        return _tensors_in(list(self._signature.bind(*args, **kwargs).arguments.values()), [])
      except TypeError:
        pass  # the call itself will raise Python's error for these arguments
    return _tensors_in([list(args), kwargs], [])

  def __call__(self, *args, **kwargs):
    self._call = (args, kwargs)
    try:
      flat = self._jit(self._inputs(args, kwargs))
    finally:
      self._call = None
    return self._rebuild(flat)


__all__ = ["TinyJit", "JitError"]

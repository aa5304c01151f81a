"""tg.helpers: settings and counters with tinygrad's names.

  with Context(DEBUG=2, NOOPT=1): ...     scoped overrides of the C++ ContextVars (unknown names: ValueError)
  DEBUG.value, BEAM.value ...             the ContextVars themselves
  GlobalCounters.kernel_count ...         kernel_count, global_ops, global_mem, time_sum_s; reset(); also read-only
                                          mem_used/live/peak, schedules, schedule_hits, lowered, compiles
  getenv("KEY", default)                  the environment variable as the type of `default`
"""
import functools
import operator
import os

from tg._tg import Context, ContextVar, GlobalCounters, _ProgressBar, context_var  # noqa: F401

DEBUG, BEAM, NOOPT, CACHELEVEL, GRAPH, CHECK_INDEX, VIZ = (context_var(k) for k in ("DEBUG", "BEAM", "NOOPT", "CACHELEVEL", "GRAPH",
                                                                                      "CHECK_INDEX", "VIZ"))


@functools.lru_cache(maxsize=None)
def getenv(key: str, default=0):
  """os.environ[key] converted to the type of `default` (an int by default), or `default` when unset."""
  return type(default)(os.getenv(key, default))


def prod(x, start=1):
  """The product of an iterable (1 for an empty one)."""
  return functools.reduce(operator.mul, x, start)


def dedup(x):
  """The items of x without repeats, in their first order."""
  return list(dict.fromkeys(x))


def flatten(x):
  """One level of nesting removed: [[1, 2], [3]] -> [1, 2, 3]."""
  return [item for sublist in x for item in sublist]


def argfix(*x):
  """f(1, 2) and f((1, 2)) alike: the arguments as one tuple."""
  if x and isinstance(x[0], (tuple, list)):
    if len(x) != 1: raise ValueError(f"bad arg {x}")
    return tuple(x[0])
  return x


class tqdm:
  """tinygrad's tqdm over the C++ progress bar (include/tg/progress.h): iterate it, or update() it by hand.
  On a terminal the line is redrawn in place; otherwise plain lines, at most one a second."""
  def __init__(self, iterable=None, desc: str = "", total=None):
    self.iterable = iterable
    self.total = total if total is not None else (len(iterable) if iterable is not None else 0)
    self._bar = _ProgressBar(self.total, desc)
  def __iter__(self):
    try:
      for x in self.iterable:
        yield x
        self._bar.update(1)
    finally:
      self.close()
  def update(self, n: int = 1): self._bar.update(n)
  def set_description(self, desc: str = ""): self._bar.set_description(desc)
  def set_postfix_str(self, text: str = ""): self._bar.set_postfix(text)
  def close(self): self._bar.close()
  def __enter__(self): return self
  def __exit__(self, *exc): self.close()


def trange(n: int, **kwargs) -> tqdm:
  """tqdm(range(n))."""
  return tqdm(range(n), total=n, **kwargs)


__all__ = ["Context", "ContextVar", "GlobalCounters", "getenv", "prod", "dedup", "flatten", "argfix", "tqdm", "trange",
           "DEBUG", "BEAM", "NOOPT", "CACHELEVEL", "GRAPH", "CHECK_INDEX", "VIZ"]

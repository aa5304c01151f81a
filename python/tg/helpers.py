"""tg.helpers: settings and counters with tinygrad's names.

  with Context(DEBUG=2, NOOPT=1): ...     scoped overrides of the C++ ContextVars (unknown names: ValueError)
  DEBUG.value, BEAM.value ...             the ContextVars themselves
  GlobalCounters.kernel_count ...         kernel_count, global_ops, global_mem, time_sum_s; reset()
  getenv("KEY", default)                  the environment variable as the type of `default`
"""
import functools
import operator
import os

from tg._tg import Context, ContextVar, GlobalCounters, context_var  # noqa: F401

DEBUG, BEAM, NOOPT, CACHELEVEL, GRAPH, CHECK_INDEX = (context_var(k) for k in ("DEBUG", "BEAM", "NOOPT", "CACHELEVEL", "GRAPH", "CHECK_INDEX"))


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


__all__ = ["Context", "ContextVar", "GlobalCounters", "getenv", "prod", "dedup", "flatten", "argfix",
           "DEBUG", "BEAM", "NOOPT", "CACHELEVEL", "GRAPH", "CHECK_INDEX"]

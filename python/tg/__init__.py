"""tg: tinygrad's Python API over tinygrad.cpp.

A tinygrad program runs with its imports changed (`from tinygrad import Tensor` -> `from tg import Tensor`).
Tensor and everything that computes are C++ (the extension tg._tg); the nn layers, the walking of a model's
attributes for its state, and the dtypes namespace are Python, here.
"""
from tg.tensor import Tensor                                    # noqa: F401
from tg.dtype import dtypes, DType                              # noqa: F401
from tg.helpers import Context, GlobalCounters, getenv          # noqa: F401
from tg.device import Device                                    # noqa: F401
from tg.jit import TinyJit, JitError                            # noqa: F401
# What tg raises for a user's mistake: ValueError/IndexError/TypeError that are also RuntimeError (torch's
# type) and AssertionError (tinygrad v0.9's), so code written for either catches them.
from tg._tg import TensorError, TensorValueError, TensorIndexError, TensorTypeError  # noqa: F401

__all__ = ["Tensor", "dtypes", "DType", "Context", "GlobalCounters", "getenv", "Device", "TinyJit", "JitError",
           "TensorError", "TensorValueError", "TensorIndexError", "TensorTypeError"]

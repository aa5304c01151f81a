"""tg.dtypes: the scalar dtypes under tinygrad's names, and the NumPy mapping.

A DType (C++) has .itemsize, .name, .np (the NumPy dtype) and compares by value. `dtypes.default_float`
and `dtypes.default_int` are float32 and int32, as in tinygrad.
"""
from tg import _tg
from tg._tg import DType, least_upper_dtype, least_upper_float  # noqa: F401


class dtypes:
  """Every scalar dtype as an attribute (dtypes.float32, dtypes.int8, dtypes.bool...) and the tests on them."""
  @staticmethod
  def is_float(x: DType) -> bool: return x.is_float()
  @staticmethod
  def is_int(x: DType) -> bool: return x.is_int()
  @staticmethod
  def is_unsigned(x: DType) -> bool: return x.is_unsigned()
  @staticmethod
  def is_bool(x: DType) -> bool: return x.is_bool()
  @staticmethod
  def from_py(x) -> DType:
    """The dtype tinygrad gives a Python value: float -> default_float, bool -> bool, int -> default_int."""
    if isinstance(x, float): return dtypes.default_float
    if isinstance(x, bool): return dtypes.bool
    if isinstance(x, int): return dtypes.default_int
    if isinstance(x, (list, tuple)): return least_upper_dtype(*[dtypes.from_py(v) for v in x]) if x else dtypes.default_float
    raise TypeError(f"dtypes.from_py: no dtype for {type(x).__name__}")
  @staticmethod
  def from_np(np_dtype) -> DType: return _tg.dtype_from_numpy(np_dtype)
  @staticmethod
  def fields() -> dict: return {d.name: d for d in _tg.all_dtypes()}


for _d in _tg.all_dtypes(): setattr(dtypes, _d.name, _d)
dtypes.half, dtypes.float, dtypes.double = dtypes.float16, dtypes.float32, dtypes.float64
dtypes.char, dtypes.uchar, dtypes.short, dtypes.ushort = dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16
dtypes.int, dtypes.uint, dtypes.long, dtypes.ulong = dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64
dtypes.default_float, dtypes.default_int = dtypes.float32, dtypes.int32


def _to_np_dtype(dtype: DType):
  """The NumPy dtype of a tg dtype (tinygrad's name for it)."""
  return dtype.np


def _from_np_dtype(np_dtype) -> DType:
  """The tg dtype of a NumPy dtype; TypeError for kinds tg does not have (complex, object, str...)."""
  return _tg.dtype_from_numpy(np_dtype)


__all__ = ["DType", "dtypes", "least_upper_dtype", "least_upper_float"]

"""tg.nn.state: a model's tensors by name, safetensors files and torch.save's files (tinygrad's nn/state.py).

get_state_dict walks any Python object as tinygrad does -- a Tensor is a leaf; an object's __dict__,
a namedtuple, a dict or a list/tuple are walked, their keys/indices joined by "." -- so a user's own
classes of layers need no registration: `get_parameters(model)` finds every Tensor attribute.
"""
import os
from collections import OrderedDict
from typing import Any, Dict, List, Optional

from tg import _tg
from tg._tg import TensorValueError
from tg.helpers import DEBUG
from tg.tensor import Tensor


def get_state_dict(obj: Any, prefix: str = "") -> Dict[str, Tensor]:
  """Every Tensor reachable from obj's attributes, lists, tuples and dicts, by dotted name ("l1.weight", "layers.0.bias")."""
  if isinstance(obj, Tensor): return {prefix.strip("."): obj}
  if hasattr(obj, "_asdict"): return get_state_dict(obj._asdict(), prefix)  # namedtuple
  if isinstance(obj, OrderedDict): return get_state_dict(dict(obj), prefix)
  if hasattr(obj, "__dict__") and not isinstance(obj, type): return get_state_dict(obj.__dict__, prefix)
  state: Dict[str, Tensor] = {}
  if isinstance(obj, (list, tuple)):
    for i, x in enumerate(obj): state.update(get_state_dict(x, f"{prefix}{i}."))
  elif isinstance(obj, dict):
    for k, v in obj.items(): state.update(get_state_dict(v, f"{prefix}{k}."))
  return state


def get_parameters(obj: Any) -> List[Tensor]:
  """Every Tensor of obj (parameters and state such as running statistics), as get_state_dict finds them."""
  return list(get_state_dict(obj).values())


def load_state_dict(model: Any, state_dict: Dict[str, Tensor], strict: bool = True, verbose: bool = True, consume: bool = False) -> None:
  """Copies state_dict[name] into the model's tensor of that name, in place (every reference sees the new data),
  cast to its dtype and moved to its device, then realizes them all in one schedule.

  strict: a name the model has but state_dict lacks is a KeyError (without strict it is skipped). A shape
  mismatch is a TensorValueError (a ValueError and RuntimeError) naming the tensor; () and (1,) are taken for
  each other (a scalar such as BatchNorm's num_batches_tracked). Nothing changes unless every check passes. Names in
  state_dict the model lacks are ignored (listed with DEBUG>=1). `verbose` is accepted for tinygrad's
  signature (there is no progress bar); consume deletes each loaded entry from state_dict."""
  model_state = get_state_dict(model)
  if DEBUG.value >= 1 and (unused := set(state_dict) - set(model_state)): print(f"load_state_dict: unused weights in state_dict: {sorted(unused)}")
  todo = []
  for name, v in model_state.items():
    if name not in state_dict:
      if strict: raise KeyError(f"load_state_dict: '{name}' is missing from the state_dict")
      continue
    src = state_dict[name]
    if not isinstance(src, Tensor): raise TypeError(f"load_state_dict: '{name}' is a {type(src).__name__}, not a Tensor")
    if src.shape != v.shape:
      # a scalar saved as () or (1,) (torch's BatchNorm num_batches_tracked is (), tinygrad v0.9's (1,)): as tinygrad, reshaped
      if {src.shape, v.shape} == {(), (1,)}: src = src.reshape(v.shape)
      else: raise TensorValueError(f"load_state_dict: shape mismatch in '{name}': the model has {v.shape}, the state_dict {src.shape}")
    todo.append((name, v, src))
  for name, v, src in todo:
    v.assign(src.to(v.device).cast(v.dtype) if src.dtype != v.dtype or src.device != v.device else src)
    if consume: del state_dict[name]
  if todo: Tensor.corealize([v for _, v, _ in todo])


def safe_load(fn) -> Dict[str, Tensor]:
  """The tensors of a .safetensors file by name (BF16 loads as float32). A malformed file is a ValueError."""
  return _tg.safe_load(os.fspath(fn))


def safe_save(tensors: Dict[str, Tensor], fn, metadata: Optional[Dict[str, str]] = None) -> None:
  """Writes tensors (realized) to a .safetensors file, with an optional "__metadata__" string map."""
  _tg.safe_save(tensors, os.fspath(fn), metadata or {})


def torch_load(fn) -> Any:
  """The object a PyTorch .pth/.pt file holds (torch.save's zip archive or its legacy format), its tensors as tg
  Tensors on the default device: for a state dict, {name: Tensor}. The pickle is read by tg's own reader of
  the subset torch writes, which runs nothing from the file: a file naming any other function or class (a
  pickled nn.Module, or a malicious pickle), and a truncated or malformed one, raise a TensorValueError
  (a ValueError and RuntimeError) naming the file and the problem."""
  return _tg.torch_load(os.fspath(fn))


def safe_load_metadata(fn) -> Dict[str, str]:
  """The "__metadata__" string map of a .safetensors file ({} when it has none).
  (tinygrad's function of this name returns the raw header; tinygrad.cpp's returns the metadata itself.)"""
  return _tg.safe_load_metadata(os.fspath(fn))


__all__ = ["get_state_dict", "get_parameters", "load_state_dict", "safe_load", "safe_save", "safe_load_metadata", "torch_load"]

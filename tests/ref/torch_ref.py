"""The reference side of tests/ref: evaluates PyTorch expressions for the C++ op tests.

Runs under Debian's /usr/bin/python3 (python3-torch, python3-numpy). Reads one JSON request a line
on stdin and writes one JSON reply a line on stdout:

  request: {"expr": "x0 + x1", "inputs": [{"shape": [2, 3], "dtype": "float32", "data": [...],
            "requires_grad": true}, ...], "grad_out": [...] or null}
  reply:   {"ok": true, "outputs": [{"shape": [...], "dtype": "...", "data": [...]}...],
            "grads": [[...] or null, ...]}  or  {"ok": false, "error": "..."}

`expr` sees the inputs as x0, x1, ... and `torch`, `F` (torch.nn.functional), `np`. It may return one
tensor or a tuple of tensors; gradients are taken from the first output with `grad_out` (or ones).
"""
import json
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
DTYPES = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64, "int8": torch.int8,
          "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
          "bool": torch.bool}
NAMES = {v: k for k, v in DTYPES.items()}


def encode(t):
  t = t.detach()
  data = t.double().flatten().tolist() if t.dtype != torch.bool else [float(v) for v in t.flatten().tolist()]
  data = [None if (isinstance(v, float) and math.isnan(v)) else ("inf" if v == math.inf else "-inf" if v == -math.inf else v) for v in data]
  return {"shape": list(t.shape), "dtype": NAMES.get(t.dtype, str(t.dtype)), "data": data}


def decode(d):
  vals = [math.nan if v is None else float(v) for v in d["data"]]
  t = torch.tensor(vals, dtype=torch.float64).reshape(d["shape"]).to(DTYPES[d["dtype"]])
  if d.get("requires_grad"): t.requires_grad_(True)
  return t


def handle(req):
  xs = [decode(d) for d in req["inputs"]]
  env = {"torch": torch, "F": F, "np": np, "math": math}
  env.update({f"x{i}": x for i, x in enumerate(xs)})
  out = eval(req["expr"], env)
  outs = list(out) if isinstance(out, (tuple, list)) else [out]
  outs = [o if isinstance(o, torch.Tensor) else torch.tensor(o) for o in outs]
  grads = [None] * len(xs)
  if any(x.requires_grad for x in xs) and outs[0].requires_grad:
    g = torch.ones_like(outs[0]) if req.get("grad_out") is None else decode(req["grad_out"]).to(outs[0].dtype)
    outs[0].backward(g)
    grads = [encode(x.grad)["data"] if x.grad is not None else None for x in xs]
  return {"ok": True, "outputs": [encode(o) for o in outs], "grads": grads}


for line in sys.stdin:
  try:
    reply = handle(json.loads(line))
  except Exception as e:  # the C++ side turns this into a test failure with the message
    reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
  sys.stdout.write(json.dumps(reply) + "\n")
  sys.stdout.flush()

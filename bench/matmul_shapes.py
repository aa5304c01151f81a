#!/usr/bin/python3
"""Matrix products over a grid of shapes, tg against PyTorch (CPU, the same thread count), in one run: the
heuristics' cliffs. Each shape runs in both layouts a model uses: `a @ b` with b (K, N) contiguous, and
`a @ w.T` with w (N, K) contiguous, as every Linear layer computes.

  PYTHONPATH=build/python /usr/bin/python3 bench/matmul_shapes.py [--threads 2] [--reps 5] [M,K,N ...]

The default grid is M in 1, 3, 16, 100, 512, 2048; K in 64, 1000, 4096; N in 10, 100, 1000, 4096, 30000
(up to 16 GFLOP and 512 MB of B a product). tg runs each product under TinyJit (its replays are the
kernels alone); every result is checked against a float64 product (WRONG when it is not close). Prints a
markdown table, then how many shapes of each layout take more than 1.5x and 2x torch's time. Not a
test: the numbers depend on the machine (run it on a quiet one: a busy phase can double a tiny kernel's
time).
"""
import argparse
import itertools
import time

import numpy as np
import torch

from tg import Tensor, TinyJit


def median_ms(f, reps):
  for _ in range(2):
    f()
  ts = []
  for _ in range(reps):
    t = time.perf_counter()
    f()
    ts.append(time.perf_counter() - t)
  return sorted(ts)[len(ts) // 2] * 1e3


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--threads", type=int, default=2)
  p.add_argument("--reps", type=int, default=5)
  p.add_argument("shapes", nargs="*", help="M,K,N (default: the grid)")
  args = p.parse_args()
  torch.set_num_threads(args.threads)
  if args.shapes:
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes]
  else:
    grid = itertools.product([1, 3, 16, 100, 512, 2048], [64, 1000, 4096], [10, 100, 1000, 4096, 30000])
    shapes = [s for s in grid if s[0] * s[1] * s[2] <= 8e9 and s[1] * s[2] <= 1.3e8]
  rng = np.random.default_rng(0)
  ratios = {"a @ b": [], "a @ w.T": []}
  print("| M x K x N | layout | tg ms | torch ms | tg / torch time |")
  print("|---|---|---:|---:|---:|")
  for m, k, n in shapes:
    for layout in ratios:
      transposed = layout == "a @ w.T"
      an = rng.random((m, k), dtype=np.float32)
      bn = rng.random((n, k) if transposed else (k, n), dtype=np.float32)
      a, b = Tensor(an).realize(), Tensor(bn).realize()
      f = TinyJit((lambda a, b: (a @ b.T).realize()) if transposed else (lambda a, b: (a @ b).realize()))
      tg_ms = median_ms(lambda: f(a, b), args.reps)
      ref = an.astype(np.float64) @ (bn.T if transposed else bn).astype(np.float64)
      ok = np.allclose(f(a, b).numpy(), ref, rtol=1e-4, atol=1e-3)
      ta, tb = torch.from_numpy(an), torch.from_numpy(bn)
      torch_ms = median_ms((lambda: ta @ tb.T) if transposed else (lambda: ta @ tb), args.reps)
      ratios[layout].append(tg_ms / torch_ms)
      print(f"| {m} x {k} x {n} | `{layout}` | {tg_ms:.3f} | {torch_ms:.3f} | {tg_ms / torch_ms:.2f}x{'' if ok else ' WRONG'} |", flush=True)
  for layout, r in ratios.items():
    r.sort()
    print(f"\n`{layout}`: {len(r)} shapes, median {r[len(r) // 2]:.2f}x torch's time, "
          f"{sum(x > 1.5 for x in r)} above 1.5x, {sum(x > 2 for x in r)} above 2x")


if __name__ == "__main__":
  main()

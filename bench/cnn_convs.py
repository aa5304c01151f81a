#!/usr/bin/python3
"""The convolutions of examples/beautiful_mnist's CNN, forward and both backward convs of each layer, tg
against PyTorch (CPU, the same thread count), in one run: ms and GFLOP/s per conv, and the ratio.

  PYTHONPATH=build/python /usr/bin/python3 bench/cnn_convs.py [--bs 512] [--threads 2] [--reps 10] [--layers "32,64,3,28;..."] [--keep-memory]

tg runs each conv under TinyJit (its replays are the kernels alone) and computes the gradients as its
autograd does for a direct conv (a transposed conv for dx, a conv of x by dy for dw), then both by autograd
itself (for a Winograd conv, WINO, through its transforms: the forward row is then Winograd's and the dx and
dw rows the direct conv's); torch uses aten's convolution_backward, what its autograd calls. --keep-memory
tells glibc's malloc to keep what torch frees (see keep_freed_memory). Not a test: the numbers depend on the machine.
"""
import argparse
import ctypes
import time

import numpy as np
import torch

from tg import Tensor, TinyJit

LAYERS = [("c1", 1, 32, 5, 28, 0), ("c2", 32, 32, 5, 24, 0), ("c3", 32, 64, 3, 10, 0), ("c4", 64, 64, 3, 8, 0)]  # name, cin, cout, k, in size, padding


def keep_freed_memory():
  """glibc's malloc keeps what is freed for the next allocation: nothing from mmap, no trimming of the heap.
  torch's CPU allocator frees its large blocks back to the OS after each op, and on a VM the page faults of
  taking them back can cost more than the arithmetic (a Firecracker VM on Zen 5: its step 394 -> 162 ms).
  tg's buffers are cached either way."""
  libc = ctypes.CDLL("libc.so.6")
  M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
  if not (libc.mallopt(M_MMAP_MAX, 0) and libc.mallopt(M_TRIM_THRESHOLD, 2**30)): raise RuntimeError("mallopt failed")


def best_ms(f, reps):
  f()
  best = float("inf")
  for _ in range(reps):
    t = time.perf_counter()
    f()
    best = min(best, time.perf_counter() - t)
  return best * 1e3


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--bs", type=int, default=512)
  ap.add_argument("--threads", type=int, default=2)
  ap.add_argument("--reps", type=int, default=10)
  ap.add_argument("--layers", help="other convs instead of the model's: 'cin,cout,k,size[,padding];...' (stride 1)")
  ap.add_argument("--keep-memory", action="store_true", help="glibc's malloc keeps what torch frees")
  args = ap.parse_args()
  if args.keep_memory: keep_freed_memory()
  layers = LAYERS
  if args.layers:
    layers = [(f"l{i}", *(list(map(int, spec.split(","))) + [0])[:5]) for i, spec in enumerate(args.layers.split(";"), 1)]
  torch.set_num_threads(args.threads)
  rng = np.random.default_rng(0)
  rows = []
  for name, cin, cout, k, size, pad in layers:
    out = size + 2 * pad - k + 1
    gflop = 2 * args.bs * cout * out * out * cin * k * k / 1e9
    x = rng.standard_normal((args.bs, cin, size, size), dtype=np.float32)
    w = rng.standard_normal((cout, cin, k, k), dtype=np.float32) * 0.1
    g = rng.standard_normal((args.bs, cout, out, out), dtype=np.float32)
    tx, tw, tg_ = Tensor(x).realize(), Tensor(w).realize(), Tensor(g).realize()
    px, pw, pg = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(g)
    fwd = TinyJit(lambda a, b: a.conv2d(b, padding=pad).realize())
    dx = TinyJit(lambda dy, b: dy.conv_transpose2d(b, padding=pad).realize())
    dw = TinyJit(lambda a, dy: a.permute(1, 0, 2, 3).conv2d(dy.permute(1, 0, 2, 3), padding=pad).shrink(((0, cin), (0, cout), (0, k), (0, k)))
                 .permute(1, 0, 2, 3).realize())
    # both gradients as a training step computes them, by autograd through conv2d (a Winograd conv's through
    # its transforms and its points' convs; a direct conv's are the dx and dw above); torch's in one call
    xg, wg = Tensor(x, requires_grad=name != "c1"), Tensor(w, requires_grad=True)

    @TinyJit
    def grads(dy):
      (xg.conv2d(wg, padding=pad) * dy).sum().backward()
      out = ([xg.grad.realize()] if xg.grad is not None else []) + [wg.grad.realize()]
      xg.grad, wg.grad = None, None
      return out

    ops = [("forward", lambda: fwd(tx, tw), lambda: torch.nn.functional.conv2d(px, pw, padding=pad)),
           ("dx", lambda: dx(tg_, tw), lambda: torch.ops.aten.convolution_backward(pg, px, pw, None, [1, 1], [pad, pad], [1, 1], False, [0, 0], 1,
                                                                                   [True, False, False])),
           ("dw", lambda: dw(tx, tg_), lambda: torch.ops.aten.convolution_backward(pg, px, pw, None, [1, 1], [pad, pad], [1, 1], False, [0, 0], 1,
                                                                                   [False, True, False])),
           ("dx+dw (autograd)", lambda: grads(tg_), lambda: torch.ops.aten.convolution_backward(pg, px, pw, None, [1, 1], [pad, pad], [1, 1], False, [0, 0], 1,
                                                                                                [name != "c1", True, False]))]
    # the values agree (a check that each pair computes the same thing)
    np.testing.assert_allclose(fwd(tx, tw).numpy(), ops[0][2]().numpy(), rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(dw(tx, tg_).numpy(), ops[2][2]()[1].numpy(), rtol=1e-3, atol=1e-1)
    for op, f_tg, f_torch in ops:
      if name == "c1" and op == "dx": continue  # the image needs no gradient
      t_tg, t_torch = best_ms(f_tg, args.reps), best_ms(f_torch, args.reps)
      flop = gflop * (1 if op != "dx+dw (autograd)" or name == "c1" else 2)
      rows.append((f"{name} {cin}->{cout} {k}x{k} on {size}x{size}" + (f" pad {pad}" if pad else ""), op, t_tg, flop / t_tg * 1e3, t_torch, flop / t_torch * 1e3))
  print(f"| conv (batch {args.bs}) | pass | tg ms | tg GFLOP/s | torch ms | torch GFLOP/s | tg/torch time |")
  print("|---|---|---:|---:|---:|---:|---:|")
  for r in rows: print(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.0f} | {r[4]:.2f} | {r[5]:.0f} | {r[2] / r[4]:.2f}x |")
  single = [r for r in rows if r[1] != "dx+dw (autograd)"]  # (the autograd rows repeat dx and dw)
  print(f"| total of forward, dx, dw | | {sum(r[2] for r in single):.1f} | | {sum(r[4] for r in single):.1f} | | {sum(r[2] for r in single) / sum(r[4] for r in single):.2f}x |")


if __name__ == "__main__":
  main()

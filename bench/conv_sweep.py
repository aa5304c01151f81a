#!/usr/bin/python3
"""A conv's training step (forward, input gradient and weight gradient under autograd) over the shapes a
new user tries first (CIFAR and ResNet layers, stems with 1-3 input channels, strided and 1x1 convs), tg
against PyTorch (CPU, the same thread count), in one run: ms per step and the ratio. It finds the shapes
whose kernels fall off a cliff; bench/cnn_convs.py times the three convs of one layer apart.

  PYTHONPATH=build/python /usr/bin/python3 bench/conv_sweep.py [--threads 2] [--reps 3] [--shapes "bs,cin,cout,k,size,stride,pad[,groups];..."] [--keep-memory]

Not a test: the numbers depend on the machine (CPU_TARGET=x86-64-v3 ATEN_CPU_CAPABILITY=avx2
DNNL_MAX_CPU_ISA=AVX2 holds both sides to AVX2).
"""
import argparse

import numpy as np
import torch

from cnn_convs import best_ms, keep_freed_memory  # (bench/ is the script's directory, on its path)
from tg import Tensor, TinyJit

SHAPES = [  # batch, in channels, out channels, kernel, image size, stride, padding
  (32, 3, 64, 3, 32, 1, 1), (32, 64, 64, 3, 32, 1, 1), (32, 64, 128, 3, 32, 2, 1), (32, 128, 128, 3, 16, 1, 1),
  (32, 128, 256, 3, 16, 2, 1), (32, 256, 256, 3, 8, 1, 1), (32, 256, 512, 3, 8, 2, 1), (32, 512, 512, 3, 4, 1, 1),
  (8, 3, 64, 7, 224, 2, 3), (8, 64, 64, 3, 56, 1, 1), (8, 128, 128, 3, 28, 1, 1), (8, 256, 256, 3, 14, 1, 1),
  (8, 512, 512, 3, 7, 1, 1), (8, 64, 256, 1, 56, 1, 0), (8, 256, 64, 1, 56, 1, 0), (8, 256, 512, 1, 56, 2, 0),
  (8, 512, 128, 1, 28, 1, 0), (8, 1024, 256, 1, 14, 1, 0), (8, 2048, 512, 1, 7, 1, 0), (64, 1, 32, 5, 28, 1, 2),
  (4, 64, 64, 3, 128, 1, 1), (1, 3, 32, 3, 224, 2, 1), (16, 32, 32, 5, 32, 1, 2),
  # depthwise and grouped (MobileNet, ResNeXt): an 8th field, the groups
  (8, 32, 32, 3, 112, 1, 1, 32), (8, 96, 96, 3, 112, 2, 1, 96), (8, 144, 144, 3, 56, 1, 1, 144), (8, 576, 576, 3, 14, 1, 1, 576),
  (8, 128, 128, 3, 28, 1, 1, 32),
]


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--threads", type=int, default=2)
  ap.add_argument("--reps", type=int, default=3)
  ap.add_argument("--shapes", help="'bs,cin,cout,k,size,stride,pad[,groups];...' instead of the default list")
  ap.add_argument("--keep-memory", action="store_true", help="glibc's malloc keeps what torch frees")
  args = ap.parse_args()
  if args.keep_memory: keep_freed_memory()
  torch.set_num_threads(args.threads)
  shapes = [tuple(map(int, s.split(","))) for s in args.shapes.split(";")] if args.shapes else SHAPES
  rng = np.random.default_rng(0)
  print("| batch | conv | stride | padding | groups | image | tg ms | torch ms | tg/torch time |")
  print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
  ratios = []
  for bs, cin, cout, k, size, stride, pad, *rest in shapes:
    groups = rest[0] if rest else 1
    out = (size + 2 * pad - k) // stride + 1
    x = rng.standard_normal((bs, cin, size, size), dtype=np.float32)
    w = rng.standard_normal((cout, cin // groups, k, k), dtype=np.float32) * 0.1
    g = rng.standard_normal((bs, cout, out, out), dtype=np.float32)
    tx, tw, tgo = Tensor(x, requires_grad=True).realize(), Tensor(w, requires_grad=True).realize(), Tensor(g).realize()

    @TinyJit
    def tg_step(a, b, dy):
      (a.conv2d(b, stride=stride, padding=pad, groups=groups) * dy).sum().backward()
      return a.grad.realize(), b.grad.realize()

    def tg_run():
      tx.grad = tw.grad = None
      return tg_step(tx, tw, tgo)

    px, pw, pg = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True), torch.from_numpy(g)

    def torch_run():
      px.grad = pw.grad = None
      torch.nn.functional.conv2d(px, pw, stride=stride, padding=pad, groups=groups).backward(pg)

    dx, dw = tg_run()
    torch_run()
    # the values agree (a check that both sides compute the same thing)
    np.testing.assert_allclose(dx.numpy(), px.grad.numpy(), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(dw.numpy(), pw.grad.numpy(), rtol=1e-2, atol=1e-1)
    t_tg, t_torch = best_ms(tg_run, args.reps), best_ms(torch_run, args.reps)
    ratios.append(t_tg / t_torch)
    print(f"| {bs} | {cin}->{cout} {k}x{k} | {stride} | {pad} | {groups} | {size}x{size} | {t_tg:.2f} | {t_torch:.2f} | {t_tg / t_torch:.2f}x |", flush=True)
  print(f"\n{len(ratios)} shapes: median {sorted(ratios)[len(ratios) // 2]:.2f}x torch's time, worst {max(ratios):.2f}x, "
        f"{sum(r > 1.5 for r in ratios)} above 1.5x")


if __name__ == "__main__":
  main()

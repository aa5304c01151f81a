#!/usr/bin/python3
"""examples/beautiful_mnist's training step: ms per step at batch 512 for tg with the JIT on and off and for
the same model in PyTorch (CPU, the same thread count, Adam), in one run; the first step (cold: kernels
compiled, with an empty kernel cache when run with XDG_CACHE_HOME pointing at an empty directory) and
the peak memory of a step's buffers with the JIT on and off. torch runs twice: as it comes, then with glibc's
malloc told to keep the memory it frees (cnn_convs.keep_freed_memory). After torch as it comes, the other
three take their steps in turns, one each per round: a shared VM's speed drifts by 10-20% within a minute
(Zen 5, 2 cores), and a ratio of runs taken a minute apart would measure the drift too.

  XDG_CACHE_HOME=$(mktemp -d) PYTHONPATH=build/python /usr/bin/python3 bench/beautiful_mnist_step.py [--steps 10]

Not a test: the numbers depend on the machine.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from beautiful_mnist import Model  # noqa: E402
from cnn_convs import keep_freed_memory  # noqa: E402 (bench/ is the script's directory, on its path)

from tg import Context, GlobalCounters, Tensor, TinyJit, nn  # noqa: E402
from tg.nn.datasets import mnist  # noqa: E402


def tg_step(X, Y, bs, jit):
  """A function that runs one training step and returns its time in seconds and the step's peak memory."""
  Tensor.manual_seed(0)
  model = Model()
  opt = nn.optim.Adam(nn.state.get_parameters(model))

  @Tensor.train()
  def step():
    opt.zero_grad()
    samples = Tensor.randint(bs, high=X.shape[0])
    loss = model(X[samples]).sparse_categorical_crossentropy(Y[samples]).backward()
    return loss.realize(*opt.schedule_step())
  f = TinyJit(step) if jit else step

  def timed():
    GlobalCounters.reset()
    t = time.perf_counter()
    f().item()
    return time.perf_counter() - t, GlobalCounters.mem_peak  # every live buffer: the dataset and parameters too
  return timed


class TorchModel(torch.nn.Module):
  def __init__(self):
    super().__init__()
    self.c1, self.c2 = torch.nn.Conv2d(1, 32, 5), torch.nn.Conv2d(32, 32, 5)
    self.bn1, self.c3, self.c4 = torch.nn.BatchNorm2d(32), torch.nn.Conv2d(32, 64, 3), torch.nn.Conv2d(64, 64, 3)
    self.bn2, self.l = torch.nn.BatchNorm2d(64), torch.nn.Linear(576, 10)

  def forward(self, x):
    x = torch.max_pool2d(self.bn1(self.c2(self.c1(x).relu()).relu()), 2)
    x = torch.max_pool2d(self.bn2(self.c4(self.c3(x).relu()).relu()), 2)
    return self.l(x.flatten(1))


def torch_step(X, Y, bs):
  """A function that runs one training step and returns its time in seconds."""
  torch.manual_seed(0)
  model = TorchModel()
  opt = torch.optim.Adam(model.parameters(), lr=1e-3)

  def timed():
    t = time.perf_counter()
    samples = torch.randint(X.shape[0], (bs,))
    loss = torch.nn.functional.cross_entropy(model(X[samples]), Y[samples])
    opt.zero_grad()
    loss.backward()
    opt.step()
    loss.item()
    return time.perf_counter() - t
  return timed


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--bs", type=int, default=512)
  ap.add_argument("--steps", type=int, default=10)
  ap.add_argument("--threads", type=int, default=2)
  args = ap.parse_args()
  torch.set_num_threads(args.threads)
  X, Y, _, _ = mnist(fashion=True)
  X, Y = X.realize(), Y.realize()
  tX, tY = torch.from_numpy(X.numpy().astype(np.float32)), torch.from_numpy(Y.numpy().astype(np.int64))
  pt_step = torch_step(tX, tY, args.bs)
  pt = [pt_step() for _ in range(args.steps)]
  keep_freed_memory()
  # tg with the JIT, without, torch keeping its memory: one step each per round (the first ones cold)
  jit_step, nojit_step, kept_step = tg_step(X, Y, args.bs, True), tg_step(X, Y, args.bs, False), torch_step(tX, tY, args.bs)
  jit_runs, nojit_runs, pt_kept = [], [], []  # (seconds, peak bytes) per tg step; seconds per torch step
  for _ in range(args.steps):
    jit_runs.append(jit_step())
    nojit_runs.append(nojit_step())
    pt_kept.append(kept_step())
  jit, nojit = [t for t, _ in jit_runs], [t for t, _ in nojit_runs]
  peak = lambda runs: max(m for _, m in (runs[2:] if len(runs) > 2 else runs))
  jit_peak, nojit_peak = peak(jit_runs), peak(nojit_runs)
  steady = lambda ts: min(ts[3:]) * 1e3 if len(ts) > 3 else min(ts) * 1e3
  ratios = lambda ts: f"{steady(ts) / steady(pt):.2f}x | {steady(ts) / steady(pt_kept):.2f}x"
  print(f"| batch {args.bs}, {args.threads} threads | first step s | steady ms/step | vs torch | vs torch, memory kept | peak buffers MB |")
  print("|---|---:|---:|---:|---:|---:|")
  print(f"| tg, JIT | {jit[0]:.2f} | {steady(jit):.1f} | {ratios(jit)} | {jit_peak / 1e6:.0f} |")
  print(f"| tg, no JIT | {nojit[0]:.2f} | {steady(nojit):.1f} | {ratios(nojit)} | {nojit_peak / 1e6:.0f} |")
  print(f"| torch {torch.__version__} | {pt[0]:.2f} | {steady(pt):.1f} | {ratios(pt)} | |")
  print(f"| torch, memory kept (mallopt) | {pt_kept[0]:.2f} | {steady(pt_kept):.1f} | {ratios(pt_kept)} | |")


if __name__ == "__main__":
  main()

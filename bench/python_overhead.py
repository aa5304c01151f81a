"""The per-call overhead of a small graph from Python, beside the same graph from C++ (bench/small_graph.cpp).

    PYTHONPATH=build-py/python /usr/bin/python3 bench/python_overhead.py [--cpp build-py/bench_small_graph]

Graph: (a+b).sum() on 16 float32s, warm (the kernel is compiled before timing). Three rows, as the C++ bench:
  build    the lazy graph only (two Tensor ops)
  realize  build + schedule + run
  item     build + realize + read the scalar back
Python timing: after a warm-up, repeats of a timed loop; the median per-call time is reported. The C++ column
comes from running the Google Benchmark binary when it exists (built with -DTG_BUILD_BENCH=ON); otherwise it is
left empty. Also prints the same graph in PyTorch (eager: one call does all the work) for scale.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def per_call_us(fn, min_time=0.3, repeats=5):
  for _ in range(20): fn()  # warm-up (compile, caches)
  n, t = 1, 0.0
  while t < min_time / repeats:  # find a loop size that runs long enough to time
    n *= 2
    t0 = time.perf_counter()
    for _ in range(n): fn()
    t = time.perf_counter() - t0
  runs = []
  for _ in range(repeats):
    t0 = time.perf_counter()
    for _ in range(n): fn()
    runs.append((time.perf_counter() - t0) / n * 1e6)
  return statistics.median(runs)


def python_rows():
  import numpy as np
  import tg
  from tg import Tensor
  a = Tensor(np.full(16, 1.5, np.float32)).realize()
  b = Tensor(np.full(16, 0.25, np.float32)).realize()
  assert (a + b).sum().item() == 16 * 1.75
  rows = {
    "build": per_call_us(lambda: (a + b).sum()),
    "realize": per_call_us(lambda: (a + b).sum().realize()),
    "item": per_call_us(lambda: (a + b).sum().item()),
  }
  tg.GlobalCounters.reset()
  (a + b).sum().realize()
  return rows, tg.GlobalCounters.kernel_count


def torch_row():
  try:
    import torch
  except ImportError:
    return None
  torch.set_num_threads(2)
  a, b = torch.full((16,), 1.5), torch.full((16,), 0.25)
  return per_call_us(lambda: (a + b).sum().item())


def cpp_rows(path):
  if not path or not os.path.exists(path): return None
  out = subprocess.run([path, "--benchmark_format=json", "--benchmark_min_time=0.3"], capture_output=True, text=True, check=True).stdout
  rows = {}
  for bm in json.loads(out)["benchmarks"]:
    name = bm["name"].removeprefix("BM_small_graph_")
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[bm["time_unit"]]
    rows[name] = bm["real_time"] * scale
  return rows


def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  default_cpp = next((p for p in (os.path.join(ROOT, d, "bench_small_graph") for d in ("build-py", "build", "build-bench"))
                      if os.path.exists(p)), None)
  ap.add_argument("--cpp", default=default_cpp, help="bench_small_graph binary (default: found in build-py/ or build/)")
  args = ap.parse_args()

  py, kernels = python_rows()
  cpp = cpp_rows(args.cpp)
  th = torch_row()
  print(f"(a+b).sum() on 16 float32, warm; {kernels} kernel(s) per realize; median per call")
  print(f"{'':10} {'Python (tg)':>13} {'C++ (tg)':>11} {'Python - C++':>13}")
  for k in ("build", "realize", "item"):
    c = cpp.get(k) if cpp else None
    cs = f"{c:9.1f} us" if c is not None else f"{'n/a':>11}"
    ds = f"{py[k] - c:10.1f} us" if c is not None else f"{'':>13}"
    print(f"{k:10} {py[k]:10.1f} us {cs} {ds}")
  if th is not None: print(f"{'torch item':10} {th:10.1f} us  (PyTorch eager, same graph, for scale)")
  sys.stdout.flush()
  if cpp is None:
    print(f"C++ column: build bench/small_graph.cpp (cmake -DTG_BUILD_BENCH=ON, target bench_small_graph) and pass --cpp PATH",
          file=sys.stderr)


if __name__ == "__main__":
  main()

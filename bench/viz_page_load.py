#!/usr/bin/python3
"""How long VIZ's page takes to show the 1000-op elementwise chain (bench/pipeline.cpp's chain1000): the
trace is recorded by a VIZ=1 run of tests/viz/viz_program.cpp, served by tg-viz, and loaded in headless
Chromium, each graph of the kernel (the AST, then each pass) several times.

  /usr/bin/python3 bench/viz_page_load.py [--build build] [--reps 5]

Per graph: the page's own clock from navigation start to the graph drawn (<body data-load-ms>; this
includes fetching the kernel list and the kernel, building the graph, its layout and drawing it), and the
same seen from outside (navigate to data-ready seen over the DevTools pipe, polled every 20 ms). Not a
test: the numbers depend on the machine (the acceptance bound is 5 s).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "viz"))
import chromium  # noqa: E402
from serve import TgViz, record  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    if not chromium.available():
        sys.exit(f"no Chromium at {chromium.CHROMIUM}")
    trace = os.path.join(tempfile.mkdtemp(prefix="tg_viz_bench_"), "chain1000.jsonl")
    t0 = time.time()
    record(os.path.join(a.build, "tg_viz_program"), ["chain1000"], trace)
    print(f"recorded chain1000 with VIZ=1 in {time.time() - t0:.2f} s (its compiles may come from the disk cache); trace {os.path.getsize(trace) / 1024:.0f} KiB")
    with TgViz(os.path.join(a.build, "tg-viz"), trace) as srv, chromium.Chromium() as c:
        kernels = srv.get_json("/api/kernels")["kernels"]
        print(f"{len(kernels)} kernels (the scheduler cuts a chain into kernels of at most 500 ops)")
        print(f"{'kernel / graph':<32} {'boxes':>6} {'layout':>8} {'page ms (median, max)':>22} {'outside ms':>11}")
        for i, k in enumerate(kernels):
            for p in range(len(k["passes"]) + 1):
                page, outside = [], []
                for _ in range(a.reps):
                    c.send("Page.navigate", {"url": "about:blank"})
                    outside.append(c.load(f"{srv.url}/?kernel={i}&pass={p}", timeout=120) * 1e3)
                    page.append(c.eval("+document.body.dataset.loadMs"))
                nodes, engine = c.eval("document.body.dataset.nodes"), c.eval("document.body.dataset.layout")
                name = f"{i} {k['name']} / {p} " + ("AST" if p == 0 else k["passes"][p - 1])
                print(f"{name:<32} {nodes:>6} {engine:>8} {statistics.median(page):>13.0f} {max(page):>8.0f} {statistics.median(outside):>11.0f}")
                status = c.eval("document.getElementById('status').textContent")
                print(f"  {status}")


if __name__ == "__main__":
    main()

"""The PyTorch and NumPy side of the ops table, and the merged table (scripts/bench_table.sh runs it).

Run by Debian's interpreter (/usr/bin/python3: python3-torch 1.13, python3-numpy on libopenblas0-pthread):
    /usr/bin/python3 bench/ops_table.py --tg TG.tsv [--tg-beam TG_BEAM.tsv --beam 2] [--rows SUBSTR,...]
TG.tsv is bench_ops_table's output (id, ms, runs, kernels per run, status, note). Prints one markdown table.

Timing follows bench_ops_table: warm-up first, then runs until at least 3 runs and 0.5 s, or 2 s in all
(at least one run), or 5000 runs; the median is reported. Every torch result is compared with NumPy's on the
same input once (a disagreement is printed under the table). add and copy write into a preallocated output
(torch out= / copy_, np.add(out=) / np.copyto), as a STREAM kernel does; the other ops allocate their result.
"""
import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N16M = 16 << 20
R, C = 4096, 1024
CB, CI, CO, HW, K = 32, 32, 64, 28, 3

# id, label, unit, work (FLOPs or bytes)
ROWS = [(f"sgemm_{n}", f"sgemm {n} (N×N @ N×N)", "GFLOP/s", 2 * n**3) for n in (256, 512, 997, 1000, 1024, 2048)] + [
    ("add_16M", "add 16M", "GB/s", 3 * 4 * N16M),
    ("sum_16M", "sum 16M", "GB/s", 4 * N16M),
    ("copy_16M", "copy 16M (tg column: C++ loop, 2 threads)", "GB/s", 2 * 4 * N16M),
    *[(f"{op}_{r}x{c}", f"{op} ({r}, {c}), {what}", "GB/s", 2 * 4 * r * c) for r, c in ((R, C), (64, 512))
      for op, what in (("softmax", "last axis"), ("layernorm", "no affine"))],
    ("conv2d_b32_32to64_28x28_3x3", "conv2d b32 32→64 28×28 3×3 pad 1", "GFLOP/s", 2 * CB * CO * HW * HW * CI * K * K),
]


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


PROBE = r"""
import ctypes, numpy
numpy.ones((8, 8), numpy.float32) @ numpy.ones((8, 8), numpy.float32)
libs = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'openblas' in l and l.split()[-1].endswith('.so')})
if libs:
    lib = ctypes.CDLL(libs[0]); lib.openblas_get_corename.restype = ctypes.c_char_p
    print(libs[0], lib.openblas_get_corename().decode())
"""


def fix_openblas_coretype():
    """OpenBLAS 0.3.21 (Debian 12) does not know newer Intel CPU models and then falls back to its Prescott
    (SSE3) kernels, several times slower than the right ones. Unless OPENBLAS_CORETYPE is already set, pick
    the kernels that match the CPU's flags. Returns a note for the table header (or None)."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (from the environment)"
    try:
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) != 2 or out[1] != "Prescott":
        return None
    flags = cpu_flags()
    core = ("Cooperlake" if "avx512_bf16" in flags else "SkylakeX" if "avx512f" in flags else
            "Haswell" if "avx2" in flags else None)
    if core is None:
        return None
    os.environ["OPENBLAS_CORETYPE"] = core  # read by OpenBLAS when it loads (numpy / torch import below)
    return f"OPENBLAS_CORETYPE={core} set: OpenBLAS's own detection picks Prescott (SSE3) kernels on this CPU"


BLAS_NOTE = fix_openblas_coretype()

import numpy as np  # noqa: E402  (after the OpenBLAS core type is settled)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(2)


def time_runs(fn):
    samples, total = [], 0.0
    while True:
        t = time.perf_counter()
        fn()
        s = time.perf_counter() - t
        samples.append(s * 1e3)
        total += s
        if (len(samples) >= 3 and total >= 0.5) or total >= 2.0 or len(samples) >= 5000:
            return statistics.median(samples), len(samples)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def np_layernorm(x, eps=1e-5):
    d = x - x.mean(axis=-1, keepdims=True)
    v = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(v + eps)


def np_conv2d(x, w):  # im2col + one sgemm (BLAS), stride 1, padding 1
    n, ci, h, wd = x.shape
    co, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n, ci, h, w, kh, kw
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, ci * kh * kw)
    out = cols @ w.reshape(co, ci * kh * kw).T
    return np.ascontiguousarray(out.reshape(n, h, wd, co).transpose(0, 3, 1, 2))


def cases(row_id, rng):
    """(torch fn, numpy fn, torch result getter, numpy result getter, rtol, atol) for a row, on the same data."""
    f32 = np.float32
    if row_id.startswith("sgemm_"):
        n = int(row_id.split("_")[1])
        a, b = rng.uniform(-1, 1, (n, n)).astype(f32), rng.uniform(-1, 1, (n, n)).astype(f32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return (lambda: ta @ tb), (lambda: a @ b), 1e-3, 1e-3
    if row_id == "add_16M":
        a, b = rng.uniform(-1, 1, N16M).astype(f32), rng.uniform(-1, 1, N16M).astype(f32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        tc, c = torch.empty(N16M), np.empty(N16M, f32)
        return (lambda: torch.add(ta, tb, out=tc)), (lambda: np.add(a, b, out=c)), 0, 0
    if row_id == "sum_16M":
        a = rng.uniform(0, 1, N16M).astype(f32)
        ta = torch.from_numpy(a)
        return (lambda: ta.sum()), (lambda: a.sum()), 1e-5, 0
    if row_id == "copy_16M":
        a = rng.uniform(-1, 1, N16M).astype(f32)
        ta, tc, c = torch.from_numpy(a), torch.empty(N16M), np.empty(N16M, f32)
        return (lambda: tc.copy_(ta)), (lambda: (np.copyto(c, a), c)[1]), 0, 0
    if row_id.startswith("softmax_"):
        r, c = map(int, row_id.split("_")[1].split("x"))
        x = rng.uniform(-4, 4, (r, c)).astype(f32)
        tx = torch.from_numpy(x)
        return (lambda: torch.softmax(tx, dim=-1)), (lambda: np_softmax(x)), 1e-4, 1e-7
    if row_id.startswith("layernorm_"):
        r, c = map(int, row_id.split("_")[1].split("x"))
        x = rng.uniform(-2, 3, (r, c)).astype(f32)
        tx = torch.from_numpy(x)
        return (lambda: F.layer_norm(tx, (c,), eps=1e-5)), (lambda: np_layernorm(x)), 1e-4, 1e-4
    if row_id == "conv2d_b32_32to64_28x28_3x3":
        x, w = rng.uniform(-1, 1, (CB, CI, HW, HW)).astype(f32), rng.uniform(-1, 1, (CO, CI, K, K)).astype(f32)
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        return (lambda: F.conv2d(tx, tw, padding=1)), (lambda: np_conv2d(x, w)), 1e-3, 1e-3
    raise KeyError(row_id)


def read_tsv(path):
    rows = {}
    if not path:
        return rows
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            rid, ms, runs, kernels, status = parts[:5]
            rows[rid] = dict(ms=float(ms), runs=int(runs), kernels=float(kernels), status=status,
                             note=parts[5] if len(parts) > 5 else "")
    return rows


def loaded_blas():
    libs = sorted({l.split()[-1] for l in open("/proc/self/maps")
                   if any(k in l for k in ("blas", "mkl", "dnnl")) and l.split()[-1].startswith("/")})
    return [os.path.basename(p) for p in libs]


def openblas_info():
    for l in open("/proc/self/maps"):
        p = l.split()[-1]
        if "openblas" in p and p.endswith(".so"):
            lib = ctypes.CDLL(p)

            def fn(name, restype):  # Debian's names, or a wheel's scipy_openblas build with its prefix (and suffix)
                for sym in (name, f"scipy_{name}64_", f"scipy_{name}"):
                    if hasattr(lib, sym):
                        f = getattr(lib, sym)
                        f.restype = restype
                        return f
                return None
            config, core, threads = (fn("openblas_get_config", ctypes.c_char_p), fn("openblas_get_corename", ctypes.c_char_p),
                                     fn("openblas_get_num_threads", ctypes.c_int))
            if not (config and core and threads):
                return f"{os.path.basename(p)} (its version and core type not readable)"
            return f"{config().decode()}; core {core().decode()}, {threads()} threads"
    return "OpenBLAS not loaded"


def fmt_ms(ms):
    if ms != ms:
        return "—"
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}" if ms >= 1 else f"{ms:.3f}"


def fmt_rate(work, ms):
    if ms != ms or ms <= 0:
        return "—"
    r = work / (ms * 1e-3) / 1e9
    return f"{r:.0f}" if r >= 100 else f"{r:.1f}" if r >= 1 else f"{r:.3f}"


def tg_cells(entry, work):
    if entry is None:
        return ["n/a", "n/a"]
    if entry["status"] != "OK":
        return [entry["status"], entry["status"]]
    return [fmt_ms(entry["ms"]), fmt_rate(work, entry["ms"])]


def ratio(entry, torch_ms):
    if entry is None or entry["status"] != "OK" or torch_ms != torch_ms:
        return "—" if entry is None else ("—" if entry["status"] == "OK" else entry["status"])
    return f"{torch_ms / entry['ms']:.2f}×" if torch_ms / entry["ms"] >= 0.1 else f"{torch_ms / entry['ms']:.3f}×"


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "include"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + uncommitted changes in src/ or include/" if dirty else "")
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tg", help="bench_ops_table output, default settings")
    ap.add_argument("--tg-beam", help="bench_ops_table --beam N output")
    ap.add_argument("--tg-nofuse", help="bench_ops_table output with FUSE=0 (the softmax and layernorm rows)")
    ap.add_argument("--tg-jit", help="bench_ops_table --jit output (the softmax and layernorm rows as TinyJit replays)")
    ap.add_argument("--beam", type=int, default=2)
    ap.add_argument("--rows", default="", help="comma-separated substrings of row ids")
    args = ap.parse_args()
    filt = [f for f in args.rows.split(",") if f]
    tg, tgb, tgn, tgj = read_tsv(args.tg), read_tsv(args.tg_beam), read_tsv(args.tg_nofuse), read_tsv(args.tg_jit)

    rng = np.random.default_rng(0)
    results, problems = {}, []
    with torch.inference_mode():
        for rid, label, unit, work in ROWS:
            if filt and not any(f in rid for f in filt):
                continue
            tfn, nfn, rtol, atol = cases(rid, rng)
            tout, nout = tfn(), nfn()  # warm-up, and the cross-check
            if not np.allclose(np.asarray(tout.numpy() if hasattr(tout, "numpy") else tout, dtype=np.float64),
                               np.asarray(nout, dtype=np.float64), rtol=rtol, atol=atol):
                problems.append(f"{rid}: torch and numpy disagree")
            del tout, nout
            t_ms, t_runs = time_runs(tfn)
            n_ms, n_runs = time_runs(nfn)
            results[rid] = (t_ms, n_ms)
            print(f"  torch/numpy: {rid:<28} {t_ms:10.3f} ms ({t_runs} runs) {n_ms:10.3f} ms ({n_runs} runs)",
                  file=sys.stderr, flush=True)

    b = args.beam
    print()
    print(f"tinygrad.cpp {git_rev()} (CPU device, {os.cpu_count()} threads) vs PyTorch {torch.__version__} "
          f"({torch.get_num_threads()} threads) vs NumPy {np.__version__}; {cpu_model()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end (other processes make every column noisy)")
    print(f"BLAS: {openblas_info()}; loaded: {', '.join(loaded_blas())}")
    if BLAS_NOTE:
        print(f"note: {BLAS_NOTE}")
    print("float32; median ms after warm-up (tg: kernels compiled before timing; each run builds a fresh lazy "
          "graph and realizes it; tg JIT: a TinyJit replay of the captured kernels, no graph building or "
          "scheduling); ratio = tg throughput / torch throughput (>1: tg faster)")
    print()
    hdr = ["op", "unit", "tg ms", "tg rate", f"tg BEAM={b} ms", f"tg BEAM={b} rate", "torch ms", "torch rate",
           "numpy ms", "numpy rate", "tg/torch", f"tg BEAM={b}/torch", "tg kernels", "tg FUSE=0 ms", "tg FUSE=0/torch",
           "FUSE=0 kernels", "tg JIT ms", "tg JIT/torch"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join(["---"] + ["---"] + ["---:"] * (len(hdr) - 2)) + "|")
    notes = []
    for rid, label, unit, work in ROWS:
        if rid not in results:
            continue
        t_ms, n_ms = results[rid]
        e, eb = tg.get(rid), (tgb.get(rid) if rid.startswith("sgemm_") else None)
        beam_cells = tg_cells(eb, work) if rid.startswith("sgemm_") else ["", ""]
        kern = "—" if e is None or e["status"] != "OK" or rid == "copy_16M" else f"{e['kernels']:g}"
        en = tgn.get(rid)
        nofuse = ["", "", ""] if en is None else [tg_cells(en, work)[0], ratio(en, t_ms), f"{en['kernels']:g}" if en["status"] == "OK" else "—"]
        ej = tgj.get(rid)
        jit = ["", ""] if ej is None else [tg_cells(ej, work)[0], ratio(ej, t_ms)]
        cells = [label, unit, *tg_cells(e, work), *beam_cells, fmt_ms(t_ms), fmt_rate(work, t_ms), fmt_ms(n_ms),
                 fmt_rate(work, n_ms), ratio(e, t_ms), ratio(eb, t_ms) if rid.startswith("sgemm_") else "", kern, *nofuse, *jit]
        print("| " + " | ".join(cells) + " |")
        for tag, entry in (("tg", e), (f"tg BEAM={b}", eb), ("tg FUSE=0", en), ("tg JIT", ej)):
            if entry is not None and entry["status"] != "OK":
                notes.append(f"{rid} ({tag}): {entry['status']}: {entry['note']}")
            elif entry is not None and entry["runs"] < 3:
                notes.append(f"{rid} ({tag}): {entry['runs']} timed run(s) ({entry['note']})")
    print()
    print("Bytes: add 3×4×N, sum 4×N, copy 2×4×N, softmax/layernorm 2×4×N (one read, one write); "
          "FLOPs: sgemm 2N³, conv2d 2·B·Cout·H·W·Cin·9 (stride 1, padding 1, no bias). A tg time covers every "
          "kernel of the graph: sgemm's two are the copy of B in column panels and the product, sum's two the "
          "two stages of the split reduce.")
    add, copy = tg.get("add_16M"), tg.get("copy_16M")
    if add and copy and add["status"] == copy["status"] == "OK":
        ratio_ = (3 * 4 / add["ms"]) / (2 * 4 / copy["ms"])
        print(f"Elementwise against the copy loop: add {3 * 4 * 16 * 2**20 / add['ms'] / 1e6:.1f} GB/s, "
              f"copy {2 * 4 * 16 * 2**20 / copy['ms'] / 1e6:.1f} GB/s: {ratio_:.2f} of the copy's bandwidth.")
    for n in notes + problems:
        print(f"- {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

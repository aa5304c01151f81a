"""VIZ from Python: a script run with VIZ=1 records its kernels and, its stdout not being a terminal,
leaves them in a trace file at exit for tg-viz (the page itself: tests/viz/test_viz_page.py)."""
import json
import os
import subprocess
import sys


def run(code, tmp_path, **env):
  import tg
  path = os.path.dirname(os.path.dirname(os.path.abspath(tg.__file__)))  # the tg this suite tests
  return subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=path, **env), capture_output=True,
                        text=True, timeout=300, cwd=tmp_path)


def test_viz_writes_the_kernels_of_a_run(tmp_path):
  trace = tmp_path / "py.jsonl"
  r = run("from tg import Tensor\nprint((Tensor([1.0, 2.0, 3.0]) * 4.40625).sum().item())", tmp_path, VIZ="1", VIZ_FILE=str(trace))
  assert r.returncode == 0, r.stderr
  assert float(r.stdout) == 26.4375
  assert f"tg-viz {trace}" in r.stderr
  lines = trace.read_text().splitlines()
  assert json.loads(lines[0]) == {"tg_viz": 1}
  kernels = [json.loads(line) for line in lines[1:]]
  assert kernels and all(k["name"] in k["src"] and k["nodes"][k["ast"]][0] == "SINK" for k in kernels)


def test_viz_off_writes_nothing(tmp_path):
  trace = tmp_path / "none.jsonl"
  r = run("from tg import Tensor\nprint((Tensor([1.0, 2.0]) * 4.46875).sum().item())", tmp_path, VIZ="0", VIZ_FILE=str(trace))
  assert r.returncode == 0, r.stderr
  assert not trace.exists() and "VIZ" not in r.stderr


def test_viz_in_a_context(tmp_path):
  """with Context(VIZ=1): only the kernels built inside the block are recorded."""
  trace = tmp_path / "ctx.jsonl"
  code = ("from tg import Tensor\nfrom tg.helpers import Context, VIZ\n"
          "(Tensor([1.0, 2.0]) * 4.53125).realize()\n"
          "with Context(VIZ=1): assert VIZ.value == 1; (Tensor([1.0, 2.0]) + 4.59375).sum().realize()\n"
          "(Tensor([1.0, 2.0]) * 4.65625).realize()\n")
  r = run(code, tmp_path, VIZ_FILE=str(trace))
  assert r.returncode == 0, r.stderr
  kernels = [json.loads(line) for line in trace.read_text().splitlines()[1:]]
  assert len(kernels) == 1 and "4.59375" in kernels[0]["src"]

"""VIZ end to end: a real run with VIZ=1 on a non-terminal writes a trace file, tg-viz serves it on a free
port, and headless Chromium shows the kernel list, a pass's graph (SVG boxes, the changed ones marked,
the rules named) and the generated source. Also the 1000-op chain's graph, as large graphs must work.

usage: test_viz_page.py PROGRAM TG_VIZ OUT_DIR
  PROGRAM  tests/viz/viz_program.cpp's binary; TG_VIZ the tg-viz binary; OUT_DIR where screenshots go.
Exits 77 (ctest's SKIP_RETURN_CODE) when Chromium is not installed (Debian's chromium; .ci installs it).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium  # noqa: E402
from serve import TgViz, record  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def page_state(c):
    return c.eval("""(() => ({
      error: document.body.dataset.error || '',
      kernels: [...document.querySelectorAll('#kernels > li .kname .nm')].map(e => e.textContent),
      passes: [...document.querySelectorAll('#kernels li.active .passes li')].map(e => e.textContent),
      title: document.getElementById('title').textContent,
      nodes: document.querySelectorAll('#graph .node').length,
      dataNodes: +document.body.dataset.nodes,
      edges: (document.querySelector('#graph path.edges') || {getAttribute: () => ''}).getAttribute('d').split('M').length - 1,
      changed: document.querySelectorAll('#graph .node.changed').length,
      labels: [...document.querySelectorAll('#graph .node text')].slice(0, 50).map(e => e.textContent),
      rules: [...document.querySelectorAll('#rules li')].map(e => e.textContent),
      source: document.getElementById('source').textContent,
      status: document.getElementById('status').textContent,
      notice: document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent,
      layout: document.body.dataset.layout || '',
      loadMs: +document.body.dataset.loadMs,
    }))()""")


def write_big_trace(path, n):
    """A kernel whose AST is a chain of n ADDs of a constant over a LOAD: n + 5 nodes drawn (the constant inlined)."""
    nodes = [["DEFINE_GLOBAL", "float32*", "1", []], ["LOAD", "float32", "", [0]], ["CONST", "float32", "0.5", []]]
    for i in range(n):
        nodes.append(["ADD", "float32", "", [len(nodes) - 1 if i else 1, 2]])
    nodes += [["DEFINE_GLOBAL", "float32*", "0", []], ["STORE", "void", "", [len(nodes), len(nodes) - 1]]]
    nodes[-1][3] = [len(nodes) - 2, len(nodes) - 3]
    nodes.append(["SINK", "void", "", [len(nodes) - 1]])
    kernel = {"name": "E_big", "ast": len(nodes) - 1, "src": "", "error": "", "nodes": nodes, "passes": []}
    with open(path, "w") as f:
        f.write(json.dumps({"tg_viz": 1}) + "\n" + json.dumps(kernel) + "\n")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    program, tg_viz, out_dir = sys.argv[1:]
    if not chromium.available():
        print(f"SKIP: no Chromium at {chromium.CHROMIUM} (Debian's chromium package; scripts/deps.sh installs it)")
        return 77
    tmp = tempfile.mkdtemp(prefix="tg_viz_e2e_")
    trace = os.path.join(tmp, "run.jsonl")
    err = record(program, [], trace)
    check(os.path.exists(trace) and f"tg-viz {trace}" in err, "VIZ=1 on a non-terminal writes the trace file and says how to open it")

    # tg-viz's errors: a file that is not a trace, a port in use
    bad = os.path.join(tmp, "bad.jsonl")
    with open(bad, "w") as f:
        f.write("not a trace\n")
    r = subprocess.run([tg_viz, bad, "--port", "0"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "is not a trace file" in r.stderr, f"tg-viz on a bad file: {r.stderr.strip()!r}")

    with TgViz(tg_viz, trace) as srv, chromium.Chromium() as c:
        port = srv.url.rsplit(":", 1)[1]
        r = subprocess.run([tg_viz, trace, "--port", port], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "in use" in r.stderr, f"tg-viz on a port in use: {r.stderr.strip().splitlines()[0]!r}")

        kernels = srv.get_json("/api/kernels")["kernels"]
        names = [k["name"] for k in kernels]
        real = [i for i, k in enumerate(kernels) if k["name"].startswith("r_")]
        demo = names.index("simplify_index") if "simplify_index" in names else -1
        check(len(kernels) >= 3 and real and demo >= 0, f"the trace has the run's kernels: {names}")
        if failures:
            return 1

        # a real kernel (the reduce), at its last pass (the AST when codegen names no pass yet)
        k = real[0]
        last = len(kernels[k]["passes"])
        c.load(f"{srv.url}/?kernel={k}&pass={last}")
        s = page_state(c)
        c.screenshot(os.path.join(out_dir, "viz_page_kernel.png"))
        check(not s["error"], f"no error on the page ({s['error']})")
        check(s["kernels"] == names, f"the kernel list shows every kernel: {s['kernels']}")
        check(len(s["passes"]) == last + 1 and s["passes"][0].startswith("0 AST"), f"the kernel's passes are listed: {s['passes']}")
        check(s["nodes"] > 3 and s["nodes"] == s["dataNodes"] and s["edges"] >= s["nodes"] - 1,
              f"its graph is drawn: {s['nodes']} boxes, {s['edges']} edges ({s['status']})")
        check(any(l.startswith("STORE") for l in s["labels"]) or any("STORE" in l for l in s["labels"]), "the boxes name their ops")
        check(names[k] in s["source"] and "{" in s["source"], f"the generated source of {names[k]} is shown")
        check(names[k] in s["title"], f"the title names the kernel: {s['title']}")

        # the pass with rules: changed nodes marked, rules listed, before and after
        c.load(f"{srv.url}/?kernel={demo}&pass=1")
        s = page_state(c)
        c.screenshot(os.path.join(out_dir, "viz_page.png"))
        trace_kernel = srv.get_json(f"/api/kernel/{demo}")
        rules = {ch[2] for ch in trace_kernel["passes"][0]["changes"]}
        check(s["changed"] >= 1, f"the nodes the pass's rules changed are marked ({s['changed']})")
        check(len(s["rules"]) == len(rules) and all(any(r in li for li in s["rules"]) for r in rules), f"its rules are named: {s['rules']}")
        check("simplify" in s["title"] and "after" in s["title"], f"the title names the pass: {s['title']}")
        c.eval("document.querySelector('#views button[data-view=before]').click()")
        s2 = page_state(c)
        check("before" in s2["title"] and s2["nodes"] > s["nodes"], f"before the pass the graph is larger ({s2['nodes']} > {s['nodes']} boxes)")
        check(c.eval("location.search").find("view=before") >= 0, "the view is in the URL")
        c.eval("document.querySelector('#rules li').click()")
        check(c.eval("document.querySelectorAll('#graph .node.picked').length") == 1 and
              "matched by" in c.eval("document.getElementById('node-info').textContent"), "picking a rule shows the node it matched")

        # a kernel that does not exist in the URL falls back to the last one; a pass out of range to the AST
        c.load(f"{srv.url}/?kernel=999&pass=999")
        s = page_state(c)
        check(not s["error"] and s["title"].endswith("AST"), f"a bad URL shows a graph anyway: {s['title']}")

    # the 1000-op chain (the scheduler cuts it into kernels of at most 500 ops): every graph is drawn
    chain = os.path.join(tmp, "chain.jsonl")
    record(program, ["chain1000"], chain)
    with TgViz(tg_viz, chain) as srv, chromium.Chromium() as c:
        kernels = srv.get_json("/api/kernels")["kernels"]
        asts = 0
        for k, kernel in enumerate(kernels):
            for p in range(len(kernel["passes"]) + 1):
                secs = c.load(f"{srv.url}/?kernel={k}&pass={p}", timeout=120)
                s = page_state(c)
                check(not s["error"] and s["nodes"] >= 100, f"chain1000 kernel {k} graph {p}: {s['nodes']} boxes, shown in {secs:.2f} s ({s['status']})")
                asts += s["nodes"] if p == 0 else 0
        check(asts >= 1000, f"the chain's ASTs have 1000 ops or more ({asts} boxes)")
        c.load(f"{srv.url}/?kernel=0&pass=0", timeout=120)
        c.screenshot(os.path.join(out_dir, "viz_page_chain1000.png"))

    # a graph larger than the page draws: the nodes nearest the root, and a notice that says so
    big = os.path.join(tmp, "big.jsonl")
    write_big_trace(big, 6000)
    with TgViz(tg_viz, big) as srv, chromium.Chromium() as c:
        secs = c.load(f"{srv.url}/?kernel=0&pass=0", timeout=120)
        s = page_state(c)
        check(s["nodes"] == 4000 and "showing the 4000 nodes nearest the root of 6005" in s["notice"],
              f"a 6005-node graph shows 4000 nodes and says so, in {secs:.2f} s: {s['notice']!r}")

    print(f"screenshots in {out_dir}: viz_page.png, viz_page_kernel.png, viz_page_chain1000.png")
    print(f"{'FAILED: ' + str(len(failures)) if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

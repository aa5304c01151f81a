"""Runs a program under VIZ=1 to get its trace file, and serves a trace with tg-viz on a free port."""
import json
import os
import re
import signal
import subprocess
import urllib.request


def record(program, args, trace, timeout=300):
    """Runs `program args` with VIZ=1 writing `trace`, stdout a pipe (not a terminal); returns its stderr."""
    env = dict(os.environ, VIZ="1", VIZ_FILE=trace)
    r = subprocess.run([program, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{program} {args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stderr


class TgViz:
    """tg-viz TRACE --port 0, for the duration of a with block; .url is where it serves."""

    def __init__(self, tg_viz, trace):
        self.proc = subprocess.Popen([tg_viz, trace, "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:\d+", line)
        if not m:
            self.proc.kill()
            raise RuntimeError(f"tg-viz did not start: {line}{self.proc.stderr.read()}")
        self.url = m.group(0)

    def get_json(self, path):
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return json.load(r)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGINT)  # tg-viz stops serving and exits 0 on Ctrl-C
        code = self.proc.wait(timeout=30)
        if code != 0 and exc[0] is None:
            raise RuntimeError(f"tg-viz exited {code} after SIGINT: {self.proc.stderr.read()}")

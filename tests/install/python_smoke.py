# Imports the installed Python module tg (PYTHONPATH=<prefix>/<TG_PYTHON_INSTALL_DIR>, set by scripts/test.sh)
# and runs the seed examples through it; exits non-zero on any mismatch. Usage: python_smoke.py PREFIX
import os, sys

import tg
from tg import GlobalCounters, Tensor, nn

prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(tg.__file__).startswith(prefix + os.sep), f"tg imported from {tg.__file__}, not from {prefix}"
GlobalCounters.reset()
r = Tensor([1, 2]).dot(Tensor([3, 4])).item()
assert r == 11 and GlobalCounters.kernel_count == 1, (r, GlobalCounters.kernel_count)
v = Tensor([1.0, 2.0, 3.0, 4.0]).var().item()
assert abs(v - 1.6666667) < 1e-5, v
assert nn.Linear(3, 2)(Tensor.ones(4, 3)).shape == (4, 2)
print(f"install test (Python): OK, tg from {os.path.dirname(tg.__file__)}")

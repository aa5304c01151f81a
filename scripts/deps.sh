#!/usr/bin/env bash
# Installs the Debian packages that building, testing and running tinygrad.cpp need.
# Fast when everything is already installed (no apt-get at all). Needs root, or sudo.
set -euo pipefail

# The packages. Add new ones here, one group a line.
PACKAGES=(
  cmake ninja-build g++ clang                # build + the run-time kernel compiler (clang/cc)
  llvm-16-dev                                # the in-process kernel compiler (src/runtime/llvm_jit.cpp; optional)
  libgtest-dev libgmock-dev                  # tests
  libbenchmark-dev                           # bench/
  python3-numpy python3-torch                # reference values in tests (Debian's /usr/bin/python3)
  zlib1g-dev dataset-fashion-mnist           # gzip idx files; the Fashion-MNIST example and its test
  libopenblas0-pthread                       # fast BLAS for numpy/torch references
  nlohmann-json3-dev                         # safetensors headers (JSON), the test reference bridge
  pybind11-dev python3-dev python3-pytest    # the Python module tg (python/) and its tests (tests/python/)
  libcpp-httplib-dev pkg-config              # VIZ's web server (src/viz/server.cpp), found through pkg-config
  python3-xstatic-dagre                      # dagre.min.js, the VIZ page's graph layout (embedded at build time)
  chromium                                   # headless, for VIZ's page test (tests/viz/test_viz_page.py)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -E)
  else
    echo "deps: missing packages (${missing[*]}) and not root, and sudo is not available" >&2
    exit 1
  fi
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# The main job: installs the Debian packages, builds build/ and trains examples/beautiful_mnist (tinygrad's CNN,
# its train step under TinyJit) on Fashion-MNIST on the CPU: about 3.5 minutes on 2 cores, ~89% test accuracy.
# Environment: STEPS=, BS=, LR=, EVAL=, MNIST_DIR=; DEBUG=1..5, NOOPT=1, JIT=0, CACHELEVEL=0, ...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PROGRAM=beautiful_mnist   # examples/$PROGRAM.cpp
JOBS=${JOBS:-2}

bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$JOBS" --target "$PROGRAM"
exec "./build/$PROGRAM" "$@"

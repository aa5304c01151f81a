#!/usr/bin/env bash
# The MLP training step, side by side in one run: examples/fashion_mnist.cpp (tinygrad.cpp) and the
# same model in PyTorch (bench/mlp_step.py, 2 threads). Both report the mean of steps 101..600, so
# tinygrad.cpp's kernel compilation (in the first steps) is left out.
#   BUILD_DIR=build   the build directory (configured here if needed)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/deps.sh
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD_DIR" -j2 --target fashion_mnist
# the example prints the running mean at steps 100 and 600: the mean of 101..600 follows from both
tg=$("$BUILD_DIR/fashion_mnist" 600 | awk '/^step  100/ {a=$5} /^step  600/ {b=$5} END {printf "%.2f", (b*600-a*100)/500}')
torch=$(/usr/bin/python3 bench/mlp_step.py | awk '{print $4}')
echo "MLP training step (batch 128): tinygrad.cpp $tg ms, PyTorch $torch ms, tg/torch speed $(awk -v a="$tg" -v b="$torch" 'BEGIN {printf "%.2fx", b/a}')"

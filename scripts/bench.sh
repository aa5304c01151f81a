#!/usr/bin/env bash
# Builds build/ (RelWithDebInfo) and runs the Google Benchmark programs in bench/, briefly (well under
# two minutes once built), printing their tables.
#   MIN_TIME=0.5    --benchmark_min_time per benchmark, in seconds (Google Benchmark 1.7 takes a plain number)
#   BUILD_DIR=build the build directory
#   JOBS=N          parallel build jobs (default 2: the machine's cores are shared)
#   extra arguments go to every bench program, e.g. --benchmark_filter=add
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
JOBS=${JOBS:-2}
MIN_TIME=${MIN_TIME:-0.5}
BUILD_DIR=${BUILD_DIR:-build}

bash "$ROOT/scripts/deps.sh"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_BUILD_BENCH=ON
cmake --build "$BUILD_DIR" -j"$JOBS" --target bench_elementwise bench_pipeline

for b in elementwise pipeline; do
  printf '\n======== bench_%s ========\n' "$b"
  "$BUILD_DIR/bench_$b" --benchmark_min_time="$MIN_TIME" "$@"
done

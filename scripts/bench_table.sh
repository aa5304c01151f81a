#!/usr/bin/env bash
# One table, one run: tinygrad.cpp (bench/ops_table.cpp, public C++ API) vs PyTorch CPU (2 threads) vs NumPy
# on OpenBLAS (bench/ops_table.py, Debian's /usr/bin/python3), float32: sgemm 256..2048 (default settings
# and BEAM), add / sum / copy of 16M floats, softmax and layernorm over (4096, 1024) and (64, 512) (also
# with FUSE=0, tinygrad's kernels, and as TinyJit replays: the kernels without the eager call's graph
# building and scheduling), conv2d. Prints a markdown table on stdout (progress on stderr). Every
# tg result is checked on the host: WRONG if not.
#   BEAM=2          the BEAM value of the second sgemm column (run in its own process)
#   ROWS=a,b        only the rows whose id contains one of these substrings (e.g. ROWS=sgemm_256,add)
#   BUILD_DIR=build the build directory (configured here: RelWithDebInfo, -DTG_BUILD_BENCH=ON)
#   JOBS=N          parallel build jobs (default 2: the machine's cores are shared)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
JOBS=${JOBS:-2}
BUILD_DIR=${BUILD_DIR:-build}
BEAM_VALUE=${BEAM:-2}
ROWS=${ROWS:-}
PY=/usr/bin/python3  # Debian's interpreter: python3-torch and python3-numpy belong to it

bash "$ROOT/scripts/deps.sh" >&2
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_BUILD_BENCH=ON >&2
cmake --build "$BUILD_DIR" -j"$JOBS" --target bench_ops_table >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# BEAM from the environment must not leak into the default column: it is only set by --beam.
row_args=()
[[ -n "$ROWS" ]] && row_args=(--rows "$ROWS")
# A crash in one tg process still leaves the table (its missing rows show n/a) and is reported at the end.
failed=()
env -u BEAM "$BUILD_DIR/bench_ops_table" "${row_args[@]}" >"$tmp/tg.tsv" || failed+=("bench_ops_table exited with $?")
beam_rows=sgemm
[[ -n "$ROWS" ]] && beam_rows=$(tr ',' '\n' <<<"$ROWS" | grep sgemm | paste -sd, || true)
: >"$tmp/tg_beam.tsv"
if [[ -n "$beam_rows" ]]; then
  env -u BEAM "$BUILD_DIR/bench_ops_table" --beam "$BEAM_VALUE" --rows "$beam_rows" >"$tmp/tg_beam.tsv" ||
    failed+=("bench_ops_table --beam $BEAM_VALUE exited with $?")
fi
fuse_rows=softmax,layernorm
[[ -n "$ROWS" ]] && fuse_rows=$(tr ',' '\n' <<<"$ROWS" | grep -E 'softmax|layernorm' | paste -sd, || true)
: >"$tmp/tg_nofuse.tsv"
: >"$tmp/tg_jit.tsv"
if [[ -n "$fuse_rows" ]]; then
  env -u BEAM FUSE=0 "$BUILD_DIR/bench_ops_table" --rows "$fuse_rows" >"$tmp/tg_nofuse.tsv" ||
    failed+=("FUSE=0 bench_ops_table exited with $?")
  env -u BEAM "$BUILD_DIR/bench_ops_table" --jit --rows "$fuse_rows" >"$tmp/tg_jit.tsv" ||
    failed+=("bench_ops_table --jit exited with $?")
fi
"$PY" -u bench/ops_table.py --tg "$tmp/tg.tsv" --tg-beam "$tmp/tg_beam.tsv" --tg-nofuse "$tmp/tg_nofuse.tsv" --tg-jit "$tmp/tg_jit.tsv" \
  --beam "$BEAM_VALUE" "${row_args[@]}"
echo "(whole run, build included: ${SECONDS} s)" >&2
for f in "${failed[@]}"; do echo "- $f" >&2; done
[[ ${#failed[@]} -eq 0 ]]

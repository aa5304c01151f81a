#!/usr/bin/env bash
# The project's test command (README, .ci/run):
#   1. installs the Debian packages (scripts/deps.sh)
#   2. builds build/ (RelWithDebInfo: -O2 -g with asserts, warnings as errors; with the Python module tg)
#      and runs ctest (kernels by LLVM in process where the build has it), then runs the dtype and
#      vector-code tests again with each kernel compiler: LLVM for a baseline x86-64 CPU, clang for the
#      native one, and gcc and clang for the baseline one; the buffers past 2^31 elements with clang's
#      kernels (int32 indices where they fit); and the kernel optimizer's tests for AVX2
#   3. runs the Python suite (tests/python, pytest under Debian's /usr/bin/python3) against build/python
#   4. builds build-asan/ (ASan + UBSan, -O1; no Python module) and runs ctest there
#   5. installs build/ into a temporary prefix and builds + runs tests/install against it, and imports the
#      installed Python module (tests/install/python_smoke.py)
# and ends with a line "N passed, M failed[, S skipped]". Every run checks each schedule cache hit
# against scheduling from scratch (SCHEDULE_CACHE=2, engine/schedule_cache.h).
# Environment:
#   TG_SKIP_ASAN=1   skip step 3 (quick local runs)
#   JOBS=N           parallel build/test jobs (default 2: the machine's cores are shared)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
JOBS=${JOBS:-2}
export SCHEDULE_CACHE=2
PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=()  # "section: test" for each failure, repeated in the summary (CI shows only the log's tail)

CURRENT_SECTION=
# Each header says how long the run has taken so far (the CI's limit is on the whole run: see which step grew).
section() { CURRENT_SECTION=$*; printf '\n======== %s ======== (%dm%02ds in)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
trap 'echo "test.sh: FAILED at line $LINENO: $BASH_COMMAND" >&2' ERR

# run_ctest DIR [CTEST ARGS...]: runs the tests of a build dir and adds its counts to PASSED/FAILED/SKIPPED.
run_ctest() {
  local dir=$1 log rc=0 total failed skipped
  shift
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j"$JOBS" "$@") 2>&1 | tee "$log" || rc=$?
  total=$(sed -nE 's/.* tests failed out of ([0-9]+).*/\1/p' "$log" | tail -1)
  failed=$(sed -nE 's/.* ([0-9]+) tests failed out of .*/\1/p' "$log" | tail -1)
  skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)' "$log" || true)
  while read -r name; do FAILED_NAMES+=("$CURRENT_SECTION: $name"); done < <(
    sed -n '/The following tests FAILED:/,$p' "$log" | sed -nE 's/^[[:space:]]*[0-9]+ - (.*)$/\1/p')
  rm -f "$log"
  if [[ -z "$total" ]]; then  # ctest did not get to run tests (no tests, discovery failed...)
    total=1; failed=1; skipped=0
  fi
  if [[ $rc -ne 0 && $failed -eq 0 ]]; then failed=1; fi
  PASSED=$((PASSED + total - failed - skipped))
  FAILED=$((FAILED + failed))
  SKIPPED=$((SKIPPED + skipped))
  echo "ctest in $dir: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
}

# run_pytest PYTHONPATH: runs tests/python under Debian's interpreter and adds pytest's counts (its last
# line: "N passed, M failed, K errors, S skipped in T s") to PASSED/FAILED/SKIPPED.
run_pytest() {
  local path=$1 log rc=0 summary passed failed errors skipped
  log=$(mktemp)
  PYTHONPATH="$path" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python 2>&1 | tee "$log" || rc=$?
  summary=$(grep -E '(passed|failed|error|skipped|no tests ran).* in [0-9.]+s' "$log" | tail -1 || true)
  while read -r name; do FAILED_NAMES+=("$CURRENT_SECTION: $name"); done < <(
    grep -E '^(FAILED|ERROR) ' "$log" | cut -c1-300)
  rm -f "$log"
  count() { grep -oE "[0-9]+ $1" <<<"$summary" | grep -oE '^[0-9]+' || echo 0; }
  passed=$(count passed); failed=$(count failed); errors=$(count 'errors?'); skipped=$(count skipped)
  failed=$((failed + errors))
  if [[ $rc -ne 0 && $failed -eq 0 ]]; then failed=1; fi  # pytest could not run (import error, no tests...)
  PASSED=$((PASSED + passed))
  FAILED=$((FAILED + failed))
  SKIPPED=$((SKIPPED + skipped))
  echo "pytest: $passed passed, $failed failed, $skipped skipped"
}

section "dependencies"
bash "$ROOT/scripts/deps.sh"

section "build (RelWithDebInfo, -Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_WERROR=ON -DBUILD_TESTING=ON -DTG_BUILD_PYTHON=ON
cmake --build build -j"$JOBS"

section "tests (build)"
run_ctest build

# The dtype tests (float16, integer semantics, every dtype through files and views) and the kernel
# optimizer's vector code once more with kernels for a baseline x86-64 CPU (no FMA, no AVX), compiled by
# gcc and by clang: a newer CPU (with AVX512-FP16, say) must not hide a bug that a fresh machine of
# another kind would show.
# Where the build has LLVM, its kernels are the default (CPU_COMPILER=llvm): the same tests run with the
# C renderer and a compiler process too, for the native target and the baseline one.
DTYPE_TESTS='Dtype|StateFiles|MovementProperty|IntDiv|KernelOpts.(EachAction|Heuristics|RendersVectors|VectorExp2|MaskedVectorLoads|GatedRowsAreVectorLoadsAndShuffle|VectorCompareAndWhere|BlockedMatmul|ConvHeuristics|ChannelTile.*|StreamingStores)|KernelMultiReduce|TrigAccuracy|LLVM'
if grep -q '^TG_HAVE_LLVM:INTERNAL=1' build/CMakeCache.txt 2>/dev/null; then
  section "dtype tests (CPU_TARGET=x86-64, CPU_COMPILER=llvm)"
  CPU_TARGET=x86-64 CPU_COMPILER=llvm run_ctest build -R "$DTYPE_TESTS"
  section "dtype tests (CPU_COMPILER=clang, native target)"
  CPU_COMPILER=clang CC=clang run_ctest build -R "$DTYPE_TESTS"
  # LLVM's kernels index in int64 always; the C renderer's take int32 unless an index can reach 2^31,
  # so the buffers past 2^31 elements once more with its kernels (where int32 would wrap and fault).
  section "large buffers (CPU_COMPILER=clang, native target)"
  CPU_COMPILER=clang CC=clang run_ctest build -R '^LargeBuffers\.'
fi
for cc in gcc clang; do
  section "dtype tests (CPU_TARGET=x86-64, CPU_COMPILER=clang, CC=$cc)"
  CPU_TARGET=x86-64 CPU_COMPILER=clang CC=$cc run_ctest build -R "$DTYPE_TESTS"
done
# The heuristics size their tiles by the target's vector registers: the kernel optimizer's tests once more
# with AVX2's (16 registers of 32 bytes), whose tiles the native and baseline runs above do not make.
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  section "kernel optimizer tests (CPU_TARGET=x86-64-v3)"
  CPU_TARGET=x86-64-v3 run_ctest build -R 'KernelOpts|KernelMultiReduce|CPUTargets'
fi

section "Python module tests (pytest, build/python)"
run_pytest "$ROOT/build/python"

if [[ "${TG_SKIP_ASAN:-0}" != 1 ]]; then
  section "build (ASan + UBSan)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DTG_SANITIZE=ON -DTG_BUILD_BENCH=OFF -DTG_BUILD_EXAMPLES=OFF \
    -DBUILD_TESTING=ON -DTG_BUILD_PYTHON=OFF
  cmake --build build-asan -j"$JOBS"

  section "tests (ASan + UBSan)"
  # The kernels are compiled at run time into .so files that are not sanitized; that's fine.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_ctest build-asan
else
  section "ASan + UBSan skipped (TG_SKIP_ASAN=1)"
fi

section "install + find_package(tinygrad_cpp) consumer"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install build --prefix "$tmp/prefix"
if cmake -S tests/install -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    && cmake --build "$tmp/build" -j"$JOBS" && "$tmp/build/app"; then
  PASSED=$((PASSED + 1))
  echo "install test: passed"
else
  FAILED=$((FAILED + 1))
  echo "install test: FAILED"
  FAILED_NAMES+=("install test")
fi
# The installed Python module, imported by Debian's python3 from the prefix (not from the build tree).
pydir=$(sed -nE 's/^TG_PYTHON_INSTALL_DIR:STRING=(.*)/\1/p' build/CMakeCache.txt)
if (cd "$tmp" && PYTHONPATH="$tmp/prefix/$pydir" /usr/bin/python3 "$ROOT/tests/install/python_smoke.py" "$tmp/prefix"); then
  PASSED=$((PASSED + 1))
  echo "install test (Python): passed"
else
  FAILED=$((FAILED + 1))
  echo "install test (Python): FAILED"
  FAILED_NAMES+=("install test (Python)")
fi

section "summary"
for name in "${FAILED_NAMES[@]}"; do echo "failed: $name"; done
if [[ $SKIPPED -gt 0 ]]; then
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
else
  echo "$PASSED passed, $FAILED failed"
fi
if [[ $FAILED -ne 0 ]]; then exit 1; fi

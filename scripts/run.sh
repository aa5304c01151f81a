#!/usr/bin/env bash
# The main job: installs the Debian packages, builds build/ and trains the Fashion-MNIST example on the CPU.
# Extra arguments are passed to the program. Environment: DEBUG=1..5, NOOPT=1, CACHELEVEL=0, ...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PROGRAM=fashion_mnist   # examples/$PROGRAM.cpp
JOBS=${JOBS:-2}

bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$JOBS" --target "$PROGRAM"
exec "./build/$PROGRAM" "$@"

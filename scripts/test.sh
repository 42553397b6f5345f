#!/usr/bin/env bash
# Runs procgen's whole test suite: installs the Debian dependencies (idempotent),
# builds in build/ and runs every test with CTest. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/generator.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" "$@"

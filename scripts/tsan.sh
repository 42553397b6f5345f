#!/usr/bin/env bash
# Builds the test suite with ThreadSanitizer and runs the cpu-backend tests
# of treebox (matching, tree bounding boxes, branch bounds) under it.
# Usage: scripts/tsan.sh [GTEST_FILTER]
# Build directory: build-tsan, or PROCGEN_TSAN_BUILD=...
# The system oneTBB is not instrumented: tests/treebox/tsan.supp lists the
# resulting false positives (top frame in TBB's own code only).
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-'MatchParens*:TreeBBox*:BranchBounds*:BracketPartners*'}
build=${PROCGEN_TSAN_BUILD:-build-tsan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROCGEN_SANITIZE=thread \
  -DPROCGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target procgen_tests
TSAN_OPTIONS="suppressions=$PWD/tests/treebox/tsan.supp halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/procgen_tests" --gtest_filter="$filter"

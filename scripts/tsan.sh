#!/usr/bin/env bash
# Builds the test suite with ThreadSanitizer and runs every test that exercises
# the cpu backend under it: treebox (matching, tree bounding boxes, branch
# bounds), the L-system cpu stages, the backend parity suite's cpu rows and the
# multi-L-system scenes. CI runs it after the main suite (.ci/run).
# Usage: scripts/tsan.sh [GTEST_FILTER]
# Build directory: build-tsan, or PROCGEN_TSAN_BUILD=...
# The system oneTBB is not instrumented: tests/*/tsan.supp list the resulting
# false positives (top frame in TBB's or libstdc++'s atomics only); TSan reads
# one suppressions file, so they are merged here.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-'MatchParens*:TreeBBox*:BranchBounds*:BracketPartners*:CpuStages*:SceneTest*:Backends/Parity.*/cpu*:Backends/Primitives.*/cpu*:Backends/FlameIterateCpu.*:FlameToneMapCpu*'}
build=${PROCGEN_TSAN_BUILD:-build-tsan}
# -g1: line tables only. Sanitizer reports keep file:line; full -g only makes the build slower.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROCGEN_SANITIZE=thread \
  -DPROCGEN_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build "$build" -j"$(nproc)" --target procgen_tests
suppressions="$PWD/$build/tsan.supp"
cat tests/*/tsan.supp > "$suppressions"
TSAN_OPTIONS="suppressions=$suppressions halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/procgen_tests" --gtest_filter="$filter"

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
source scripts/generator.sh
filter=${1:-'MatchParens*:TreeBBox*:BranchBounds*:BracketPartners*:CpuStages*:SceneTest*:Backends/Parity.*/cpu*:Backends/Primitives.*/cpu*:Backends/FlameIterateCpu.*:FlameToneMapCpu*'}
build=${PROCGEN_TSAN_BUILD:-build-tsan}
# -g1: line tables only. Sanitizer reports keep file:line; full -g only makes the build slower.
# procgen_tsan_tests: the suites of the filter above in a binary of their own
# (tests/CMakeLists.txt), so that only their sources are compiled with TSan,
# not the whole suite; the studio is left out (no test here uses it, and the
# CLI that SceneTest runs needs no server).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROCGEN_SANITIZE=thread \
  -DPROCGEN_BUILD_BENCH=OFF -DPROCGEN_WITH_STUDIO=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build "$build" -j"$(nproc)" --target procgen_tsan_tests
tests="$build/tests/procgen_tsan_tests"
# A pattern that matches nothing in it names a suite whose source is missing
# from procgen_tsan_tests' list (tests/CMakeLists.txt): fail rather than skip it.
IFS=: read -ra patterns <<< "$filter"
for pattern in "${patterns[@]}"; do
  # The list is read whole before grep looks at it: `... | grep -q` under
  # pipefail failed when grep quit at the first match while the binary was
  # still writing a long list (SIGPIPE), and CI then named a suite as missing.
  listed=$("$tests" --gtest_list_tests --gtest_filter="$pattern")
  if ! grep -q '^  ' <<< "$listed"; then
    echo "tsan.sh: no test in procgen_tsan_tests matches '$pattern': add its source to procgen_tsan_test_sources" \
      "(tests/CMakeLists.txt)" >&2
    exit 1
  fi
done
suppressions="$(realpath -m "$build")/tsan.supp"
cat tests/*/tsan.supp > "$suppressions"
# The tests run as PROCGEN_TSAN_SHARDS (default: the core count) gtest shards
# side by side: most of them use one or two threads, so one process left a
# core idle for most of the ~300 s run. Each shard's output goes to its own
# log, printed whole when it ends; any shard's failure fails the run.
export TSAN_OPTIONS="suppressions=$suppressions halt_on_error=1 ${TSAN_OPTIONS:-}"
shards=${PROCGEN_TSAN_SHARDS:-$(nproc)}
declare -A shard_of=()  # pid -> shard index
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$tests" --gtest_filter="$filter" > "$build/tsan_shard_$i.log" 2>&1 &
  shard_of[$!]=$i
done
failed=0
while ((${#shard_of[@]} > 0)); do
  status=0
  wait -n -p pid "${!shard_of[@]}" || status=$?
  i=${shard_of[$pid]}
  unset "shard_of[$pid]"
  cat "$build/tsan_shard_$i.log"
  if ((status != 0)); then
    echo "tsan.sh: shard $i of $shards failed (exit $status; log: $build/tsan_shard_$i.log)" >&2
    failed=1
  fi
done
exit "$failed"

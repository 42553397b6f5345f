#!/usr/bin/env bash
# Builds the parser fuzzers with clang + ASan/UBSan (in build-asan, beside
# scripts/asan.sh's tests) and runs them.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET]   (defaults 600, lsystem)
# TARGET: one of the libFuzzer targets tests/fuzz/fuzz_TARGET.cpp, or all (every
# tests/fuzz/fuzz_*.cpp, SECONDS apiece, PROCGEN_FUZZ_JOBS (default nproc) side by side;
# CI runs `fuzz.sh 30 all`):
#   lsystem        the .l language front end (src/lsystem/parser.cpp)
#   lsystem_scene  the L-system .scene reader (src/lsystem/scene_file.cpp)
#   boxtree        the treebox .boxtree format (src/treebox/box_tree_format.cpp)
#   noise_options  the `procgen noise` options (tools/procgen/noise_options.cpp)
#   points         the point/mesh readers (src/io/points/) and the .octree reader
#   flame_genome   the flam3 genome reader (src/flame/genome_reader.cpp, palettes.cpp, xml_source.cpp)
#   studio_requests  request bodies against every studio endpoint (src/studio/)
# Dictionary: tests/fuzz/corpus/TARGET.dict when there is one (libFuzzer -dict).
# Corpus: a scratch copy of tests/fuzz/corpus/TARGET (plus examples/lsystems/*.l
# for lsystem, examples/scenes/*.scene for lsystem_scene, Debian's test.flam3
# for flame_genome), so new inputs found
# by the run never touch the committed seed corpus. Crashes land in
# build-asan/artifacts/.
set -euo pipefail
seconds=${1:-600}
target=${2:-lsystem}
cd "$(dirname "$0")/.."
source scripts/generator.sh
# The fuzzers are built in scripts/asan.sh's tree (build-asan, or
# PROCGEN_ASAN_BUILD=...; scripts/asan-tree.sh): one clang ASan + UBSan build
# of the library serves the tests and the fuzzers.
source scripts/asan-tree.sh
build=$asan_build
targets=()
for f in tests/fuzz/fuzz_*.cpp; do
  t=${f#tests/fuzz/fuzz_}
  targets+=("${t%.cpp}")
done
if [ "$target" = all ]; then
  run=("${targets[@]}")
elif [[ " ${targets[*]} " == *" $target "* ]]; then
  run=("$target")
else
  echo "fuzz.sh: unknown target '$target' (one of: ${targets[*]} all)" >&2
  exit 1
fi
configure_asan_tree
cmake --build "$build" -j2 --target "${run[@]/#/fuzz_}"
mkdir -p "$build/artifacts"
# The targets run side by side, one per core (PROCGEN_FUZZ_JOBS, default nproc):
# each is one single-threaded process, so on CI's two cores two targets get
# their SECONDS each in half the wall time. Each target's output goes to
# $build/fuzz_TARGET.log; its final stats are printed, and on a failure the
# log's end (the report and the reproducer's name).
jobs=${PROCGEN_FUZZ_JOBS:-$(nproc)}
declare -A running=()  # pid -> target
failed=()
finish_one() {
  local pid status=0
  wait -n -p pid "${!running[@]}" || status=$?
  local t=${running[$pid]}
  unset "running[$pid]"
  local log="$build/fuzz_$t.log"
  echo "== fuzz_$t: $(grep -m1 '^Done ' "$log" || echo 'no final stats')" >&2
  # libFuzzer exits non-zero on a crash, a leak, a timeout (-timeout) or an
  # input over -rss_limit_mb; the reproducer is the artifact it names.
  if ((status != 0)); then
    tail -n 80 "$log" >&2
    echo "fuzz.sh: FAILED: fuzz_$t found an input that crashes, leaks, hangs or exhausts memory;" \
      "reproduce with: $build/tests/fuzz/fuzz_$t $(ls -t "$build/artifacts/fuzz_$t-"* 2>/dev/null | head -1)" \
      "(whole output: $log)" >&2
    failed+=("$t")
  fi
}
for t in "${run[@]}"; do
  while ((${#running[@]} >= jobs)); do finish_one; done
  corpus="$build/corpus-$t"
  mkdir -p "$corpus"
  if [ -d "tests/fuzz/corpus/$t" ]; then cp "tests/fuzz/corpus/$t"/* "$corpus"/; fi
  case "$t" in
    lsystem) cp examples/lsystems/*.l "$corpus"/ ;;
    lsystem_scene) cp examples/scenes/*.scene "$corpus"/ ;;
    flame_genome) if [ -f /usr/share/flam3/test.flam3 ]; then cp /usr/share/flam3/test.flam3 "$corpus"/; fi ;;
  esac
  dict=()
  if [ -f "tests/fuzz/corpus/$t.dict" ]; then dict=(-dict="tests/fuzz/corpus/$t.dict"); fi
  echo "== fuzz_$t: $seconds s (log: $build/fuzz_$t.log)" >&2
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
    -rss_limit_mb=1024 -artifact_prefix="$build/artifacts/fuzz_$t-" -print_final_stats=1 "${dict[@]}" "$corpus" \
    > "$build/fuzz_$t.log" 2>&1 &
  running[$!]=$t
done
while ((${#running[@]} > 0)); do finish_one; done
if ((${#failed[@]} > 0)); then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi

#!/usr/bin/env bash
# Builds a parser fuzzer with clang + ASan/UBSan and runs it.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET]   (defaults 600, lsystem)
# TARGET: lsystem (tests/fuzz/fuzz_lsystem.cpp) or boxtree (fuzz_boxtree.cpp).
# Corpus: a scratch copy of tests/fuzz/corpus/TARGET (plus examples/lsystems/*.l
# for lsystem), so new inputs found by the run never touch the committed seed corpus.
set -euo pipefail
seconds=${1:-600}
target=${2:-lsystem}
cd "$(dirname "$0")/.."
build=${PROCGEN_FUZZ_BUILD:-build-fuzz}  # another directory: PROCGEN_FUZZ_BUILD=...
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROCGEN_BUILD_FUZZ=ON -DPROCGEN_SANITIZE=address,undefined \
  -DPROCGEN_BUILD_TESTS=OFF -DPROCGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j2 --target "fuzz_$target"
corpus="$build/corpus-$target"
mkdir -p "$corpus" "$build/artifacts"
cp "tests/fuzz/corpus/$target"/* "$corpus"/
if [ "$target" = lsystem ]; then cp examples/lsystems/*.l "$corpus"/ 2>/dev/null || true; fi
"$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -rss_limit_mb=1024 -artifact_prefix="$build/artifacts/" -print_final_stats=1 "$corpus"

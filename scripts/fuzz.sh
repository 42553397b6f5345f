#!/usr/bin/env bash
# Builds the L-system parser fuzzer with clang + ASan/UBSan and runs it.
# Usage: scripts/fuzz.sh [SECONDS]   (default 600)
# Corpus: a scratch copy of tests/fuzz/corpus/lsystem plus examples/lsystems/*.l,
# so new inputs found by the run never touch the committed seed corpus.
set -euo pipefail
seconds=${1:-600}
cd "$(dirname "$0")/.."
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROCGEN_BUILD_FUZZ=ON -DPROCGEN_SANITIZE=address,undefined \
  -DPROCGEN_BUILD_TESTS=OFF -DPROCGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j2 --target fuzz_lsystem
corpus="$build/corpus-lsystem"
mkdir -p "$corpus" "$build/artifacts"
cp tests/fuzz/corpus/lsystem/* "$corpus"/
cp examples/lsystems/*.l "$corpus"/ 2>/dev/null || true
"$build/tests/fuzz/fuzz_lsystem" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -rss_limit_mb=1024 -artifact_prefix="$build/artifacts/" -print_final_stats=1 "$corpus"

#!/usr/bin/env bash
# Runs procgen's benchmarks (Google Benchmark) and prints one table.
#   bash scripts/bench.sh                 # everything
#   bash scripts/bench.sh LSystem         # only benchmarks matching a regex
# Extra arguments after the filter go to the benchmark binary, e.g.
#   bash scripts/bench.sh LSystemInterpret --benchmark_repetitions=5
# Figures are wall-clock on a shared machine: compare rows of one run.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-.}
shift || true
bash scripts/install-deps.sh >/dev/null
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target procgen_bench >/dev/null
exec build/bench/procgen_bench --benchmark_filter="$filter" "$@"

#!/usr/bin/env bash
# Where CI's time goes. Clones the committed HEAD (or REV) into a scratch
# directory (a fresh clone, as CI has), runs .ci/run there without ccache and with every
# compile and link logged by scripts/time-tu.sh, then prints one row per stage:
# its wall time, the CPU seconds (user+sys) of its build and their half (the
# build's wall time on an idle 2-core machine at -j2), the number of compiles,
# and the wall time of the rest (tests, fuzzing); then the costliest
# translation units of each build.
#   bash scripts/ci-time.sh [DIR [REV]]    # default DIR: /tmp/procgen-ci-time, REV: HEAD
#   bash scripts/ci-time.sh --report DIR   # the tables again, from DIR's logs
# REV may predate this script (e.g. the commit before a change, to compare):
# the launcher is taken from this checkout.
# On a busy machine compare the CPU columns: wall times grow with the load.
set -euo pipefail
report_only=0
if [[ ${1:-} == --report ]]; then report_only=1; shift; fi
dir=$(realpath -m "${1:-/tmp/procgen-ci-time}")
rev=${2:-HEAD}
cd "$(dirname "$0")/.."
tu_log=$dir/tu.tsv
ci_log=$dir/ci.log

if ((report_only == 0)); then
  rm -rf "$dir"
  mkdir -p "$dir"
  git clone -q --no-checkout . "$dir/src"
  git -C "$dir/src" checkout -q "$(git rev-parse "$rev")"
  launcher=$PWD/scripts/time-tu.sh
  echo "ci-time: .ci/run in $dir/src ($(git rev-parse --short "$rev")); log: $ci_log" >&2
  (
    cd "$dir/src"
    export CCACHE_DISABLE=1 PROCGEN_TU_LOG=$tu_log
    export CMAKE_C_COMPILER_LAUNCHER=$launcher CMAKE_CXX_COMPILER_LAUNCHER=$launcher
    export CMAKE_CXX_LINKER_LAUNCHER=$launcher
    bash .ci/run
  ) > "$ci_log" 2>&1 || { echo "ci-time: .ci/run failed, see $ci_log" >&2; exit 1; }
fi

# Stage wall times from .ci/run's own lines; build CPU from the compile log,
# grouped by build directory (CMake's try-compiles included: they are CI's too;
# fuzz.sh's own compiles, in build-asan/tests/fuzz, are its row's).
awk -F'\t' -v ci_log="$ci_log" -v prefix="$dir/src/" '
  BEGIN {
    split("test.sh asan.sh tsan.sh fuzz.sh", script, " ")
    split("build build-asan build-tsan fuzz", build, " ")
    while ((getline line < ci_log) > 0) {
      if (match(line, /== ci: scripts\/[a-z]+\.sh took [0-9]+ s/)) {
        split(substr(line, RSTART, RLENGTH), w, " ")
        wall[substr(w[3], 9)] = w[5]
      }
      if (match(line, /all stages passed in [0-9]+ s/)) { split(substr(line, RSTART, RLENGTH), w, " "); total = w[5] }
    }
  }
  {
    if (index($6, prefix) != 1) next
    b = substr($6, length(prefix) + 1); sub(/\/.*$/, "", b)
    if (b == "build-asan" && index($6, "/tests/fuzz/") > 0) b = "fuzz"  # fuzz.sh builds in asan.sh tree
    cpu[b] += $3 + $4; n[b]++
    if (!(b in first) || $1 < first[b]) first[b] = $1
    if ($2 > last[b]) last[b] = $2
  }
  END {
    printf "%-10s %9s %9s %9s %8s %10s %9s\n", "stage", "wall s", "build", "build CPU", "CPU/2", "compiles", "rest s"
    for (i = 1; i <= 4; i++) {
      b = build[i]; s = script[i]
      span = (b in first) ? last[b] - first[b] : 0
      printf "%-10s %9s %9.0f %9.0f %8.0f %10d %9.0f\n", s, wall[s], span, cpu[b], cpu[b] / 2, n[b], wall[s] - span
      sum_cpu += cpu[b]
    }
    printf "%-10s %9s %9s %9.0f %8.0f\n", "all", total, "", sum_cpu, sum_cpu / 2
  }' "$tu_log"

echo
echo "costliest compiles (CPU s, output):"
for b in build build-asan build-tsan; do
  awk -F'\t' -v b="$dir/src/$b/" -v src="$dir/src/" 'index($6, b) == 1 { printf "%8.1f  %s\n", $3 + $4, substr($6, length(src) + 1) }' "$tu_log" |
    sort -rn | head -8
done
for b in build build-asan; do
  log=$dir/src/$b/Testing/Temporary/LastTest.log
  [[ -f $log ]] || continue
  echo
  echo "ctest in $b: the 8 longest tests (wall s) of $(grep -c 'Test time' "$log")"
  awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3 } /Test time =/ { printf "%8.1f  %s\n", $4, name }' "$log" | sort -rn | head -8
done

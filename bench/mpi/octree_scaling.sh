#!/bin/sh
# Octree build and queries over R ranks (docs/scaling.md "Octrees"):
#   bench/mpi/octree_scaling.sh PROCGEN [POINTS] [QUERIES] [REPEATS]
# One thread per rank; R = 1 without mpirun (the one-process build), R = 1
# under mpirun (the distributed path's own cost) and R = 2, side by side in
# each repeat. Per run: the wall time of the whole job (mpirun included),
# build_ms and query_ms (the slowest rank's), the knn queries per second and
# the CPU seconds of all ranks (user + system). QUERIES = 0: the build alone.
set -eu
PROCGEN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") POINTS=${2:-4000000} QUERIES=${3:-200000} REPEATS=${4:-1}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/bench/mpi/common.sh"
field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" stats.json | head -1; }
run() {  # run LABEL LAUNCH...
  label=$1
  shift
  if [ "$QUERIES" = 0 ]; then query=""; else query="--query knn:8 --random-queries $QUERIES -o knn.txt"; fi
  rm -f knn.txt && touch knn.txt
  # shellcheck disable=SC2086
  timed "$@" "$PROCGEN" octree --random "$POINTS" --backend cpu --threads 1 \
    $query --stats-json stats.json -q
  printf '%-10s wall %6.2f s  build %8.1f ms  query %8.1f ms  %6.3f M queries/s  cpu %6.2f s  %s\n' "$label" "$wall" \
    "$(field build_ms)" "$(field query_ms)" "$(field mq_per_s)" "$cpu" \
    "$(md5sum < knn.txt | cut -c1-8)"
}
echo "$POINTS points, $QUERIES knn:8 queries"
for rep in $(seq "$REPEATS"); do
  run "R=1" env
  # shellcheck disable=SC2046
  run "mpirun-1" $(launcher 1)
  # shellcheck disable=SC2046
  run "R=2" $(launcher 2)
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# Strong scaling of `mpirun -n R procgen scene` (docs/scaling.md "Scenes"):
#   bench/mpi/scene_scaling.sh PROCGEN [REPEATS] [SCENE_ARGS...]
# Default: the forest scene (examples/scenes/forest.scene) as shipped, and
# the same scene at -n 6 (every instance 6 steps: 8·10^6 modules written, a
# workload where the split, not mpirun's start, dominates). One thread per
# rank (--backend cpu --threads 1), R = 1 (no mpirun) and 2, interleaved
# R = 1, 2, 1, 2, ... Prints per run: wall time of the whole job (mpirun
# included), gen_ms (the slowest rank's derive + interpret + figures + gather;
# beside it the CPU time of those phases on the rank that spent most, from the
# timeline of --stats-json: what gen_ms would be without other load), cpu_ms
# (the CPU time of that section summed over the ranks; MPI spins while a
# rank waits, so this counts waiting), work cpu (the CPU time of derive +
# interpret only, summed over the ranks, and its largest rank: T1 / max rank
# bounds the speed-up on idle cores; its system part, page faults of large
# buffers, varies tenfold on a machine short of free memory), the CPU seconds of the whole job (user + system,
# MPI start included) and rank_balance (the largest rank's modules written
# and read / the mean; 1 for R = 1).
set -eu
PROCGEN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") REPEATS=${2:-3}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/bench/mpi/common.sh"
field() { sed -n "s/^  \"$1\": \([0-9.e+-]*\).*/\1/p" stats.json | head -1; }
# The largest rank's CPU time in the phases gen_ms counts (derive, interpret,
# figures, gather) from the timeline: 10 marks per rank (start, then the ends
# of parse, partition, derive, agree, interpret, figures, gather, write, stats).
gen_cpu() {
  sed -n 's/^  "timeline_cpu_ms": \[\(.*\)\],*$/\1/p' stats.json | tr -d ' ' | awk -F, '{
    worst = 0
    for (r = 0; r * 10 < NF; r++) {
      b = r * 10 + 1
      t = ($(b + 3) - $(b + 2)) + ($(b + 7) - $(b + 4))
      if (t > worst) worst = t
    }
    printf "%.2f", worst }'
}
run() {  # run NAME R scene-arguments...
  name=$1 ranks=$2
  shift 2
  [ "$ranks" = 1 ] && ranks_or_plain=plain || ranks_or_plain=$ranks
  # shellcheck disable=SC2046
  timed $(launcher "$ranks_or_plain") "$PROCGEN" scene "$@" --backend cpu --threads 1 -o forest.glb \
    --stats-json stats.json -q
  printf '%-8s R=%d  wall %5.2f s  gen_ms %7.2f (cpu of the largest rank %6.2f)  cpu_ms %7.1f  work cpu %7.1f (max rank %7.1f) ms  job cpu %5.2f s  balance %.3f\n' \
    "$name" "$ranks" "$wall" "$(field gen_ms)" "$(gen_cpu)" "$(field cpu_ms)" "$(field work_cpu_ms)" "$(field work_cpu_max_ms)" \
    "$cpu" "$(b=$(field rank_balance); echo "${b:-1}")"
  rm -f ./*.glb ./*.json
}
FOREST=$SRC/examples/scenes/forest.scene
for rep in $(seq "$REPEATS"); do
  for r in 1 2; do run forest "$r" "$FOREST"; done
  for r in 1 2; do run forest-6 "$r" "$FOREST" -n 6; done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

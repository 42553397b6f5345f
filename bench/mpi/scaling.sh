#!/bin/sh
# Strong and weak scaling of `mpirun -n R procgen ...` (docs/scaling.md):
#   bench/mpi/scaling.sh PROCGEN [REPEATS]
# One thread per rank (--threads 1); R = 1 (no mpirun), 2, 4, the runs of
# each repeat side by side. Prints one line per run: the case, R, the wall
# time of the whole job (mpirun included), the command's own time for the
# parallel part (flame iter_ms; noise gen_ms, the slowest rank's) and the
# CPU seconds of all ranks (user + system).
set -eu
PROCGEN=$1 REPEATS=${2:-2}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
ROOT=""
[ "$(id -u)" = 0 ] && ROOT=--allow-run-as-root
run() {  # run CASE R KEY command...
  name=$1 ranks=$2 key=$3
  shift 3
  if [ "$ranks" = 1 ]; then launch=""; else launch="mpirun $ROOT --oversubscribe --bind-to none -n $ranks"; fi
  /usr/bin/time -f "%e %U %S" -o time.txt $launch "$PROCGEN" "$@" --stats-json stats.json -q
  part=$(sed -n "s/.*\"$key\": \([0-9.]*\).*/\1/p" stats.json | head -1)
  read -r wall user sys < time.txt
  printf '%-14s R=%d  wall %6.2f s  %s %8.1f ms  cpu %6.2f s\n' "$name" "$ranks" "$wall" "$key" "$part" \
    "$(awk "BEGIN { print $user + $sys }")"
  rm -f ./*.png ./*.raw ./*.json ./*.nhdr
}
flame() { run "$1" "$2" iter_ms flame "$SRC/examples/flames/mixed.flam3" --index 0 --size 1280x720 --quality "$3" \
            --backend cpu --threads 1 -o f.png; }
noise() { run "$1" "$2" gen_ms noise perlin --size "$3" --backend cpu --threads 1 -o v.raw; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$REPEATS"); do
  for r in 1 2 4; do flame flame-strong "$r" 200; done
  for r in 1 2 4; do flame flame-weak "$r" $((100 * r)); done
  for r in 1 2 4; do noise noise-strong "$r" 512; done
  for r in 1 2 4; do noise noise-weak "$r" "512x512x$((128 * r))"; done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

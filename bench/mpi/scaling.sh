#!/bin/sh
# Strong (and weak) scaling of `mpirun -n R procgen ...` (docs/scaling.md):
#   bench/mpi/scaling.sh PROCGEN [REPEATS] [strong|weak|all|scene]
# One cpu thread per rank (--backend cpu --threads 1). Strong cases (the
# issue's targets): the 1280x720 flame at quality 200, the 512^3 Perlin
# volume to .raw, the forest scene to .glb. Each case runs as the plain
# process (R=1 plain), under `mpirun -n 1` (R=1) and under `mpirun -n 2` and
# `-n 4` (--oversubscribe --bind-to none), the runs of one repeat side by side.
# One line per run: wall time of the whole job (mpirun's start included),
# the command's own times (flame: iter_ms and total_ms from --stats-json;
# noise: gen_ms from its summary line, without --stats-json, whose checksum
# is folded rank after rank; scene: the *_ms keys of --stats-json) and the
# CPU seconds of all ranks (user + system). At the end, per case and R, the
# median wall and own time, and the speed-ups against R=1 under mpirun.
# `scene` runs the forest alone (R = plain, 1, 2, 4 side by side).
# Extra mpirun options (e.g. "--mca pml ob1 --mca btl self,vader" on one
# node) come from $MPIRUN_OPTIONS.
set -eu
PROCGEN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
REPEATS=${2:-3} WHICH=${3:-strong}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/bench/mpi/common.sh"
RESULTS=$WORK/results.txt
: > "$RESULTS"

# run CASE R(plain|1|2|4) command... — prints and records one line.
run() {
  name=$1 ranks=$2
  shift 2
  rm -f stats.json err.txt
  # shellcheck disable=SC2046
  timed $(launcher "$ranks") "$PROCGEN" "$@" 2> err.txt || { cat err.txt; exit 1; }
  own=""
  if [ -f stats.json ]; then
    own=$(tr ',{' '\n\n' < stats.json | sed -n 's/^ *"\([a-z_]*_ms\)": *\([0-9][0-9.]*\).*/\1 \2/p' |
          awk '!seen[$1]++' | tr '\n' ' ')
  fi
  own=$(echo "$own" | awk '{ for (i = 1; i < NF; i += 2) if ($i == "gen_ms") printf "%s %s ", $i, $(i + 1)
                             for (i = 1; i < NF; i += 2) if ($i != "gen_ms") printf "%s %s ", $i, $(i + 1) }')
  gen=$(sed -n 's/.* points in \([0-9.]*\) ms.*/\1/p' err.txt | head -1)
  [ -n "$gen" ] && own="gen_ms $gen"
  printf '%-13s R=%-5s wall %6.2f s  cpu %6.2f s  %s\n' "$name" "$ranks" "$wall" "$cpu" "$own"
  echo "$name $ranks $wall $cpu $own" >> "$RESULTS"
  rm -f ./*.png ./*.raw ./*.json ./*.nhdr ./*.glb
}
flame() { run "$1" "$2" flame "$SRC/examples/flames/mixed.flam3" --index 0 --size 1280x720 --quality "$3" \
            --backend cpu --threads 1 -o f.png -q --stats-json stats.json; }
noise() { run "$1" "$2" noise perlin --size "$3" --backend cpu --threads 1 -o v.raw; }
scene() { run "$1" "$2" scene "$SRC/examples/scenes/forest.scene" --backend cpu --threads 1 -o f.glb -q \
            --stats-json stats.json; }

for rep in $(seq "$REPEATS"); do
  if [ "$WHICH" = scene ]; then
    for r in plain 1 2 4; do scene scene-strong "$r"; done
  elif [ "$WHICH" != weak ]; then
    for r in plain 1 2 4; do flame flame-strong "$r" 200; done
    for r in plain 1 2 4; do noise noise-strong "$r" 512; done
    for r in plain 1 2 4; do scene scene-strong "$r"; done
  fi
  if [ "$WHICH" = weak ] || [ "$WHICH" = all ]; then
    for r in 1 2 4; do flame flame-weak "$r" $((100 * r)); done
    for r in 1 2 4; do noise noise-weak "$r" "512x512x$((128 * r))"; done
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Medians per (case, R): wall, and the first own time (iter_ms, gen_ms or the
# scene's first *_ms) and total_ms when present; speed-ups against R=1 (mpirun).
echo
echo "medians over $REPEATS repeat(s); speed-up = R=1 (mpirun -n 1) / R, of the medians and"
echo "(own time) the median of the repeats' own ratios"
awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    key = $1 SUBSEP $2
    if (!(key in wall)) { order[++count] = key }
    wall[key] = wall[key] " " $3
    cpu[key] = cpu[key] " " $4
    rep = ++seen[key]  # the repeat this row belongs to (rows come repeat after repeat)
    if (NF >= 6) { ownname[$1] = $5; own[key] = own[key] " " $6; ownat[key, rep] = $6 }
    for (i = 5; i < NF; i += 2) if ($i == "total_ms") total[key] = total[key] " " $(i + 1)
  }
  END {
    for (k = 1; k <= count; k++) {
      split(order[k], p, SUBSEP)
      base = p[1] SUBSEP "1"
      w = median(wall[order[k]]); bw = median(wall[base])
      line = sprintf("%-13s R=%-5s wall %6.2f s (x%.2f)  cpu %6.2f s", p[1], p[2], w, bw / w, median(cpu[order[k]]))
      if (own[order[k]] != "") {
        o = median(own[order[k]]); bo = median(own[base])
        line = line sprintf("  %s %8.1f (x%.2f", ownname[p[1]], o, o > 0 ? bo / o : 0)
        # The same ratio per repeat (R=1 and R ran side by side), then its median:
        # a slow outlier in either column moves one ratio, not the whole column.
        ratios = ""
        for (r = 1; r <= seen[order[k]]; r++)
          if (ownat[order[k], r] > 0 && ownat[base, r] > 0) ratios = ratios " " ownat[base, r] / ownat[order[k], r]
        if (ratios != "") line = line sprintf(", per repeat x%.2f", median(ratios))
        line = line ")"
      }
      if (total[order[k]] != "") {
        t = median(total[order[k]]); bt = median(total[base])
        line = line sprintf("  total_ms %8.1f (x%.2f)", t, t > 0 ? bt / t : 0)
      }
      print line
    }
  }' "$RESULTS"

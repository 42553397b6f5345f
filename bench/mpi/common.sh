# Sourced by the scaling scripts of bench/mpi: a scratch directory to run in,
# the launcher of R ranks and a timer. Every run is one line of figures.

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
ROOT=""
[ "$(id -u)" = 0 ] && ROOT=--allow-run-as-root  # CI runs as root

# launcher R: nothing for R = plain (the process without mpirun), else mpirun
# for R ranks on this machine (oversubscribed, unbound) with $MPIRUN_OPTIONS.
launcher() {
  if [ "$1" = plain ]; then echo ""; else
    echo "mpirun $ROOT ${MPIRUN_OPTIONS:-} --oversubscribe --bind-to none -n $1"; fi
}

# timed COMMAND...: runs it under /usr/bin/time; sets $wall (seconds) and
# $cpu (user + system seconds of the command and every process it started).
timed() {
  /usr/bin/time -f "%e %U %S" -o "$WORK/time.txt" "$@"
  read -r wall user sys < "$WORK/time.txt"
  cpu=$(awk "BEGIN { printf \"%.2f\", $user + $sys }")
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# One MPI test (tests/CMakeLists.txt registers them when MPI is built):
#   mpi_case.sh PROCGEN MPIRUN RANKS CASE SOURCE_DIR WORK_DIR
# Identity cases run the command once without MPI (the reference) and once
# under `mpirun -n RANKS`, and require identical output bytes: PNG images
# (the flame histograms are bit-identical), raw volumes, iso-surface and
# terrain meshes (same vertices, same order, same triangles), and the
# field's statistics (checksum, min, max, mean). Failure cases make one rank
# fail and require that every rank ends by itself (mpirun is told not to kill
# the others: each rank reports its own exit code) with a non-zero code, that
# the failing rank's message is printed, and that no output or temporary is
# left — within the test's timeout.
set -u
# Sanitizer builds (scripts/asan.sh): Open MPI keeps allocations until exit
# that LeakSanitizer would report in every rank; ASan and UBSan stay on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
PROCGEN=$1 MPIRUN=$2 RANKS=$3 CASE=$4 SRC=$5 WORK=$6
rm -rf "$WORK" && mkdir -p "$WORK/ref" "$WORK/mpi" && cd "$WORK" || exit 1
MPI="$MPIRUN --oversubscribe -n $RANKS"
[ "$(id -u)" = 0 ] && MPI="$MPIRUN --allow-run-as-root --oversubscribe -n $RANKS"
fail() { echo "FAIL: $*"; exit 1; }

# Runs "$@" in ref/ without MPI and in mpi/ under mpirun.
both() {
  (cd ref && "$PROCGEN" "$@") || fail "reference run: $*"
  (cd mpi && $MPI "$PROCGEN" "$@") || fail "mpirun -n $RANKS: $*"
}
same() {
  for f in "$@"; do
    [ -s "ref/$f" ] || fail "reference wrote no $f"
    cmp "ref/$f" "mpi/$f" || fail "$f differs between 1 process and $RANKS ranks"
  done
}
stats() { grep -E '"(checksum|min|max|mean|points|vertices|triangles)"' "$1"; }

# Failure cases: every rank's own exit code, via a shell around each rank.
WRAP='"$0" "$@"; code=$?; echo "rank exit $code" >&2; exit 0'
expect_failure() {  # expect_failure MESSAGE LEFTOVER_GLOB -- mpirun arguments
  message=$1 leftovers=$2
  shift 3
  (cd mpi && $MPIRUN $([ "$(id -u)" = 0 ] && echo --allow-run-as-root) --oversubscribe \
      --mca orte_abort_on_non_zero_status 0 "$@") > out.txt 2>&1
  cat out.txt
  grep -q -- "$message" out.txt || fail "the failing rank's message '$message' is missing"
  ended=$(grep -c "rank exit [1-9]" out.txt)
  [ "$ended" = "$RANKS" ] || fail "$ended of $RANKS ranks ended with a non-zero code"
  if grep -q "rank exit 0" out.txt; then fail "a rank exited 0"; fi
  left=$(cd mpi && ls -A | grep -E "$leftovers")
  [ -z "$left" ] || fail "left behind: $left"
}

FLAMES=$SRC/examples/flames
case $CASE in
  flame-image)  # one image over the ranks: histograms routed to band owners
    both flame "$FLAMES/mixed.flam3" --index 0 --size 320x180 --quality 40 --backend serial -o img.png -q
    (cd mpi && rm img.png && $MPI "$PROCGEN" flame "$FLAMES/mixed.flam3" --index 0 --size 320x180 --quality 40 \
        --backend cpu --threads 1 -o img.png -q) || fail "cpu backend"
    same img.png
    both flame "$FLAMES/trig.flam3" --index 1 --size 200x120 --quality 20 --method naive --backend serial -o naive.png -q
    same naive.png
    # Two threads per rank (each rank's block cut into chunks), and a histogram
    # of one band (the ranks after the first own none).
    (cd mpi && rm img.png && $MPI "$PROCGEN" flame "$FLAMES/mixed.flam3" --index 0 --size 320x180 --quality 40 \
        --backend cpu --threads 2 -o img.png -q) || fail "cpu backend, 2 threads per rank"
    same img.png
    both flame "$FLAMES/mixed.flam3" --index 0 --size 16x12 --quality 50 --backend serial -o tiny.png -q
    same tiny.png ;;
  flame-batch)  # several flames: whole images spread over the ranks
    both flame "$FLAMES/trig.flam3" --size 200x120 --quality 20 --backend serial -o frame.png -q
    same frame-00000.png frame-00001.png
    (cd ref && env in="$FLAMES/linear.flam3" ss=0.25 qs=0.2 verbose=0 "$PROCGEN" flam3-render) || fail "flam3-render"
    (cd mpi && env in="$FLAMES/linear.flam3" ss=0.25 qs=0.2 verbose=0 $MPI -x in -x ss -x qs -x verbose \
        "$PROCGEN" flam3-render) || fail "mpirun flam3-render"
    same 00000.png 00001.png ;;
  noise-volume)  # z-slabs: raw by MPI-IO, iso-surface per slab, statistics chained
    both noise perlin --size 40x36x30 --octaves 3 --threshold 0.05 --backend serial -o vol.raw -o iso.obj -o iso.glb \
        --stats-json stats.json -q
    same vol.raw vol.json vol.nhdr iso.obj iso.glb
    stats ref/stats.json > ref.stats && stats mpi/stats.json > mpi.stats && cmp ref.stats mpi.stats || fail "statistics differ"
    both noise simplex --size 24x20x17 --open-boundary --threshold 0 --backend cpu --threads 1 -o open.ply -q
    same open.ply ;;
  noise-heightmap)  # row bands gathered on rank 0
    both noise value --dims 2 --size 257x61 --bits 16 --backend serial -o h16.png -o h.raw -q
    both noise perlin --dims 2 --size 90x50 --colormap terrain -o color.png -o grid.obj -q
    same h16.png h.raw h.json color.png grid.obj ;;
  fail-output)  # one rank cannot write its image (a directory is in the way)
    mkdir mpi/frame-00001.png
    expect_failure "frame-00001.png" "^frame-00000|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" flame \
        "$FLAMES/trig.flam3" --size 200x120 --quality 20 -o frame.png -q ;;
  fail-input)  # a genome only rank 1 reads is malformed; rank 0 waits for it in the iteration
    printf '<flames>\n<flame size="10 10"><bogus\n' > mpi/bad.flam3
    expect_failure "bad.flam3:2" "^img|procgen-tmp" -- -n 1 sh -c "$WRAP" "$PROCGEN" flame "$FLAMES/mixed.flam3" \
        --index 0 --size 320x180 --quality 20 -o img.png -q : -n $((RANKS - 1)) sh -c "$WRAP" "$PROCGEN" flame \
        bad.flam3 --size 320x180 --quality 20 -o img.png -q ;;
  fail-flame)  # the last rank's memory budget is too small for the iteration; the others are already iterating
    expect_failure "over the memory budget" "^img|procgen-tmp" -- -n $((RANKS - 1)) sh -c "$WRAP" "$PROCGEN" flame \
        "$FLAMES/mixed.flam3" --index 0 --size 320x180 --quality 40 -o img.png -q : -n 1 sh -c "$WRAP" "$PROCGEN" \
        flame "$FLAMES/mixed.flam3" --index 0 --size 320x180 --quality 40 --memory-budget 20M -o img.png -q ;;
  fail-noise)  # rank 0 cannot create the raw volume; the other ranks wait in the collective write
    expect_failure "missing-dir" "procgen-tmp|vol" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" noise perlin --size 32 \
        -o missing-dir/vol.raw -q ;;
  fail-noise-option)  # only the last rank's command line is wrong
    expect_failure "octaves" "^vol|procgen-tmp" -- -n $((RANKS - 1)) sh -c "$WRAP" "$PROCGEN" noise perlin --size 32 \
        -o vol.raw -q : -n 1 sh -c "$WRAP" "$PROCGEN" noise perlin --size 32 --octaves 99 -o vol.raw -q ;;
  *) fail "unknown case $CASE" ;;
esac
echo "ok: $CASE on $RANKS ranks"

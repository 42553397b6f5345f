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
scene_stats() { grep -vE '"(derive_ms|interpret_ms|gen_ms|cpu_ms|work_cpu_ms|work_cpu_max_ms|timeline_ms|timeline_cpu_ms|ranks|rank_balance)"' "$1"; }  # all but timings and the split

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

# Octrees: the deterministic statistics (not the times), and a clustered
# point set in ref/ and mpi/ — Gaussian-like clusters of very different
# widths, 600 copies of one point and 200 a hair apart, uniform background —
# in a scrambled order, so that every rank's block holds points of every
# range and the exchange moves most of them.
octree_stats() { grep -oE '"(points|nodes|internal|leaves|empty_leaves|chain_nodes|depth|checksum|queries|query)": [^,}]*' "$1"; }
clustered_points() {
  awk 'BEGIN { srand(7); n = 0
    for (c = 0; c < 6; c++) { cx = 100 * rand(); cy = 100 * rand(); cz = 100 * rand(); s = 10 ^ (3.5 * rand() - 3)
      for (i = 0; i < 1500; i++) p[n++] = sprintf("%.9g %.9g %.9g", cx + s * (rand() + rand() + rand() - 1.5),
        cy + s * (rand() + rand() + rand() - 1.5), cz + s * (rand() + rand() + rand() - 1.5)) }
    for (i = 0; i < 600; i++) p[n++] = "12.5 40.25 77"
    for (i = 0; i < 200; i++) p[n++] = "12.5 40.25 77.000000001"
    for (i = 0; i < 2000; i++) p[n++] = sprintf("%.9g %.9g %.9g", 100 * rand(), 100 * rand(), 100 * rand())
    for (j = 0; j < n; j++) print p[(j * 7919) % n] }' > ref/clustered.xyz
  cp ref/clustered.xyz mpi/clustered.xyz
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
  fail-module)  # the MPI module is not where the loader looks: every rank says so and exits 3, writing nothing
    expect_failure "procgen_mpi.so could not be loaded" "^f\.|procgen-tmp" -- -n "$RANKS" \
        -x PROCGEN_PLUGIN_DIR=/nonexistent sh -c "$WRAP" "$PROCGEN" scene "$SRC/examples/scenes/forest.scene" -o f.glb -q
    [ "$(grep -c 'rank exit 3' out.txt)" = "$RANKS" ] || fail "a rank did not exit 3 (backend unavailable)" ;;
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
  # ---- L-system scenes (docs/scaling.md "Scenes"): instance ranges per rank ----
  scene)  # geometry, string and statistics gathered on rank 0: the one-process bytes
    both scene "$SRC/examples/scenes/forest.scene" --backend cpu --threads 1 -o f.glb -o f.obj -o f.ply -o f.png \
        -o f.txt --stats-json s.json -q
    same f.glb f.obj f.mtl f.ply f.png f.txt
    scene_stats ref/s.json > ref.stats && scene_stats mpi/s.json > mpi.stats && cmp ref.stats mpi.stats \
        || fail "scene statistics differ"
    both scene "$SRC/examples/scenes/forest.scene" -n 3 --backend serial --cylinders -o tubes.gltf -q
    same tubes.gltf
    # statistics without the string: the whole string's hash continued over the ranks' runs of instances
    both scene "$SRC/examples/scenes/forest.scene" --backend serial -o f2.glb --stats-json s2.json -q
    same f2.glb
    scene_stats ref/s2.json > ref.stats && scene_stats mpi/s2.json > mpi.stats && cmp ref.stats mpi.stats \
        || fail "self-scheduled scene statistics differ"
    # polygons, a homomorphism, context and conditions, one instance per rank and more
    printf 'Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> F[+L]F[-L]A\nL --> {.F+F.F.}\nendlsystem\n' > leaf.l
    printf 'Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> A[+A]A\nhomomorphism:\nA --> F[-F]\nendlsystem\n' > hom.l
    { echo "leaf.l at=1,0,0"; echo "hom.l scale=2 seed=4"; echo "$SRC/examples/lsystems/plant-context.l n=5"
      echo "$SRC/examples/lsystems/tree-3d.l n=4 rotate=0,40,0"; echo "leaf.l rotate=10,20,30"; } > mix.scene
    both scene ../mix.scene --seed 9 -o mix.ply -o mix.obj -o mix.svg --stats-json mix.json -q
    same mix.ply mix.obj mix.svg
    scene_stats ref/mix.json > ref.stats && scene_stats mpi/mix.json > mpi.stats && cmp ref.stats mpi.stats \
        || fail "mixed scene statistics differ"
    # the same self-scheduled (one thread per rank: instances taken from a shared counter), with the string
    both scene ../mix.scene --seed 9 --backend serial -o mix1.ply -o mix1.txt --stats-json mix1.json -q
    same mix1.ply mix1.txt
    scene_stats ref/mix1.json > ref.stats && scene_stats mpi/mix1.json > mpi.stats && cmp ref.stats mpi.stats \
        || fail "self-scheduled mixed scene statistics differ"
    grep -q '"polygons": [1-9]' ref/mix.json || fail "the mixed scene has no polygons" ;;
  scene-parts)  # one binary part per rank and an index glTF: the one-file glb's buffer, cut at instance ranges
    (cd ref && "$PROCGEN" scene "$SRC/examples/scenes/forest.scene" --backend serial -o f.glb -q) || fail "reference"
    (cd mpi && $MPI "$PROCGEN" scene "$SRC/examples/scenes/forest.scene" --backend serial --parts -o f.gltf -q) \
        || fail "mpirun --parts"
    # The glb's binary chunk follows the 12-byte header, the JSON chunk's 8-byte header and its JSON.
    json_length=$(od -An -tu4 -j12 -N4 ref/f.glb | tr -d ' ')
    tail -c +$((12 + 8 + json_length + 8 + 1)) ref/f.glb > ref/f.bin
    parts=$(cd mpi && ls f.part-*.bin | sort -t- -k2 -n)
    [ "$(echo "$parts" | wc -l)" -le "$RANKS" ] || fail "more parts than ranks: $parts"
    (cd mpi && cat $parts) | cmp - ref/f.bin || fail "the parts do not concatenate into the one-file buffer"
    # The same meshes (one per instance), in the same order, with the same accessors.
    glb_names() { grep -ao '"name":"instance_[0-9]*"' "$1"; }
    head -c $((20 + json_length)) ref/f.glb | glb_names /dev/stdin > ref.names
    glb_names mpi/f.gltf > mpi.names
    cmp ref.names mpi.names || fail "the index lists other meshes than the one-file glb"
    for p in $parts; do grep -q "\"uri\":\"$p\"" mpi/f.gltf || fail "the index does not reference $p"; done ;;
  fail-scene)  # the last instance's model fails only on the last rank (a parameter becomes inf)
    printf 'Lsystem: 1\nderivation length: 3\nAxiom: A(1)\nA(x) --> F(x)A(x/0)\nendlsystem\n' > mpi/bad.l
    for i in 1 2 3 4 5 6; do echo "$SRC/examples/lsystems/plant-1.24b.l n=4 at=$i,0,0"; done > mpi/bad.scene
    echo "bad.l" >> mpi/bad.scene
    expect_failure "instance 6: module 1" "^f\.|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" scene bad.scene \
        -o f.glb --stats-json f.json -q
    # the first instance's drawing fails on rank 0 while the other ranks' geometry is on its way to it
    { echo "$SRC/examples/lsystems/plant-1.24b.l n=4 scale=3e38"; sed 1d mpi/bad.scene | head -5; } > mpi/far.scene
    expect_failure "scene instance 0" "^h\.|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" scene far.scene \
        -o h.glb --stats-json h.json -q
    # the same two self-scheduled (one thread per rank): whichever rank takes the bad instance fails
    # inside its loop, and the others leave theirs, close the shared counter and stop
    expect_failure "instance 6: module 1" "^f\.|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" scene bad.scene \
        --backend serial -o f.glb --stats-json f.json -q
    expect_failure "scene instance 0" "^h\.|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" scene far.scene \
        --backend cpu --threads 1 -o h.glb -o h.txt --stats-json h.json -q
    # rank 0 cannot write the glb; then rank 1 cannot write its part
    head -6 mpi/bad.scene > mpi/good.scene
    mkdir mpi/g.glb
    expect_failure "g.glb" "^g\.(obj|mtl|json)|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" scene good.scene \
        -o g.glb -o g.obj --stats-json g.json -q
    mkdir mpi/p.part-1.bin
    expect_failure "p.part-1.bin" "^p\.(gltf|part-[02-9])|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" scene \
        good.scene --parts -o p.gltf -q ;;
  # --- octrees (docs/scaling.md "Octrees"): key ranges per rank, the tree and the query results identical ---
  octree)  # uniform and clustered points (duplicates), tree file, boxes, preview and statistics
    clustered_points
    both octree --random 30000 --leaf-size 8 -o uni.octree -o uni.ply -o uni.svg --stats-json uni.json -q
    both octree clustered.xyz -o clu.octree -o clu.obj --boxes all --stats-json clu.json -q
    both octree clustered.xyz --leaf-size 1 --max-depth 8 --backend cpu --threads 1 -o deep.octree -o deep.png \
        --image-size 160,120 -q
    same uni.octree uni.ply uni.svg clu.octree clu.obj deep.octree deep.png
    for f in uni clu; do
      octree_stats "ref/$f.json" > "ref.$f" && octree_stats "mpi/$f.json" > "mpi.$f" && cmp "ref.$f" "mpi.$f" ||
        fail "$f statistics differ"
    done ;;
  octree-query)  # routed knn / radius / box queries and locate, on both point sets
    clustered_points
    head -n 150 ref/clustered.xyz > ref/q.xyz && echo "-5 1000 50" >> ref/q.xyz && cp ref/q.xyz mpi/q.xyz
    both octree --random 20000 --query knn:9 --random-queries 400 -o uni-knn.txt -o uni.octree -q
    both octree --random 20000 --distribution plummer --leaf-size 4 --query radius:0.3 --random-queries 300 \
        -o plummer-radius.txt -q
    both octree clustered.xyz --query knn:40 --queries q.xyz -o knn.txt -q
    both octree clustered.xyz --query radius:0.5 --queries q.xyz -o radius.txt --stats-json radius.json -q
    both octree clustered.xyz --query box:-2,-2,-2,1,1,1 --queries q.xyz -o box.txt -q
    both octree clustered.xyz --leaf-size 1 --max-depth 7 --query knn:3 --random-queries 300 -o deep-knn.txt -q
    both octree clustered.xyz --query locate --random-queries 300 -o locate.txt -q
    same uni-knn.txt uni.octree plummer-radius.txt knn.txt radius.txt box.txt deep-knn.txt locate.txt
    octree_stats ref/radius.json > ref.stats && octree_stats mpi/radius.json > mpi.stats && cmp ref.stats mpi.stats ||
      fail "query statistics differ" ;;
  fail-octree)  # the last rank's input is missing (the others wait in the first collective); rank 0 cannot write
    clustered_points
    expect_failure "missing.xyz" "^t\.|procgen-tmp" -- -n $((RANKS - 1)) sh -c "$WRAP" "$PROCGEN" octree clustered.xyz \
        -o t.octree -q : -n 1 sh -c "$WRAP" "$PROCGEN" octree missing.xyz -o t.octree -q
    expect_failure "no-dir" "^t\.|procgen-tmp" -- -n "$RANKS" sh -c "$WRAP" "$PROCGEN" octree clustered.xyz \
        --query knn:4 --random-queries 50 -o t.txt -o t.ply -o no-dir/t.octree -q ;;
  # --- end of octrees ---
  *) fail "unknown case $CASE" ;;
esac
echo "ok: $CASE on $RANKS ranks"

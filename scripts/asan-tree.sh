# Sourced by scripts/asan.sh and scripts/fuzz.sh: the one ASan + UBSan build
# tree both use (build-asan, or PROCGEN_ASAN_BUILD=...), so that CI compiles
# the library with the sanitizers once, not twice.
#   - clang (libFuzzer needs it): it also compiles this tree in about half of
#     g++ 12's time (compile edges 2433 s with g++, 1330 s with clang, on the
#     same guest);
#   - a checked build (PROCGEN_CHECKED: PROCGEN_ASSERT is on): an assertion a
#     fuzzer reaches is a bug it reports;
#   - the libFuzzer targets (PROCGEN_BUILD_FUZZ): the library and the studio
#     carry coverage instrumentation (-fsanitize=fuzzer-no-link), which made
#     the ASan ctest ~15 % slower (400 s against 348, one pass each) and saves
#     ~550 s of the fuzz build's 623 s of compile edges (its library and
#     studio; the fuzz targets' own sources remain);
#   - -g1: line tables only. Sanitizer reports keep file:line; full -g only
#     makes the build slower;
#   - PROCGEN_CTEST_BATCH=16: each CTest entry runs up to 16 tests of one
#     suite in one process (tests/CMakeLists.txt): an ASan process costs ~0.2 s
#     of CPU to start, and one per test was about a third of the tests' CPU.
#     The entries are named after their suites (Suite or Suite#k): ctest -R
#     still selects. PROCGEN_CTEST_BATCH=0 in the environment: one process
#     per test.
asan_build=${PROCGEN_ASAN_BUILD:-build-asan}
configure_asan_tree() {
  CC=clang CXX=clang++ cmake -S . -B "$asan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPROCGEN_SANITIZE=address,undefined -DPROCGEN_CHECKED=ON -DPROCGEN_BUILD_FUZZ=ON -DPROCGEN_BUILD_BENCH=OFF \
    -DPROCGEN_CTEST_BATCH="${PROCGEN_CTEST_BATCH:-16}" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
  # CC and CXX count only at a tree's first configure: an older g++ tree stays g++.
  if ! grep -q '^CMAKE_CXX_COMPILER:FILEPATH=.*clang' "$asan_build/CMakeCache.txt"; then
    echo "asan-tree.sh: $asan_build was configured with another compiler than clang (the fuzz targets need clang):" \
      "remove it or set PROCGEN_ASAN_BUILD" >&2
    return 1
  fi
}

# Sourced by the scripts CI runs (test.sh, asan.sh, tsan.sh, fuzz.sh):
# a new build directory is generated for Ninja when it is
# installed (scripts/install-deps.sh installs ninja-build). Ninja schedules
# every target's compiles in one graph, so -j2 keeps both cores busy where
# Make waits at a target's last object; an existing build directory keeps the
# generator it was made with (CMake ignores CMAKE_GENERATOR for it). Set
# CMAKE_GENERATOR to choose another.
if [[ -z ${CMAKE_GENERATOR:-} ]] && command -v ninja >/dev/null; then
  export CMAKE_GENERATOR=Ninja
fi

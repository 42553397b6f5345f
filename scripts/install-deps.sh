#!/usr/bin/env bash
# Installs procgen's build and test dependencies from Debian 12 packages.
# Idempotent and non-interactive: packages already installed are skipped, and
# `apt-get update` runs only when something is missing. Nothing is downloaded
# from anywhere else and nothing is vendored.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config
  ninja-build        # the CI scripts generate new build directories for Ninja (scripts/generator.sh)
  # core libraries
  librandom123-dev   # counter-based RNG (Philox) shared by C++ and OpenCL C
  libpng-dev         # PNG previews
  libtinygltf-dev nlohmann-json3-dev libstb-dev  # glTF 2.0 writer (tinygltf needs json + stb)
  libcli11-dev       # command-line parsing
  libpugixml-dev     # flam3 genome XML (the flame reader)
  libcpp-httplib-dev  # procgen serve: the studio's HTTP server
  # optional backends (the build switches them off when missing)
  libtbb-dev                                     # cpu backend
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd  # opencl backend, PoCL runs it on the CPU
  # tests, benchmarks, fuzzing
  libgtest-dev libgmock-dev libbenchmark-dev
  libnoise-dev               # optional: the noise benchmark's peer column (benchmark only)
  flam3-utils                # flam3-render/flam3-genome: the flame tests' and benchmark's reference renderer
  flam3-palette              # flam3-palettes.xml (palette=N in genomes) and test.flam3
  libflam3-dev               # optional: flam3's own genome parser, the reader test's reference
  libopenvdb-dev libboost-dev  # optional: .vdb volume output (the build switches it off when missing)
  libopenmpi-dev openmpi-bin   # optional: mpirun -n R procgen ... (docs/scaling.md) and its tests
  clang libclang-rt-14-dev   # libFuzzer + sanitizer runtimes
  chromium                   # the studio's browser tests (driven by playwright-core, headless)
)

# The studio page is bundled with npm packages (three.js, CodeMirror, esbuild)
# at build time: Debian's nodejs and npm, unless a node with npm is already
# installed (e.g. from NodeSource, whose nodejs conflicts with Debian's npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

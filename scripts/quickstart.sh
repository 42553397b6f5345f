#!/usr/bin/env bash
# First contact: installs the Debian dependencies, builds procgen, then derives
# and draws every shipped example L-system, writing a PNG preview, an OBJ mesh
# and a glTF scene per model into procgen-out/ (or the folder given as $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-procgen-out}
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target procgen_cli
mkdir -p "$out"
for model in examples/lsystems/*.l; do
  name=$(basename "$model" .l)
  build/procgen lsystem "$model" -o "$out/$name.png" -o "$out/$name.obj" -o "$out/$name.glb" \
    --stats-json "$out/$name.json" --quiet
  printf '  %-28s %s\n' "$name" "$(grep -o '"modules": *[0-9]*' "$out/$name.json" | head -1)"
done
echo "procgen: wrote PNG previews, OBJ meshes and glTF scenes to $(cd "$out" && pwd)"

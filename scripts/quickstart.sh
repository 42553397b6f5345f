#!/usr/bin/env bash
# First contact: installs the Debian dependencies, builds procgen, then derives
# and draws every shipped example L-system, writing a PNG preview, an OBJ mesh
# and a glTF scene per model into procgen-out/ (or the folder given as $1).
# Previews use the iteration counts of the ABOP figures
# (examples/lsystems/previews.txt); the .l files keep the paper's counts.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-procgen-out}
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target procgen_cli
mkdir -p "$out"

# model -> "iterations flags..." from the previews table
declare -A preview
while read -r model iterations flags; do
  [[ -z "$model" || "$model" == \#* ]] && continue
  preview[$model]="-n $iterations $flags"
done < examples/lsystems/previews.txt

for model in examples/lsystems/*.l; do
  name=$(basename "$model" .l)
  # shellcheck disable=SC2086  # the flags are meant to split into words
  build/procgen lsystem "$model" ${preview[$name]:-} \
    -o "$out/$name.png" -o "$out/$name.obj" -o "$out/$name.glb" \
    --stats-json "$out/$name.json" --quiet
  printf '  %-20s %s\n' "$name" "$(grep -o '"modules": *[0-9]*' "$out/$name.json" | head -1)"
done
echo "procgen: wrote PNG previews, OBJ meshes and glTF scenes to $(cd "$out" && pwd)"
if [ -x build/procgen ] && build/procgen serve --help >/dev/null 2>&1; then
  echo "procgen: to edit the models live in the browser: build/procgen serve  (then open http://127.0.0.1:8080/)"
fi

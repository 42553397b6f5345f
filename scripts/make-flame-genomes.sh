#!/usr/bin/env bash
# Regenerates examples/flames/*.flam3: random genomes from Debian's
# flam3-genome (flam3-utils 3.1.1) with fixed seeds, one file per genome class
# of issue 19's benchmark, two flames each. seed and isaac_seed fix flam3's two
# random streams and noedits=1 drops the <edit> provenance (it carries the
# date), so the output is byte-identical on every run; check with
#   bash scripts/make-flame-genomes.sh && git diff --exit-code examples/flames
# The template sets the size (16:9, so flam3-render's ss=2 gives 1280x720 for
# the benchmark and ss=0.25 gives 160x90 for the tests) and a moderate quality;
# flam3-genome chooses everything else (xforms, variations, camera, palette).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v flam3-genome >/dev/null || { echo "flam3-genome not found: apt-get install flam3-utils" >&2; exit 1; }

out=examples/flames
template=$(mktemp --suffix=.flam3)
trap 'rm -f "$template"' EXIT
cat > "$template" <<'XML'
<flame size="640 360" quality="25" supersample="1" filter="0.5" brightness="4" gamma="4" vibrancy="1" background="0 0 0"/>
XML

# class seed use_vars (flam3's variation indices; empty: all 99)
make_class() {
  local name=$1 seed=$2 vars=$3
  if [[ -n $vars ]]; then
    env template="$template" seed="$seed" isaac_seed="$seed" noedits=1 repeat=2 use_vars="$vars" \
      flam3-genome > "$out/$name.flam3"
  else
    env template="$template" seed="$seed" isaac_seed="$seed" noedits=1 repeat=2 \
      flam3-genome > "$out/$name.flam3"
  fi
  echo "$out/$name.flam3"
}

make_class linear 101 0                      # linear only: affine IFS
make_class mixed 203 ""                      # flam3-genome's own choice among all 99 variations
# trig-heavy: sinusoidal, cosine and the complex trigonometric/hyperbolic family (exp … coth)
make_class trig 301 1,20,82,83,84,85,86,87,88,89,90,91,92,93,94,95

// atan2 over a batch (flame/flame_math.hpp), the presorted chaos game's
// precalculation of flam3's angles (variations.c apply_xform): the loop of
// math::atan2f has no control flow, so it vectorises (4 doubles per AVX2
// instruction: 2.4× the scalar throughput, measured). Compiled with
// -ffp-contract=off (no FMA in the AVX-512 variant) and -fno-trapping-math
// (lets the compiler turn the selects into vector blends; it changes no
// value) — see CMakeLists.txt — so every variant gives atan2f's bits.
#include "flame/flame_math.hpp"

namespace procgen::flame::math {
namespace {

[[gnu::always_inline]] inline void atan2Loop(const float* __restrict y, const float* __restrict x,
                                             float* __restrict out, uint32_t n) {
  for (uint32_t j = 0; j < n; ++j) out[j] = atan2f(y[j], x[j]);
}

[[gnu::target("avx512f")]] void atan2Avx512(const float* y, const float* x, float* out, uint32_t n) {
  atan2Loop(y, x, out, n);
}
[[gnu::target("avx2")]] void atan2Avx2(const float* y, const float* x, float* out, uint32_t n) {
  atan2Loop(y, x, out, n);
}
void atan2Plain(const float* y, const float* x, float* out, uint32_t n) { atan2Loop(y, x, out, n); }

using Atan2Variant = void (*)(const float*, const float*, float*, uint32_t);
constexpr Atan2Variant kVariants[] = {atan2Plain, atan2Avx2, atan2Avx512};

bool cpuRuns(int isa) {
  __builtin_cpu_init();
  return isa == 0 || (isa == 1 && __builtin_cpu_supports("avx2")) || (isa == 2 && __builtin_cpu_supports("avx512f"));
}

int bestIsa() {
  for (int isa = 2; isa > 0; --isa)
    if (cpuRuns(isa)) return isa;
  return 0;
}

const Atan2Variant kBest = kVariants[bestIsa()];

}  // namespace

void atan2Batch(const float* y, const float* x, float* out, uint32_t n) { kBest(y, x, out, n); }

int bestVectorIsa() { return bestIsa(); }

bool atan2BatchIsaSupported(int isa) { return isa >= 0 && isa <= 2 && cpuRuns(isa); }

void atan2BatchForIsa(int isa, const float* y, const float* x, float* out, uint32_t n) {
  kVariants[isa](y, x, out, n);
}

}  // namespace procgen::flame::math

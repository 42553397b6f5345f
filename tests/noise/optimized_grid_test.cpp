// The optimized noise grid (src/noise/grid_optimized.hpp) against the naive
// per-point path (every point on its own through fractal.h: the independent
// reference), on every instruction set this CPU has, over random parameters
// and grids — odd sizes, negative and far (1e7) origins, tiles, every fractal,
// dimension and time setting, both the coefficient mode (low lattice
// frequencies) and the lane mode (high ones); serial ≡ cpu bit for bit at
// 1/2/7 threads; the returned min/max equal a recomputation over the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "noise/grid_optimized.hpp"
#include "procgen/noise.hpp"

namespace procgen {
namespace {

/// Absolute difference allowed between the optimized and the naive grid. The
/// lane mode repeats the per-point arithmetic exactly; the coefficient mode
/// regroups it (products of fade weights instead of nested lerps), which moves
/// a value by a few float ulps of the interpolated terms: 1.9e-6 at most over
/// 2000 random grids when this was written.
constexpr float kOptimizedTolerance = 1e-5f;

struct Case {
  NoiseParams params;
  NoiseGrid grid;
  std::string describe() const {
    std::ostringstream os;
    os << noiseTypeName(params.type) << " dims " << params.dims << (params.time ? " +time" : "") << " fractal "
       << static_cast<int>(params.fractal) << " octaves " << params.octaves << " freq " << params.frequency
       << " weighted " << params.weighted_strength << " tile " << grid.tile << " size " << grid.size[0] << "x"
       << grid.size[1] << "x" << grid.size[2] << "x" << grid.size[3] << " origin " << grid.origin[0] << ","
       << grid.origin[1] << "," << grid.origin[2] << "," << grid.origin[3] << " step " << grid.step;
    return os.str();
  }
};

/// A random valid case; `types` picks from Perlin and value (the grid path)
/// or from all four (simplex and cellular take the fallback).
Case randomCase(std::mt19937_64& rng, bool all_types) {
  for (;;) {
    Case c;
    NoiseParams& p = c.params;
    NoiseGrid& g = c.grid;
    const NoiseType grid_types[] = {NoiseType::kPerlin, NoiseType::kValue};
    const NoiseType every_type[] = {NoiseType::kPerlin, NoiseType::kValue, NoiseType::kSimplex,
                                    NoiseType::kCellular};
    p.type = all_types ? every_type[rng() % 4] : grid_types[rng() % 2];
    p.dims = 2 + static_cast<int>(rng() % 3);
    if (p.dims < 4 && rng() % 3 == 0) p.time = static_cast<double>(rng() % 2000) / 37.0 - 20.0;
    p.fractal = static_cast<FractalType>(rng() % 5);
    p.octaves = 1 + static_cast<int>(rng() % 8);
    p.lacunarity = rng() % 3 == 0 ? 1.7f + static_cast<float>(rng() % 100) / 100.0f : 2.0f;
    p.gain = 0.3f + static_cast<float>(rng() % 50) / 100.0f;
    p.frequency = 0.0007 + static_cast<double>(rng() % 1000) / 1000.0 * 0.4;
    p.weighted_strength = rng() % 3 == 0 ? static_cast<float>(rng() % 100) / 100.0f : 0.0f;
    p.seed = rng();
    g.tile = rng() % 4 == 0;
    const uint64_t max_size = p.dims == 2 ? 90 : p.dims == 3 ? 33 : 11;
    for (int d = 0; d < p.dims; ++d) {
      g.size[d] = 1 + rng() % max_size;
      const double far = rng() % 4 == 0 ? 1e7 : 1.0;
      g.origin[d] = far * (static_cast<double>(rng() % 4001) - 2000.0) / 7.0;
    }
    g.step = 0.05 + static_cast<double>(rng() % 200) / 40.0;
    try {
      validateNoise(p, &g);
    } catch (const Error&) {
      continue;  // e.g. far origin · high octave beyond 2^31 cells
    }
    return c;
  }
}

NoiseRange recomputedRange(const std::vector<float>& v) {
  NoiseRange r{v[0], v[0]};
  for (float x : v) {
    r.min = std::min(r.min, x);
    r.max = std::max(r.max, x);
  }
  return r;
}

/// The instruction sets to try: 1 baseline, 2 AVX2, 3 AVX-512 — those this
/// CPU has (setOptimizedGridIsaForTesting falls back to the best it has).
std::vector<int> isas() {
  std::vector<int> out;
  for (int isa = 1; isa <= 3; ++isa)
    if (detail::setOptimizedGridIsaForTesting(isa) == isa) out.push_back(isa);
  detail::setOptimizedGridIsaForTesting(0);
  return out;
}

struct IsaScope {
  explicit IsaScope(int isa) { detail::setOptimizedGridIsaForTesting(isa); }
  ~IsaScope() { detail::setOptimizedGridIsaForTesting(0); }
};

void expectMatchesNaive(const Case& c, const std::vector<float>& naive, const NoiseRange& naive_range,
                        const Execution& execution, const std::string& label) {
  std::vector<float> got = test::poisoned<float>(c.grid.points());
  const NoiseRange r = generateNoise(c.params, c.grid, got, execution, NoiseEvaluation::kOptimized);
  float worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float diff = std::isfinite(got[i]) ? std::fabs(got[i] - naive[i]) : INFINITY;
    if (!(diff <= worst)) {
      worst = diff;
      worst_at = i;
    }
  }
  ASSERT_LE(worst, kOptimizedTolerance) << label << ": " << c.describe() << "\n  at point " << worst_at
                                        << ": optimized " << got[worst_at] << " naive " << naive[worst_at];
  const NoiseRange actual = recomputedRange(got);
  EXPECT_EQ(r.min, actual.min) << label << ": " << c.describe();
  EXPECT_EQ(r.max, actual.max) << label << ": " << c.describe();
  EXPECT_NEAR(r.min, naive_range.min, kOptimizedTolerance) << label << ": " << c.describe();
  EXPECT_NEAR(r.max, naive_range.max, kOptimizedTolerance) << label << ": " << c.describe();
}

TEST(NoiseOptimizedGrid, MatchesNaiveOnRandomGridsOnEveryInstructionSet) {
  std::mt19937_64 rng(20261125);
  const std::vector<int> sets = isas();
  ASSERT_FALSE(sets.empty());
  for (int trial = 0; trial < 400; ++trial) {
    const Case c = randomCase(rng, /*all_types=*/false);
    std::vector<float> naive = test::poisoned<float>(c.grid.points());
    const NoiseRange nr = generateNoise(c.params, c.grid, naive, Execution{}, NoiseEvaluation::kNaive);
    for (int isa : sets) {
      IsaScope scope(isa);
      expectMatchesNaive(c, naive, nr, Execution{}, "isa " + std::to_string(isa));
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

// The benchmark's volume, scaled down: 3D Perlin fBm at 8 octaves crosses from
// the coefficient mode (octaves 1–6: several points per cell) to the lane mode
// (octaves 7–8), over rows that are not a whole number of vectors.
TEST(NoiseOptimizedGrid, MatchesNaiveOnTheBenchmarkVolume) {
  NoiseParams p;
  p.octaves = 8;
  NoiseGrid g;
  g.size = {77, 40, 24, 1};
  g.origin = {-33.5, 1e7, -2e6, 0};
  std::vector<float> naive(g.points());
  const NoiseRange nr = generateNoise(p, g, naive, Execution{}, NoiseEvaluation::kNaive);
  for (int isa : isas()) {
    IsaScope scope(isa);
    expectMatchesNaive({p, g}, naive, nr, Execution{}, "isa " + std::to_string(isa));
  }
}

// Types the grid path does not specialise (simplex, cellular, warped fields)
// go through the naive rows: the same bits.
TEST(NoiseOptimizedGrid, FallbackTypesEqualNaive) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    Case c = randomCase(rng, /*all_types=*/true);
    const bool grid_type = c.params.type == NoiseType::kPerlin || c.params.type == NoiseType::kValue;
    if (trial % 5 == 0 || grid_type) {  // Perlin and value take the fallback only when warped
      c.params.warp = DomainWarp::kSingle;
      c.params.warp_amplitude = 3.0f;
    }
    if (c.params.type == NoiseType::kCellular && c.params.dims + (c.params.time ? 1 : 0) > 3) continue;
    try {
      validateNoise(c.params, &c.grid);
    } catch (const Error&) {
      continue;
    }
    std::vector<float> naive(c.grid.points()), opt(c.grid.points());
    generateNoise(c.params, c.grid, naive, Execution{}, NoiseEvaluation::kNaive);
    generateNoise(c.params, c.grid, opt, Execution{}, NoiseEvaluation::kOptimized);
    ASSERT_EQ(0, std::memcmp(naive.data(), opt.data(), naive.size() * sizeof(float))) << c.describe();
  }
}

// A grid of 4 MiB or more is written with streaming stores, from each row's
// first 64-byte boundary on (the columns before it and after the last whole
// vector one by one): an odd row width and an output starting 3 floats past
// an allocation move those boundaries around. The values must match the naive
// path as in small grids, every instruction set must give the same bits, and
// the floats around the span must stay untouched.
TEST(NoiseOptimizedGrid, LargeGridsWrittenAroundTheCacheMatchNaive) {
  NoiseParams p;
  p.octaves = 2;
  p.frequency = 0.031;
  NoiseGrid g;
  g.size = {131, 97, 83, 1};  // 1054681 points, 4.2 MB
  g.origin = {-7.25, 3.0, 1e5, 0};
  ASSERT_GE(g.points() * sizeof(float), size_t{4} << 20);
  std::vector<float> naive(g.points());
  generateNoise(p, g, naive, Execution{}, NoiseEvaluation::kNaive);
  std::vector<float> first;
  for (int isa : isas()) {
    IsaScope scope(isa);
    std::vector<float> buffer = test::poisoned<float>(g.points() + 8);
    const float poison = buffer[0];
    std::span<float> out(buffer.data() + 3, g.points());
    generateNoise(p, g, out, Execution{}, NoiseEvaluation::kOptimized);
    float worst = 0;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::fabs(out[i] - naive[i]));
    EXPECT_LE(worst, kOptimizedTolerance) << "isa " << isa;
    for (size_t i : {size_t{0}, size_t{1}, size_t{2}, g.points() + 3, g.points() + 7})
      EXPECT_EQ(0, std::memcmp(&buffer[i], &poison, sizeof(float))) << "isa " << isa << " wrote outside at " << i;
    if (first.empty()) first.assign(out.begin(), out.end());
    EXPECT_EQ(0, std::memcmp(first.data(), out.data(), out.size() * sizeof(float))) << "isa " << isa;
  }
}

// The cpu stage spreads the same blocks over threads: bit-identical to serial
// at every thread count, and the same min/max.
TEST(NoiseOptimizedGrid, CpuIsBitIdenticalToSerialAtEveryThreadCount) {
  if (!backendAvailable(Backend::kCpu)) GTEST_SKIP() << "cpu backend not built (no oneTBB)";
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    Case c = randomCase(rng, /*all_types=*/false);
    if (trial == 0) {  // one grid with many blocks
      c.params = NoiseParams{};
      c.grid.size = {67, 45, 31, 1};
      c.grid.tile = false;
    }
    std::vector<float> serial(c.grid.points());
    const NoiseRange sr = generateNoise(c.params, c.grid, serial, Execution{Backend::kSerial, 1});
    for (int threads : {1, 2, 7}) {
      std::vector<float> cpu = test::poisoned<float>(c.grid.points());
      const NoiseRange cr = generateNoise(c.params, c.grid, cpu, Execution{Backend::kCpu, threads});
      ASSERT_EQ(0, std::memcmp(serial.data(), cpu.data(), serial.size() * sizeof(float)))
          << "cpu x" << threads << ": " << c.describe();
      EXPECT_EQ(sr.min, cr.min);
      EXPECT_EQ(sr.max, cr.max);
    }
  }
}

// Every instruction set gives the same bits (multiply-adds are fused at the
// same operations on each: FMA instructions, or fmaf in the baseline), so
// checksums agree between AVX-512, AVX2 and older machines. Random cases, then
// slabs of the benchmark volume (frequency 0.0173, 8 octaves: coefficient mode
// up to octave 5, lane mode above, where AVX-512 looks gradients up in tables)
// for every fractal and a weighted sum.
TEST(NoiseOptimizedGrid, InstructionSetsGiveTheSameBits) {
  const std::vector<int> sets = isas();
  if (sets.size() < 2) GTEST_SKIP() << "only one instruction set on this CPU";
  std::mt19937_64 rng(5);
  std::vector<Case> cases;
  for (int trial = 0; trial < 40; ++trial) cases.push_back(randomCase(rng, /*all_types=*/false));
  for (int fractal = 1; fractal <= 5; ++fractal) {
    Case c;
    c.params.octaves = 8;
    c.params.frequency = 0.0173;
    c.params.fractal = static_cast<FractalType>(fractal == 5 ? 1 : fractal);  // fbm, ridged, billow, ping-pong, fbm
    c.params.weighted_strength = fractal == 5 ? 0.6f : 0.0f;
    c.params.seed = 100 + fractal;
    c.grid.size = {128, 9, 40, 1};
    c.grid.origin = {-3.0, 17.0 * fractal, -11.0, 0.0};
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    std::vector<float> first;
    for (int isa : sets) {
      IsaScope scope(isa);
      std::vector<float> v(c.grid.points());
      generateNoise(c.params, c.grid, v, Execution{});
      if (first.empty()) first = v;
      ASSERT_EQ(0, std::memcmp(first.data(), v.data(), v.size() * sizeof(float)))
          << "isa " << isa << ": " << c.describe();
    }
  }
}

// A tiled grid is periodic (the column after the last would equal the first):
// the grid path gets it from the wrapped cells alone, so the last column meets
// the first as smoothly as neighbouring columns meet.
TEST(NoiseOptimizedGrid, TiledRowsWrapAround) {
  NoiseParams p;
  p.dims = 2;
  p.frequency = 0.05;
  NoiseGrid g;
  g.size = {64, 48, 1, 1};
  g.tile = true;
  std::vector<float> v(g.points());
  generateNoise(p, g, v, Execution{});
  std::vector<float> naive(g.points());
  generateNoise(p, g, naive, Execution{}, NoiseEvaluation::kNaive);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(v[i], naive[i], kOptimizedTolerance) << i;
  // Opposite edges meet smoothly: the wrap-around neighbours differ about as
  // much as interior neighbours (a seam would jump).
  double seam = 0, interior = 0;
  for (uint64_t y = 0; y < g.size[1]; ++y) {
    seam = std::max(seam, static_cast<double>(std::fabs(v[y * 64 + 63] - v[y * 64])));
    interior = std::max(interior, static_cast<double>(std::fabs(v[y * 64 + 1] - v[y * 64])));
  }
  EXPECT_LT(seam, 3 * interior + 1e-3);
}

}  // namespace
}  // namespace procgen

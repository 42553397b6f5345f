// Noise grids on every backend (issue 17, "Tests"): serial ≡ cpu bit for bit
// at 1, 2 and 7 threads; opencl within kNoiseOpenCLTolerance with the same
// min/max; the naive and optimized grids agree; every point written; the
// returned min/max are those of the values written.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "procgen/noise.hpp"

namespace procgen {
namespace {

using test::BackendTest;

struct Case {
  std::string name;
  NoiseParams params;
  NoiseGrid grid;
};

std::vector<Case> parityCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, NoiseType type, int dims, FractalType fractal, int octaves,
                 std::array<uint64_t, 4> size, bool tile = false) {
    Case c;
    c.name = std::move(name);
    c.params.type = type;
    c.params.dims = dims;
    c.params.fractal = fractal;
    c.params.octaves = octaves;
    c.params.seed = 0x1234567890abcdefULL;
    c.grid.size = size;
    c.grid.origin = {-3.25, 17.5, 1e3, -2.0};
    c.grid.step = 1.5;
    c.grid.tile = tile;
    cases.push_back(c);
  };
  for (NoiseType type : {NoiseType::kPerlin, NoiseType::kSimplex, NoiseType::kValue}) {
    std::string t(noiseTypeName(type));
    add(t + "2", type, 2, FractalType::kFbm, 4, {61, 37, 1, 1});
    add(t + "3", type, 3, FractalType::kRidged, 3, {19, 23, 11, 1});
    add(t + "4", type, 4, FractalType::kBillow, 2, {9, 7, 5, 3});
  }
  add("cellular2", NoiseType::kCellular, 2, FractalType::kNone, 1, {41, 29, 1, 1});
  add("cellular3", NoiseType::kCellular, 3, FractalType::kPingPong, 2, {13, 11, 9, 1});
  add("perlin3tile", NoiseType::kPerlin, 3, FractalType::kFbm, 3, {16, 12, 8, 1}, true);

  // groups of the opencl optimized grid crossing many cells: octaves whose
  // footprint overflows the local cache run per point
  add("perlin3octaves8", NoiseType::kPerlin, 3, FractalType::kFbm, 8, {40, 36, 20, 1});
  cases.back().params.frequency = 0.11;
  add("perlin2octaves8", NoiseType::kPerlin, 2, FractalType::kPingPong, 8, {100, 90, 1, 1});
  cases.back().params.frequency = 0.07;
  Case warp = cases[1];
  warp.name = "perlin3warp";
  warp.params.warp = DomainWarp::kFractal;
  warp.params.warp_amplitude = 20.0f;
  warp.params.weighted_strength = 0.5f;
  cases.push_back(warp);
  Case time = cases[0];
  time.name = "perlin2time";
  time.params.time = 12.75;
  cases.push_back(time);
  return cases;
}

class NoiseParity : public BackendTest {};

void expectRangeOfValues(const std::vector<float>& v, NoiseRange r, const std::string& what) {
  float lo = INFINITY, hi = -INFINITY;
  for (float x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_EQ(r.min, lo) << what;
  EXPECT_EQ(r.max, hi) << what;
}

TEST_P(NoiseParity, MatchesSerialNaive) {
  for (const Case& c : parityCases()) {
    SCOPED_TRACE(c.name);
    const uint64_t n = c.grid.points();
    std::vector<float> want(n);
    generateNoise(c.params, c.grid, want, Execution{Backend::kSerial, 1}, NoiseEvaluation::kNaive);
    for (NoiseEvaluation eval : {NoiseEvaluation::kNaive, NoiseEvaluation::kOptimized}) {
      std::vector<float> got = test::poisoned<float>(n);
      const NoiseRange r = generateNoise(c.params, c.grid, got, execution(), eval);
      const bool exact = variant().backend != Backend::kOpenCL && eval == NoiseEvaluation::kNaive;
      const double tol = exact ? 0.0 : kNoiseOpenCLTolerance;
      uint64_t bad = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const bool ok = exact ? test::floatBits(got[i]) == test::floatBits(want[i])
                              : std::fabs(double(got[i]) - want[i]) <= tol;
        if (!ok && bad++ < 5)
          ADD_FAILURE() << (eval == NoiseEvaluation::kNaive ? "naive" : "optimized") << " point " << i << ": got "
                        << got[i] << " want " << want[i];
      }
      EXPECT_EQ(bad, 0u);
      expectRangeOfValues(got, r, "returned min/max");
      float lo = INFINITY, hi = -INFINITY;
      for (float x : want) lo = std::min(lo, x), hi = std::max(hi, x);
      EXPECT_NEAR(r.min, lo, tol);
      EXPECT_NEAR(r.max, hi, tol);
    }
  }
}

TEST_P(NoiseParity, CpuChunksOfOneRowAreBitIdentical) {
  // Forced tiny chunks: every row (and its min/max) on its own task.
  if (variant().backend != Backend::kCpu) GTEST_SKIP() << "cpu chunking only";
  for (const Case& c : parityCases()) {
    SCOPED_TRACE(c.name);
    std::vector<float> want(c.grid.points());
    const NoiseRange rw = generateNoise(c.params, c.grid, want, Execution{Backend::kSerial, 1});
    test::CpuChunkScope chunk(1);
    std::vector<float> got = test::poisoned<float>(c.grid.points());
    const NoiseRange rg = generateNoise(c.params, c.grid, got, execution());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(test::floatBits(got[i]), test::floatBits(want[i])) << i;
    EXPECT_EQ(rg.min, rw.min);
    EXPECT_EQ(rg.max, rw.max);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, NoiseParity, testing::ValuesIn(test::backendVariants()), test::variantName);

}  // namespace
}  // namespace procgen

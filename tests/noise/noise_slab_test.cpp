// generateNoiseSlab (the part of a grid one MPI rank generates) against the
// whole grid: slabs of the slowest axis, concatenated, are generateNoise's
// values bit for bit on serial and cpu (opencl within its tolerance) — tiled
// grids included, whose periods come from the whole grid — and each slab's
// min/max are those of its values. Bad slabs are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/backends.hpp"
#include "procgen/distributed.hpp"
#include "procgen/noise.hpp"

namespace procgen {
namespace {

class NoiseSlabs : public test::BackendTest {};

struct SlabCase {
  const char* name;
  NoiseType type;
  int dims;
  std::array<uint64_t, 4> size;
  bool tile;
};

TEST_P(NoiseSlabs, SlabsConcatenateToTheWholeGrid) {
  const SlabCase cases[] = {{"perlin2", NoiseType::kPerlin, 2, {37, 29, 1, 1}, false},
                            {"simplex3", NoiseType::kSimplex, 3, {13, 11, 17, 1}, false},
                            {"value3tile", NoiseType::kValue, 3, {12, 10, 9, 1}, true},
                            {"cellular3", NoiseType::kCellular, 3, {9, 8, 7, 1}, false},
                            {"perlin4", NoiseType::kPerlin, 4, {7, 6, 5, 6}, false}};
  for (const SlabCase& c : cases) {
    SCOPED_TRACE(c.name);
    NoiseParams params;
    params.type = c.type;
    params.dims = c.dims;
    params.octaves = 3;
    params.frequency = 0.093;
    NoiseGrid grid;
    grid.size = c.size;
    grid.origin = {-7.3, 2.25, 1e3 + 0.1, 5};
    grid.step = 0.37;  // not a power of two: origin + step·(first + i) ≠ (origin + step·first) + step·i
    grid.tile = c.tile;
    std::vector<float> whole(grid.points());
    generateNoise(params, grid, whole, execution());
    const int axis = c.dims - 1;
    const uint64_t depth = grid.size[size_t(axis)], plane = grid.points() / depth;
    for (int slabs : {2, 3, int(depth)}) {
      std::vector<float> joined;
      for (int r = 0; r < slabs; ++r) {
        const distributed::Block b = distributed::blockOf(depth, r, slabs);
        std::vector<float> part = test::poisoned<float>((b.end - b.begin) * plane);
        const NoiseRange range = generateNoiseSlab(params, grid, axis, b.begin, b.end, part, execution());
        float lo = INFINITY, hi = -INFINITY;
        for (float v : part) lo = std::min(lo, v), hi = std::max(hi, v);
        EXPECT_EQ(range.min, lo);
        EXPECT_EQ(range.max, hi);
        joined.insert(joined.end(), part.begin(), part.end());
      }
      ASSERT_EQ(joined.size(), whole.size());
      const double tol = variant().backend == Backend::kOpenCL ? kNoiseOpenCLTolerance : 0.0;
      uint64_t bad = 0;
      for (size_t i = 0; i < whole.size(); ++i) {
        const bool ok = tol == 0.0 ? test::floatBits(joined[i]) == test::floatBits(whole[i])
                                   : std::fabs(double(joined[i]) - whole[i]) <= tol;
        if (!ok && bad++ < 5) ADD_FAILURE() << slabs << " slabs, point " << i << ": " << joined[i] << " vs " << whole[i];
      }
      EXPECT_EQ(bad, 0u) << slabs << " slabs";
    }
  }
}

TEST(NoiseSlabArguments, EmptyOrOutOfRangeSlabsAreRefused) {
  NoiseParams params;
  NoiseGrid grid;
  grid.size = {4, 4, 4, 1};
  std::vector<float> out(16);
  const Execution serial{Backend::kSerial, 1};
  EXPECT_THROW(generateNoiseSlab(params, grid, 2, 2, 2, out, serial), Error);   // empty
  EXPECT_THROW(generateNoiseSlab(params, grid, 2, 3, 5, out, serial), Error);   // beyond the grid
  EXPECT_THROW(generateNoiseSlab(params, grid, 2, 0, 2, out, serial), Error);   // 32 points, room for 16
  EXPECT_NO_THROW(generateNoiseSlab(params, grid, 2, 3, 4, out, serial));
}

INSTANTIATE_TEST_SUITE_P(Backends, NoiseSlabs, testing::ValuesIn(test::backendVariants()), test::variantName);

}  // namespace
}  // namespace procgen

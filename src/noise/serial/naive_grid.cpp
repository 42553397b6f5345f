// The naive grid (paper shared/seeds/001_191daa7b81372e37.txt §5, the
// "Unopt. Perlin" column): every point on its own — its coordinates split into
// cell and fraction per octave, then the whole sample of fractal.h — with no
// caching between neighbours. The independent check of the optimized grids.
#include "noise/noise_stages.hpp"

namespace procgen::detail {

NoiseRange naiveRows(const NoiseSetup& setup, uint64_t row_begin, uint64_t row_end, std::span<float> out) {
  NoiseRange range = emptyRange();
  const uint64_t nx = setup.size[0];
  uint32_t cells[kMaxOctaves * 4];
  float fracs[kMaxOctaves * 4];
  for (uint64_t row = row_begin; row < row_end; ++row) {
    // row = y + size[1]·(z + size[2]·w)
    uint64_t rest = row;
    double field[4];
    for (int d = 1; d < 4; ++d) {
      field[d] = setup.fieldCoordinate(d, rest % setup.size[d]);
      rest /= setup.size[d];
    }
    float* dst = out.data() + row * nx;
    for (uint64_t x = 0; x < nx; ++x) {
      field[0] = setup.fieldCoordinate(0, x);
      splitPoint(setup, field, cells, fracs);
      float v = pgNoiseSample(&setup.cfg, cells, fracs, nullptr);
      dst[x] = v;
      range.min = v < range.min ? v : range.min;
      range.max = v > range.max ? v : range.max;
    }
  }
  return range;
}

NoiseRange serialNaiveGrid(const NoiseSetup& setup, std::span<float> out) {
  return naiveRows(setup, 0, setup.rows(), out);
}

}  // namespace procgen::detail

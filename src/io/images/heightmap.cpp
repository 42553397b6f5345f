// Float fields (heightmaps, noise) to 16-bit gray samples for encodePng, with
// the mapping stated in image.hpp: linear from [low, high] to [0, 65535].
#include <algorithm>
#include <cmath>
#include <string>

#include "procgen/error.hpp"
#include "procgen/image.hpp"

namespace procgen {

Heightmap16 heightmapToGray16(const float* values, int width, int height, size_t row_stride, float low,
                              float high) {
  if (width < 1 || height < 1 || !values)
    throw Error("heightmap: size must be positive with values, got " + std::to_string(width) + "x" +
                    std::to_string(height),
                ExitCode::kUsage);
  const size_t stride = row_stride == 0 ? size_t(width) : row_stride;
  if (stride < size_t(width)) throw Error("heightmap: row stride shorter than a row", ExitCode::kUsage);
  auto at = [&](int x, int y) { return values[size_t(y) * stride + size_t(x)]; };

  const bool automatic = low == 0.0f && high == 0.0f;
  if (automatic) {
    float lo = INFINITY, hi = -INFINITY;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const float v = at(x, y);
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    if (lo > hi) lo = hi = 0.0f;  // no finite value
    low = lo;
    high = hi;
  } else if (!std::isfinite(low) || !std::isfinite(high) || !(low < high)) {
    throw Error("heightmap: the range must be finite with low < high", ExitCode::kUsage);
  }

  Heightmap16 out;
  out.width = width;
  out.height = height;
  out.low = low;
  out.high = high;
  out.samples.resize(size_t(width) * size_t(height));
  // In double: (v - low) / (high - low) must not overflow for extreme float ranges.
  const double span = double(high) - double(low);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const float v = at(x, y);
      double t = span > 0.0 && !std::isnan(v) ? (double(v) - double(low)) / span : 0.0;
      t = std::clamp(t, 0.0, 1.0);
      out.samples[size_t(y) * size_t(width) + size_t(x)] = static_cast<uint16_t>(std::lround(t * 65535.0));
    }
  return out;
}

}  // namespace procgen

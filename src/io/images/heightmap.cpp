// Float fields (heightmaps, noise) to images, with the mapping stated in
// image.hpp: linear from [low, high] to [0, 1], then to 16-bit gray, 8-bit
// gray or a colour map. One range rule and one normalization serve all three.
#include <algorithm>
#include <cmath>
#include <string>

#include "procgen/error.hpp"
#include "procgen/image.hpp"

namespace procgen {
namespace {

struct FieldAccess {
  const float* values;
  int width, height;
  size_t stride;
  float at(int x, int y) const { return values[size_t(y) * stride + size_t(x)]; }
};

// Checks the view and settles [low, high] (automatic when both are 0).
FieldAccess prepare(const char* what, const float* values, int width, int height, size_t row_stride, float& low,
                    float& high) {
  if (width < 1 || height < 1 || !values)
    throw Error(std::string(what) + ": size must be positive with values, got " + std::to_string(width) + "x" +
                    std::to_string(height),
                ExitCode::kUsage);
  const size_t stride = row_stride == 0 ? size_t(width) : row_stride;
  if (stride < size_t(width)) throw Error(std::string(what) + ": row stride shorter than a row", ExitCode::kUsage);
  FieldAccess f{values, width, height, stride};
  if (low == 0.0f && high == 0.0f) {
    float lo = INFINITY, hi = -INFINITY;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const float v = f.at(x, y);
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    if (lo > hi) lo = hi = 0.0f;  // no finite value
    low = lo;
    high = hi;
  } else if (!std::isfinite(low) || !std::isfinite(high) || !(low < high)) {
    throw Error(std::string(what) + ": the range must be finite with low < high", ExitCode::kUsage);
  }
  return f;
}

// In double: (v - low) / (high - low) must not overflow for extreme float ranges.
double unit(float v, float low, float high) {
  const double span = double(high) - double(low);
  const double t = span > 0.0 && !std::isnan(v) ? (double(v) - double(low)) / span : 0.0;
  return std::clamp(t, 0.0, 1.0);
}

struct Anchor {
  float t, r, g, b;
};

// matplotlib's viridis (_viridis_data, every 25.5th entry) and terrain (_terrain_data).
constexpr Anchor kViridis[] = {
    {0.0f, 0.267004f, 0.004874f, 0.329415f}, {0.1f, 0.282623f, 0.140926f, 0.457517f},
    {0.2f, 0.253935f, 0.265254f, 0.529983f}, {0.3f, 0.206756f, 0.371758f, 0.553117f},
    {0.4f, 0.163625f, 0.471133f, 0.558148f}, {0.5f, 0.127568f, 0.566949f, 0.550556f},
    {0.6f, 0.134692f, 0.658636f, 0.517649f}, {0.7f, 0.266941f, 0.748751f, 0.440573f},
    {0.8f, 0.477504f, 0.821444f, 0.318195f}, {0.9f, 0.741388f, 0.873449f, 0.149561f},
    {1.0f, 0.993248f, 0.906157f, 0.143936f}};
constexpr Anchor kTerrain[] = {{0.00f, 0.2f, 0.2f, 0.6f},  {0.15f, 0.0f, 0.6f, 1.0f},   {0.25f, 0.0f, 0.8f, 0.4f},
                               {0.50f, 1.0f, 1.0f, 0.6f},  {0.75f, 0.5f, 0.36f, 0.33f}, {1.00f, 1.0f, 1.0f, 1.0f}};

template <size_t N>
std::array<float, 3> interpolate(const Anchor (&a)[N], float t) {
  for (size_t i = 1; i < N; ++i)
    if (t <= a[i].t) {
      const float u = (t - a[i - 1].t) / (a[i].t - a[i - 1].t);
      return {a[i - 1].r + u * (a[i].r - a[i - 1].r), a[i - 1].g + u * (a[i].g - a[i - 1].g),
              a[i - 1].b + u * (a[i].b - a[i - 1].b)};
    }
  return {a[N - 1].r, a[N - 1].g, a[N - 1].b};
}

}  // namespace

Heightmap16 heightmapToGray16(const float* values, int width, int height, size_t row_stride, float low,
                              float high) {
  const FieldAccess f = prepare("heightmap", values, width, height, row_stride, low, high);
  Heightmap16 out;
  out.width = width;
  out.height = height;
  out.low = low;
  out.high = high;
  out.samples.resize(size_t(width) * size_t(height));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      out.samples[size_t(y) * size_t(width) + size_t(x)] =
          static_cast<uint16_t>(std::lround(unit(f.at(x, y), low, high) * 65535.0));
  return out;
}

std::optional<ColorMap> parseColorMap(std::string_view name) {
  if (name == "gray" || name == "grey") return ColorMap::kGray;
  if (name == "viridis") return ColorMap::kViridis;
  if (name == "terrain") return ColorMap::kTerrain;
  return std::nullopt;
}

std::array<float, 3> colorMapColor(ColorMap map, float t) {
  t = std::isnan(t) ? 0.0f : std::clamp(t, 0.0f, 1.0f);
  switch (map) {
    case ColorMap::kViridis: return interpolate(kViridis, t);
    case ColorMap::kTerrain: return interpolate(kTerrain, t);
    case ColorMap::kGray: break;
  }
  return {t, t, t};
}

FieldImage8 fieldToImage8(const float* values, int width, int height, ColorMap map, float low, float high) {
  const FieldAccess f = prepare("field image", values, width, height, 0, low, high);
  FieldImage8 out;
  out.width = width;
  out.height = height;
  out.low = low;
  out.high = high;
  out.channels = map == ColorMap::kGray ? 1 : 3;
  out.pixels.resize(size_t(width) * size_t(height) * size_t(out.channels));
  uint8_t* p = out.pixels.data();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const double t = unit(f.at(x, y), low, high);
      if (map == ColorMap::kGray) {
        *p++ = static_cast<uint8_t>(std::lround(t * 255.0));
        continue;
      }
      for (float c : colorMapColor(map, float(t))) *p++ = static_cast<uint8_t>(std::lround(std::clamp(c, 0.0f, 1.0f) * 255.0f));
    }
  return out;
}

}  // namespace procgen

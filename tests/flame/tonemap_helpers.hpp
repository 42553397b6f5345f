// Hand-built flame histograms for the tone-mapping tests (no chaos game): a
// genome with the tone-mapping fields set, its layout, and buckets filled the
// way flam3's accumulation fills them (colour × 255 × hits, alpha and count
// 255 × hits, both × opacity).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "procgen/flame_render.hpp"

namespace procgen::test {

/// A small genome: size w × h, 10 pixels per unit, quality 20, no density
/// estimation, the box filter of one cell per pixel.
inline FlameGenome toneMapGenome(int width, int height) {
  FlameGenome g;
  g.width = width;
  g.height = height;
  g.scale = 10;
  g.quality = 20;
  g.estimator_radius = 0;
  g.filter_shape = FlameFilterShape::kBox;
  g.filter_radius = 0.5;
  return g;
}

inline FlameHistogram emptyHistogram(const FlameGenome& genome, const FlameRenderOptions& options) {
  FlameHistogram h;
  h.layout = flameHistogramLayout(genome, options);
  h.buckets.assign(static_cast<size_t>(h.layout.width) * h.layout.height, FlameBucket{});
  return h;
}

/// The bucket of sub-cell (sx, sy) of output pixel (px, py).
inline FlameBucket& pixelBucket(FlameHistogram& h, int px, int py, int sx = 0, int sy = 0) {
  const FlameHistogramLayout& l = h.layout;
  const int x = l.gutter + px * l.supersample + sx, y = l.gutter + py * l.supersample + sy;
  return h.buckets[static_cast<size_t>(y) * l.width + x];
}

/// `hits` points of palette colour rgb (0..1) plotted with `opacity`.
inline FlameBucket hitsBucket(double hits, double r, double g, double b, double opacity = 1.0) {
  const double w = 255.0 * hits * opacity;
  return FlameBucket{static_cast<float>(r * w), static_cast<float>(g * w), static_cast<float>(b * w),
                     static_cast<float>(w), static_cast<float>(w)};
}

/// Every bucket (gutter included): empty with probability `empty`, else
/// 1 .. e^7 hits (log-uniform) of a random colour, some at half opacity.
inline void fillRandom(FlameHistogram& h, uint64_t seed, double empty = 0.4) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (FlameBucket& b : h.buckets) {
    if (u(rng) < empty) {
      b = FlameBucket{};
      continue;
    }
    const double hits = std::floor(std::exp(7.0 * u(rng)));
    b = hitsBucket(hits, u(rng), u(rng), u(rng), u(rng) < 0.2 ? 0.5 : 1.0);
  }
}

/// The chaos game of a fixed flame with flam3's semantics (flam3.c
/// flam3_iterate, variations.c): three linear xforms x' = ½(x + corner_k)
/// of weight 7/24 and colours 0, 0.35, 0.7, and one spherical xform
/// (0.9 · p / (|p|² + 1e-10)) of weight 1/8 and colour 1; colour_speed ½; 20
/// fuse steps; the palette index ⌊256·c⌋ (step mode) of palette entry
/// i = (i, 255 − i, 128). Plots `layout.samples` points into a histogram of
/// `genome`'s layout as flam3 does. sierpinskiFlam3Xml is the same flame for
/// flam3-render.
inline FlameHistogram sierpinskiHistogram(const FlameGenome& genome, uint64_t seed = 1) {
  FlameHistogram h;
  h.layout = flameHistogramLayout(genome, FlameRenderOptions{});
  const FlameHistogramLayout& l = h.layout;
  h.buckets.assign(static_cast<size_t>(l.width) * l.height, FlameBucket{});
  const double corners[3][2] = {{0, -1.3}, {-1.3, 1.0}, {1.3, 1.0}};
  const double xform_colour[4] = {0.0, 0.35, 0.7, 1.0};
  uint64_t state = 0x9E3779B97F4A7C15ull ^ (seed * 0xD1B54A32D192ED03ull);
  auto next = [&] {  // xorshift64
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  double x = 0.1, y = 0.2, c = 0.5;
  const double sx = l.width / (l.bounds[2] - l.bounds[0]), sy = l.height / (l.bounds[3] - l.bounds[1]);
  for (uint64_t i = 0; i < l.samples + 20; ++i) {
    const int m = static_cast<int>(next() % 24);
    if (m < 21) {
      const int k = m % 3;
      x = 0.5 * (x + corners[k][0]);
      y = 0.5 * (y + corners[k][1]);
      c = 0.5 * (c + xform_colour[k]);
    } else {
      const double r = 0.9 / (x * x + y * y + 1e-10);
      x *= r;
      y *= r;
      c = 0.5 * (c + xform_colour[3]);
    }
    if (i < 20) continue;
    if (!(x >= l.bounds[0] && y >= l.bounds[1] && x < l.bounds[2] && y < l.bounds[3])) continue;
    const int hx = std::min(static_cast<int>((x - l.bounds[0]) * sx), l.width - 1);
    const int hy = std::min(static_cast<int>((y - l.bounds[1]) * sy), l.height - 1);
    const int index = std::clamp(static_cast<int>(c * 256), 0, 255);
    FlameBucket& b = h.buckets[static_cast<size_t>(hy) * l.width + hx];
    b.red += static_cast<float>(index);
    b.green += static_cast<float>(255 - index);
    b.blue += 128.0f;
    b.alpha += 255;
    b.count += 255;
  }
  h.samples = l.samples;
  return h;
}

}  // namespace procgen::test

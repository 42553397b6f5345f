// Hand-built flame histograms for the tone-mapping tests (no chaos game): a
// genome with the tone-mapping fields set, its layout, and buckets filled the
// way flam3's accumulation fills them (colour × 255 × hits, alpha and count
// 255 × hits, both × opacity).
#pragma once

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

}  // namespace procgen::test

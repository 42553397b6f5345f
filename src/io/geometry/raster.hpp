// The PNG preview rasterizer: anti-aliased round-capped thick lines and
// anti-aliased filled polygons over an RGB float framebuffer, painter's order.
//
// Pixel (i, j) covers [i, i+1] × [j, j+1], y down. A line of radius r covers a
// pixel by clamp(r + 0.5 − d, 0, 1), d the distance from the pixel centre to
// the segment (a one-pixel box-filter approximation of the capsule's area).
// Polygons use exact signed-area coverage accumulation (the scheme of
// font-rs / stb_truetype's v2 rasterizer): every edge deposits its area and
// cover into an accumulation row, a prefix sum gives per-pixel coverage, and
// min(|sum|, 1) fills with the non-zero rule for either orientation.
#pragma once

#include <cstdint>
#include <vector>

#include "io/geometry/projection.hpp"

namespace procgen::io {

class Raster {
 public:
  Raster(int width, int height, Vec3 background);
  int width() const { return width_; }
  int height() const { return height_; }

  /// Capsule from a to b (pixel coordinates), radius in pixels. Radii below
  /// half a pixel are drawn at half a pixel with proportionally less opacity.
  void drawSegment(Vec2 a, Vec2 b, float radius, Vec3 color);
  /// Whether drawSegment(a, b, radius, ·) covers every pixel fully (coverage
  /// 1 at full opacity): then it hides everything drawn before it.
  bool coversImage(Vec2 a, Vec2 b, float radius) const;
  /// Filled polygon (any orientation, non-zero rule); parts outside the image are clipped.
  void fillPolygon(const Vec2* points, size_t count, Vec3 color);

  /// Row-major RGB bytes, top row first.
  std::vector<uint8_t> toRgb8() const;

 private:
  void blend(size_t pixel, Vec3 color, float alpha) {
    float* p = &pixels_[pixel * 3];
    p[0] += (color.x - p[0]) * alpha;
    p[1] += (color.y - p[1]) * alpha;
    p[2] += (color.z - p[2]) * alpha;
  }
  void accumulateEdge(Vec2 p0, Vec2 p1, int buf_width, int buf_height);

  int width_, height_;
  std::vector<float> pixels_;
  std::vector<float> accum_;  // polygon scratch, reused
};

}  // namespace procgen::io

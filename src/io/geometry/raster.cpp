#include "io/geometry/raster.hpp"

#include <algorithm>
#include <cmath>

namespace procgen::io {

Raster::Raster(int width, int height, Vec3 background)
    : width_(width), height_(height), pixels_(size_t(width) * size_t(height) * 3) {
  for (size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = background.x;
    pixels_[i + 1] = background.y;
    pixels_[i + 2] = background.z;
  }
}

void Raster::drawSegment(Vec2 a, Vec2 b, float radius, Vec3 color) {
  if (!(std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(b.x) && std::isfinite(b.y) &&
        std::isfinite(radius)))
    return;
  float opacity = 1.0f;
  if (radius < 0.5f) {
    opacity = std::max(0.0f, 2.0f * radius);
    radius = 0.5f;
  }
  const float reach = radius + 0.5f;  // beyond this distance coverage is 0
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len2 = dx * dx + dy * dy;
  const float inv_len2 = len2 > 0.0f ? 1.0f / len2 : 0.0f;
  int row0 = std::max(0, static_cast<int>(std::floor(std::min(a.y, b.y) - reach)));
  int row1 = std::min(height_ - 1, static_cast<int>(std::ceil(std::max(a.y, b.y) + reach)));
  for (int j = row0; j <= row1; ++j) {
    const float yc = j + 0.5f;
    // Part of the segment within `reach` of this row in y; only it can be near.
    float t0 = 0.0f, t1 = 1.0f;
    if (dy != 0.0f) {
      float ta = (yc - reach - a.y) / dy, tb = (yc + reach - a.y) / dy;
      t0 = std::max(0.0f, std::min(ta, tb));
      t1 = std::min(1.0f, std::max(ta, tb));
      if (t0 > t1) continue;
    } else if (std::fabs(a.y - yc) > reach) {
      continue;
    }
    float xa = a.x + t0 * dx, xb = a.x + t1 * dx;
    int col0 = std::max(0, static_cast<int>(std::ceil(std::min(xa, xb) - reach - 0.5f)));
    int col1 = std::min(width_ - 1, static_cast<int>(std::floor(std::max(xa, xb) + reach - 0.5f)));
    const size_t row = size_t(j) * size_t(width_);
    for (int i = col0; i <= col1; ++i) {
      const float px = i + 0.5f - a.x, py = yc - a.y;
      const float t = std::clamp((px * dx + py * dy) * inv_len2, 0.0f, 1.0f);
      const float ex = px - t * dx, ey = py - t * dy;
      const float d = std::sqrt(ex * ex + ey * ey);
      const float coverage = std::min(1.0f, reach - d);
      if (coverage > 0.0f) blend(row + size_t(i), color, coverage * opacity);
    }
  }
}

bool Raster::coversImage(Vec2 a, Vec2 b, float radius) const {
  if (!(radius >= 0.5f)) return false;  // thinner strokes are drawn translucent
  // Coverage is 1 where the distance to the segment is at most radius - 0.5;
  // the capsule is convex, so the four corner pixel centres decide.
  const float dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
  for (const Vec2 c : {Vec2{0.5f, 0.5f}, Vec2{width_ - 0.5f, 0.5f}, Vec2{0.5f, height_ - 0.5f},
                       Vec2{width_ - 0.5f, height_ - 0.5f}}) {
    const float px = c.x - a.x, py = c.y - a.y;
    const float t = len2 > 0.0f ? std::clamp((px * dx + py * dy) / len2, 0.0f, 1.0f) : 0.0f;
    const float ex = px - t * dx, ey = py - t * dy;
    if (!(std::sqrt(ex * ex + ey * ey) <= radius - 0.5f)) return false;
  }
  return true;
}

// Deposits the signed area of edge p0→p1 into accum_ (buf_width columns per
// row, x already clamped to [0, buf_width-2]). Adapted from font-rs
// (Raph Levien, Apache-2.0) `Raster::draw_line`.
void Raster::accumulateEdge(Vec2 p0, Vec2 p1, int buf_width, int buf_height) {
  if (p0.y == p1.y) return;
  float dir = 1.0f;
  if (p0.y > p1.y) {
    std::swap(p0, p1);
    dir = -1.0f;
  }
  const float dxdy = (p1.x - p0.x) / (p1.y - p0.y);
  float x = p0.x;
  int y0 = static_cast<int>(std::floor(p0.y));
  if (y0 < 0) {
    x -= p0.y * dxdy;
    y0 = 0;
  }
  const int y_end = std::min(buf_height, static_cast<int>(std::ceil(p1.y)));
  for (int y = y0; y < y_end; ++y) {
    float* row = &accum_[size_t(y) * size_t(buf_width)];
    const float dy = std::min(float(y + 1), p1.y) - std::max(float(y), p0.y);
    const float xnext = x + dxdy * dy;
    const float d = dy * dir;
    // Rounding in x − p0.y·dxdy and x + dxdy·dy can step a hair outside the
    // clamped range [0, buf_width − 2]: at −1e-6 floor() gave column −1, a
    // write before the row (heap corruption with the many small triangles of
    // a mesh render). Clamp the span to the buffer.
    const float x_max = float(buf_width - 2);
    const float x0 = std::clamp(std::min(x, xnext), 0.0f, x_max), x1 = std::clamp(std::max(x, xnext), 0.0f, x_max);
    const float x0floor = std::floor(x0);
    const int x0i = static_cast<int>(x0floor);
    const float x1ceil = std::ceil(x1);
    const int x1i = static_cast<int>(x1ceil);
    if (x1i <= x0i + 1) {
      const float xmf = std::clamp(0.5f * (x + xnext), x0, x1) - x0floor;
      row[x0i] += d - d * xmf;
      row[x0i + 1] += d * xmf;
    } else {
      const float s = 1.0f / (x1 - x0);
      const float x0f = x0 - x0floor;
      const float a0 = 0.5f * s * (1.0f - x0f) * (1.0f - x0f);
      const float x1f = x1 - x1ceil + 1.0f;
      const float am = 0.5f * s * x1f * x1f;
      row[x0i] += d * a0;
      if (x1i == x0i + 2) {
        row[x0i + 1] += d * (1.0f - a0 - am);
      } else {
        const float a1 = s * (1.5f - x0f);
        row[x0i + 1] += d * (a1 - a0);
        for (int xi = x0i + 2; xi < x1i - 1; ++xi) row[xi] += d * s;
        const float a2 = a1 + float(x1i - x0i - 3) * s;
        row[x1i - 1] += d * (1.0f - a2 - am);
      }
      row[x1i] += d * am;
    }
    x = xnext;
  }
}

void Raster::fillPolygon(const Vec2* points, size_t count, Vec3 color) {
  if (count < 3) return;
  float min_x = INFINITY, min_y = INFINITY, max_x = -INFINITY, max_y = -INFINITY;
  for (size_t k = 0; k < count; ++k) {
    if (!std::isfinite(points[k].x) || !std::isfinite(points[k].y)) return;
    min_x = std::min(min_x, points[k].x);
    max_x = std::max(max_x, points[k].x);
    min_y = std::min(min_y, points[k].y);
    max_y = std::max(max_y, points[k].y);
  }
  const int bx0 = std::clamp(static_cast<int>(std::floor(min_x)), 0, width_);
  const int bx1 = std::clamp(static_cast<int>(std::ceil(max_x)), 0, width_);
  const int by0 = std::clamp(static_cast<int>(std::floor(min_y)), 0, height_);
  const int by1 = std::clamp(static_cast<int>(std::ceil(max_y)), 0, height_);
  if (bx0 >= bx1 || by0 >= by1) return;
  const int cols = bx1 - bx0;
  const int buf_width = cols + 2;
  const int buf_height = by1 - by0;
  accum_.assign(size_t(buf_width) * size_t(buf_height), 0.0f);
  // Clamping x keeps the coverage of everything right of the clamp line exact;
  // y is clipped inside accumulateEdge.
  auto local = [&](Vec2 p) {
    return Vec2{std::clamp(p.x - float(bx0), 0.0f, float(cols)), p.y - float(by0)};
  };
  for (size_t k = 0; k < count; ++k)
    accumulateEdge(local(points[k]), local(points[(k + 1) % count]), buf_width, buf_height);
  for (int y = 0; y < buf_height; ++y) {
    const float* row = &accum_[size_t(y) * size_t(buf_width)];
    const size_t out_row = size_t(by0 + y) * size_t(width_) + size_t(bx0);
    float sum = 0.0f;
    for (int x = 0; x < cols; ++x) {
      sum += row[x];
      const float coverage = std::min(1.0f, std::fabs(sum));
      if (coverage > 1.0f / 512.0f) blend(out_row + size_t(x), color, coverage);
    }
  }
}

std::vector<uint8_t> Raster::toRgb8() const {
  std::vector<uint8_t> bytes(pixels_.size());
  for (size_t i = 0; i < pixels_.size(); ++i)
    bytes[i] = static_cast<uint8_t>(std::clamp(pixels_[i], 0.0f, 1.0f) * 255.0f + 0.5f);
  return bytes;
}

}  // namespace procgen::io

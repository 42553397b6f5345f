// Orthographic views shared by the SVG and PNG writers: model point → screen
// (u right, v up), and the fit that makes a model fill a viewport.
#pragma once

#include <algorithm>
#include <cmath>

#include "procgen/geometry.hpp"
#include "procgen/io.hpp"

namespace procgen::io {

struct Vec2 {
  float x = 0, y = 0;
};

/// Each view is a rotation (see Projection), so lengths perpendicular to the
/// view direction, and thus line widths, are preserved.
inline Vec2 project(Projection projection, const Vec3& p) {
  constexpr float kInvSqrt2 = 0.70710678f;
  constexpr float kInvSqrt6 = 0.40824829f;
  switch (projection) {
    case Projection::kSide: return {-p.z, p.y};
    case Projection::kTop: return {p.x, -p.z};
    case Projection::kIso: return {(p.x - p.z) * kInvSqrt2, (2.0f * p.y - p.x - p.z) * kInvSqrt6};
    case Projection::kFront: break;
  }
  return {p.x, p.y};
}

/// Screen-space bounds of the projected model: its centre lines and polygon
/// vertices, each segment grown by half its width so that thick strokes are
/// not clipped, but by no more than the centre lines' extent (the larger side
/// of their box). So a stroke far wider than the model (`--width 1e38`) does
/// not shrink the model to a point inside an image-sized disk: the model keeps
/// at least a third of the view, and the stroke covers the view. A model of
/// one point is the exception: its dot is fitted to the view. Returns false
/// when there is nothing.
inline bool projectedBounds(const Geometry& geometry, Projection projection, Vec2& lo, Vec2& hi) {
  float min_x = INFINITY, min_y = INFINITY, max_x = -INFINITY, max_y = -INFINITY;
  auto add = [&](Vec2 p, float r) {
    min_x = std::min(min_x, p.x - r);
    min_y = std::min(min_y, p.y - r);
    max_x = std::max(max_x, p.x + r);
    max_y = std::max(max_y, p.y + r);
  };
  for (const Segment& s : geometry.segments) {
    add(project(projection, s.start), 0.0f);
    add(project(projection, s.end), 0.0f);
  }
  for (const Vec3& v : geometry.polygon_vertices) add(project(projection, v), 0.0f);
  if (!(min_x <= max_x && min_y <= max_y)) return false;
  // A model that is a point (extent 0) has only its widths for a size: its
  // dot is fitted to the image.
  const float extent = std::max(max_x - min_x, max_y - min_y);
  const float cap = extent > 0.0f ? extent : INFINITY;
  for (const Segment& s : geometry.segments) {
    const float r = std::min(0.5f * std::fabs(s.width), cap);
    add(project(projection, s.start), r);
    add(project(projection, s.end), r);
  }
  lo = {min_x, min_y};
  hi = {max_x, max_y};
  return true;
}

/// Maps screen (u, v) to pixels (x right, y down): x = u*scale + offset_x,
/// y = offset_y - v*scale. The model's bounds are centred and scaled to fill
/// the image minus `margin_px` on every side, aspect preserved.
struct PixelView {
  float scale = 1.0f;
  float offset_x = 0.0f;
  float offset_y = 0.0f;
  Vec2 toPixel(Vec2 p) const { return {p.x * scale + offset_x, offset_y - p.y * scale}; }
};

inline PixelView fitPixelView(Vec2 lo, Vec2 hi, int width, int height, float margin_px) {
  float avail_x = std::max(1.0f, width - 2.0f * margin_px);
  float avail_y = std::max(1.0f, height - 2.0f * margin_px);
  float ext_x = hi.x - lo.x, ext_y = hi.y - lo.y;
  PixelView view;
  if (ext_x > 0.0f && ext_y > 0.0f)
    view.scale = std::min(avail_x / ext_x, avail_y / ext_y);
  else if (ext_x > 0.0f)
    view.scale = avail_x / ext_x;
  else if (ext_y > 0.0f)
    view.scale = avail_y / ext_y;
  if (!std::isfinite(view.scale) || view.scale <= 0.0f) view.scale = 1.0f;
  float cx = 0.5f * (lo.x + hi.x), cy = 0.5f * (lo.y + hi.y);
  view.offset_x = 0.5f * width - cx * view.scale;
  view.offset_y = 0.5f * height + cy * view.scale;
  return view;
}

}  // namespace procgen::io

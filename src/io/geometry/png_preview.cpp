// PNG preview: the model projected (WriteOptions::projection), fitted to the
// image with a 2% margin, segments then polygons drawn in string order by the
// anti-aliased rasterizer (raster.hpp), encoded as 8-bit sRGB RGB by the
// public encoder (procgen/image.hpp).
#include "io/geometry/mesh_common.hpp"
#include "io/geometry/projection.hpp"
#include "io/geometry/raster.hpp"
#include "io/geometry/writers.hpp"
#include "procgen/budget.hpp"
#include "procgen/image.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace procgen::io {

void writePngPreview(const Geometry& geometry, ByteSink& sink, const WriteOptions& options) {
  const int width = options.width, height = options.height;
  const Projection proj = options.projection;
  // The float framebuffer (12 bytes a pixel), the 8-bit copy and the encoder's rows.
  requireMemory("PNG image " + std::to_string(width) + "x" + std::to_string(height),
                uint64_t(width) * uint64_t(height) * (12 + 3 + 3), options.memory_budget_bytes,
                geometryBytes(geometry));
  Raster raster(width, height, options.background);
  Vec2 lo, hi;
  if (projectedBounds(geometry, proj, lo, hi)) {
    const float margin = 0.02f * std::min(width, height) + 0.5f * options.min_line_px;
    const PixelView view = fitPixelView(lo, hi, width, height, margin);
    // The view holds every centre line, so a stroke as wide as the image's
    // diagonal covers it all: clamping the radius there changes no pixel and
    // keeps `width × scale` from overflowing to inf (which draws nothing).
    const float min_radius = 0.5f * options.min_line_px;
    const float max_radius = std::hypot(float(width), float(height)) + 1.0f;
    const SegmentArray& segments = geometry.segments;
    auto radiusOf = [&](const Segment& s) {
      return std::min(std::max(0.5f * std::fabs(s.width) * view.scale, min_radius), max_radius);
    };
    auto pixel = [&](const Vec3& p) { return view.toPixel(project(proj, p)); };
    // In painter's order a stroke that covers the whole image hides every one
    // before it: drawing starts at the last such stroke, so strokes wider than
    // the image cost one image's pixels in all, not one each (issue 16).
    size_t first = segments.size();
    while (first > 0 && !raster.coversImage(pixel(segments[first - 1].start), pixel(segments[first - 1].end),
                                            radiusOf(segments[first - 1])))
      --first;
    if (first > 0) --first;  // the covering stroke itself is drawn
    for (size_t i = first; i < segments.size(); ++i) {
      const Segment& s = segments[i];
      raster.drawSegment(pixel(s.start), pixel(s.end), radiusOf(s), paletteColor(s.color));
    }
    std::vector<Vec2> points;
    for (size_t p = 0; p < geometry.polygonCount(); ++p) {
      if (!drawablePolygon(geometry, p)) continue;
      points.clear();
      for (uint64_t v = geometry.polygon_offsets[p]; v < geometry.polygon_offsets[p + 1]; ++v)
        points.push_back(view.toPixel(project(proj, geometry.polygon_vertices[v])));
      raster.fillPolygon(points.data(), points.size(), paletteColor(geometry.polygon_colors[p]));
    }
  }
  const std::vector<uint8_t> rgb = raster.toRgb8();
  PngOptions png;
  png.compression_level = 6;  // previews are rewritten often; a good trade
  png.srgb = true;
  encodePng(ImageView{rgb.data(), width, height, 3, 8, 0}, sink, png);
}

std::vector<Vec3> meshHeightColors(const TriangleMesh& mesh) {
  const Bounds b = mesh.bounds();
  const float span = b.empty() ? 0.0f : b.max.y - b.min.y;
  std::vector<Vec3> colors(mesh.vertexCount());
  for (size_t i = 0; i < colors.size(); ++i) {
    const float t = span > 0.0f ? (mesh.positions[i].y - b.min.y) / span : 0.5f;
    const std::array<float, 3> c = colorMapColor(ColorMap::kTerrain, t);
    colors[i] = {c[0], c[1], c[2]};
  }
  return colors;
}

// A shaded triangle mesh: triangles projected like the geometry preview,
// sorted far to near by the depth of their centroid along the view direction
// (painter's order), each filled flat with its vertices' mean colour lit by
// Lambert's law (two-sided, so open surfaces seen from behind still shade).
void writePngPreview(const TriangleMesh& mesh, ByteSink& sink, const WriteOptions& options) {
  const int width = options.width, height = options.height;
  const Projection proj = options.projection;
  // As for geometry, plus the painter's order (an index and a depth a triangle).
  requireMemory("PNG image " + std::to_string(width) + "x" + std::to_string(height),
                uint64_t(width) * uint64_t(height) * (12 + 3 + 3) + 8 * uint64_t(mesh.triangleCount()),
                options.memory_budget_bytes);
  Raster raster(width, height, options.background);
  float min_x = INFINITY, min_y = INFINITY, max_x = -INFINITY, max_y = -INFINITY;
  for (const Vec3& p : mesh.positions) {
    const Vec2 s = project(proj, p);
    min_x = std::min(min_x, s.x);
    max_x = std::max(max_x, s.x);
    min_y = std::min(min_y, s.y);
    max_y = std::max(max_y, s.y);
  }
  if (mesh.triangleCount() > 0 && min_x <= max_x && min_y <= max_y) {
    const PixelView view = fitPixelView({min_x, min_y}, {max_x, max_y}, width, height, 0.02f * std::min(width, height));
    // The camera's direction (towards the viewer) for each projection.
    Vec3 eye{0, 0, 1};
    if (proj == Projection::kSide) eye = {1, 0, 0};
    if (proj == Projection::kTop) eye = {0, 1, 0};
    if (proj == Projection::kIso) eye = {0.57735027f, 0.57735027f, 0.57735027f};
    auto dot = [](const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; };
    const size_t n = mesh.triangleCount();
    std::vector<float> depth(n);
    for (size_t t = 0; t < n; ++t) {
      const Vec3 &a = mesh.positions[mesh.indices[3 * t]], &b = mesh.positions[mesh.indices[3 * t + 1]],
                 &c = mesh.positions[mesh.indices[3 * t + 2]];
      depth[t] = dot(eye, Vec3{a.x + b.x + c.x, a.y + b.y + c.y, a.z + b.z + c.z});
    }
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return depth[a] < depth[b]; });
    const std::vector<Vec3> colors = meshHeightColors(mesh);
    // Light from the upper left front of the view, the usual relief shading.
    Vec3 light{-0.45f, 0.75f, 0.5f};
    if (proj == Projection::kTop) light = {-0.5f, 0.75f, -0.45f};
    if (proj == Projection::kSide) light = {0.5f, 0.75f, 0.45f};
    if (proj == Projection::kIso) light = {-0.2f, 0.9f, 0.4f};
    const float ll = std::sqrt(dot(light, light));
    light = {light.x / ll, light.y / ll, light.z / ll};
    Vec2 pts[3];
    for (uint32_t t : order) {
      Vec3 normal{0, 0, 0}, color{0, 0, 0};
      for (int k = 0; k < 3; ++k) {
        const uint32_t v = mesh.indices[3 * t + uint32_t(k)];
        pts[k] = view.toPixel(project(proj, mesh.positions[v]));
        normal = {normal.x + mesh.normals[v].x, normal.y + mesh.normals[v].y, normal.z + mesh.normals[v].z};
        color = {color.x + colors[v].x / 3, color.y + colors[v].y / 3, color.z + colors[v].z / 3};
      }
      // Grow each triangle by 0.4 px away from its centroid: anti-aliased
      // neighbours would otherwise let the background show through their
      // shared edge (coverage conflation), a visible wireframe of seams.
      const Vec2 centre{(pts[0].x + pts[1].x + pts[2].x) / 3, (pts[0].y + pts[1].y + pts[2].y) / 3};
      for (Vec2& q : pts) {
        const float dx = q.x - centre.x, dy = q.y - centre.y, d = std::sqrt(dx * dx + dy * dy);
        if (d > 0.0f) q = {q.x + 0.4f * dx / d, q.y + 0.4f * dy / d};
      }
      const float len = std::sqrt(dot(normal, normal));
      const float lambert = len > 0.0f ? std::fabs(dot(normal, light)) / len : 0.5f;
      const float shade = 0.3f + 0.7f * lambert;
      raster.fillPolygon(pts, 3, Vec3{color.x * shade, color.y * shade, color.z * shade});
    }
  }
  const std::vector<uint8_t> rgb = raster.toRgb8();
  PngOptions png;
  png.srgb = true;
  encodePng(ImageView{rgb.data(), width, height, 3, 8, 0}, sink, png);
}

}  // namespace procgen::io

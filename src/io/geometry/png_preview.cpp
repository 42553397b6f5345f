// PNG preview: the model projected (WriteOptions::projection), fitted to the
// image with a 2% margin, segments then polygons drawn in string order by the
// anti-aliased rasterizer (raster.hpp), encoded as 8-bit sRGB RGB by the
// public encoder (procgen/image.hpp).
#include "io/geometry/mesh_common.hpp"
#include "io/geometry/projection.hpp"
#include "io/geometry/raster.hpp"
#include "io/geometry/writers.hpp"
#include "procgen/image.hpp"

namespace procgen::io {

void writePngPreview(const Geometry& geometry, ByteSink& sink, const WriteOptions& options) {
  const int width = options.width, height = options.height;
  const Projection proj = options.projection;
  Raster raster(width, height, options.background);
  Vec2 lo, hi;
  if (projectedBounds(geometry, proj, lo, hi)) {
    const float margin = 0.02f * std::min(width, height) + 0.5f * options.min_line_px;
    const PixelView view = fitPixelView(lo, hi, width, height, margin);
    const float min_radius = 0.5f * options.min_line_px;
    for (const Segment& s : geometry.segments) {
      const float radius = std::max(0.5f * std::fabs(s.width) * view.scale, min_radius);
      Vec3 color = paletteColor(s.color);
      raster.drawSegment(view.toPixel(project(proj, s.start)), view.toPixel(project(proj, s.end)),
                         radius, color);
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

}  // namespace procgen::io

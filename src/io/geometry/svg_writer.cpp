// SVG: the model projected orthographically (WriteOptions::projection), in
// model units with y flipped so +Y is up. Consecutive segments of the same
// colour and width share one <path> (a new subpath `M` only where a segment does
// not start at the previous end), which keeps million-segment files small
// while drawing in string order; round caps and joins make a merged path look
// like separate round-capped strokes. Polygons follow as filled <polygon>s.
#include <cmath>
#include <cstring>

#include "io/geometry/mesh_common.hpp"
#include "io/output_file.hpp"
#include "io/geometry/projection.hpp"
#include "io/geometry/writers.hpp"

namespace procgen::io {
namespace {

void hexColor(OutputStream& out, int32_t index) {
  static constexpr char kHex[] = "0123456789abcdef";
  Rgb8 c = paletteRgb8(index);
  char text[7] = {'#',          kHex[c.r >> 4], kHex[c.r & 15], kHex[c.g >> 4],
                  kHex[c.g & 15], kHex[c.b >> 4], kHex[c.b & 15]};
  out.write(text, sizeof text);
}

void point(OutputStream& out, Vec2 p) {
  out.number(p.x);
  out.put(' ');
  out.number(-p.y);
}

}  // namespace

void writeSvg(const Geometry& geometry, ByteSink& sink, const WriteOptions& options) {
  const Projection proj = options.projection;
  Vec2 lo{-1, -1}, hi{1, 1};
  projectedBounds(geometry, proj, lo, hi);
  float ext = std::max(hi.x - lo.x, hi.y - lo.y);
  if (!(ext > 0.0f)) ext = 1.0f;
  const float margin = 0.02f * ext;
  const float view_x = lo.x - margin, view_y = -hi.y - margin;
  float view_w = hi.x - lo.x + 2 * margin, view_h = hi.y - lo.y + 2 * margin;
  if (!(view_w > 0.0f)) view_w = ext;
  if (!(view_h > 0.0f)) view_h = ext;
  // Nominal size: fit the viewBox into width × height pixels, aspect preserved.
  const float px_per_unit = std::min(options.width / view_w, options.height / view_h);
  const float min_width = options.min_line_px / px_per_unit;

  OutputStream out(sink);
  out.text("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  out.text("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
  out.number(static_cast<int64_t>(std::lround(view_w * px_per_unit)));
  out.text("\" height=\"");
  out.number(static_cast<int64_t>(std::lround(view_h * px_per_unit)));
  out.text("\" viewBox=\"");
  out.number(view_x);
  out.put(' ');
  out.number(view_y);
  out.put(' ');
  out.number(view_w);
  out.put(' ');
  out.number(view_h);
  out.text("\">\n<g fill=\"none\" stroke-linecap=\"round\" stroke-linejoin=\"round\">\n");

  const SegmentArray& segs = geometry.segments;
  for (size_t i = 0; i < segs.size();) {
    const int32_t color = segs[i].color;
    const float width = segs[i].width;
    // Widths compare by bits: `==` is false for a NaN width, which once left
    // the group empty and the loop writing empty paths forever (issue 16).
    auto same_width = [width](float w) { return std::memcmp(&w, &width, sizeof w) == 0; };
    out.text("<path stroke=\"");
    hexColor(out, color);
    out.text("\" stroke-width=\"");
    out.number(std::max(std::fabs(width), min_width));
    out.text("\" d=\"");
    size_t j = i;
    for (; j < segs.size() && segs[j].color == color && same_width(segs[j].width); ++j) {
      if (j == i || !sameBits(segs[j - 1].end, segs[j].start)) {
        if (j != i) out.put(' ');
        out.put('M');
        point(out, project(proj, segs[j].start));
      }
      out.text(" L");
      point(out, project(proj, segs[j].end));
    }
    i = j;
    out.text("\"/>\n");
  }
  out.text("</g>\n<g stroke=\"none\">\n");
  for (size_t p = 0; p < geometry.polygonCount(); ++p) {
    if (!drawablePolygon(geometry, p)) continue;
    out.text("<polygon fill=\"");
    hexColor(out, geometry.polygon_colors[p]);
    out.text("\" points=\"");
    for (uint64_t v = geometry.polygon_offsets[p]; v < geometry.polygon_offsets[p + 1]; ++v) {
      if (v != geometry.polygon_offsets[p]) out.put(' ');
      Vec2 q = project(proj, geometry.polygon_vertices[v]);
      out.number(q.x);
      out.put(',');
      out.number(-q.y);
    }
    out.text("\"/>\n");
  }
  out.text("</g>\n</svg>\n");
  out.close();
}

}  // namespace procgen::io

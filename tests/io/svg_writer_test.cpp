// Parses written SVG text: element counts, path commands, the viewBox.
#include <regex>

#include "io/io_test_util.hpp"

namespace procgen::iotest {
namespace {

size_t countOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  std::regex number(R"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod(it->str()));
  return out;
}

std::string attribute(const std::string& text, const std::string& name, size_t from = 0) {
  size_t at = text.find(" " + name + "=\"", from);
  if (at == std::string::npos) return {};
  at += name.size() + 3;
  return text.substr(at, text.find('"', at) - at);
}

TEST(SvgWriter, KochCurvePathsAndFittedViewBox) {
  TempDir dir;
  Geometry g = kochCurve(3, 0.01f);
  addPolygon(g, {{0, -0.5f, 0}, {1, -0.5f, 0}, {0.5f, -0.2f, 0}}, 1);
  writeGeometry(g, dir / "k.svg");
  std::string svg = readText(dir / "k.svg");
  EXPECT_EQ(countOf(svg, "<svg "), 1u);
  EXPECT_EQ(countOf(svg, "</svg>"), 1u);
  EXPECT_EQ(countOf(svg, "<polygon "), 1u);
  // Same colour and width throughout, connected: one path, one subpath.
  EXPECT_EQ(countOf(svg, "<path "), 1u);
  std::string d = attribute(svg, "d");
  EXPECT_EQ(countOf(d, "M"), 1u);
  EXPECT_EQ(countOf(d, "L"), g.segments.size());
  // The path's vertices are the segment endpoints with y flipped.
  std::vector<double> xy = numbers(d);
  ASSERT_EQ(xy.size(), 2 * (g.segments.size() + 1));
  EXPECT_FLOAT_EQ(float(xy[0]), g.segments[0].start.x);
  EXPECT_FLOAT_EQ(float(xy[1]), -g.segments[0].start.y);
  for (size_t i = 0; i < g.segments.size(); ++i) {
    EXPECT_FLOAT_EQ(float(xy[2 * i + 2]), g.segments[i].end.x);
    EXPECT_FLOAT_EQ(float(-xy[2 * i + 3]), g.segments[i].end.y);
  }
  EXPECT_FLOAT_EQ(float(numbers(attribute(svg, "stroke-width"))[0]), 0.01f);

  // viewBox = model bounds (y flipped, grown by half the stroke) plus a margin.
  std::vector<double> vb = numbers(attribute(svg, "viewBox"));
  ASSERT_EQ(vb.size(), 4u);
  Bounds b = g.bounds();
  const double min_x = b.min.x - 0.005, max_x = b.max.x + 0.005;
  const double min_y = -(b.max.y + 0.005), max_y = -(b.min.y - 0.005);
  const double ext = std::max(max_x - min_x, max_y - min_y);
  EXPECT_LT(vb[0], min_x);
  EXPECT_LT(vb[1], min_y);
  EXPECT_GT(vb[0] + vb[2], max_x);
  EXPECT_GT(vb[1] + vb[3], max_y);
  EXPECT_GT(vb[0], min_x - 0.05 * ext);
  EXPECT_GT(vb[1], min_y - 0.05 * ext);
  EXPECT_LT(vb[0] + vb[2], max_x + 0.05 * ext);
  EXPECT_LT(vb[1] + vb[3], max_y + 0.05 * ext);
}

TEST(SvgWriter, StyleChangesAndJumpsSplitPaths) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 0.1f, 0));
  g.segments.push_back(makeSegment({1, 0, 0}, {2, 0, 0}, 0.1f, 1));  // colour change
  g.segments.push_back(makeSegment({5, 0, 0}, {6, 0, 0}, 0.1f, 1));  // jump: new subpath
  g.segments.push_back(makeSegment({6, 0, 0}, {7, 0, 0}, 0.3f, 1));  // width change
  WriteOptions options;
  options.min_line_px = 0;
  writeGeometry(g, dir / "s.svg", options);
  std::string svg = readText(dir / "s.svg");
  EXPECT_EQ(countOf(svg, "<path "), 3u);
  EXPECT_EQ(countOf(svg, " L"), 4u);
  EXPECT_EQ(countOf(svg, "M"), 4u);
  Vec3 c1 = paletteColor(1);
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", int(std::lround(c1.x * 255)),
                int(std::lround(c1.y * 255)), int(std::lround(c1.z * 255)));
  EXPECT_EQ(countOf(svg, std::string("stroke=\"") + hex + "\""), 2u);
}

TEST(SvgWriter, ProjectionsChooseThePlane) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {0, 0, 3}, 0.1f));  // along +Z only
  WriteOptions options;
  options.projection = Projection::kTop;
  writeGeometry(g, dir / "top.svg", options);
  std::vector<double> xy = numbers(attribute(readText(dir / "top.svg"), "d"));
  ASSERT_EQ(xy.size(), 4u);
  // Top view: screen up is −Z, so +Z points down the page (SVG y grows downwards).
  EXPECT_EQ(xy[0], 0);
  EXPECT_EQ(xy[2], 0);
  EXPECT_FLOAT_EQ(float(xy[3] - xy[1]), 3.0f);
  options.projection = Projection::kSide;
  writeGeometry(g, dir / "side.svg", options);
  xy = numbers(attribute(readText(dir / "side.svg"), "d"));
  ASSERT_EQ(xy.size(), 4u);
  EXPECT_FLOAT_EQ(float(xy[2] - xy[0]), -3.0f);  // camera on +X: +Z is to the left
}

// Polygons: one <polygon> per drawable polygon, its points the vertices in
// order with y flipped, filled with the palette colour (hand-derived).
TEST(SvgWriter, PolygonPointsAreTheVerticesWithYFlipped) {
  TempDir dir;
  Geometry g;
  addPolygon(g, {{0, 0, 0}, {2, 0, 0}, {2, 1, 0}, {0, 3, 0}}, 4);  // asymmetric quad
  addPolygon(g, {{5, 5, 0}, {6, 5, 0}}, 2);                        // 2 vertices: skipped
  writeGeometry(g, dir / "p.svg");
  const std::string svg = readText(dir / "p.svg");
  EXPECT_EQ(countOf(svg, "<polygon "), 1u);
  const std::vector<double> xy = numbers(attribute(svg, "points"));
  const std::vector<double> want = {0, 0, 2, 0, 2, -1, 0, -3};
  ASSERT_EQ(xy.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_DOUBLE_EQ(xy[k] + 0.0, want[k]) << k;
  const Vec3 c = paletteColor(4);
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", int(std::lround(c.x * 255)), int(std::lround(c.y * 255)),
                int(std::lround(c.z * 255)));
  EXPECT_EQ(attribute(svg, "fill", svg.find("<polygon ")), hex);
}

// The iso view by hand: camera on (1,1,1), +Y up. Screen right is
// (1,0,-1)/√2, screen up is (-1,2,-1)/√6; SVG's y points down, so a path
// vertex is (u, -v).
TEST(SvgWriter, IsoProjectionIsTheTextbookIsometricView) {
  TempDir dir;
  const double r2 = std::sqrt(2.0), r6 = std::sqrt(6.0);
  const struct {
    Vec3 end;
    double u, v;
  } axes[] = {{{1, 0, 0}, 1 / r2, -1 / r6}, {{0, 1, 0}, 0, 2 / r6}, {{0, 0, 1}, -1 / r2, -1 / r6},
              {{2, 3, -1}, 3 / r2, (6 - 2 + 1) / r6}};
  for (const auto& a : axes) {
    Geometry g;
    g.segments.push_back(makeSegment({0, 0, 0}, a.end, 0.1f));
    WriteOptions options;
    options.projection = Projection::kIso;
    writeGeometry(g, dir / "iso.svg", options);
    const std::vector<double> xy = numbers(attribute(readText(dir / "iso.svg"), "d"));
    ASSERT_EQ(xy.size(), 4u);
    EXPECT_NEAR(xy[0], 0, 1e-6);
    EXPECT_NEAR(xy[1], 0, 1e-6);
    EXPECT_NEAR(xy[2], a.u, 1e-5) << a.end.x << "," << a.end.y << "," << a.end.z;
    EXPECT_NEAR(xy[3], -a.v, 1e-5) << a.end.x << "," << a.end.y << "," << a.end.z;
  }
}

}  // namespace
}  // namespace procgen::iotest

// Parses written PLY files (header, then binary little-endian or ASCII body)
// with an independent reader driven by the header's declarations.
#include <cstring>
#include <map>

#include "io/io_test_util.hpp"
#include "io/ply_test_reader.hpp"

namespace procgen::iotest {
namespace {

Geometry sample() {
  Geometry g = kochCurve(2, 0.02f, /*colored=*/true);  // colours change every segment
  g.segments.push_back(makeSegment({3, 3, 3}, {3, 4, 3}, 0.5f, 5, 2));
  g.segments.push_back(makeSegment({3, 4, 3}, {3, 5, 3}, 0.5f, 5, 2));  // shares its start
  addPolygon(g, {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}, {-0.5f, 0.5f, 1}}, 3, 2);
  return g;
}

void checkLines(const PlyFile& ply, const Geometry& g) {
  ASSERT_EQ(ply.elements.size(), 3u);
  EXPECT_EQ(ply.elements[0].name, "vertex");
  const std::vector<std::string> names{"x", "y", "z", "red", "green", "blue", "instance"};
  ASSERT_EQ(ply.elements[0].properties.size(), names.size());
  for (size_t k = 0; k < names.size(); ++k) EXPECT_EQ(ply.elements[0].properties[k].name, names[k]);
  EXPECT_EQ(ply.elements[1].name, "edge");
  EXPECT_EQ(ply.elements[2].name, "face");
  const auto& v = ply.data.at("vertex");
  const auto& e = ply.data.at("edge");
  const auto& f = ply.data.at("face");
  ASSERT_EQ(e.size(), g.segments.size());
  ASSERT_EQ(f.size(), g.polygonCount());
  auto checkVertex = [&](double index, const Vec3& pos, int32_t color, int32_t instance) {
    ASSERT_GE(index, 0);
    ASSERT_LT(index, v.size());
    const auto& r = v[static_cast<size_t>(index)];
    EXPECT_EQ(float(r[0]), pos.x);
    EXPECT_EQ(float(r[1]), pos.y);
    EXPECT_EQ(float(r[2]), pos.z);
    Vec3 c = paletteColor(color);
    EXPECT_EQ(r[3], std::round(c.x * 255));
    EXPECT_EQ(r[4], std::round(c.y * 255));
    EXPECT_EQ(r[5], std::round(c.z * 255));
    EXPECT_EQ(r[6], instance);
  };
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const Segment& s = g.segments[i];
    checkVertex(e[i][0], s.start, s.color, s.instance);
    checkVertex(e[i][1], s.end, s.color, s.instance);
  }
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    size_t n = g.polygon_offsets[p + 1] - g.polygon_offsets[p];
    ASSERT_EQ(f[p].size(), n);
    for (size_t k = 0; k < n; ++k)
      checkVertex(f[p][k], g.polygon_vertices[g.polygon_offsets[p] + k], g.polygon_colors[p],
                  g.polygon_instances[p]);
  }
  // Only the same-colour continuation may share a vertex.
  EXPECT_EQ(v.size(), 2 * g.segments.size() - 1 + g.polygon_vertices.size());
}

TEST(PlyWriter, BinaryLittleEndianRoundTrip) {
  TempDir dir;
  Geometry g = sample();
  writeGeometry(g, dir / "m.ply");
  std::string bytes = readText(dir / "m.ply");
  PlyFile ply = parsePly(bytes);
  EXPECT_EQ(ply.format, "binary_little_endian");
  EXPECT_NE(bytes.find("property list uchar int vertex_indices\n"), std::string::npos);
  checkLines(ply, g);
}

TEST(PlyWriter, AsciiRoundTrip) {
  TempDir dir;
  Geometry g = sample();
  WriteOptions options;
  options.ply_ascii = true;
  writeGeometry(g, dir / "m.ply", options);
  PlyFile ply = parsePly(readText(dir / "m.ply"));
  EXPECT_EQ(ply.format, "ascii");
  checkLines(ply, g);
}

TEST(PlyWriter, CylinderFacesAndRadius) {
  TempDir dir;
  Geometry g = sample();
  WriteOptions options;
  options.cylinders = true;
  options.cylinder_sides = 5;
  writeGeometry(g, dir / "t.ply", options);
  PlyFile ply = parsePly(readText(dir / "t.ply"));
  ASSERT_EQ(ply.elements.size(), 2u);  // no edges
  const auto& v = ply.data.at("vertex");
  const auto& f = ply.data.at("face");
  ASSERT_EQ(v.size(), g.segments.size() * 10 + g.polygon_vertices.size());
  ASSERT_EQ(f.size(), g.segments.size() * 5 + g.polygonCount());
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const Segment& s = g.segments[i];
    for (size_t q = 0; q < 5; ++q) {
      const auto& face = f[i * 5 + q];
      ASSERT_EQ(face.size(), 4u);
      for (double index : face) {
        const auto& r = v.at(static_cast<size_t>(index));
        Vec3 pos{float(r[0]), float(r[1]), float(r[2])};
        EXPECT_NEAR(distanceToAxis(pos, s.start, s.end), 0.5 * s.width, 1e-5 * (1 + s.width));
        EXPECT_EQ(r[6], s.instance);
      }
    }
  }
}

TEST(PlyWriter, LargePolygonsSwitchToIntCounts) {
  TempDir dir;
  Geometry g;
  std::vector<Vec3> circle;
  for (int k = 0; k < 300; ++k)
    circle.push_back({float(std::cos(k * 2 * M_PI / 300)), float(std::sin(k * 2 * M_PI / 300)), 0});
  addPolygon(g, circle);
  writeGeometry(g, dir / "c.ply");
  std::string bytes = readText(dir / "c.ply");
  EXPECT_NE(bytes.find("property list int int vertex_indices\n"), std::string::npos);
  PlyFile ply = parsePly(bytes);
  ASSERT_EQ(ply.data.at("face").size(), 1u);
  EXPECT_EQ(ply.data.at("face")[0].size(), 300u);
  EXPECT_EQ(ply.data.at("face")[0][299], 299);
}

}  // namespace
}  // namespace procgen::iotest

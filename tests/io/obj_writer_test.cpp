// Reads written OBJ files back with a small independent parser and compares
// every coordinate with the geometry that was written.
#include <map>

#include "io/io_test_util.hpp"

namespace procgen::iotest {
namespace {

struct ObjFile {
  std::vector<Vec3> v, vn;
  struct Element {
    std::vector<int64_t> v, vn;  // 1-based as written
    std::string object, material;
  };
  std::vector<Element> lines, faces;
  std::vector<std::string> objects;
  std::string mtllib;
};

ObjFile parseObj(const std::string& text) {
  ObjFile obj;
  std::istringstream in(text);
  std::string line, object, material;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "v" || tag == "vn") {
      Vec3 p;
      std::string x, y, z;
      ls >> x >> y >> z;
      p = {std::strtof(x.c_str(), nullptr), std::strtof(y.c_str(), nullptr),
           std::strtof(z.c_str(), nullptr)};
      (tag == "v" ? obj.v : obj.vn).push_back(p);
    } else if (tag == "l" || tag == "f") {
      ObjFile::Element e;
      e.object = object;
      e.material = material;
      std::string token;
      while (ls >> token) {
        size_t slash = token.find('/');
        e.v.push_back(std::stoll(token.substr(0, slash)));
        if (slash != std::string::npos) {
          size_t second = token.find('/', slash + 1);
          e.vn.push_back(std::stoll(token.substr(second + 1)));
        }
      }
      (tag == "l" ? obj.lines : obj.faces).push_back(e);
    } else if (tag == "o" || tag == "g") {
      ls >> object;
      obj.objects.push_back(object);
    } else if (tag == "usemtl") {
      ls >> material;
    } else if (tag == "mtllib") {
      ls >> obj.mtllib;
    }
  }
  return obj;
}

TEST(ObjWriter, KochCurveLinesRoundTripExactly) {
  TempDir dir;
  Geometry g = kochCurve(3, 0.01f, /*colored=*/true);
  ASSERT_EQ(g.segments.size(), 64u);
  addPolygon(g, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, 2);
  writeGeometry(g, dir / "koch.obj");
  ObjFile obj = parseObj(readText(dir / "koch.obj"));

  ASSERT_EQ(obj.lines.size(), g.segments.size());
  ASSERT_EQ(obj.faces.size(), 1u);
  EXPECT_TRUE(obj.objects.empty()) << "a single instance needs no object groups";
  // Connected polyline: the writer shares joints, so at most 2 per segment, at least n+1.
  EXPECT_LE(obj.v.size(), 2 * g.segments.size() + 4);
  EXPECT_GE(obj.v.size(), g.segments.size() + 1 + 4);
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const auto& l = obj.lines[i];
    ASSERT_EQ(l.v.size(), 2u);
    ASSERT_GE(l.v[0], 1);
    ASSERT_LE(l.v[1], static_cast<int64_t>(obj.v.size()));
    // Shortest round-trip text parses back to the identical float.
    EXPECT_TRUE(sameVec(obj.v[l.v[0] - 1], g.segments[i].start)) << "segment " << i;
    EXPECT_TRUE(sameVec(obj.v[l.v[1] - 1], g.segments[i].end)) << "segment " << i;
    EXPECT_EQ(l.material, "color_" + std::to_string(g.segments[i].color));
  }
  const auto& f = obj.faces[0];
  ASSERT_EQ(f.v.size(), 4u);
  for (size_t k = 0; k < 4; ++k) EXPECT_TRUE(sameVec(obj.v[f.v[k] - 1], g.polygon_vertices[k]));
  EXPECT_EQ(f.material, "color_2");

  // The companion .mtl defines every material used, with the palette's diffuse colour.
  EXPECT_EQ(obj.mtllib, "koch.mtl");
  std::string mtl = readText(dir / "koch.mtl");
  for (int c : {0, 1, 2, 3}) {
    size_t at = mtl.find("newmtl color_" + std::to_string(c) + "\n");
    ASSERT_NE(at, std::string::npos) << c;
    size_t kd = mtl.find("Kd ", at);
    ASSERT_NE(kd, std::string::npos);
    std::istringstream ks(mtl.substr(kd + 3));
    float r, gr, b;
    ks >> r >> gr >> b;
    Vec3 expected = paletteColor(c);
    EXPECT_EQ(r, expected.x);
    EXPECT_EQ(gr, expected.y);
    EXPECT_EQ(b, expected.z);
  }
}

TEST(ObjWriter, DisconnectedSegmentsGetTheirOwnVertices) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}));
  g.segments.push_back(makeSegment({5, 5, 5}, {6, 5, 5}));  // a jump (turtle `f` or `]`)
  g.segments.push_back(makeSegment({6, 5, 5}, {6, 7, 5}));  // continues
  WriteOptions options;
  options.obj_mtl = false;
  writeGeometry(g, dir / "jump.obj", options);
  EXPECT_FALSE(std::filesystem::exists(dir / "jump.mtl"));
  ObjFile obj = parseObj(readText(dir / "jump.obj"));
  ASSERT_EQ(obj.lines.size(), 3u);
  EXPECT_EQ(obj.v.size(), 5u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(sameVec(obj.v[obj.lines[i].v[0] - 1], g.segments[i].start));
    EXPECT_TRUE(sameVec(obj.v[obj.lines[i].v[1] - 1], g.segments[i].end));
  }
}

TEST(ObjWriter, OneObjectPerInstanceKeepingStringOrder) {
  TempDir dir;
  Geometry g;
  // Instances interleaved on purpose: the writer must regroup them.
  g.segments.push_back(makeSegment({0, 0, 0}, {0, 1, 0}, 1, 0, 1));
  g.segments.push_back(makeSegment({9, 0, 0}, {9, 1, 0}, 1, 0, 0));
  g.segments.push_back(makeSegment({0, 1, 0}, {0, 2, 0}, 1, 0, 1));
  addPolygon(g, {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}}, 1, 0);
  writeGeometry(g, dir / "multi.obj");
  ObjFile obj = parseObj(readText(dir / "multi.obj"));
  ASSERT_EQ(obj.objects, (std::vector<std::string>{"instance_0", "instance_1"}));
  ASSERT_EQ(obj.lines.size(), 3u);
  // Expected: instance 0's segment 1, then instance 1's segments 0 and 2 in order.
  const size_t order[] = {1, 0, 2};
  for (size_t k = 0; k < 3; ++k) {
    const Segment& s = g.segments[order[k]];
    EXPECT_EQ(obj.lines[k].object, "instance_" + std::to_string(s.instance));
    EXPECT_TRUE(sameVec(obj.v[obj.lines[k].v[0] - 1], s.start)) << k;
    EXPECT_TRUE(sameVec(obj.v[obj.lines[k].v[1] - 1], s.end)) << k;
  }
  ASSERT_EQ(obj.faces.size(), 1u);
  EXPECT_EQ(obj.faces[0].object, "instance_0");
}

TEST(ObjWriter, CylindersAreTubesAroundEachSegment) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {0, 2, 0}, 0.5f));
  g.segments.push_back(makeSegment({0, 2, 0}, {1, 3, 0.5f}, 0.2f));
  g.segments.push_back(makeSegment({1, 3, 0.5f}, {1, 3, 4}, 1.0f));  // along +Z
  addPolygon(g, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}});
  WriteOptions options;
  options.cylinders = true;
  options.cylinder_sides = 6;
  writeGeometry(g, dir / "tubes.obj", options);
  ObjFile obj = parseObj(readText(dir / "tubes.obj"));
  const size_t sides = 6;
  ASSERT_EQ(obj.v.size(), g.segments.size() * 2 * sides + 3);
  ASSERT_EQ(obj.faces.size(), g.segments.size() * sides + 1);
  EXPECT_TRUE(obj.lines.empty());
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const Segment& s = g.segments[i];
    for (size_t q = 0; q < sides; ++q) {
      const auto& f = obj.faces[i * sides + q];
      ASSERT_EQ(f.v.size(), 4u);
      ASSERT_EQ(f.vn.size(), 4u);
      Vec3 c[4];
      for (int k = 0; k < 4; ++k) {
        c[k] = obj.v[f.v[k] - 1];
        double t;
        EXPECT_NEAR(distanceToAxis(c[k], s.start, s.end, &t), 0.5 * s.width, 1e-5);
        EXPECT_TRUE(std::fabs(t) < 1e-5 || std::fabs(t - 1) < 1e-5) << t;
        Vec3 n = obj.vn[f.vn[k] - 1];
        EXPECT_NEAR(std::sqrt(n.x * n.x + n.y * n.y + n.z * n.z), 1.0, 1e-5);
      }
      // Outward winding: the quad's geometric normal points away from the axis.
      double e1[3] = {c[1].x - c[0].x, c[1].y - c[0].y, c[1].z - c[0].z};
      double e2[3] = {c[2].x - c[0].x, c[2].y - c[0].y, c[2].z - c[0].z};
      double nx = e1[1] * e2[2] - e1[2] * e2[1], ny = e1[2] * e2[0] - e1[0] * e2[2],
             nz = e1[0] * e2[1] - e1[1] * e2[0];
      double t;
      distanceToAxis(c[0], s.start, s.end, &t);
      double ax = s.start.x + t * (s.end.x - s.start.x), ay = s.start.y + t * (s.end.y - s.start.y),
             az = s.start.z + t * (s.end.z - s.start.z);
      EXPECT_GT(nx * (c[0].x - ax) + ny * (c[0].y - ay) + nz * (c[0].z - az), 0.0);
    }
  }
}

}  // namespace
}  // namespace procgen::iotest

// The point and mesh readers (procgen/points.hpp) against hand-written files:
// every PLY encoding and byte order, double and integer coordinates, extra
// properties and elements (lists included) skipped, OFF, XYZ and OBJ; the
// malformed files with the line and column each error must name; and
// surface sampling against the triangle it must land in and the area
// fractions it must follow.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/points.hpp"

namespace {

using namespace procgen;

/// Binary PLY bodies written byte by byte, in either byte order.
struct Bytes {
  bool big = false;
  std::string out;
  template <typename T>
  Bytes& put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof v);
    if (big) std::reverse(b, b + sizeof(T));
    out.append(b, sizeof(T));
    return *this;
  }
};

std::vector<double> coords(const PointCloud& c) {
  std::vector<double> v;
  for (uint64_t i = 0; i < c.count; ++i)
    for (int a = 0; a < 3; ++a) v.push_back(c.coord(i, a));
  return v;
}

/// The ParseError's "file:line:col" prefix, or the message of another Error.
std::string errorOf(std::string_view bytes, PointFileFormat f, bool mesh = false) {
  try {
    if (mesh) parseMeshFile(bytes, f, "in");
    else parsePointFile(bytes, f, "in");
  } catch (const ParseError& e) {
    return "in:" + std::to_string(e.location().line) + ":" + std::to_string(e.location().column) + ": " + e.message();
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
    return e.what();
  }
  return "no error";
}

const char* kAsciiHeader = "ply\nformat ascii 1.0\ncomment hand written\nelement vertex 3\n"
                           "property float x\nproperty float y\nproperty float z\n";

TEST(PointReaders, PlyAsciiFloat) {
  const std::string file = std::string(kAsciiHeader) + "end_header\n0 0 0\n1.5 -2 3e2\n\n0.25 0.5 1\n";
  const PointCloud c = parsePointFile(file, PointFileFormat::kPly, "a.ply");
  EXPECT_EQ(c.count, 3u);
  EXPECT_EQ(c.xyz32.size(), 9u) << "float coordinates stay float";
  EXPECT_EQ(coords(c), (std::vector<double>{0, 0, 0, 1.5, -2, 300, 0.25, 0.5, 1}));
}

TEST(PointReaders, PlyAsciiSkipsOtherPropertiesListsAndElements) {
  const std::string file =
      "ply\r\nformat ascii 1.0\r\nelement camera 1\r\nproperty list uchar float view\r\n"
      "element vertex 2\r\nproperty uchar red\r\nproperty double z\r\nproperty list int int tags\r\n"
      "property double x\r\nproperty double y\r\nelement face 1\r\nproperty list uchar int vertex_indices\r\n"
      "end_header\r\n3 1 2 3\r\n255 7 2 10 11 1 2\r\n0 8 0 3 4\r\n3 0 1 1\r\n";
  const PointCloud c = parsePointFile(file, PointFileFormat::kPly, "b.ply");
  EXPECT_TRUE(c.xyz32.empty()) << "double coordinates are kept as double";
  EXPECT_EQ(coords(c), (std::vector<double>{1, 2, 7, 3, 4, 8}));
}

std::string binaryPly(bool big) {
  // A camera element before the vertices, the vertex with extra properties
  // around the coordinates and a list, then faces (a quad and a line).
  std::string header = std::string("ply\nformat ") + (big ? "binary_big_endian" : "binary_little_endian") +
                       " 1.0\nelement camera 2\nproperty short a\nproperty list uchar uint ids\n"
                       "element vertex 4\nproperty uchar flag\nproperty double x\nproperty list ushort float n\n"
                       "property double y\nproperty int w\nproperty double z\n"
                       "element face 2\nproperty uchar kind\nproperty list uchar int vertex_indices\nend_header\n";
  Bytes b;
  b.big = big;
  b.put<int16_t>(-1).put<uint8_t>(2).put<uint32_t>(5).put<uint32_t>(6);
  b.put<int16_t>(3).put<uint8_t>(0);
  const double xyz[4][3] = {{0, 0, 0}, {2, 0, 0.5}, {2, 1, -1e300}, {0, 1, 1.25}};
  for (int i = 0; i < 4; ++i) {
    b.put<uint8_t>(9).put<double>(xyz[i][0]).put<uint16_t>(uint16_t(i % 2));
    if (i % 2) b.put<float>(7.0f);
    b.put<double>(xyz[i][1]).put<int32_t>(-5).put<double>(xyz[i][2]);
  }
  b.put<uint8_t>(1).put<uint8_t>(4).put<int32_t>(0).put<int32_t>(1).put<int32_t>(2).put<int32_t>(3);
  b.put<uint8_t>(1).put<uint8_t>(2).put<int32_t>(0).put<int32_t>(1);
  return header + b.out;
}

TEST(PointReaders, PlyBinaryBothByteOrdersDoubleAndLists) {
  const std::vector<double> want{0, 0, 0, 2, 0, 0.5, 2, 1, -1e300, 0, 1, 1.25};
  for (bool big : {false, true}) {
    const PointCloud c = parsePointFile(binaryPly(big), PointFileFormat::kPly, "c.ply");
    EXPECT_EQ(coords(c), want) << (big ? "big" : "little");
    const TriangleMesh m = parseMeshFile(binaryPly(big), PointFileFormat::kPly, "c.ply");
    // The quad is fanned from its first vertex; the 2-vertex face is skipped.
    EXPECT_EQ(m.indices, (std::vector<uint32_t>{0, 1, 2, 0, 2, 3}));
    ASSERT_EQ(m.normals.size(), 4u);
  }
}

TEST(PointReaders, PlyBinaryFloatFastPathBigEndian) {
  Bytes b;
  b.big = true;
  b.put<float>(1.5f).put<float>(-2.0f).put<float>(3.25f).put<uint8_t>(200);
  b.put<float>(1e-3f).put<float>(0.0f).put<float>(-0.0f).put<uint8_t>(1);
  const std::string file = "ply\nformat binary_big_endian 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                           "property float z\nproperty uchar i\nend_header\n" + b.out;
  const PointCloud c = parsePointFile(file, PointFileFormat::kPly, "d.ply");
  ASSERT_EQ(c.xyz32.size(), 6u);
  EXPECT_EQ(coords(c), (std::vector<double>{1.5, -2, 3.25, double(1e-3f), 0, 0}));
}

TEST(PointReaders, PlyMalformedNamesTheLine) {
  const std::string h = kAsciiHeader;
  EXPECT_EQ(errorOf("plx\n", PointFileFormat::kPly), "in:1:1: not a PLY file: the first line must be 'ply'");
  EXPECT_EQ(errorOf("ply\nformat ascii 2.0\nend_header\n", PointFileFormat::kPly),
            "in:2:14: unsupported PLY version '2.0' (1.0)");
  EXPECT_EQ(errorOf("ply\nformat ascii 1.0\nproperty float x\n", PointFileFormat::kPly),
            "in:3:1: a property before any element");
  EXPECT_EQ(errorOf("ply\nformat ascii 1.0\nelement vertex 1\nproperty flaot x\n", PointFileFormat::kPly),
            "in:4:10: unknown property type 'flaot'");
  EXPECT_EQ(errorOf(h, PointFileFormat::kPly), "in:7:17: the header ends without 'end_header'");
  EXPECT_EQ(errorOf(h + "end_header\n0 0 0\n1 x 1\n2 2 2\n", PointFileFormat::kPly),
            "in:10:3: coordinate: 'x' is not a number");
  EXPECT_EQ(errorOf(h + "end_header\n0 0 0\n1 1\n2 2 2\n", PointFileFormat::kPly),
            "in:10:4: element 'vertex' record 1: missing property 'z'");
  EXPECT_EQ(errorOf(h + "end_header\n0 0 0\n1 1 1 1\n2 2 2\n", PointFileFormat::kPly),
            "in:10:7: element 'vertex' record 1 has more values than the header declares");
  EXPECT_EQ(errorOf(h + "end_header\n0 0 0\n1 1 1\n", PointFileFormat::kPly),
            "in:10:6: the file ends before element 'vertex' record 2 of 3");
  EXPECT_EQ(errorOf(h + "end_header\n0 0 0\n1 inf 1\n2 2 2\n", PointFileFormat::kPly),
            "in:10:3: point 1: coordinate y is infinite");
  EXPECT_EQ(errorOf(h + "end_header\n0 0 0\n1 1 1\n2 2 nan\n", PointFileFormat::kPly),
            "in:11:5: point 2: coordinate z is NaN");
  // A face index outside the vertices, in a mesh.
  EXPECT_EQ(errorOf(h + "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n"
                        "3 0 1 3\n",
                    PointFileFormat::kPly, true),
            "in:14:7: vertex index: '3' is not a whole number in 0..2");
}

TEST(PointReaders, PlyCountsTheFileCannotHoldAreRefusedBeforeAllocating) {
  // 10^15 vertices of 12 bytes in a 100-byte file: an error, not an allocation.
  const std::string bin = "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000000\nproperty float x\n"
                          "property float y\nproperty float z\nend_header\n" + std::string(24, '\0');
  EXPECT_NE(errorOf(bin, PointFileFormat::kPly).find("declares 1000000000000000 records of at least 12 bytes"),
            std::string::npos);
  const std::string text = "ply\nformat ascii 1.0\nelement vertex 99999999999\nproperty float x\nproperty float y\n"
                           "property float z\nend_header\n0 0 0\n";
  EXPECT_EQ(errorOf(text, PointFileFormat::kPly), "in: element 'vertex' declares 99999999999 records but only 6 bytes follow");
  // Truncated binary data names the element and the record.
  const std::string cut = binaryPly(false);
  EXPECT_NE(errorOf(cut.substr(0, cut.size() - 3), PointFileFormat::kPly, true).find("inside element 'face' record 1"),
            std::string::npos);
  // A binary NaN names the vertex.
  Bytes b;
  b.put<float>(0).put<float>(0).put<float>(0).put<float>(1).put<float>(NAN).put<float>(1);
  const std::string nan_file = "ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty float x\n"
                               "property float y\nproperty float z\nend_header\n" + b.out;
  EXPECT_NE(errorOf(nan_file, PointFileFormat::kPly).find("point 1: coordinate y is NaN"), std::string::npos);
}

TEST(PointReaders, BudgetIsAskedBeforeAllocating) {
  const std::string file = std::string(kAsciiHeader) + "end_header\n0 0 0\n1 1 1\n2 2 2\n";
  EXPECT_THROW(parsePointFile(file, PointFileFormat::kPly, "a.ply", {64}), ResourceError);
  EXPECT_NO_THROW(parsePointFile(file, PointFileFormat::kPly, "a.ply", {1 << 20}));
}

TEST(PointReaders, Off) {
  const std::string file = "# a comment\nCOFF 4 2 0\n0 0 0 255 0 0 255\n1 0 0  0 255 0 255 # red\n\n1 1 0 0 0 255 255\n"
                           "0 1 0.5 1 1 1 1\n3 0 1 2\n4 0 1 2 3 200 10 10\n";
  EXPECT_EQ(coords(parsePointFile(file, PointFileFormat::kOff, "a.off")),
            (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0.5}));
  EXPECT_EQ(parseMeshFile(file, PointFileFormat::kOff, "a.off").indices,
            (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 2, 3}));
  // Counts on their own line.
  EXPECT_EQ(parsePointFile("OFF\n1 0 0\n1 2 3\n", PointFileFormat::kOff, "b.off").count, 1u);
  EXPECT_EQ(errorOf("4OFF\n1 0 0\n1 2 3 4\n", PointFileFormat::kOff),
            "in:1:1: only 3D OFF files are read ('4OFF' has another dimension)");
  EXPECT_EQ(errorOf("OFF\n3 0 0\n1 2 3\n1 2 3\n", PointFileFormat::kOff),
            "in:4:6: the file ends after 2 of 3 vertices");
  EXPECT_EQ(errorOf("OFF\n2 0 0\n1 2 3\n1 2\n", PointFileFormat::kOff),
            "in:4:4: point 1: expected 3 coordinates x y z, found 2");
  EXPECT_EQ(errorOf("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 5\n", PointFileFormat::kOff, true),
            "in:6:7: vertex index: '5' is not a whole number in 0..2");
  EXPECT_EQ(errorOf("OFF\n900000000 0 0\n0 0 0\n", PointFileFormat::kOff),
            "in:2:1: the counts 900000000 vertices and 0 faces cannot fit in the 6 bytes that follow");
}

TEST(PointReaders, Xyz) {
  const std::string file = "# x y z intensity\n1 2 3 0.5\n\n  4,5,6\n7\t8\t9 # trailing comment\n-1e-3 +2 3.\n";
  const PointCloud c = parsePointFile(file, PointFileFormat::kXyz, "a.xyz");
  EXPECT_EQ(coords(c), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, -1e-3, 2, 3}));
  EXPECT_EQ(errorOf("1 2 3\n1 2\n", PointFileFormat::kXyz), "in:2:4: point 1: expected 3 coordinates x y z, found 2");
  EXPECT_EQ(errorOf("1 2 3\n1 2 3\n\n1 nan 3\n", PointFileFormat::kXyz), "in:4:3: point 2: coordinate y is NaN");
  EXPECT_EQ(errorOf("1 2 3abc\n", PointFileFormat::kXyz), "in:1:5: coordinate: '3abc' is not a number");
  EXPECT_EQ(errorOf("# only a comment\n\n", PointFileFormat::kXyz), "in: the file holds no points");
  EXPECT_NE(errorOf("1 2 3\n", PointFileFormat::kXyz, true).find("holds points, not faces"), std::string::npos);
}

TEST(PointReaders, Obj) {
  const std::string file = "# cube corner\nmtllib x.mtl\nv 0 0 0\nvt 0 0\nvn 0 0 1\nv 1 0 0 1.0\nv 1 1 0\n"
                           "f 1/1/1 2/1/1 3/1/1\nv 0 1 0\nf -4//1 -2//1 -1//1\nl 1 2\n";
  EXPECT_EQ(coords(parsePointFile(file, PointFileFormat::kObj, "a.obj")),
            (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}));
  EXPECT_EQ(parseMeshFile(file, PointFileFormat::kObj, "a.obj").indices, (std::vector<uint32_t>{0, 1, 2, 0, 2, 3}));
  EXPECT_EQ(errorOf("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", PointFileFormat::kObj, true),
            "in:4:7: vertex index 4 is outside the 3 vertices");
  EXPECT_EQ(errorOf("v 0 0 0\nf -2 1 1\nv 0 1 0\n", PointFileFormat::kObj, true),
            "in:2:3: vertex index -2 is outside the 1 vertices defined so far");
}

TEST(PointReaders, FormatByExtension) {
  EXPECT_EQ(pointFileFormat("a/b.PLY"), PointFileFormat::kPly);
  EXPECT_EQ(pointFileFormat("b.off"), PointFileFormat::kOff);
  EXPECT_EQ(pointFileFormat("b.pts"), PointFileFormat::kXyz);
  EXPECT_EQ(pointFileFormat("b.obj"), PointFileFormat::kObj);
  EXPECT_FALSE(pointFileFormat("b.las").has_value());
}

// ---- surface sampling -------------------------------------------------------

/// Barycentric coordinates of p in triangle (a, b, c) of the z = const plane.
bool insideXY(const double* p, Vec3 a, Vec3 b, Vec3 c) {
  const double d = (double(b.y) - c.y) * (double(a.x) - c.x) + (double(c.x) - b.x) * (double(a.y) - c.y);
  const double l0 = ((double(b.y) - c.y) * (p[0] - c.x) + (double(c.x) - b.x) * (p[1] - c.y)) / d;
  const double l1 = ((double(c.y) - a.y) * (p[0] - c.x) + (double(a.x) - c.x) * (p[1] - c.y)) / d;
  const double eps = 1e-12;
  return l0 >= -eps && l1 >= -eps && 1 - l0 - l1 >= -eps;
}

TEST(SurfaceSampling, AreaWeightedInsideTheTrianglesAndDeterministic) {
  // Two disjoint triangles in z = 2 with areas 3 and 1, and one of area 0.
  TriangleMesh m;
  m.positions = {{0, 0, 2}, {3, 0, 2}, {0, 2, 2}, {10, 0, 2}, {12, 0, 2}, {10, 1, 2}, {5, 5, 2}};
  m.indices = {6, 6, 6, 0, 1, 2, 3, 4, 5};
  const uint64_t n = 20000;
  std::vector<double> xyz(3 * n);
  sampleSurface(m, n, 42, xyz.data());
  uint64_t first = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double* p = &xyz[3 * i];
    EXPECT_NEAR(p[2], 2.0, 1e-12);
    const bool in0 = insideXY(p, m.positions[0], m.positions[1], m.positions[2]);
    const bool in1 = insideXY(p, m.positions[3], m.positions[4], m.positions[5]);
    ASSERT_TRUE(in0 != in1) << "point " << i << " (" << p[0] << ", " << p[1] << ")";
    first += in0;
  }
  // Binomial(n, 3/4): 5 standard deviations.
  const double sigma = std::sqrt(n * 0.75 * 0.25);
  EXPECT_NEAR(double(first), 0.75 * n, 5 * sigma);
  std::vector<double> again(3 * n), other(3 * n);
  sampleSurface(m, n, 42, again.data());
  sampleSurface(m, n, 43, other.data());
  EXPECT_EQ(again, xyz);
  EXPECT_NE(other, xyz);
  TriangleMesh flat;
  flat.positions = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}};
  flat.indices = {0, 1, 2};
  EXPECT_THROW(sampleSurface(flat, 1, 1, xyz.data()), Error);
}

TEST(SurfaceSampling, GeometrySurfaceTubesAndPolygons) {
  Geometry g;
  g.segments.resize(1);
  g.segments[0] = Segment{{0, 0, 0}, {0, 4, 0}, 1.0f, 0, 0, 0};
  g.polygon_vertices = {{5, 0, 0}, {7, 0, 0}, {7, 2, 0}, {5, 2, 0}};
  g.polygon_offsets = {0, 4};
  g.polygon_colors = {1};
  g.polygon_instances = {0};
  const TriangleMesh m = geometrySurface(g, 8);
  EXPECT_EQ(m.vertexCount(), 16u + 4u);
  EXPECT_EQ(m.triangleCount(), 16u + 2u);
  std::vector<double> xyz(3 * 4000);
  sampleSurface(m, 4000, 7, xyz.data());
  for (size_t i = 0; i < 4000; ++i) {
    const double* p = &xyz[3 * i];
    if (p[0] >= 4) {  // on the square
      EXPECT_EQ(p[2], 0.0);
      EXPECT_TRUE(p[0] >= 5 && p[0] <= 7 && p[1] >= 0 && p[1] <= 2);
    } else {  // on the octagonal tube of radius 0.5 around the y axis: between the inscribed and the outer radius
      const double r = std::hypot(p[0], p[2]);
      EXPECT_LE(r, 0.5 + 1e-6);
      EXPECT_GE(r, 0.5 * std::cos(M_PI / 8) - 1e-6);
      EXPECT_TRUE(p[1] >= -1e-6 && p[1] <= 4 + 1e-6);
    }
  }
}

}  // namespace

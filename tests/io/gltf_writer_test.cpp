// Loads written .glb/.gltf files with tinygltf's loader and checks accessors,
// counts, bounds and primitive modes against the input geometry.
#include <tiny_gltf.h>

#include <cstring>

#include "io/io_test_util.hpp"

namespace procgen::iotest {
namespace {

tinygltf::Model load(const std::filesystem::path& path, bool binary) {
  tinygltf::TinyGLTF loader;
  tinygltf::Model model;
  std::string err, warn;
  bool ok = binary ? loader.LoadBinaryFromFile(&model, &err, &warn, path.string())
                   : loader.LoadASCIIFromFile(&model, &err, &warn, path.string());
  EXPECT_TRUE(ok) << err;
  EXPECT_TRUE(err.empty()) << err;
  EXPECT_TRUE(warn.empty()) << warn;
  return model;
}

// Element `i` of an accessor as floats (handles float and normalized ubyte).
std::vector<float> element(const tinygltf::Model& m, int accessor, size_t i) {
  const tinygltf::Accessor& a = m.accessors.at(accessor);
  const tinygltf::BufferView& v = m.bufferViews.at(a.bufferView);
  const auto& data = m.buffers.at(v.buffer).data;
  const int comps = tinygltf::GetNumComponentsInType(a.type);
  const int size = tinygltf::GetComponentSizeInBytes(a.componentType);
  const size_t stride = v.byteStride ? v.byteStride : size_t(comps * size);
  const size_t offset = v.byteOffset + a.byteOffset + i * stride;
  EXPECT_LE(offset + comps * size, v.byteOffset + v.byteLength);
  std::vector<float> out(comps);
  for (int c = 0; c < comps; ++c) {
    const unsigned char* p = &data.at(offset + c * size);
    if (a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT) {
      std::memcpy(&out[c], p, 4);
    } else if (a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE) {
      out[c] = a.normalized ? *p / 255.0f : *p;
    } else if (a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT) {
      uint32_t u;
      std::memcpy(&u, p, 4);
      out[c] = static_cast<float>(u);
    } else {
      ADD_FAILURE() << "unexpected component type " << a.componentType;
    }
  }
  return out;
}

Vec3 position(const tinygltf::Model& m, const tinygltf::Primitive& prim, size_t index_slot) {
  uint32_t index = static_cast<uint32_t>(element(m, prim.indices, index_slot)[0]);
  std::vector<float> p = element(m, prim.attributes.at("POSITION"), index);
  return {p[0], p[1], p[2]};
}

void checkPositionBounds(const tinygltf::Model& m, const tinygltf::Primitive& prim,
                         const std::vector<Vec3>& expected_points) {
  const tinygltf::Accessor& a = m.accessors.at(prim.attributes.at("POSITION"));
  Bounds b;
  for (const Vec3& p : expected_points) b.add(p);
  ASSERT_EQ(a.minValues.size(), 3u);
  ASSERT_EQ(a.maxValues.size(), 3u);
  EXPECT_FLOAT_EQ(a.minValues[0], b.min.x);
  EXPECT_FLOAT_EQ(a.minValues[1], b.min.y);
  EXPECT_FLOAT_EQ(a.minValues[2], b.min.z);
  EXPECT_FLOAT_EQ(a.maxValues[0], b.max.x);
  EXPECT_FLOAT_EQ(a.maxValues[1], b.max.y);
  EXPECT_FLOAT_EQ(a.maxValues[2], b.max.z);
}

Geometry sample() {
  Geometry g = kochCurve(3, 0.01f, /*colored=*/true);
  addPolygon(g, {{0, 0, 1}, {2, 0, 1}, {2, 1, 1}, {1, 1.5f, 1}, {0, 1, 1}}, 2);
  addPolygon(g, {{0, 0, 2}, {0, 1, 2}, {1, 0, 2}}, 3);
  return g;
}

TEST(GltfWriter, LinesAndFannedPolygons) {
  TempDir dir;
  Geometry g = sample();
  writeGeometry(g, dir / "m.glb");
  tinygltf::Model m = load(dir / "m.glb", true);
  EXPECT_EQ(m.asset.version, "2.0");
  ASSERT_EQ(m.meshes.size(), 1u);
  ASSERT_EQ(m.scenes.size(), 1u);
  ASSERT_EQ(m.scenes[0].nodes.size(), 1u);
  ASSERT_EQ(m.meshes[0].primitives.size(), 2u);

  const tinygltf::Primitive& lines = m.meshes[0].primitives[0];
  EXPECT_EQ(lines.mode, TINYGLTF_MODE_LINE);
  EXPECT_EQ(lines.attributes.count("NORMAL"), 0u);
  ASSERT_EQ(lines.attributes.count("COLOR_0"), 1u);
  ASSERT_EQ(m.accessors[lines.indices].count, 2 * g.segments.size());
  std::vector<Vec3> endpoints;
  for (size_t i = 0; i < g.segments.size(); ++i) {
    EXPECT_TRUE(sameVec(position(m, lines, 2 * i), g.segments[i].start)) << i;
    EXPECT_TRUE(sameVec(position(m, lines, 2 * i + 1), g.segments[i].end)) << i;
    endpoints.push_back(g.segments[i].start);
    endpoints.push_back(g.segments[i].end);
    // COLOR_0 is linear: the sRGB palette decoded with the sRGB transfer function.
    uint32_t vi = static_cast<uint32_t>(element(m, lines.indices, 2 * i + 1)[0]);
    std::vector<float> c = element(m, lines.attributes.at("COLOR_0"), vi);
    Vec3 srgb = paletteColor(g.segments[i].color);
    auto toLinear = [](double s) { return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4); };
    EXPECT_NEAR(c[0], toLinear(srgb.x), 0.5 / 255 + 1e-6);
    EXPECT_NEAR(c[1], toLinear(srgb.y), 0.5 / 255 + 1e-6);
    EXPECT_NEAR(c[2], toLinear(srgb.z), 0.5 / 255 + 1e-6);
  }
  checkPositionBounds(m, lines, endpoints);

  const tinygltf::Primitive& tris = m.meshes[0].primitives[1];
  EXPECT_EQ(tris.mode, TINYGLTF_MODE_TRIANGLES);
  ASSERT_EQ(tris.attributes.count("NORMAL"), 1u);
  // Fan triangulation: n−2 triangles per polygon.
  ASSERT_EQ(m.accessors[tris.indices].count, 3u * (3 + 1));
  checkPositionBounds(m, tris, g.polygon_vertices);
  // Area of the triangles equals the polygons' area (shoelace, computed here).
  double area = 0;
  for (size_t t = 0; t < 4; ++t) {
    Vec3 a = position(m, tris, 3 * t), b = position(m, tris, 3 * t + 1),
         c = position(m, tris, 3 * t + 2);
    double ux = b.x - a.x, uy = b.y - a.y, vx = c.x - a.x, vy = c.y - a.y;
    area += 0.5 * std::fabs(ux * vy - uy * vx);
  }
  EXPECT_NEAR(area, (2.0 + 0.5 * 2 * 0.5) + 0.5, 1e-6);
  // Flat normals are unit vectors perpendicular to the polygon planes (here ±Z).
  for (size_t k = 0; k < m.accessors[tris.attributes.at("NORMAL")].count; ++k) {
    std::vector<float> n = element(m, tris.attributes.at("NORMAL"), k);
    EXPECT_NEAR(std::fabs(n[2]), 1.0, 1e-6);
  }
}

TEST(GltfWriter, CylindersAsTriangleTubes) {
  TempDir dir;
  Geometry g = kochCurve(1, 0.05f);
  WriteOptions options;
  options.cylinders = true;
  options.cylinder_sides = 7;
  writeGeometry(g, dir / "t.glb", options);
  tinygltf::Model m = load(dir / "t.glb", true);
  ASSERT_EQ(m.meshes.size(), 1u);
  ASSERT_EQ(m.meshes[0].primitives.size(), 1u);
  const tinygltf::Primitive& prim = m.meshes[0].primitives[0];
  EXPECT_EQ(prim.mode, TINYGLTF_MODE_TRIANGLES);
  const size_t n = g.segments.size();
  EXPECT_EQ(m.accessors[prim.attributes.at("POSITION")].count, n * 14);
  EXPECT_EQ(m.accessors[prim.attributes.at("NORMAL")].count, n * 14);
  ASSERT_EQ(m.accessors[prim.indices].count, n * 7 * 6);
  for (size_t i = 0; i < n; ++i) {
    const Segment& s = g.segments[i];
    for (size_t k = 0; k < 7 * 6; ++k) {
      Vec3 p = position(m, prim, i * 42 + k);
      EXPECT_NEAR(distanceToAxis(p, s.start, s.end), 0.025, 1e-6);
    }
  }
  std::vector<Vec3> all;
  for (size_t k = 0; k < n * 14; ++k) {
    std::vector<float> p = element(m, prim.attributes.at("POSITION"), k);
    all.push_back({p[0], p[1], p[2]});
  }
  checkPositionBounds(m, prim, all);
}

TEST(GltfWriter, OneNodePerInstanceAndAsciiGltf) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {0, 1, 0}, 1, 0, 4));
  g.segments.push_back(makeSegment({1, 0, 0}, {1, 1, 0}, 1, 0, 2));
  addPolygon(g, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 1, 7);
  writeGeometry(g, dir / "m.gltf");
  tinygltf::Model m = load(dir / "m.gltf", false);
  ASSERT_EQ(m.meshes.size(), 3u);
  EXPECT_EQ(m.meshes[0].name, "instance_2");
  EXPECT_EQ(m.meshes[1].name, "instance_4");
  EXPECT_EQ(m.meshes[2].name, "instance_7");
  EXPECT_EQ(m.scenes.at(0).nodes.size(), 3u);
  EXPECT_TRUE(sameVec(position(m, m.meshes[0].primitives[0], 0), g.segments[1].start));
  EXPECT_TRUE(sameVec(position(m, m.meshes[1].primitives[0], 1), g.segments[0].end));
  EXPECT_EQ(m.meshes[2].primitives[0].mode, TINYGLTF_MODE_TRIANGLES);
}

TEST(GltfWriter, EmptyGeometryIsAValidFile) {
  TempDir dir;
  writeGeometry(Geometry{}, dir / "e.glb");
  tinygltf::Model m = load(dir / "e.glb", true);
  EXPECT_TRUE(m.meshes.empty());
  EXPECT_EQ(m.scenes.size(), 1u);
}

}  // namespace
}  // namespace procgen::iotest

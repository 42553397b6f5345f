// Triangle meshes through the writers, read back by independent readers
// (the tests' PLY reader, tinygltf's loader, libpng, a line count for OBJ),
// and the field images' mappings against values worked out by hand.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <cstring>
#include <sstream>

#include "common/png_decode.hpp"
#include "io/io_test_util.hpp"
#include "io/ply_test_reader.hpp"
#include "procgen/error.hpp"
#include "procgen/io.hpp"
#include "procgen/mesh.hpp"

namespace {

using procgen::GeometryFormat;
using procgen::TriangleMesh;

// A unit tetrahedron with outward normals at its vertices.
TriangleMesh tetrahedron() {
  TriangleMesh m;
  m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const float s = 0.57735027f;
  m.normals = {{-s, -s, -s}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.indices = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  return m;
}

std::string text(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

TEST(MeshWriters, ObjHasPositionsNormalsAndOneBasedFaces) {
  const std::string obj = text(procgen::encodeMesh(tetrahedron(), GeometryFormat::kObj));
  std::istringstream in(obj);
  std::string line;
  int v = 0, vn = 0, f = 0;
  std::vector<std::string> faces;
  while (std::getline(in, line)) {
    if (line.rfind("v ", 0) == 0) ++v;
    if (line.rfind("vn ", 0) == 0) ++vn;
    if (line.rfind("f ", 0) == 0) faces.push_back(line), ++f;
  }
  EXPECT_EQ(v, 4);
  EXPECT_EQ(vn, 4);
  ASSERT_EQ(f, 4);
  EXPECT_EQ(faces[0], "f 1//1 3//3 2//2");
  EXPECT_NE(obj.find("\nv 1 0 0\n"), std::string::npos) << obj;
}

TEST(MeshWriters, PlyBinaryAndAsciiReadBack) {
  const TriangleMesh m = tetrahedron();
  for (bool ascii : {false, true}) {
    procgen::WriteOptions o;
    o.ply_ascii = ascii;
    const procgen::iotest::PlyFile ply = procgen::iotest::parsePly(text(procgen::encodeMesh(m, GeometryFormat::kPly, o)));
    ASSERT_EQ(ply.data.at("vertex").size(), 4u);
    ASSERT_EQ(ply.data.at("face").size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      const auto& rec = ply.data.at("vertex")[i];
      EXPECT_EQ(rec[0], m.positions[i].x);
      EXPECT_EQ(rec[1], m.positions[i].y);
      EXPECT_EQ(rec[2], m.positions[i].z);
      EXPECT_FLOAT_EQ(float(rec[3]), m.normals[i].x);
    }
    for (size_t t = 0; t < 4; ++t) {
      const auto& rec = ply.data.at("face")[t];  // the list's indices (the reader drops the count)
      ASSERT_EQ(rec.size(), 3u);
      for (size_t k = 0; k < 3; ++k) EXPECT_EQ(rec[k], m.indices[3 * t + k]);
    }
  }
}

TEST(MeshWriters, GlbLoadsWithPositionsNormalsAndIndices) {
  procgen::iotest::TempDir dir;
  const TriangleMesh m = tetrahedron();
  procgen::writeMesh(m, dir / "t.glb");
  tinygltf::TinyGLTF loader;
  tinygltf::Model model;
  std::string err, warn;
  ASSERT_TRUE(loader.LoadBinaryFromFile(&model, &err, &warn, (dir / "t.glb").string())) << err;
  ASSERT_EQ(model.meshes.size(), 1u);
  const tinygltf::Primitive& p = model.meshes[0].primitives.at(0);
  EXPECT_EQ(p.mode, TINYGLTF_MODE_TRIANGLES);
  EXPECT_EQ(model.accessors.at(p.attributes.at("POSITION")).count, 4u);
  EXPECT_EQ(model.accessors.at(p.attributes.at("NORMAL")).count, 4u);
  EXPECT_EQ(model.accessors.at(p.indices).count, 12u);
}

TEST(MeshWriters, PngIsAShadedRender) {
  procgen::WriteOptions o;
  o.width = 64;
  o.height = 48;
  o.projection = procgen::Projection::kIso;
  const procgen::test::Decoded png = procgen::test::decode(procgen::encodeMesh(tetrahedron(), GeometryFormat::kPng, o));
  ASSERT_TRUE(png.ok);
  EXPECT_EQ(png.width, 64u);
  EXPECT_EQ(png.height, 48u);
  EXPECT_EQ(png.channels, 3);
  // The centre pixel is covered by the tetrahedron, a corner is background.
  auto pixel = [&](int x, int y) {
    const size_t i = (size_t(y) * 64 + size_t(x)) * 3;
    return std::vector<uint16_t>{png.samples[i], png.samples[i + 1], png.samples[i + 2]};
  };
  const std::vector<uint16_t> bg{uint16_t(std::lround(0.96 * 255)), uint16_t(std::lround(0.96 * 255)),
                                 uint16_t(std::lround(0.94 * 255))};
  EXPECT_EQ(pixel(0, 0), bg);
  EXPECT_NE(pixel(32, 24), bg);
}

TEST(MeshWriters, SvgAndInconsistentMeshesAreRejected) {
  procgen::iotest::TempDir dir;
  EXPECT_THROW(procgen::writeMesh(tetrahedron(), dir / "t.svg"), procgen::Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "t.svg"));
  TriangleMesh bad = tetrahedron();
  bad.indices.push_back(9);
  bad.indices.push_back(0);
  bad.indices.push_back(1);
  EXPECT_THROW(procgen::encodeMesh(bad, GeometryFormat::kObj), procgen::Error);
}

TEST(FieldImage, GrayAndColourMapsFollowTheRange) {
  const float v[4] = {-1.0f, 0.0f, 1.0f, std::nanf("")};
  const procgen::FieldImage8 gray = procgen::fieldToImage8(v, 4, 1);
  EXPECT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.low, -1.0f);
  EXPECT_EQ(gray.high, 1.0f);
  EXPECT_EQ(gray.pixels, (std::vector<uint8_t>{0, 128, 255, 0}));  // 127.5 rounds up; NaN → 0
  const procgen::FieldImage8 vir = procgen::fieldToImage8(v, 2, 2, procgen::ColorMap::kViridis, -1.0f, 1.0f);
  EXPECT_EQ(vir.channels, 3);
  // viridis(0) = (0.267004, 0.004874, 0.329415), viridis(1) = (0.993248, 0.906157, 0.143936)
  EXPECT_EQ(std::vector<uint8_t>(vir.pixels.begin(), vir.pixels.begin() + 3), (std::vector<uint8_t>{68, 1, 84}));
  EXPECT_EQ(std::vector<uint8_t>(vir.pixels.begin() + 6, vir.pixels.begin() + 9), (std::vector<uint8_t>{253, 231, 37}));
  // terrain(0.5) = (1, 1, 0.6): sand
  const auto sand = procgen::colorMapColor(procgen::ColorMap::kTerrain, 0.5f);
  EXPECT_FLOAT_EQ(sand[2], 0.6f);
  EXPECT_EQ(procgen::parseColorMap("grey"), procgen::ColorMap::kGray);
  EXPECT_FALSE(procgen::parseColorMap("jet"));
}

}  // namespace

// writeGeometry's dispatch and errors, the palette, and the cylinder mesher.
#include "io/geometry/cylinder_mesh.hpp"
#include "io/io_test_util.hpp"
#include "procgen/error.hpp"

namespace procgen::iotest {
namespace {

TEST(WriteGeometry, ExtensionsAreRecognisedCaseInsensitively) {
  for (const char* ext : {"obj", ".obj", "PLY", ".Glb", "gltf", ".svg", "png"})
    EXPECT_TRUE(isGeometryExtension(ext)) << ext;
  for (const char* ext : {"", ".", "txt", ".jpg", "objx", ".ob"}) EXPECT_FALSE(isGeometryExtension(ext)) << ext;
}

TEST(WriteGeometry, EveryFormatWritesAFileWhateverTheCase) {
  TempDir dir;
  Geometry g = kochCurve(1);
  for (const char* name : {"a.obj", "b.PLY", "c.glb", "d.gltf", "e.svg", "f.Png"}) {
    writeGeometry(g, dir / name);
    EXPECT_GT(std::filesystem::file_size(dir / name), 0u) << name;
  }
}

TEST(WriteGeometry, UnknownExtensionIsAUsageErrorNamingTheSupportedOnes) {
  TempDir dir;
  try {
    writeGeometry(kochCurve(1), dir / "model.stl");
    FAIL() << "expected procgen::Error";
  } catch (const OutputError&) {
    FAIL() << "an unknown extension is a usage error, not an output error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kUsage);
    std::string what = e.what();
    for (const char* ext : {".obj", ".ply", ".glb", ".gltf", ".svg", ".png", ".stl"})
      EXPECT_NE(what.find(ext), std::string::npos) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "model.stl"));
  EXPECT_THROW(writeGeometry(kochCurve(1), dir / "noextension"), Error);
}

TEST(WriteGeometry, UnwritablePathIsAnOutputErrorForEveryFormat) {
  TempDir dir;
  std::filesystem::create_directories(dir / "taken.png");  // a directory where the file should go
  for (const char* name : {"missing/a.obj", "missing/a.ply", "missing/a.glb", "missing/a.gltf",
                           "missing/a.svg", "missing/a.png", "taken.png"}) {
    try {
      writeGeometry(kochCurve(1), dir / name);
      ADD_FAILURE() << "expected OutputError for " << name;
    } catch (const OutputError& e) {
      EXPECT_EQ(e.exitCode(), ExitCode::kOutputError);
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

TEST(WriteGeometry, BadOptionsAreUsageErrors) {
  TempDir dir;
  WriteOptions options;
  options.cylinder_sides = 2;
  options.cylinders = true;
  EXPECT_THROW(writeGeometry(kochCurve(1), dir / "a.obj", options), Error);
  options = {};
  options.width = 0;
  EXPECT_THROW(writeGeometry(kochCurve(1), dir / "a.png", options), Error);
}

TEST(WriteGeometry, ProjectionNamesParse) {
  EXPECT_EQ(parseProjection("front"), Projection::kFront);
  EXPECT_EQ(parseProjection("side"), Projection::kSide);
  EXPECT_EQ(parseProjection("top"), Projection::kTop);
  EXPECT_EQ(parseProjection("iso"), Projection::kIso);
  EXPECT_FALSE(parseProjection("Front"));
  EXPECT_FALSE(parseProjection(""));
}

TEST(Palette, StemBrownThenGreensAndWraps) {
  Vec3 stem = paletteColor(0);
  EXPECT_GT(stem.x, stem.y);
  EXPECT_GT(stem.y, stem.z);
  for (int i : {1, 2, 3}) {
    Vec3 leaf = paletteColor(i);
    EXPECT_GT(leaf.y, leaf.x) << i;
    EXPECT_GT(leaf.y, leaf.z) << i;
  }
  // Wrapping, including negative indices; every entry distinct and in [0, 1].
  int n = 1;
  while (!sameVec(paletteColor(n), paletteColor(0))) ++n;
  EXPECT_GE(n, 8);
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(sameVec(paletteColor(i), paletteColor(i + n)));
    EXPECT_TRUE(sameVec(paletteColor(i), paletteColor(i - n)));
    Vec3 c = paletteColor(i);
    for (float v : {c.x, c.y, c.z}) {
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
    }
    for (int j = 0; j < i; ++j) EXPECT_FALSE(sameVec(paletteColor(i), paletteColor(j)));
  }
}

TEST(CylinderMesher, RingsLieOnTheTubeAndNormalsPointOutwards) {
  const Vec3 axes[][2] = {{{0, 0, 0}, {0, 1, 0}},
                          {{1, 2, 3}, {1, 2, -5}},
                          {{-1, 0.5f, 2}, {3, -2, 0.25f}},
                          {{4, 4, 4}, {4.001f, 4, 4}}};
  for (int sides : {3, 8, 17}) {
    io::CylinderMesher mesher(sides);
    ASSERT_EQ(mesher.verticesPerSegment(), 2u * sides);
    for (const auto& axis : axes) {
      Segment s = makeSegment(axis[0], axis[1], 0.3f);
      std::vector<Vec3> pos(2 * sides), nrm(2 * sides);
      mesher.vertices(s, pos.data(), nrm.data());
      for (int k = 0; k < 2 * sides; ++k) {
        double t;
        EXPECT_NEAR(distanceToAxis(pos[k], s.start, s.end, &t), 0.15, 1e-5);
        EXPECT_NEAR(t, k < sides ? 0.0 : 1.0, 1e-3);
        // normal = (vertex − ring centre) / radius
        const Vec3& c = k < sides ? s.start : s.end;
        EXPECT_NEAR(nrm[k].x, (pos[k].x - c.x) / 0.15, 1e-4);
        EXPECT_NEAR(nrm[k].y, (pos[k].y - c.y) / 0.15, 1e-4);
        EXPECT_NEAR(nrm[k].z, (pos[k].z - c.z) / 0.15, 1e-4);
      }
      // Ring vertices are equally spaced: chord = 2r·sin(π/sides).
      for (int k = 0; k < sides; ++k)
        EXPECT_NEAR(distance(pos[k], pos[(k + 1) % sides]), 0.3 * std::sin(M_PI / sides), 1e-5);
    }
  }
}

TEST(CylinderMesher, ZeroLengthSegmentStillGivesAValidRing) {
  io::CylinderMesher mesher(6);
  Segment s = makeSegment({1, 1, 1}, {1, 1, 1}, 2.0f);
  std::vector<Vec3> pos(12), nrm(12);
  mesher.vertices(s, pos.data(), nrm.data());
  for (const Vec3& p : pos) {
    EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z));
    EXPECT_NEAR(distance(p, s.start), 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace procgen::iotest

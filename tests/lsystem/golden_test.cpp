// Golden files of the L-system engine (tests/common/golden.hpp; regenerate
// with PROCGEN_UPDATE_GOLDEN=1): from the serial backend only,
//  - every example model at a small n: its derivation statistics, the hash of
//    its string, and the counts, bounds and hash of its geometry;
//  - the derived strings of every example while they are short, in full;
//  - the forest scene at two steps, per instance;
//  - two 96×96 PNG previews (compared pixel by pixel).
// They catch unintended changes; correctness is the business of the
// independent references in the other suites.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "common/cli_run.hpp"
#include "common/golden.hpp"
#include "common/lsystem_helpers.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/scene.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;

std::string hex(uint64_t h) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

/// Shortest text that reads back to the same float.
std::string num(float f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  return buf;
}

uint64_t geometryHash(const Geometry& g) {
  uint64_t h = test::fnv1a(g.segments.data(), g.segments.size() * sizeof(Segment));
  h = test::fnv1a(g.polygon_vertices.data(), g.polygon_vertices.size() * sizeof(Vec3), h);
  h = test::fnv1a(g.polygon_offsets.data(), g.polygon_offsets.size() * sizeof(uint64_t), h);
  h = test::fnv1a(g.polygon_colors.data(), g.polygon_colors.size() * sizeof(int32_t), h);
  return test::fnv1a(g.polygon_instances.data(), g.polygon_instances.size() * sizeof(int32_t), h);
}

std::string geometryLine(const Geometry& g) {
  const Bounds b = g.bounds();
  std::string s = "segments=" + std::to_string(g.segments.size()) + " polygons=" + std::to_string(g.polygonCount());
  s += b.empty() ? std::string(" bounds=empty")
                 : " bounds=" + num(b.min.x) + "," + num(b.min.y) + "," + num(b.min.z) + ":" + num(b.max.x) + "," +
                       num(b.max.y) + "," + num(b.max.z);
  return s + " geometry_fnv=" + hex(geometryHash(g));
}

Geometry draw(const LSystem& l, const ModuleString& s) {
  InterpretOptions options;
  options.view = l.view();
  return interpret(l, s, options);
}

TEST(GoldenLSystem, ExampleModelsAtSmallN) {
  std::ostringstream out;
  out << "# Serial derivation and interpretation of every example model at the largest n <= 6\n"
         "# within 20000 modules (tests/lsystem/golden_test.cpp; PROCGEN_UPDATE_GOLDEN=1 rewrites).\n";
  for (const fs::path& file : test::exampleModels()) {
    const LSystem l = LSystem::fromFile(file);
    const int n = test::largestIterationsWithin(l, std::min(l.derivationLength(), 6), 20000);
    DeriveOptions options;
    options.iterations = n;
    DeriveStats stats;
    const ModuleString s = derive(l, options, &stats);
    out << file.filename().string() << " n=" << n << " modules=" << stats.modules
        << " modules_total=" << stats.modules_total << " string_fnv=" << hex(stringHash(s)) << " "
        << geometryLine(draw(l, s)) << "\n";
  }
  test::expectGoldenText("lsystem/examples.txt", out.str());
}

TEST(GoldenLSystem, ShortDerivedStrings) {
  std::ostringstream out;
  out << "# Serial derivations of every example model, n = 0, 1, 2, ... while the string has <= 300\n"
         "# modules (tests/lsystem/golden_test.cpp; PROCGEN_UPDATE_GOLDEN=1 rewrites).\n";
  for (const fs::path& file : test::exampleModels()) {
    const LSystem l = LSystem::fromFile(file);
    for (int n = 0; n <= l.derivationLength(); ++n) {
      DeriveOptions options;
      options.iterations = n;
      options.max_modules = 300;
      ModuleString s;
      try {
        s = derive(l, options);
      } catch (const ResourceError&) {
        break;
      }
      out << file.filename().string() << " n=" << n << ": " << toText(s) << "\n";
    }
  }
  test::expectGoldenText("lsystem/strings.txt", out.str());
}

TEST(GoldenLSystem, ForestSceneAtTwoSteps) {
  const LSystemScene scene =
      LSystemScene::fromFile(fs::path(PROCGEN_SOURCE_DIR) / "examples" / "scenes" / "forest.scene");
  DeriveOptions options;
  options.iterations = 2;
  const LSystemSceneDerivation d = deriveScene(scene, options);
  std::ostringstream out;
  out << "# examples/scenes/forest.scene derived 2 steps on the serial backend, per instance\n"
         "# (tests/lsystem/golden_test.cpp; PROCGEN_UPDATE_GOLDEN=1 rewrites).\n";
  for (size_t k = 0; k < d.instances(); ++k)
    out << k << " " << scene.instances[k].file.filename().string() << " modules=" << d.stats[k].modules
        << " string_fnv=" << hex(stringHash(d.instanceString(k, scene))) << "\n";
  out << "all " << geometryLine(interpretScene(scene, d, Execution{})) << "\n";
  test::expectGoldenText("lsystem/forest-scene.txt", out.str());
}

class GoldenPreview : public test::ScratchDirTest {};

TEST_F(GoldenPreview, TinyPngPreviews) {
  for (const auto& [model, n] : {std::pair{"koch-island.l", 2}, std::pair{"plant-2d.l", 4}}) {
    SCOPED_TRACE(model);
    const LSystem l = LSystem::fromFile(test::examplesDir() / model);
    DeriveOptions options;
    options.iterations = n;
    WriteOptions w;
    w.width = 96;
    w.height = 96;
    const fs::path png = dir_ / "preview.png";
    writeGeometry(draw(l, derive(l, options)), png, w);
    test::expectGoldenPng("lsystem/" + std::string(model).substr(0, std::string(model).size() - 2) + "-n" +
                              std::to_string(n) + ".png",
                          png);
  }
}

}  // namespace
}  // namespace procgen

// Non-finite geometry (issue 16) as the interpreters test it now, while they
// write (issue 15, steady state: no second pass over the output): the serial
// walk per segment, the cpu walks per chunk, branch and mapped chunk, and the
// scene placement per instance, on every backend. Every string is built so
// that the module that overflows is known by hand: float's largest value is
// 3.40e38, so two steps of 3e38 along one axis end at +inf while each alone
// is finite. The forced 64-module cpu chunks put that module in a chunk drawn
// in local coordinates (non-branching strings) or in a spawned branch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/backends.hpp"
#include "common/error_of.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/scene.hpp"

namespace procgen {
namespace {

using test::BackendTest;
using test::CpuChunkScope;

using test::errorOf;

/// 2000 modules the turtle ignores: 31 chunks of 64.
const std::string kFiller(2000, 'A');

class FiniteCheck : public BackendTest {
 protected:
  Geometry draw(const std::string& axiom) {
    const LSystem l = LSystem::fromText("Axiom: " + axiom + "\n");
    InterpretOptions o;
    o.execution = execution();
    return interpret(l, l.axiom(), o);
  }
  CpuChunkScope chunk_{64};
};

TEST_P(FiniteCheck, OverflowInALaterChunkOfANonBranchingStringNamesTheModule) {
  // Module 2001 ends at 6e38. With several threads it lies in a chunk walked
  // from the identity frame, where it ends at 3e38 (finite): only the mapped
  // segment overflows.
  const std::string m = errorOf([&] { draw("F(3e38)" + kFiller + "F(3e38)"); });
  EXPECT_NE(m.find("module 2001 'F(3e+38)' drew a segment"), std::string::npos) << m;
  // Finite: 2e38 in all. Colour -1 sets every exponent bit of the word after
  // the width, which the test must not read as a float.
  const Geometry g = draw("'(-1)F(1e38)" + kFiller + "F(1e38)");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_FLOAT_EQ(g.segments[1].end.y, 2e38f);
  EXPECT_EQ(g.segments[1].color, -1);
}

TEST_P(FiniteCheck, OverflowInsideALongBranchNamesTheModule) {
  // The branch [A...A F(3e38)] is longer than a chunk: with several threads
  // a work item of its own, starting at 3e38; its F (module 2002) ends at 6e38.
  const std::string m = errorOf([&] { draw("F(3e38)[" + kFiller + "F(3e38)]F"); });
  EXPECT_NE(m.find("module 2002 'F(3e+38)' drew a segment"), std::string::npos) << m;
  const Geometry g = draw("F(3e38)[" + kFiller + "F(1e37)]F");
  ASSERT_EQ(g.segments.size(), 3u);
}

TEST_P(FiniteCheck, NonFiniteWidthIsFound) {
  // !(3e38) with width scale 2: the width is 6e38 = +inf, the positions finite.
  const LSystem l = LSystem::fromText("Axiom: F" + kFiller + "!(3e38)F\n");
  InterpretOptions o;
  o.execution = execution();
  o.view.width_scale = 2;
  const std::string m = errorOf([&] { interpret(l, l.axiom(), o); });
  EXPECT_NE(m.find("module 2002 'F' drew a segment"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(Backends, FiniteCheck, testing::ValuesIn(test::backendVariants()), test::variantName);

class FiniteCheckScene : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    dir_ = std::filesystem::temp_directory_path() /
           ("procgen_finite_scene_" + std::to_string(::getpid()) + "_" + variant().name);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  Geometry draw(const std::string& scene_text) {
    const LSystemScene scene = LSystemScene::fromText(scene_text, "s.scene", dir_);
    DeriveOptions d;
    d.execution = execution();
    return interpretScene(scene, deriveScene(scene, d), execution());
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
  CpuChunkScope chunk_{64};
};

TEST_P(FiniteCheckScene, PlacementThatOverflowsNamesTheInstance) {
  write("m.l", "Axiom: F(1e9)\n");
  // Instance 1 scales the segment (0,0,0)-(0,1e9,0) by 1e30: it ends at 1e39.
  std::string m = errorOf([&] { draw("m.l\nm.l scale=1e30\n"); });
  EXPECT_NE(m.find("scene instance 1 (line 2): its placement (position, rotation, scale) makes the geometry "
                   "non-finite"),
            std::string::npos)
      << m;
  // Instance 0 moves it to y = 3e38: it ends at 3e38 + 1e9 (finite); instance
  // 2 to x = 3e38 with a turn of 90 degrees about z: it ends at x = 3e38 + 1e9
  // too (finite), while instance 3 (line 5) turns it the other way after
  // scaling it to 1e38: x = 3e38 + 1e38 = 4e38.
  m = errorOf([&] {
    draw("m.l at=0,3e38,0\nm.l\nm.l at=3e38,0,0 rotate=0,0,-90\n# a comment line\n"
         "m.l at=3e38,0,0 rotate=0,0,-90 scale=1e29\n");
  });
  EXPECT_NE(m.find("scene instance 3 (line 5)"), std::string::npos) << m;
  // Near the limit but finite: every segment drawn.
  EXPECT_EQ(draw("m.l at=0,3e38,0\nm.l scale=1e29\n").segments.size(), 2u);
}

TEST_P(FiniteCheckScene, InstanceThatDrawsNonFiniteGeometryNamesTheModule) {
  // A small instance (drawn serially beside the others, or together on the
  // device) and a large one (drawn alone by the backend's own interpreter on
  // several threads): the module is named in each.
  write("small.l", "Axiom: F\n");
  write("bad.l", "Axiom: F(1)F(3e38)F(3e38)\n");
  write("big.l", "Axiom: F(3e38)" + kFiller + "F(3e38)\n");
  std::string m = errorOf([&] { draw("small.l\nbad.l\n"); });
  EXPECT_NE(m.find("module 2 'F(3e+38)' drew a segment"), std::string::npos) << m;
  m = errorOf([&] { draw("small.l\nbig.l\n"); });
  EXPECT_NE(m.find("module 2001 'F(3e+38)' drew a segment"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(Backends, FiniteCheckScene, testing::ValuesIn(test::backendVariants()),
                         test::variantName);

}  // namespace
}  // namespace procgen

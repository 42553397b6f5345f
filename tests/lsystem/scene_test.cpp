// Multiple L-systems (paper §6): the batched scene derivation must give every
// instance exactly the string derive() gives it alone (the single-system
// engine is tested against hand derivations and textbook references), on
// every backend, thread count and chunking; the scene file's keys, constant
// overrides and placements; its errors; and the `procgen scene` command.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/cli_run.hpp"
#include "common/lsystem_helpers.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/scene.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::Backend;
using procgen::Execution;

const fs::path kExamples = procgen::test::examplesDir();

using Config = procgen::test::Variant;
using ChunkOverride = procgen::test::CpuChunkScope;

/// serial, cpu×1, cpu×2, cpu×7 with chunks of 5 modules, and the
/// device-resident batched passes (opencl/scene.cl; PoCL in CI) where present.
std::vector<Config> configs() {
  return procgen::test::availableVariants(
      {procgen::test::makeVariant(Backend::kSerial, 1), procgen::test::makeVariant(Backend::kCpu, 1),
       procgen::test::makeVariant(Backend::kCpu, 2), procgen::test::makeVariant(Backend::kCpu, 7, 5),
       procgen::test::makeVariant(Backend::kOpenCL, 1)});
}

/// Parameters agree within the variant's tolerance (bit for bit but on opencl).
bool paramsAgree(const procgen::OverwriteVector<float>& got, const procgen::OverwriteVector<float>& want,
                 double tolerance) {
  if (got.size() != want.size()) return false;
  for (size_t k = 0; k < got.size(); ++k)
    if (!procgen::test::floatsAgree(got[k], want[k], tolerance)) return false;
  return true;
}

class SceneTest : public procgen::test::ScratchDirTest {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
};

// Grammars that exercise every pass kind: parametric with conditions, context
// with brackets, stochastic, decomposition, cut, an erasing production and a
// model with no productions at all.
const char* kParametric =
    "Lsystem: 1\nderivation length: 6\nAxiom: A(1)\n"
    "A(x) : x < 4 --> F(x)[+A(x+1)]A(x*1.5)\nA(x) : x >= 4 --> F(x)\nendlsystem\n";
const char* kContext =
    "#ignore: +-\nLsystem: 1\nderivation length: 9\nAxiom: B[+A]A[-A]A\n"
    "B < A --> B\nB --> A\nendlsystem\n";
const char* kDecomposition =
    "Lsystem: 1\nderivation length: 4\nAxiom: S\nS --> SX\n"
    "decomposition:\nmaximum depth: 3\nX --> YY\nY --> Z\nendlsystem\n";
const char* kCut = "Lsystem: 1\nderivation length: 5\nAxiom: A\nA --> F[+B]A\nB --> F%F\nendlsystem\n";
const char* kErase = "Lsystem: 1\nderivation length: 3\nAxiom: AAB\nA --> \nB --> BA\nendlsystem\n";
const char* kStatic = "Lsystem: 1\nderivation length: 2\nAxiom: F+F\nendlsystem\n";

std::string sceneText(const std::vector<std::string>& lines) {
  std::string s = "# test scene\n";
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

TEST_F(SceneTest, EveryInstanceDerivesAsItDoesAlone) {
  write("parametric.l", kParametric);
  write("context.l", kContext);
  write("decomposition.l", kDecomposition);
  write("cut.l", kCut);
  write("erase.l", kErase);
  write("static.l", kStatic);
  const std::string text = sceneText({
      "parametric.l",
      (kExamples / "plant-stochastic.l").string() + " n=6 seed=5",
      "context.l",
      (kExamples / "plant-stochastic.l").string() + " n=4",  // no seed: base seed + index
      "decomposition.l",
      (kExamples / "hilbert3d.l").string() + " n=3",
      "cut.l",
      "erase.l",
      "static.l",
      (kExamples / "plant-context.l").string() + " n=12",
      (kExamples / "tree-3d.l").string() + " n=4 a=30",
  });
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(text, "test.scene", dir_);
  ASSERT_EQ(scene.instances.size(), 11u);

  for (const Config& config : configs()) {
    SCOPED_TRACE(config.name);
    ChunkOverride chunk(config.chunk);
    procgen::DeriveOptions options;
    options.seed = 40;
    options.execution = config.execution();
    const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, options);
    ASSERT_EQ(d.instances(), scene.instances.size());
    ASSERT_EQ(d.begin.size(), scene.instances.size() + 1);
    ASSERT_EQ(d.begin.back(), d.string.size());
    for (size_t k = 0; k < scene.instances.size(); ++k) {
      SCOPED_TRACE("instance " + std::to_string(k));
      const procgen::LSystemInstance& inst = scene.instances[k];
      procgen::DeriveOptions alone;
      alone.iterations = inst.iterations;
      alone.seed = inst.seed.value_or(40 + k);
      procgen::DeriveStats stats;
      const procgen::ModuleString expected = procgen::derive(inst.lsystem, alone, &stats);
      const procgen::ModuleString got = d.instanceString(k, scene);
      EXPECT_EQ(got.symbols, expected.symbols);
      EXPECT_EQ(got.param_offsets, expected.param_offsets);
      EXPECT_TRUE(paramsAgree(got.params, expected.params, config.tolerance));
      EXPECT_EQ(d.stats[k].iterations, stats.iterations);
      EXPECT_EQ(d.stats[k].modules, stats.modules);
      EXPECT_EQ(d.stats[k].modules_total, stats.modules_total);
      EXPECT_EQ(d.stats[k].step_modules, stats.step_modules);
    }
  }
}

TEST_F(SceneTest, IterationOverrideAppliesToEveryInstance) {
  const std::string text =
      sceneText({(kExamples / "koch-curve.l").string() + " n=5", (kExamples / "plant-2d.l").string()});
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(text, "t.scene", dir_);
  procgen::DeriveOptions options;
  options.iterations = 2;
  const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, options);
  for (size_t k = 0; k < 2; ++k) {
    procgen::DeriveOptions alone;
    alone.iterations = 2;
    EXPECT_EQ(d.instanceString(k, scene), procgen::derive(scene.instances[k].lsystem, alone));
    EXPECT_EQ(d.stats[k].iterations, 2);
  }
}

// A scene of one instance is one string: the driver takes the one-string
// passes (with its D0L steps and jumps) on every backend, and the instance
// gets what derive() gives it, with the same statistics.
TEST_F(SceneTest, OneInstanceDerivesAsItDoesAlone) {
  for (const char* model : {"koch-curve.l n=6 seed=3", "plant-stochastic.l n=5", "plant-context.l n=14"}) {
    const procgen::LSystemScene scene =
        procgen::LSystemScene::fromText(sceneText({(kExamples / model).string()}), "one.scene", dir_);
    for (const Config& config : configs()) {
      SCOPED_TRACE(std::string(model) + " " + config.name);
      ChunkOverride chunk(config.chunk);
      procgen::DeriveOptions options;
      options.execution = config.execution();
      const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, options);
      procgen::DeriveOptions alone;
      alone.iterations = scene.instances[0].iterations;
      alone.seed = scene.instances[0].seed.value_or(options.seed);
      procgen::DeriveStats stats;
      const procgen::ModuleString want = procgen::derive(scene.instances[0].lsystem, alone, &stats);
      ASSERT_EQ(d.begin, (std::vector<uint64_t>{0, want.size()}));
      EXPECT_EQ(d.string.symbols, want.symbols);
      EXPECT_EQ(d.stats[0].step_modules, stats.step_modules);
      EXPECT_EQ(d.stats[0].modules_total, stats.modules_total);
    }
  }
}

TEST_F(SceneTest, KeysAndConstantOverrides) {
  write("m.l",
        "#define len 2   /* a trailing comment stays a comment */\n"
        "#define turn 30\nangle increment: 45\nLsystem: 1\nderivation length: 1\n"
        "Axiom: A\nA --> F(len)+(turn)F\nendlsystem\n");
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(
      sceneText({"m.l n=1 seed=9 at=1,2,3 rotate=10,20,30 scale=2.5 angle=15 step=3 width=0.5 "
                 "width-factor=0.8 width-scale=0.1 elasticity=0.2 tropism=0,0,1 len=7 turn=len*2"}),
      "k.scene", dir_);
  const procgen::LSystemInstance& i = scene.instances[0];
  EXPECT_EQ(i.iterations, 1);
  EXPECT_EQ(i.seed, 9u);
  EXPECT_EQ(i.position.x, 1.0f);
  EXPECT_EQ(i.position.z, 3.0f);
  EXPECT_EQ(i.rotation_deg.y, 20.0f);
  EXPECT_EQ(i.scale, 2.5f);
  EXPECT_EQ(i.view.angle_deg, 15.0f);
  EXPECT_EQ(i.view.step, 3.0f);
  EXPECT_EQ(i.view.initial_width, 0.5f);
  EXPECT_EQ(i.view.width_factor, 0.8f);
  EXPECT_EQ(i.view.width_scale, 0.1f);
  EXPECT_EQ(i.view.elasticity, 0.2f);
  EXPECT_EQ(i.view.tropism.z, 1.0f);
  EXPECT_EQ(i.line, 2);
  // len=7 and turn=len*2 (an expression over the overridden constant) = 14.
  procgen::DeriveOptions options;
  EXPECT_EQ(procgen::toText(procgen::derive(i.lsystem, options)), "F(7)+(14)F");
}

TEST_F(SceneTest, MalformedLinesGiveFileLineColumn) {
  write("m.l", "#define k 1\nLsystem: 1\nAxiom: F\nendlsystem\n");
  struct Case {
    std::string line;
    std::string where;  // expected "file:line:col"
    std::string says;
  };
  const std::vector<Case> cases{
      {"m.l n=abc", "s.scene:2:7:", "non-negative integer"},
      {"m.l at=1,2", "s.scene:2:8:", "three numbers"},
      {"m.l scale=-1", "s.scene:2:1:", "positive"},
      {"m.l bogus=3", "s.scene:2:1:", "neither a scene key"},
      {"m.l noequals", "s.scene:2:5:", "key=value"},
      {"missing.l n=1", "s.scene:2:1:", "cannot read model"},
      {"\"m.l", "s.scene:2:1:", "unterminated"},
      {"m.l k=(", "m.l:", "error"},  // the model's own diagnostic for the bad constant
      // Non-finite values never reach the placed geometry: inf and nan, and
      // numbers finite as doubles but not as floats, are refused where written.
      {"m.l scale=inf", "s.scene:2:11:", "finite number"},
      {"m.l scale=nan", "s.scene:2:11:", "finite number"},
      {"m.l angle=-inf", "s.scene:2:11:", "finite number"},
      {"m.l scale=1e39", "s.scene:2:11:", "out of range for a 32-bit float"},
      {"m.l at=0,1e39,0", "s.scene:2:10:", "out of range for a 32-bit float"},
      {"m.l rotate=nan,0,0", "s.scene:2:12:", "finite number"},
      {"m.l width=-3.5e38", "s.scene:2:11:", "out of range for a 32-bit float"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    try {
      procgen::LSystemScene::fromText(sceneText({c.line}), "s.scene", dir_);
      ADD_FAILURE() << "no error";
    } catch (const procgen::ParseError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.where), std::string::npos) << what;
      EXPECT_NE(what.find(c.says), std::string::npos) << what;
    }
  }
  EXPECT_THROW(procgen::LSystemScene::fromText("# nothing\n\n", "e.scene", dir_), procgen::ParseError);
}

TEST_F(SceneTest, PlacementMovesRotatesAndScalesEachInstance) {
  write("f.l", "step length: 1\ninitial line width: 0.5\nLsystem: 1\nAxiom: F\nendlsystem\n");
  // Instance 1: F from (0,0,0) to (0,1,0), scaled by 2 → (0,2,0), rotated 90° about Z → (-2,0,0),
  // moved to (10,0,0) → segment (10,0,0)–(8,0,0), width 1.
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(
      sceneText({"f.l", "f.l at=10,0,0 rotate=0,0,90 scale=2"}), "p.scene", dir_);
  for (const Config& config : configs()) {
    SCOPED_TRACE(config.name);
    ChunkOverride chunk(config.chunk);
    procgen::DeriveOptions options;
    options.execution = config.execution();
    const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, options);
    const procgen::Geometry g = procgen::interpretScene(scene, d, config.execution());
    ASSERT_EQ(g.segments.size(), 2u);
    EXPECT_EQ(g.segments[0].instance, 0);
    EXPECT_EQ(g.segments[1].instance, 1);
    EXPECT_NEAR(g.segments[0].end.y, 1.0f, 1e-6f);
    const procgen::Segment& s = g.segments[1];
    EXPECT_NEAR(s.start.x, 10.0f, 1e-5f);
    EXPECT_NEAR(s.end.x, 8.0f, 1e-5f);
    EXPECT_NEAR(s.end.y, 0.0f, 1e-5f);
    EXPECT_NEAR(s.end.z, 0.0f, 1e-5f);
    EXPECT_NEAR(s.width, 1.0f, 1e-6f);
  }
}

// Rotations about X and Y (and all three) against the textbook right-handed
// matrices R = Rz·Ry·Rx applied here in double precision to the instance's
// geometry drawn alone: a sign flipped in any axis moves the 3D tree's points.
// By hand: +90° about Y takes +X to −Z, +90° about X takes +Y to +Z.
TEST_F(SceneTest, RotationsAboutXAndYAreRightHanded) {
  const std::string tree = (kExamples / "tree-3d.l").string() + " n=3";
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(
      sceneText({tree, tree + " rotate=0,90,0", tree + " rotate=90,0,0", tree + " rotate=0,-35,0",
                 tree + " rotate=30,40,50 at=1,2,3 scale=0.5"}),
      "rot.scene", dir_);
  const struct {
    double rx, ry, rz, tx, ty, tz, scale;
  } placements[] = {{0, 0, 0, 0, 0, 0, 1}, {0, 90, 0, 0, 0, 0, 1}, {90, 0, 0, 0, 0, 0, 1},
                    {0, -35, 0, 0, 0, 0, 1}, {30, 40, 50, 1, 2, 3, 0.5}};
  auto place = [](const auto& pl, const procgen::Vec3& p) {
    const double d2r = M_PI / 180.0;
    const double cx = std::cos(pl.rx * d2r), sx = std::sin(pl.rx * d2r);
    const double cy = std::cos(pl.ry * d2r), sy = std::sin(pl.ry * d2r);
    const double cz = std::cos(pl.rz * d2r), sz = std::sin(pl.rz * d2r);
    double x = p.x * pl.scale, y = p.y * pl.scale, z = p.z * pl.scale;
    double y1 = cx * y - sx * z, z1 = sx * y + cx * z;  // about X
    y = y1;
    z = z1;
    double x2 = cy * x + sy * z, z2 = -sy * x + cy * z;  // about Y
    x = x2;
    z = z2;
    double x3 = cz * x - sz * y, y3 = sz * x + cz * y;  // about Z
    return std::array<double, 3>{x3 + pl.tx, y3 + pl.ty, z + pl.tz};
  };
  const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, procgen::DeriveOptions{});
  procgen::InterpretOptions alone_options;
  alone_options.view = scene.instances[0].view;
  const procgen::Geometry alone = procgen::interpret(scene.instances[0].lsystem, d.instanceString(0, scene), alone_options);
  ASSERT_GT(alone.segments.size(), 10u);
  const double size = procgen::test::modelSize(alone);
  // The tree leaves the Y axis: the rotations have something to move.
  double spread = 0;
  for (const procgen::Segment& s : alone.segments) spread = std::max({spread, std::abs(double(s.end.x)), std::abs(double(s.end.z))});
  ASSERT_GT(spread, 0.1 * size);
  for (const Config& config : configs()) {
    SCOPED_TRACE(config.name);
    ChunkOverride chunk(config.chunk);
    const procgen::Geometry g = procgen::interpretScene(scene, d, config.execution());
    ASSERT_EQ(g.segments.size(), 5 * alone.segments.size());
    for (size_t k = 0; k < 5; ++k) {
      for (size_t i = 0; i < alone.segments.size(); ++i) {
        const procgen::Segment& got = g.segments[k * alone.segments.size() + i];
        ASSERT_EQ(got.instance, int32_t(k));
        for (const auto& [p, q] : {std::pair{got.start, alone.segments[i].start}, std::pair{got.end, alone.segments[i].end}}) {
          const auto want = place(placements[k], q);
          ASSERT_NEAR(p.x, want[0], 1e-5 * size) << "instance " << k << " segment " << i;
          ASSERT_NEAR(p.y, want[1], 1e-5 * size) << "instance " << k << " segment " << i;
          ASSERT_NEAR(p.z, want[2], 1e-5 * size) << "instance " << k << " segment " << i;
        }
      }
    }
  }
  // The hand-derived cases: (1,0,0) about Y by +90° is (0,0,-1); (0,1,0) about X by +90° is (0,0,1).
  const auto y90 = place(placements[1], procgen::Vec3{1, 0, 0});
  EXPECT_NEAR(y90[0], 0, 1e-12);
  EXPECT_NEAR(y90[2], -1, 1e-12);
  const auto x90 = place(placements[2], procgen::Vec3{0, 1, 0});
  EXPECT_NEAR(x90[1], 0, 1e-12);
  EXPECT_NEAR(x90[2], 1, 1e-12);
}

TEST_F(SceneTest, GeometryIsEveryInstanceInOrder) {
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(
      sceneText({(kExamples / "plant-1.24a.l").string() + " n=3",
                 (kExamples / "koch-island.l").string() + " n=2",
                 (kExamples / "plant-stochastic.l").string() + " n=4 seed=3"}),
      "g.scene", dir_);
  procgen::DeriveOptions options;
  const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, options);
  std::vector<procgen::Segment> expected;
  for (size_t k = 0; k < scene.instances.size(); ++k) {
    procgen::InterpretOptions io;
    io.view = scene.instances[k].view;
    io.instance = static_cast<int32_t>(k);
    io.seed = scene.instances[k].seed.value_or(options.seed + k);
    const procgen::Geometry g =
        procgen::interpret(scene.instances[k].lsystem, d.instanceString(k, scene), io);
    expected.insert(expected.end(), g.segments.begin(), g.segments.end());
  }
  for (const Config& config : configs()) {
    SCOPED_TRACE(config.name);
    ChunkOverride chunk(config.chunk);
    const procgen::Geometry g = procgen::interpretScene(scene, d, config.execution());
    ASSERT_EQ(g.segments.size(), expected.size());
    // Identity placement: the serial backend is bit-identical to interpreting
    // alone; the cpu backend may draw a large instance with its parallel
    // interpreter, whose matrix products round differently (its stated
    // tolerance: 1e-5 of the model's size).
    const procgen::Bounds box = g.bounds();
    const float size = std::max(box.max.x - box.min.x, box.max.y - box.min.y);
    const float tolerance = config.backend == Backend::kSerial ? 0.0f : 1e-5f * size;
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(g.segments[i].instance, expected[i].instance) << i;
      ASSERT_NEAR(g.segments[i].end.x, expected[i].end.x, tolerance) << i;
      ASSERT_NEAR(g.segments[i].end.y, expected[i].end.y, tolerance) << i;
    }
  }
}

// Drawing every instance together (opencl: one root work item per instance,
// §6) must equal drawing them one by one: polygons and brackets left open at
// an instance's end, and ']' / '}' with nothing to close at the next one's
// start, must not reach across; views (angle, tropism) stay per instance; a
// homomorphism instance is drawn alone.
TEST_F(SceneTest, InstancesDrawnTogetherMatchDrawnAlone) {
  write("open.l", "Lsystem: 1\nderivation length: 0\nAxiom: F{.F+F.F.}[+F{.F.F.F.}F{.F-F.F\nendlsystem\n");
  write("close.l", "Lsystem: 1\nderivation length: 0\nAxiom: ]]F}F[-F]F{.F.F+F.}F\nendlsystem\n");
  write("hom.l", "Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> A[+A]A\nhomomorphism:\nA --> F[-F]\n"
                 "endlsystem\n");
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(
      sceneText({"open.l", "close.l", (kExamples / "tree-3d.l").string() + " n=3",
                 (kExamples / "plant-2d.l").string() + " n=4 angle=20", "hom.l", "open.l",
                 (kExamples / "koch-curve.l").string() + " n=2", "close.l"}),
      "together.scene", dir_);
  const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, procgen::DeriveOptions{});
  const procgen::Geometry want = procgen::interpretScene(scene, d, Execution{Backend::kSerial, 1});
  ASSERT_GT(want.polygonCount(), 4u);
  for (const Config& config : configs()) {
    SCOPED_TRACE(config.name);
    ChunkOverride chunk(config.chunk);
    const procgen::Geometry got = procgen::interpretScene(scene, d, config.execution());
    ASSERT_EQ(got.segments.size(), want.segments.size());
    const procgen::Bounds box = want.bounds();
    const float size = std::max({box.max.x - box.min.x, box.max.y - box.min.y, box.max.z - box.min.z, 1.0f});
    const float tolerance = config.backend == Backend::kSerial ? 0.0f : 1e-5f * size;
    for (size_t i = 0; i < want.segments.size(); ++i) {
      const procgen::Segment& a = got.segments[i];
      const procgen::Segment& b = want.segments[i];
      ASSERT_EQ(a.instance, b.instance) << i;
      ASSERT_EQ(a.depth, b.depth) << i;
      ASSERT_EQ(a.color, b.color) << i;
      ASSERT_NEAR(a.start.x, b.start.x, tolerance) << i;
      ASSERT_NEAR(a.end.x, b.end.x, tolerance) << i;
      ASSERT_NEAR(a.end.y, b.end.y, tolerance) << i;
      ASSERT_NEAR(a.end.z, b.end.z, tolerance) << i;
      ASSERT_NEAR(a.width, b.width, tolerance) << i;
    }
    ASSERT_EQ(got.polygon_offsets, want.polygon_offsets);
    ASSERT_EQ(got.polygon_colors, want.polygon_colors);
    ASSERT_EQ(got.polygon_instances, want.polygon_instances);
    for (size_t v = 0; v < want.polygon_vertices.size(); ++v) {
      ASSERT_NEAR(got.polygon_vertices[v].x, want.polygon_vertices[v].x, tolerance) << v;
      ASSERT_NEAR(got.polygon_vertices[v].y, want.polygon_vertices[v].y, tolerance) << v;
    }
  }
}

// On serial and cpu the instances are derived alone, side by side: the
// progress callback hears of every instance once, with the modules so far,
// and an exception it throws (a cancellation) is the caller's answer — not
// a reason to derive the batch instead.
TEST_F(SceneTest, ProgressHearsEveryInstanceAndItsExceptionEndsTheDerivation) {
  const std::string text = sceneText({
      (kExamples / "plant-stochastic.l").string() + " n=5 seed=7", (kExamples / "tree-3d.l").string() + " n=4",
      (kExamples / "koch-curve.l").string() + " n=4", (kExamples / "plant-2d.l").string() + " n=4",
      (kExamples / "hilbert3d.l").string() + " n=2"});
  const procgen::LSystemScene scene = procgen::LSystemScene::fromText(text, "p.scene", dir_);
  for (const Config& config : configs()) {
    if (config.execution().backend == Backend::kOpenCL || config.chunk != 0) continue;  // the batch: per step
    SCOPED_TRACE(config.name);
    procgen::DeriveOptions options;
    options.execution = config.execution();
    std::vector<int> done;
    uint64_t last_modules = 0;
    options.progress = [&](int instances_done, int instances, uint64_t modules) {
      EXPECT_EQ(instances, 5);
      EXPECT_GE(modules, last_modules);
      done.push_back(instances_done);
      last_modules = modules;
    };
    const procgen::LSystemSceneDerivation d = procgen::deriveScene(scene, options);
    EXPECT_EQ(done, (std::vector<int>{1, 2, 3, 4, 5}));
    EXPECT_EQ(last_modules, d.string.size());

    int calls = 0;
    options.progress = [&](int, int, uint64_t) {
      if (++calls == 2) throw std::runtime_error("cancelled by the caller");
    };
    try {
      procgen::deriveScene(scene, options);
      ADD_FAILURE() << "the progress callback's exception was swallowed";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "cancelled by the caller");
    }
    EXPECT_EQ(calls, 2);  // nothing derived after it, no batch run from the axioms
  }
}

TEST_F(SceneTest, BudgetCoversTheCombinedString) {
  write("grow.l", "Lsystem: 1\nderivation length: 12\nAxiom: A\nA --> AA\nendlsystem\n");
  const procgen::LSystemScene scene =
      procgen::LSystemScene::fromText(sceneText({"grow.l", "grow.l"}), "b.scene", dir_);
  procgen::DeriveOptions options;
  options.max_modules = 5000;  // each alone stays at 4096; together they need 8192 at step 12
  for (const Config& config : configs()) {
    SCOPED_TRACE(config.name);
    options.execution = config.execution();
    try {
      procgen::deriveScene(scene, options);
      ADD_FAILURE() << "no ResourceError";
    } catch (const procgen::ResourceError& e) {
      EXPECT_NE(std::string(e.what()).find("step 12"), std::string::npos) << e.what();
    }
  }
}

TEST_F(SceneTest, ForestExampleAndCommand) {
  const fs::path forest = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "scenes" / "forest.scene";
  const procgen::LSystemScene scene = procgen::LSystemScene::fromFile(forest);
  size_t trees = 0;
  for (const auto& i : scene.instances) trees += i.file.filename() == "tree-3d.l";
  EXPECT_EQ(scene.instances.size(), 50u);
  EXPECT_EQ(trees, 12u);

  const fs::path out = dir_ / "forest.obj", stats = dir_ / "stats.json", err = dir_ / "err.txt";
  ASSERT_EQ(procgen::test::runProcgen("scene " + forest.string() + " -o " + out.string() + " --stats-json " +
                                           stats.string(),
                                       err),
            0)
      << procgen::test::slurp(err);
  const std::string text = procgen::test::slurp(stats);
  EXPECT_NE(text.find("\"instances\": 50"), std::string::npos) << text;
  EXPECT_NE(text.find("\"instance\": 49"), std::string::npos);
  // OBJ groups per instance: one `o instance_N` line each.
  std::ifstream obj(out);
  std::string line;
  size_t groups = 0;
  while (std::getline(obj, line)) groups += line.rfind("o instance_", 0) == 0;
  EXPECT_EQ(groups, 50u);

  // A malformed scene is bad input (exit 2) with file:line:col.
  std::ofstream(dir_ / "bad.scene") << "nothing-here.l n=2\n";
  EXPECT_EQ(procgen::test::runProcgen("scene " + (dir_ / "bad.scene").string(), err), 2);
  const std::string etext = procgen::test::slurp(err);
  EXPECT_NE(etext.find("bad.scene:1:1: error"), std::string::npos) << etext;
}

}  // namespace

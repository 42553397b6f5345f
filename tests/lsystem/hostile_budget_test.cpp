// Issue 16, budgets and finite numbers, at the library level: one test per
// defect (D1 NaN widths, D2 homomorphism and depth limits, D3 interpretation
// outside the budget, D4 scenes outside the budget, D5 non-finite parameters,
// D9 the budget message, --max-modules and the axiom), each on every backend
// where the stage has backends. Expected values are hand-derived from the
// grammars; the budgets are small so that a missing check would show as a
// result instead of an error (and not as an exhausted machine).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "common/backends.hpp"
#include "common/error_of.hpp"
#include "lsystem/lsystem_data.hpp"
#include "procgen/error.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/output.hpp"
#include "procgen/scene.hpp"

namespace procgen {
namespace {

using test::BackendTest;

using test::errorOf;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// -- depth limits (D2): enforced at parse time, not silent caps -----------------

TEST(HostileDepth, HomomorphismDepthAboveTheLimitIsAParseError) {
  const std::string head = "Axiom: B\nhomomorphism\nmaximum depth: ";
  EXPECT_EQ(LSystem::fromText(head + "64\nB --> F\n").data().homomorphism.max_depth, 64);
  try {
    LSystem::fromText(head + "65\nB --> F\n");
    FAIL() << "depth 65 accepted (it was silently cut to 64)";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("[1, 64]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":3:"), std::string::npos) << e.what();  // line 3
  }
}

TEST(HostileDepth, DecompositionDepthAboveTheLimitIsAParseError) {
  const std::string head = "Axiom: A\nA --> A\ndecomposition\nmaximum depth: ";
  EXPECT_EQ(LSystem::fromText(head + "255\nA --> B\n").data().decomposition.max_depth, 255);
  EXPECT_THROW(LSystem::fromText(head + "256\nA --> B\n"), ParseError);
  EXPECT_THROW(LSystem::fromText(head + "1048576\nA --> B\n"), ParseError);
}

// -- finite constants (D1: `Axiom: !(0/0)F`, `initial line width: 0/0`) ---------

TEST(HostileFinite, NonFiniteConstantsAreParseErrors) {
  for (const char* text : {"Axiom: !(0/0)F\n", "Axiom: F(1/0)\n", "initial line width: 0/0\nAxiom: F\n",
                           "Axiom: !(sqrt(-1))F\n", "#define W (0/0)\nAxiom: F\n", "step length: -1/0\nAxiom: F\n"}) {
    try {
      LSystem::fromText(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("not a finite number"), std::string::npos) << e.what();
    }
  }
  ViewSettings view;
  EXPECT_THROW(applyViewFile("initial line width: 0/0\n", "a.v", view), ParseError);
}

// -- D5: a derived non-finite parameter is an error naming the module ------------

class HostileDerive : public BackendTest {};

TEST_P(HostileDerive, NonFiniteParameterInTheFinalStringIsAnError) {
  // Step 1: A(1) -> F(1) B(0) ; step 2: B(0) -> !(1/0) (inf): module 2 of "F(1)B(0)" ... see below.
  const LSystem l = LSystem::fromText("Axiom: A(1)\nA(x) --> F(x)B(x-1)\nB(x) --> !(1/x)F\n");
  DeriveOptions o;
  o.iterations = 2;
  o.execution = execution();
  // After step 2: F(1) !(inf) F — the '!' is module 1, its parameter 1/0 = inf.
  const std::string m = errorOf<Error>([&] { derive(l, o); });
  EXPECT_NE(m.find("module 1 '!'"), std::string::npos) << m;
  EXPECT_NE(m.find("inf"), std::string::npos) << m;
  EXPECT_NE(m.find("step 2"), std::string::npos) << m;
  o.iterations = 1;  // F(1) B(0): finite
  EXPECT_EQ(toText(derive(l, o)), "F(1)B(0)");
}

// -- --max-modules: 0 is no limit, and the axiom counts too ----------------------

TEST_P(HostileDerive, MaxModulesAppliesToTheAxiom) {
  const LSystem l = LSystem::fromText("Axiom: FFFFF\nF --> F\n");
  DeriveOptions o;
  o.iterations = 0;
  o.execution = execution();
  o.max_modules = 4;
  const std::string m = errorOf<ResourceError>([&] { derive(l, o); });
  EXPECT_NE(m.find("axiom has 5 modules"), std::string::npos) << m;
  o.max_modules = 5;
  EXPECT_EQ(derive(l, o).size(), 5u);
  o.max_modules = 0;  // no limit
  o.iterations = 3;
  EXPECT_EQ(derive(l, o).size(), 5u);
}

// -- D9: the message says the string already held counts ------------------------

TEST_P(HostileDerive, BudgetMessageCountsTheHeldString) {
  // F --> FF: step k has 2^k modules of 1 byte (+4 bytes of the pass after
  // it). With 1 MiB, 2^17 modules need 640 KiB beside 64 KiB held: fits;
  // 2^18 need 1.25 MiB: refused at step 18.
  const LSystem l = LSystem::fromText("Axiom: F\nF --> FF\n");
  DeriveOptions o;
  o.iterations = 30;
  o.execution = execution();
  o.memory_budget_bytes = kMiB;
  const std::string m = errorOf<ResourceError>([&] { derive(l, o); });
  EXPECT_NE(m.find("step 18 would produce 262144 modules"), std::string::npos) << m;
  EXPECT_NE(m.find("of the current string, held until the step is written"), std::string::npos) << m;
  EXPECT_NE(m.find("in all, over the memory budget of 1.0 MiB"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(Backends, HostileDerive, testing::ValuesIn(test::backendVariants()), test::variantName);

// -- D2 homomorphism and D3 interpretation budgets, every backend ---------------

class HostileInterpret : public BackendTest {
 protected:
  InterpretOptions options(const LSystem& l) const {
    InterpretOptions o;
    o.view = l.view();
    o.execution = execution();
    return o;
  }
};

TEST_P(HostileInterpret, UnboundedHomomorphismStopsBeforeExpanding) {
  // B --> BB at depth 40 expands one B to 2^40 modules: it used to spin forever.
  const LSystem spin = LSystem::fromText("Axiom: B\nhomomorphism\nmaximum depth: 40\nB --> BB\n");
  InterpretOptions o = options(spin);
  o.max_modules = 1000;
  std::string m = errorOf<ResourceError>([&] { interpret(spin, spin.axiom(), o); });
  EXPECT_NE(m.find("1099511627776 modules"), std::string::npos) << m;  // 2^40, exactly
  EXPECT_NE(m.find("--max-modules 1000"), std::string::npos) << m;
  // B --> BFB: 3^40 modules, 3^40 - 1 ... segments; with no module limit the memory budget refuses it.
  const LSystem grow = LSystem::fromText("Axiom: B\nhomomorphism\nmaximum depth: 40\nB --> BFB\n");
  o = options(grow);
  o.memory_budget_bytes = 64 * kMiB;
  m = errorOf<ResourceError>([&] { interpret(grow, grow.axiom(), o); });
  EXPECT_NE(m.find("homomorphism expansion"), std::string::npos) << m;
  EXPECT_NE(m.find("over the memory budget of 64.0 MiB"), std::string::npos) << m;
}

TEST_P(HostileInterpret, ConditionalHomomorphismIsCountedNotRefusedOnItsBound) {
  // B(n) : n > 0 --> F B(n-1) B(n-1) at depth 30: the per-symbol bound is
  // 2^30, but from B(3) the recursion stops at n = 0: 7 F and 8 B(0), 15 modules.
  const LSystem l =
      LSystem::fromText("Axiom: B(3)\nhomomorphism\nmaximum depth: 30\nB(n) : n > 0 --> F B(n-1) B(n-1)\n");
  InterpretOptions o = options(l);
  o.max_modules = 15;
  EXPECT_EQ(interpret(l, l.axiom(), o).segments.size(), 7u);
  o.max_modules = 14;
  const std::string m = errorOf<ResourceError>([&] { interpret(l, l.axiom(), o); });
  EXPECT_NE(m.find("--max-modules 14"), std::string::npos) << m;
}

TEST_P(HostileInterpret, InterpretationOutsideTheBudgetStopsBeforeDrawing) {
  // F --> FF, 20 steps: 2^20 segments of 40 bytes = 40 MiB of geometry; the
  // string (1 MiB) passes the derivation's 16 MiB budget.
  const LSystem l = LSystem::fromText("Axiom: F\nF --> FF\n");
  DeriveOptions d;
  d.iterations = 20;
  d.execution = execution();
  d.memory_budget_bytes = 16 * kMiB;
  const ModuleString s = derive(l, d);
  ASSERT_EQ(s.size(), uint64_t{1} << 20);
  InterpretOptions o = options(l);
  o.memory_budget_bytes = 16 * kMiB;
  const std::string m = errorOf<ResourceError>([&] { interpret(l, s, o); });
  EXPECT_NE(m.find("interpretation (1048576 segments and polygon vertices): needs 40.0 MiB"), std::string::npos)
      << m;
  o.memory_budget_bytes = 48 * kMiB;  // 40 MiB + the 1 MiB string fit
  EXPECT_EQ(interpret(l, s, o).segments.size(), uint64_t{1} << 20);
}

TEST_P(HostileInterpret, NonFiniteTurtleStateNamesTheModule) {
  // Two steps of 3e38 overflow the position to +inf at the second F.
  const LSystem l = LSystem::fromText("Axiom: F(1)F(3e38)F(3e38)\n");
  const std::string m = errorOf<Error>([&] { interpret(l, l.axiom(), options(l)); });
  EXPECT_NE(m.find("module 2 'F(3e+38)' drew a segment"), std::string::npos) << m;
  // A view setting that is not finite (the CLI refuses --width nan; the API gets an error).
  InterpretOptions o = options(l);
  o.view.initial_width = std::numeric_limits<float>::quiet_NaN();
  const LSystem one = LSystem::fromText("Axiom: F\n");
  const std::string w = errorOf<Error>([&] { interpret(one, one.axiom(), o); });
  EXPECT_NE(w.find("initial state is not finite"), std::string::npos) << w;
}

INSTANTIATE_TEST_SUITE_P(Backends, HostileInterpret, testing::ValuesIn(test::backendVariants()),
                         test::variantName);

// -- D4: a scene's instances share one budget -----------------------------------

class HostileScene : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    dir_ = std::filesystem::temp_directory_path() /
           ("procgen_hostile_scene_" + std::to_string(::getpid()) + "_" + variant().name);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_P(HostileScene, InstancesShareOneBudget) {
  // Two instances of F --> FF at n=18: 2^18 segments (10 MiB) each; drawn
  // and placed, 2 x 2 x 10 = 40 MiB. Each alone fits 24 MiB; together they do not.
  std::ofstream(dir_ / "ff.l") << "Axiom: F\nF --> FF\n";
  const LSystemScene scene = LSystemScene::fromText("ff.l n=18\nff.l n=18 at=5,0,0\n", "two.scene", dir_);
  DeriveOptions d;
  d.execution = execution();
  d.memory_budget_bytes = 24 * kMiB;
  const LSystemSceneDerivation derivation = deriveScene(scene, d);
  const std::string m = errorOf<ResourceError>(
      [&] { interpretScene(scene, derivation, execution(), 1, 0, 24 * kMiB); });
  EXPECT_NE(m.find("scene interpretation"), std::string::npos) << m;
  const Geometry g = interpretScene(scene, derivation, execution(), 1, 0, 64 * kMiB);
  EXPECT_EQ(g.segments.size(), uint64_t{2} << 18);
}

TEST_P(HostileScene, ExplosiveInstanceStopsInTheDerivation) {
  // The case: one F --> FF instance at n=60 grew to 12.4 GiB silently.
  std::ofstream(dir_ / "ff.l") << "Axiom: F\nF --> FF\n";
  const LSystemScene scene = LSystemScene::fromText("ff.l n=60\n", "one.scene", dir_);
  DeriveOptions d;
  d.execution = execution();
  d.memory_budget_bytes = 16 * kMiB;
  const std::string m = errorOf<ResourceError>([&] { deriveScene(scene, d); });
  EXPECT_NE(m.find("over the memory budget of 16.0 MiB"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(Backends, HostileScene, testing::ValuesIn(test::backendVariants()), test::variantName);

// -- D1: the SVG writer groups NaN widths without looping ----------------------

TEST(HostileWriters, SvgWithNaNWidthTerminates) {
  Geometry g;
  Segment s;
  s.start = {0, 0, 0};
  s.end = {0, 1, 0};
  s.width = std::numeric_limits<float>::quiet_NaN();
  g.segments.push_back(s);
  s.start = s.end;
  s.end = {1, 1, 0};
  g.segments.push_back(s);
  // In a child with an alarm: before the fix this wrote empty paths forever.
  EXPECT_EXIT(
      {
        ::alarm(10);
        const std::vector<uint8_t> svg = encodeGeometry(g, GeometryFormat::kSvg);
        const std::string text(svg.begin(), svg.end());
        // Both segments in one path (same colour, same width bits).
        size_t paths = 0;
        for (size_t p = text.find("<path"); p != std::string::npos; p = text.find("<path", p + 1)) ++paths;
        std::_Exit(paths == 1 && text.find("L1 -1") != std::string::npos ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(HostileWriters, PngLargerThanTheBudgetIsRefused) {
  Geometry g;
  WriteOptions w;
  w.width = w.height = 4096;  // 4096^2 x 18 bytes = 288 MiB
  w.memory_budget_bytes = 64 * kMiB;
  const std::string m = errorOf<ResourceError>([&] { encodeGeometry(g, GeometryFormat::kPng, w); });
  EXPECT_NE(m.find("PNG image 4096x4096: needs 288.0 MiB"), std::string::npos) << m;
}

}  // namespace
}  // namespace procgen

// opencl interpretation (src/lsystem/opencl/interpret.cl) against the serial
// interpreter, on the shapes the end-to-end parity suite
// (tests/lsystem/parity_test.cpp, variant "opencl") does not stress:
//  - turtle strings whose every turn uses the default angle and no tropism:
//    the device then computes no sin/cos of its own (the view's cos/sin come
//    from the host), so geometry must be bit-identical, branching or not
//    in the work-queue path, and within the matrix-scan tolerance otherwise;
//  - nesting far deeper than the work items' inline stack ([[[[...]]]] of
//    20000 levels, an unclosed '[' tail, unmatched ']'), a trunk with
//    thousands of long sibling branches (more than a round's spawn slots),
//    and polygons inside branches spanning work items;
//  - empty strings and strings the turtle ignores.
// Skips without an OpenCL device.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "common/backends.hpp"
#include "common/lsystem_helpers.hpp"
#include "procgen/lsystem.hpp"

namespace {

using procgen::Backend;
using procgen::ModuleString;

/// Empty when `got` equals `want` bit for bit.
std::string compareExact(const procgen::Geometry& got, const procgen::Geometry& want) {
  return procgen::test::compareGeometry(got, want, 0.0);
}

procgen::Geometry draw(const ModuleString& s, Backend backend, const procgen::ViewSettings& view,
                       const procgen::LSystem& lsystem) {
  procgen::InterpretOptions options;
  options.view = view;
  options.instance = 5;
  options.execution.backend = backend;
  return procgen::interpret(lsystem, s, options);
}

const procgen::LSystem& plainLSystem() {
  static const procgen::LSystem l = procgen::LSystem::fromText("Axiom: F\n");
  return l;
}

procgen::ViewSettings view() {
  procgen::ViewSettings v;
  v.angle_deg = 27.5f;
  v.width_factor = 0.9f;
  return v;
}

/// Checks the opencl geometry of `s` against serial, bit for bit.
void expectExact(const ModuleString& s, const std::string& what) {
  SCOPED_TRACE(what);
  const procgen::Geometry want = draw(s, Backend::kSerial, view(), plainLSystem());
  const procgen::Geometry got = draw(s, Backend::kOpenCL, view(), plainLSystem());
  EXPECT_EQ(compareExact(got, want), "");
}

/// Default-angle turtle string: F f G g + - & ^ \ / | ! ' (some with
/// parameters that need no trig: lengths, widths, colours), balanced brackets,
/// polygons, letters the turtle ignores.
ModuleString randomString(std::mt19937& rng, uint64_t n, bool brackets, bool polygons) {
  return procgen::test::randomTurtleString(rng, n, {brackets, polygons, /*any_angle=*/false});
}

ModuleString parse(const std::string& text) { return procgen::parseModuleString(text, true); }

TEST(OpenCLInterpret, DefaultAngleStringsAreBitIdenticalInTheWorkQueue) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  std::mt19937 rng(5);
  for (uint64_t n : {1, 2, 33, 700, 5000, 100000})
    for (bool polygons : {false, true})
      expectExact(randomString(rng, n, true, polygons),
                  "n=" + std::to_string(n) + " polygons=" + std::to_string(polygons));
}

TEST(OpenCLInterpret, DeepAndUnbalancedNesting) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "[F+";
  for (int i = 0; i < 20000; ++i) deep += "F]-F";
  expectExact(parse(deep), "20000 nested branches");
  // 12500 of the '[' are never closed; the leading "]]" have nothing to close.
  std::string open = "]]F" + deep.substr(0, 3 * 30000 > deep.size() ? deep.size() : 3 * 30000);
  expectExact(parse(open), "unclosed tail");
  // A trunk with 3000 long side branches, each with nested ones and polygons.
  std::string trunk;
  for (int i = 0; i < 3000; ++i) {
    trunk += "F[+";
    for (int k = 0; k < 20; ++k) trunk += "F[-F{.F.F.}]";
    trunk += "]F";
  }
  expectExact(parse(trunk), "long siblings");
}

TEST(OpenCLInterpret, NonBranchingStringsTakeTheMatrixScan) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  std::mt19937 rng(8);
  for (uint64_t n : {1, 4095, 4096, 4097, 200000}) {
    for (bool polygons : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " polygons=" + std::to_string(polygons));
      const ModuleString s = randomString(rng, n, false, polygons);
      const procgen::Geometry want = draw(s, Backend::kSerial, view(), plainLSystem());
      const procgen::Geometry got = draw(s, Backend::kOpenCL, view(), plainLSystem());
      ASSERT_EQ(got.segments.size(), want.segments.size());
      ASSERT_EQ(got.polygon_offsets, want.polygon_offsets);
      ASSERT_EQ(got.polygon_colors, want.polygon_colors);
      // The matrix path composes chunk frames: the stated tolerance
      // (1e-4 of the model size plus float rounding along the path).
      ASSERT_EQ(procgen::test::compareGeometry(got, want, procgen::test::matrixScanTolerance(want, n)), "");
      // Chunk 0 (the first 4096 modules) is walked from the real state: exact.
      for (size_t k = 0; k < want.segments.size() && k < 100; ++k)
        ASSERT_TRUE(procgen::test::sameBits(got.segments[k].end, want.segments[k].end)) << k;
    }
  }
}

TEST(OpenCLInterpret, EmptyAndSilentStrings) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  expectExact(parse(""), "empty");
  expectExact(parse("ABAB(1)C"), "no turtle command");
  expectExact(parse("[[]]]["), "brackets only");
  expectExact(parse("{.}{..}}"), "degenerate polygons");
}

TEST(OpenCLInterpret, AppendsToTheGivenGeometryAndKeepsTheInstance) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const ModuleString s = parse("F[+F{.F.F.F.}]F");
  const procgen::Geometry want = draw(s, Backend::kSerial, view(), plainLSystem());
  const procgen::Geometry got = draw(s, Backend::kOpenCL, view(), plainLSystem());
  EXPECT_EQ(compareExact(got, want), "");
  ASSERT_EQ(got.segments.size(), 3u);
  for (const procgen::Segment& seg : got.segments) EXPECT_EQ(seg.instance, 5);
  ASSERT_EQ(got.polygonCount(), 1u);
  EXPECT_EQ(got.polygon_instances[0], 5);
}

}  // namespace

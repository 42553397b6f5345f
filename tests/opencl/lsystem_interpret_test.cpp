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

#include "procgen/lsystem.hpp"
#include "procgen/opencl.hpp"

namespace {

using procgen::Backend;
using procgen::ModuleString;

#define PROCGEN_SKIP_WITHOUT_OPENCL()                                              \
  do {                                                                             \
    if (procgen::openclDevices().empty()) GTEST_SKIP() << procgen::openclStatus(); \
  } while (0)

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool same(const procgen::Vec3& a, const procgen::Vec3& b) {
  return bits(a.x) == bits(b.x) && bits(a.y) == bits(b.y) && bits(a.z) == bits(b.z);
}

/// Empty when `got` equals `want` bit for bit.
std::string compareExact(const procgen::Geometry& got, const procgen::Geometry& want) {
  std::ostringstream out;
  if (got.segments.size() != want.segments.size())
    return "segments " + std::to_string(got.segments.size()) + " != serial " + std::to_string(want.segments.size());
  for (size_t k = 0; k < want.segments.size(); ++k) {
    const procgen::Segment& a = got.segments[k];
    const procgen::Segment& b = want.segments[k];
    if (!same(a.start, b.start) || !same(a.end, b.end) || bits(a.width) != bits(b.width) || a.color != b.color ||
        a.depth != b.depth || a.instance != b.instance) {
      out << "segment " << k << " differs: (" << a.end.x << "," << a.end.y << "," << a.end.z << ") d" << a.depth
          << " vs serial (" << b.end.x << "," << b.end.y << "," << b.end.z << ") d" << b.depth;
      return out.str();
    }
  }
  if (got.polygon_offsets != want.polygon_offsets) return "polygon offsets differ";
  if (got.polygon_colors != want.polygon_colors) return "polygon colours differ";
  if (got.polygon_instances != want.polygon_instances) return "polygon instances differ";
  for (size_t k = 0; k < want.polygon_vertices.size(); ++k)
    if (!same(got.polygon_vertices[k], want.polygon_vertices[k])) return "polygon vertex " + std::to_string(k);
  return "";
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
/// parameters that need no trig: lengths, widths, colours), brackets (some
/// long), polygons, letters the turtle ignores.
ModuleString randomString(std::mt19937& rng, uint64_t n, bool brackets, bool polygons) {
  ModuleString s;
  s.clear(true);
  std::uniform_int_distribution<int> d(0, 99);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int64_t depth = 0, polygon = 0;
  auto add = [&](uint8_t c, std::initializer_list<float> params) {
    s.symbols.push_back(c);
    s.params.insert(s.params.end(), params);
    s.param_offsets.push_back(s.params.size());
  };
  for (uint64_t i = 0; i < n; ++i) {
    const int r = d(rng);
    if (r < 30) add('F', {});
    else if (r < 34) add('F', {0.5f + u(rng)});
    else if (r < 37) add("fGg"[d(rng) % 3], {});
    else if (r < 50) add("+-&^\\/"[d(rng) % 6], {});
    else if (r < 51) add('|', {});
    else if (r < 53) add('!', {});
    else if (r < 54) add('!', {u(rng)});
    else if (r < 55) add('\'', {float(d(rng) % 4)});
    else if (r < 60) add('A', {});
    else if (r < 67 && brackets) {
      add('[', {});
      ++depth;
    } else if (r < 74 && brackets && depth > 0) {
      add(']', {});
      --depth;
    } else if (r < 77 && polygons) {
      add('{', {});
      ++polygon;
    } else if (r < 82 && polygons && polygon > 0) {
      add('.', {});
    } else if (r < 85 && polygons && polygon > 0) {
      add('}', {});
      --polygon;
    } else {
      add('F', {});
    }
  }
  while (depth-- > 0) add(']', {});
  return s;
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
      const procgen::Bounds b = want.bounds();
      const double size = std::max({1.0, double(b.max.x) - b.min.x, double(b.max.y) - b.min.y,
                                    double(b.max.z) - b.min.z});
      const double tol = (1e-4 + double(n) / (1 << 22)) * size;
      for (size_t k = 0; k < want.segments.size(); ++k) {
        const procgen::Segment& a = got.segments[k];
        const procgen::Segment& w = want.segments[k];
        ASSERT_NEAR(a.end.x, w.end.x, tol) << k;
        ASSERT_NEAR(a.end.y, w.end.y, tol) << k;
        ASSERT_NEAR(a.end.z, w.end.z, tol) << k;
        ASSERT_NEAR(a.width, w.width, 1e-5 * std::max(1.0f, std::abs(w.width))) << k;
        ASSERT_EQ(a.color, w.color) << k;
        ASSERT_EQ(a.depth, w.depth) << k;
      }
      // Chunk 0 (the first 4096 modules) is walked from the real state: exact.
      for (size_t k = 0; k < want.segments.size() && k < 100; ++k)
        ASSERT_TRUE(same(got.segments[k].end, want.segments[k].end)) << k;
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

// `procgen lsystem` view and mesh options end to end, against values derived
// by hand from a two-segment model: --projection (front, side, top, iso in the
// SVG path), --image-size (the PNG header and the SVG attributes) and
// --cylinders / --cylinder-sides (OBJ vertices on circles around each axis).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::slurp;

// F from (0,0,0) to (0,1,0), a 90° turn in the XY plane, F to (s,1,0) with
// s = ±1 (the turn's sign is the turtle's business, tested in turtle_test).
const char* kModel =
    "angle increment: 90\nstep length: 1\ninitial line width: 0.5\n"
    "Lsystem: 1\nderivation length: 0\nAxiom: F+F\nendlsystem\n";

class CliViewOptions : public procgen::test::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    model_ = dir_ / "l.l";
    std::ofstream(model_) << kModel;
  }
  int run(const std::string& args) {
    const int rc = procgen::test::runProcgen("lsystem " + model_.string() + " --quiet " + args, dir_ / "err.txt");
    err_ = slurp(dir_ / "err.txt");
    return rc;
  }
  /// The numbers of the first path's d attribute.
  std::vector<double> pathNumbers(const fs::path& svg) {
    const std::string text = slurp(svg);
    const size_t at = text.find(" d=\"");
    EXPECT_NE(at, std::string::npos) << text;
    if (at == std::string::npos) return {};
    const std::string d = text.substr(at + 4, text.find('"', at + 4) - at - 4);
    std::vector<double> out;
    const std::regex number(R"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)");
    for (auto it = std::sregex_iterator(d.begin(), d.end(), number); it != std::sregex_iterator(); ++it)
      out.push_back(std::stod(it->str()));
    return out;
  }
  fs::path model_;
  std::string err_;
};

TEST_F(CliViewOptions, ProjectionChoosesTheView) {
  ASSERT_EQ(run("--projection front -o " + (dir_ / "front.svg").string()), 0) << err_;
  const std::vector<double> front = pathNumbers(dir_ / "front.svg");
  // One connected path: M(0,0) L(0,-1) L(s,-1) (SVG y points down).
  ASSERT_EQ(front.size(), 6u);
  const double s = front[4];
  ASSERT_NEAR(std::abs(s), 1.0, 1e-6);
  const std::vector<double> want_front = {0, 0, 0, -1, s, -1};
  for (size_t k = 0; k < 6; ++k) EXPECT_NEAR(front[k], want_front[k], 1e-6) << k;

  // Side: screen (−z, y): every point on the vertical axis, the second segment a point.
  ASSERT_EQ(run("--projection side -o " + (dir_ / "side.svg").string()), 0) << err_;
  const std::vector<double> side = pathNumbers(dir_ / "side.svg");
  ASSERT_EQ(side.size(), 6u);
  const std::vector<double> want_side = {0, 0, 0, -1, 0, -1};
  for (size_t k = 0; k < 6; ++k) EXPECT_NEAR(side[k], want_side[k], 1e-6) << k;

  // Top: screen (x, −z): the first segment collapses, the second runs along x.
  ASSERT_EQ(run("--projection top -o " + (dir_ / "top.svg").string()), 0) << err_;
  const std::vector<double> top = pathNumbers(dir_ / "top.svg");
  ASSERT_EQ(top.size(), 6u);
  const std::vector<double> want_top = {0, 0, 0, 0, s, 0};
  for (size_t k = 0; k < 6; ++k) EXPECT_NEAR(top[k], want_top[k], 1e-6) << k;

  // Iso: u = (x − z)/√2, v = (2y − x − z)/√6; the path holds (u, −v).
  ASSERT_EQ(run("--projection iso -o " + (dir_ / "iso.svg").string()), 0) << err_;
  const std::vector<double> iso = pathNumbers(dir_ / "iso.svg");
  ASSERT_EQ(iso.size(), 6u);
  const double r2 = std::sqrt(2.0), r6 = std::sqrt(6.0);
  const std::vector<double> want_iso = {0, 0, 0, -2 / r6, s / r2, -(2 - s) / r6};
  for (size_t k = 0; k < 6; ++k) EXPECT_NEAR(iso[k], want_iso[k], 1e-5) << k;

  EXPECT_EQ(run("--projection diagonal -o " + (dir_ / "bad.svg").string()), 1) << err_;
  EXPECT_FALSE(fs::exists(dir_ / "bad.svg"));
}

/// Width and height from a PNG's IHDR (bytes 16..23, big-endian).
std::pair<uint32_t, uint32_t> pngSize(const fs::path& p) {
  const std::string b = slurp(p);
  if (b.size() < 24 || b.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be = [&](size_t at) {
    return (uint32_t(uint8_t(b[at])) << 24) | (uint32_t(uint8_t(b[at + 1])) << 16) |
           (uint32_t(uint8_t(b[at + 2])) << 8) | uint32_t(uint8_t(b[at + 3]));
  };
  return {be(16), be(20)};
}

TEST_F(CliViewOptions, ImageSizeSetsThePngAndSvgSize) {
  ASSERT_EQ(run("--image-size 123,45 -o " + (dir_ / "a.png").string() + " -o " + (dir_ / "a.svg").string()), 0)
      << err_;
  EXPECT_EQ(pngSize(dir_ / "a.png"), (std::pair<uint32_t, uint32_t>{123, 45}));
  // SVG: the viewBox fitted into W × H with its aspect kept. The model's
  // view is square (x in [-1.25, 0.25] or [-0.25, 1.25], y in [-0.25, 1.25]
  // with the 0.25 radius, plus equal margins), so both attributes are min(W, H).
  std::string svg = slurp(dir_ / "a.svg");
  EXPECT_NE(svg.find(" width=\"45\" height=\"45\""), std::string::npos) << svg.substr(0, 300);
  ASSERT_EQ(run("--image-size 300,200 -o " + (dir_ / "b.svg").string()), 0) << err_;
  svg = slurp(dir_ / "b.svg");
  EXPECT_NE(svg.find(" width=\"200\" height=\"200\""), std::string::npos) << svg.substr(0, 300);
  ASSERT_EQ(run("-o " + (dir_ / "d.png").string()), 0) << err_;
  EXPECT_EQ(pngSize(dir_ / "d.png"), (std::pair<uint32_t, uint32_t>{1024, 1024}));  // the documented default
  for (const std::string bad : {"0,10", "10", "-5,5", "x,y"}) {
    EXPECT_NE(run("--image-size " + bad + " -o " + (dir_ / "b.png").string()), 0) << bad;
    EXPECT_FALSE(fs::exists(dir_ / "b.png")) << bad;
  }
}

struct ObjMesh {
  std::vector<std::array<double, 3>> vertices;
  size_t lines = 0, faces = 0;
};

ObjMesh readObj(const fs::path& p) {
  ObjMesh m;
  std::istringstream in(slurp(p));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string tag;
    l >> tag;
    if (tag == "v") {
      std::array<double, 3> v{};
      l >> v[0] >> v[1] >> v[2];
      m.vertices.push_back(v);
    } else if (tag == "l") {
      ++m.lines;
    } else if (tag == "f") {
      ++m.faces;
    }
  }
  return m;
}

TEST_F(CliViewOptions, CylindersAreTubesOfTheLineRadius) {
  ASSERT_EQ(run("-o " + (dir_ / "lines.obj").string()), 0) << err_;
  const ObjMesh lines = readObj(dir_ / "lines.obj");
  EXPECT_GE(lines.lines, 1u);
  EXPECT_EQ(lines.faces, 0u);

  for (const int sides : {8, 5}) {
    SCOPED_TRACE(sides);
    const std::string extra = sides == 8 ? "" : " --cylinder-sides " + std::to_string(sides);
    ASSERT_EQ(run("--cylinders" + extra + " -o " + (dir_ / "tubes.obj").string()), 0) << err_;
    const ObjMesh m = readObj(dir_ / "tubes.obj");
    // Two segments, 2 × sides vertices each (WriteOptions::cylinders), one quad per side.
    ASSERT_EQ(m.vertices.size(), size_t(4 * sides));
    EXPECT_EQ(m.faces, size_t(2 * sides));
    EXPECT_EQ(m.lines, 0u);
    // Segment 1 runs along Y at x = z = 0: its rings lie at y = 0 and y = 1,
    // radius width/2 = 0.25 around the axis.
    for (int k = 0; k < 2 * sides; ++k) {
      const auto& v = m.vertices[size_t(k)];
      EXPECT_NEAR(std::hypot(v[0], v[2]), 0.25, 1e-5) << k;
      EXPECT_TRUE(std::abs(v[1]) < 1e-5 || std::abs(v[1] - 1) < 1e-5) << k << ": y " << v[1];
    }
    // Segment 2 runs along X at y = 1, z = 0: radius 0.25 around that axis.
    for (int k = 2 * sides; k < 4 * sides; ++k) {
      const auto& v = m.vertices[size_t(k)];
      EXPECT_NEAR(std::hypot(v[1] - 1, v[2]), 0.25, 1e-5) << k;
      EXPECT_TRUE(std::abs(v[0]) < 1e-5 || std::abs(std::abs(v[0]) - 1) < 1e-5) << k << ": x " << v[0];
    }
  }
}

}  // namespace

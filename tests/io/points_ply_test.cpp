// Point-set PLY parsed back by the tests' own PLY reader (ply_test_reader.hpp,
// written from the PLY description, independent of the writers).
#include "io/io_test_util.hpp"
#include "io/ply_test_reader.hpp"
#include "procgen/error.hpp"
#include "procgen/points.hpp"

namespace procgen::iotest {
namespace {

// The vertex element's values by property name, and the (type, name) declarations.
struct ParsedPoints {
  std::string format;
  size_t count = 0;
  std::vector<std::pair<std::string, std::string>> properties;
  std::map<std::string, std::vector<double>> values;
};

ParsedPoints parsePoints(const std::string& bytes) {
  const PlyFile ply = parsePly(bytes);
  ParsedPoints p;
  p.format = ply.format;
  EXPECT_EQ(ply.elements.size(), 1u);
  if (ply.elements.empty()) return p;
  EXPECT_EQ(ply.elements[0].name, "vertex");
  p.count = ply.elements[0].count;
  for (const Property& prop : ply.elements[0].properties) p.properties.emplace_back(prop.type, prop.name);
  for (const std::vector<double>& record : ply.data.at("vertex")) {
    EXPECT_EQ(record.size(), p.properties.size());
    for (size_t k = 0; k < record.size() && k < p.properties.size(); ++k)
      p.values[p.properties[k].second].push_back(record[k]);
  }
  return p;
}

struct Cloud {
  std::vector<Vec3> positions, normals;
  std::vector<uint8_t> colors;
  std::vector<float> density, age;
};

Cloud makeCloud(size_t n) {
  Cloud c;
  for (size_t i = 0; i < n; ++i) {
    const float t = float(i);
    c.positions.push_back({t * 0.1f, -t / 3.0f, 1e-7f * t});
    c.normals.push_back({0.0f, 1.0f, -0.0f});
    c.colors.insert(c.colors.end(), {uint8_t(i), uint8_t(255 - i), uint8_t(i * 3)});
    c.density.push_back(1.0f / (t + 1.0f));
    c.age.push_back(-t);
  }
  return c;
}

std::string str(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

TEST(PointsPly, EveryPropertyReadsBackInBothEncodings) {
  const Cloud c = makeCloud(7);
  PointSetView view;
  view.count = 7;
  view.positions = c.positions.data();
  view.normals = c.normals.data();
  view.colors = c.colors.data();
  view.scalars = {{"density", c.density.data()}, {"age", c.age.data()}};
  for (bool ascii : {false, true}) {
    const ParsedPoints p = parsePoints(str(encodePointsPly(view, PointWriteOptions{ascii})));
    SCOPED_TRACE(ascii ? "ascii" : "binary");
    EXPECT_EQ(p.format, ascii ? "ascii" : "binary_little_endian");
    EXPECT_EQ(p.count, 7u);
    const std::vector<std::pair<std::string, std::string>> expected_props = {
        {"float", "x"},  {"float", "y"},     {"float", "z"},      {"float", "nx"},
        {"float", "ny"}, {"float", "nz"},    {"uchar", "red"},    {"uchar", "green"},
        {"uchar", "blue"}, {"float", "density"}, {"float", "age"}};
    EXPECT_EQ(p.properties, expected_props);
    for (size_t i = 0; i < 7; ++i) {
      // ASCII floats are shortest round-trip text: parsed as double then narrowed, exact.
      EXPECT_EQ(float(p.values.at("x")[i]), c.positions[i].x);
      EXPECT_EQ(float(p.values.at("y")[i]), c.positions[i].y);
      EXPECT_EQ(float(p.values.at("z")[i]), c.positions[i].z);
      EXPECT_EQ(float(p.values.at("ny")[i]), 1.0f);
      EXPECT_EQ(p.values.at("red")[i], c.colors[3 * i]);
      EXPECT_EQ(p.values.at("green")[i], c.colors[3 * i + 1]);
      EXPECT_EQ(p.values.at("blue")[i], c.colors[3 * i + 2]);
      EXPECT_EQ(float(p.values.at("density")[i]), c.density[i]);
      EXPECT_EQ(float(p.values.at("age")[i]), c.age[i]);
    }
  }
}

TEST(PointsPly, PositionsOnlyAndEmptySets) {
  const Cloud c = makeCloud(3);
  PointSetView view;
  view.count = 3;
  view.positions = c.positions.data();
  const ParsedPoints p = parsePoints(str(encodePointsPly(view)));
  EXPECT_EQ(p.properties.size(), 3u);
  EXPECT_EQ(float(p.values.at("x")[2]), c.positions[2].x);
  const ParsedPoints empty = parsePoints(str(encodePointsPly(PointSetView{})));
  EXPECT_EQ(empty.count, 0u);
}

TEST(PointsPly, BadViewsAreUsageErrorsAndCreateNoFile) {
  TempDir dir;
  const Cloud c = makeCloud(2);
  std::vector<PointSetView> bad(5);
  for (PointSetView& v : bad) {
    v.count = 2;
    v.positions = c.positions.data();
  }
  bad[0].positions = nullptr;
  bad[1].scalars = {{"9lives", c.age.data()}};
  bad[2].scalars = {{"red", c.age.data()}};
  bad[3].scalars = {{"a", c.age.data()}, {"a", c.age.data()}};
  bad[4].scalars = {{"a", nullptr}};
  for (const PointSetView& v : bad) expectUsageErrorWithoutFile([&] { writePointsPly(v, dir / "p.ply"); }, dir / "p.ply");
}

}  // namespace
}  // namespace procgen::iotest

// Volumes: the raw file read back by hand (little-endian float32, x fastest)
// and the JSON sidecar parsed with nlohmann-json, against the field written.
#include <nlohmann/json.hpp>

#include <cstring>

#include "io/io_test_util.hpp"
#include "procgen/error.hpp"
#include "procgen/volume.hpp"

namespace procgen::iotest {
namespace {

float decodeLittleFloat(const std::string& bytes, size_t index) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data()) + 4 * index;
  const uint32_t bits = uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct Field {
  std::vector<float> values;
  VolumeView view;
};

// f(x, y, z) = x + 10 y + 100 z on a 3 x 4 x 5 grid, stored x fastest.
Field makeField() {
  Field f;
  for (int z = 0; z < 5; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 3; ++x) f.values.push_back(float(x + 10 * y + 100 * z));
  f.view.values = f.values.data();
  f.view.dims = {3, 4, 5};
  f.view.spacing = {0.5, 0.25, 2.0};
  f.view.origin = {-1.0, 0.0, 3.5};
  return f;
}

TEST(VolumeWriter, RawAndSidecarReadBack) {
  TempDir dir;
  Field f = makeField();
  f.values[7] = NAN;  // not part of the value range, counted as non-finite
  writeVolume(f.view, dir / "density.raw");

  const std::string raw = readText(dir / "density.raw");
  ASSERT_EQ(raw.size(), size_t(3 * 4 * 5 * 4));
  for (int z = 0; z < 5; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 3; ++x) {
        const size_t i = size_t(x + 3 * (y + 4 * z));
        const float v = decodeLittleFloat(raw, i);
        if (i == 7) EXPECT_TRUE(std::isnan(v));
        else EXPECT_EQ(v, float(x + 10 * y + 100 * z)) << x << ' ' << y << ' ' << z;
      }

  const nlohmann::json j = nlohmann::json::parse(readText(dir / "density.json"));
  EXPECT_EQ(j["format"], "procgen-volume");
  EXPECT_EQ(j["data_file"], "density.raw");
  EXPECT_EQ(j["element_type"], "float32");
  EXPECT_EQ(j["byte_order"], "little_endian");
  EXPECT_EQ(j["header_bytes"], 0);
  EXPECT_EQ(j["dims"], nlohmann::json::array({3, 4, 5}));
  EXPECT_EQ(j["spacing"], nlohmann::json::array({0.5, 0.25, 2.0}));
  EXPECT_EQ(j["origin"], nlohmann::json::array({-1.0, 0.0, 3.5}));
  EXPECT_EQ(j["value_range"], nlohmann::json::array({0.0, 2.0 + 30.0 + 400.0}));
  EXPECT_EQ(j["non_finite_values"], 1);

  const std::string nhdr = readText(dir / "density.nhdr");
  for (const char* line : {"NRRD0004\n", "type: float\n", "dimension: 3\n", "sizes: 3 4 5\n",
                           "space directions: (0.5,0,0) (0,0.25,0) (0,0,2)\n", "space origin: (-1,0,3.5)\n",
                           "encoding: raw\n", "endian: little\n", "data file: density.raw\n"})
    EXPECT_NE(nhdr.find(line), std::string::npos) << line << "\n" << nhdr;
}

TEST(VolumeWriter, AnyOfTheThreeNamesWritesTheSameSetAndMemoryMatchesFiles) {
  TempDir dir;
  const Field f = makeField();
  writeVolume(f.view, dir / "a", VolumeWriteOptions{false});
  EXPECT_TRUE(std::filesystem::exists(dir / "a.raw"));
  EXPECT_TRUE(std::filesystem::exists(dir / "a.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "a.nhdr"));
  writeVolume(f.view, dir / "b.json");
  const std::vector<uint8_t> raw = encodeVolumeRaw(f.view);
  EXPECT_EQ(readText(dir / "b.raw"), std::string(raw.begin(), raw.end()));
  EXPECT_EQ(readText(dir / "a.raw"), std::string(raw.begin(), raw.end()));
  EXPECT_EQ(readText(dir / "b.json"), volumeJson(f.view, "b.raw"));
  EXPECT_EQ(readText(dir / "b.nhdr"), volumeNrrdHeader(f.view, "b.raw"));
}

TEST(VolumeWriter, AllNonFiniteHasANullRange) {
  const float v[2] = {NAN, INFINITY};
  VolumeView view;
  view.values = v;
  view.dims = {2, 1, 1};
  const nlohmann::json j = nlohmann::json::parse(volumeJson(view, "x.raw"));
  EXPECT_TRUE(j["value_range"].is_null());
  EXPECT_EQ(j["non_finite_values"], 2);
}

TEST(VolumeWriter, BadViewsAreUsageErrorsAndCreateNoFile) {
  TempDir dir;
  const Field good = makeField();
  std::vector<VolumeView> bad(5, good.view);
  bad[0].values = nullptr;
  bad[1].dims = {3, 0, 5};
  bad[2].spacing = {1, 0, 1};
  bad[3].origin = {NAN, 0, 0};
  bad[4].dims = {uint64_t{1} << 40, uint64_t{1} << 40, 1};
  for (const VolumeView& v : bad) expectUsageErrorWithoutFile([&] { writeVolume(v, dir / "v.raw"); }, dir / "v.raw");
}

}  // namespace
}  // namespace procgen::iotest

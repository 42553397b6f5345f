// `procgen quantize` end to end: the output PNG decoded again (palette or RGB
// as promised, at most K colours, alpha kept), the stats against values
// recomputed here from the decoded files, and bad input: exit codes, the
// file's name in the message, nothing written.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/cli_run.hpp"
#include "procgen/image.hpp"
#include "procgen/png_decoder.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using procgen::test::runProcgen;
using procgen::test::slurp;

class CliQuantize : public procgen::test::ScratchDirTest {
 protected:
  int run(const std::string& args) { return runProcgen("quantize " + args, dir_ / "err.txt", dir_ / "out.txt"); }
  std::string err() { return slurp(dir_ / "err.txt"); }
  fs::path write(const std::string& name, const std::vector<uint8_t>& pixels, int w, int h, int channels) {
    const fs::path path = dir_ / name;
    procgen::writePng({pixels.data(), w, h, channels, 8, 0}, path);
    return path;
  }
  procgen::Rgb8Image read(const fs::path& path, procgen::PngSourceFormat* source = nullptr) {
    return procgen::readPng(path, 0, source);
  }
};

std::vector<uint8_t> picture(int w, int h, int channels) {
  std::vector<uint8_t> p(size_t(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        p[(size_t(y) * w + x) * channels + c] = uint8_t(c == 3 ? (x * 7) : (x * (c + 1) * 3 + y * (3 - c) * 5) & 0xff);
  return p;
}

TEST_F(CliQuantize, WritesAPaletteOfAtMostKColoursAndHonestStats) {
  const std::vector<uint8_t> in = picture(48, 32, 3);
  const fs::path src = write("in.png", in, 48, 32, 3);
  const fs::path out = dir_ / "out.png", stats = dir_ / "s.json";
  ASSERT_EQ(run(src.string() + " --colors 8 -q -o " + out.string() + " --stats-json " + stats.string()), 0) << err();
  procgen::PngSourceFormat source;
  const procgen::Rgb8Image got = read(out, &source);
  EXPECT_EQ(source.color_type, 3);  // palette PNG
  ASSERT_EQ(got.channels, 3);
  std::set<uint32_t> colours;
  double sq = 0;
  for (size_t i = 0; i < in.size() / 3; ++i) {
    colours.insert(uint32_t(got.pixels[3 * i]) << 16 | uint32_t(got.pixels[3 * i + 1]) << 8 | got.pixels[3 * i + 2]);
    for (int c = 0; c < 3; ++c) {
      const double d = double(got.pixels[3 * i + c]) - in[3 * i + c];
      sq += d * d;
    }
  }
  EXPECT_LE(colours.size(), 8u);
  const Json j = Json::parse(slurp(stats));
  for (const char* key : {"width", "height", "requested_colors", "colors", "unique_input_colors", "mse", "psnr", "ms",
                          "png_type", "backend", "threads"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["colors"].get<size_t>(), colours.size());
  EXPECT_EQ(j["png_type"], "palette");
  EXPECT_NEAR(j["mse"].get<double>(), sq / double(in.size()), 1e-9);
  EXPECT_GT(j["unique_input_colors"].get<uint64_t>(), 8u);
}

TEST_F(CliQuantize, FewColoursAndAlphaComeBackUnchanged) {
  std::vector<uint8_t> in = picture(20, 10, 4);
  for (size_t i = 0; i < 200; ++i)  // 5 colours, alpha varies
    for (int c = 0; c < 3; ++c) in[4 * i + c] = uint8_t((i % 5) * 50 + c);
  const fs::path src = write("rgba.png", in, 20, 10, 4);
  const fs::path out = dir_ / "o.png";
  ASSERT_EQ(run(src.string() + " --colors 5 -q -o " + out.string() + " --stats-json " + (dir_ / "s.json").string()), 0)
      << err();
  const procgen::Rgb8Image got = read(out);
  ASSERT_EQ(got.channels, 4);
  EXPECT_EQ(got.pixels, in);
  const Json j = Json::parse(slurp(dir_ / "s.json"));
  EXPECT_EQ(j["mse"].get<double>(), 0.0);
  EXPECT_TRUE(j["psnr"].is_null());
  EXPECT_EQ(j["unique_input_colors"].get<int>(), 5);
}

TEST_F(CliQuantize, ManyColoursGiveRgbAndDitherRuns) {
  const std::vector<uint8_t> in = picture(64, 64, 3);
  const fs::path src = write("in.png", in, 64, 64, 3);
  const fs::path out = dir_ / "big.png";
  ASSERT_EQ(run(src.string() + " --colors 1000 -q -o " + out.string()), 0) << err();
  procgen::PngSourceFormat source;
  read(out, &source);
  EXPECT_EQ(source.color_type, 2);  // more than 256 entries: RGB
  ASSERT_EQ(run(src.string() + " --colors 4 --dither --backend serial -o " + out.string()), 0) << err();
  std::set<uint32_t> colours;
  const procgen::Rgb8Image got = read(out);
  for (size_t i = 0; i < got.pixels.size(); i += 3)
    colours.insert(uint32_t(got.pixels[i]) << 16 | uint32_t(got.pixels[i + 1]) << 8 | got.pixels[i + 2]);
  EXPECT_LE(colours.size(), 4u);
  EXPECT_NE(err().find("PSNR"), std::string::npos) << err();
}

TEST_F(CliQuantize, MalformedInputExitsTwoAndWritesNothing) {
  const fs::path out = dir_ / "o.png", stats = dir_ / "s.json";
  const std::vector<uint8_t> good = procgen::encodePng({picture(8, 8, 3).data(), 8, 8, 3, 8, 0});
  std::ofstream(dir_ / "garbage.png") << "this is not a png";
  std::ofstream(dir_ / "cut.png", std::ios::binary).write(reinterpret_cast<const char*>(good.data()), long(good.size() / 2));
  for (const char* name : {"garbage.png", "cut.png", "missing.png"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(run((dir_ / name).string() + " --colors 4 -o " + out.string() + " --stats-json " + stats.string()), 2);
    EXPECT_NE(err().find(name), std::string::npos) << err();
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(stats));
  }
  EXPECT_EQ(run(dir_.string() + " -o " + out.string()), 2);  // a directory
}

TEST_F(CliQuantize, BadUsageExitsOne) {
  const fs::path src = write("in.png", picture(8, 8, 3), 8, 8, 3);
  EXPECT_EQ(run(src.string() + " --colors 0 -o " + (dir_ / "o.png").string()), 1);
  EXPECT_EQ(run(src.string() + " --colors 16777217 -o " + (dir_ / "o.png").string()), 1);
  EXPECT_EQ(run(src.string() + " --colors 4 -o " + (dir_ / "o.jpg").string()), 1);
  EXPECT_NE(err().find("PNG"), std::string::npos) << err();
  EXPECT_EQ(run(src.string() + " --colors 4"), 1);
  EXPECT_FALSE(fs::exists(dir_ / "o.png"));
  EXPECT_FALSE(fs::exists(dir_ / "o.jpg"));
}

}  // namespace

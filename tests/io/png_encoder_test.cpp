// encodePng against libpng's own reader: every channel count at 8 and 16 bits,
// odd widths and padded strides decode to exactly the samples given; the
// heightmap mapping against values worked out by hand.
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>

#include "common/png_decode.hpp"
#include "io/io_test_util.hpp"
#include "procgen/error.hpp"
#include "procgen/image.hpp"

namespace procgen::iotest {
namespace {

using procgen::test::Decoded;
using procgen::test::decode;

// splitmix64: deterministic test samples.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr int kColorTypes[5] = {-1, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                PNG_COLOR_TYPE_RGBA};

TEST(EncodePng, EveryLayoutDecodesToTheSamplesGiven) {
  for (int depth : {8, 16})
    for (int channels = 1; channels <= 4; ++channels)
      for (int width : {1, 3, 7, 33})
        for (size_t pad : {size_t{0}, size_t{2}, size_t{5}}) {  // odd pads: no alignment needed
          const int height = 5;
          const size_t bytes_per = size_t(depth / 8);
          const size_t row = size_t(width) * size_t(channels) * bytes_per;
          const size_t stride = pad == 0 ? 0 : row + pad;
          std::vector<uint8_t> buffer((stride ? stride : row) * height, 0xAB);  // padding poisoned
          std::vector<uint16_t> expected;
          for (int y = 0; y < height; ++y)
            for (int i = 0; i < width * channels; ++i) {
              const uint64_t r = mix(uint64_t(y) * 1000 + uint64_t(i) + uint64_t(depth * 7 + channels));
              const uint16_t v = depth == 8 ? uint16_t(r & 0xFF) : uint16_t(r & 0xFFFF);
              expected.push_back(v);
              uint8_t* at = &buffer[size_t(y) * (stride ? stride : row) + size_t(i) * bytes_per];
              if (depth == 8) *at = uint8_t(v);
              else std::memcpy(at, &v, 2);  // native uint16, as documented
            }
          const ImageView view{buffer.data(), width, height, channels, depth, stride};
          const Decoded d = decode(encodePng(view));
          SCOPED_TRACE(testing::Message() << depth << " bit, " << channels << " ch, width " << width
                                          << ", pad " << pad);
          ASSERT_TRUE(d.ok);
          EXPECT_EQ(d.width, png_uint_32(width));
          EXPECT_EQ(d.height, png_uint_32(height));
          EXPECT_EQ(d.bit_depth, depth);
          EXPECT_EQ(d.color_type, kColorTypes[channels]);
          EXPECT_FALSE(d.srgb);  // data images are untagged by default
          EXPECT_EQ(d.samples, expected);
        }
}

TEST(EncodePng, SixteenBitSamplesAreBigEndianOnDisk) {
  // One gray pixel 0x1234: the IDAT stores 0x12 then 0x34. Read through
  // libpng without the swap: the first byte of the row must be 0x12.
  const uint16_t v = 0x1234;
  const std::vector<uint8_t> png = encodePng(ImageView{&v, 1, 1, 1, 16, 0}, PngOptions{0, false});
  // Level 0 stores the row uncompressed; every filter leaves the first pixel
  // of the first row unchanged (its neighbours count as 0).
  const uint8_t pattern[2] = {0x12, 0x34};
  EXPECT_NE(std::search(png.begin(), png.end(), pattern, pattern + 2), png.end());
  const uint8_t swapped[2] = {0x34, 0x12};
  EXPECT_EQ(std::search(png.begin(), png.end(), swapped, swapped + 2), png.end());
}

TEST(EncodePng, SrgbTagAndCompressionLevelsKeepThePixels) {
  std::vector<uint8_t> rgb(17 * 9 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = uint8_t(i * 7);
  const ImageView view{rgb.data(), 17, 9, 3, 8, 0};
  const Decoded tagged = decode(encodePng(view, PngOptions{6, true}));
  ASSERT_TRUE(tagged.ok);
  EXPECT_TRUE(tagged.srgb);
  for (int level : {0, 1, 9}) {
    const Decoded d = decode(encodePng(view, PngOptions{level, false}));
    ASSERT_TRUE(d.ok) << level;
    EXPECT_EQ(d.samples, std::vector<uint16_t>(rgb.begin(), rgb.end())) << level;
  }
}

TEST(EncodePng, BadViewsAreUsageErrorsAndCreateNoFile) {
  TempDir dir;
  uint8_t px[64] = {};
  const std::vector<ImageView> bad = {
      {nullptr, 1, 1, 1, 8, 0}, {px, 0, 1, 1, 8, 0}, {px, 1, -1, 1, 8, 0}, {px, 1, 1, 0, 8, 0},
      {px, 1, 1, 5, 8, 0},      {px, 1, 1, 1, 4, 0}, {px, 4, 1, 3, 8, 11},  // stride < 12
  };
  for (const ImageView& v : bad) {
    EXPECT_THROW((void)encodePng(v), Error);
    expectUsageErrorWithoutFile([&] { writePng(v, dir / "bad.png"); }, dir / "bad.png");
  }
  EXPECT_THROW((void)encodePng(ImageView{px, 1, 1, 1, 8, 0}, PngOptions{10, false}), Error);
}

TEST(Heightmap, MappingMatchesTheStatedFormula) {
  // Given range [0, 1]: s = round(65535 * clamp(v, 0, 1)), NaN -> 0.
  const float values[6] = {0.0f, 1.0f, 0.5f, NAN, 2.0f, -1.0f};
  const Heightmap16 h = heightmapToGray16(values, 3, 2, 0, 0.0f, 1.0f);
  EXPECT_EQ(h.samples, (std::vector<uint16_t>{0, 65535, 32768, 0, 65535, 0}));  // 32767.5 rounds up
  EXPECT_EQ(h.low, 0.0f);
  EXPECT_EQ(h.high, 1.0f);
}

TEST(Heightmap, AutomaticRangeIsTheFiniteMinimumAndMaximumWithAStride) {
  // 2x2 field in rows of 3 floats (the third of each row is not part of the image).
  const float values[6] = {2.0f, 4.0f, 1000.0f, NAN, 3.0f, -1000.0f};
  const Heightmap16 h = heightmapToGray16(values, 2, 2, 3);
  EXPECT_EQ(h.low, 2.0f);
  EXPECT_EQ(h.high, 4.0f);
  EXPECT_EQ(h.samples, (std::vector<uint16_t>{0, 65535, 0, 32768}));
  // Through the encoder as 16-bit gray.
  const Decoded d = decode(encodePng(h.view()));
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.bit_depth, 16);
  EXPECT_EQ(d.color_type, PNG_COLOR_TYPE_GRAY);
  EXPECT_EQ(d.samples, h.samples);
  const float flat[2] = {5.0f, 5.0f};
  EXPECT_EQ(heightmapToGray16(flat, 2, 1).samples, (std::vector<uint16_t>{0, 0}));
  EXPECT_THROW(heightmapToGray16(values, 2, 2, 0, 1.0f, 1.0f), Error);
  EXPECT_THROW(heightmapToGray16(values, 2, 2, 0, 0.0f, INFINITY), Error);
  EXPECT_THROW(heightmapToGray16(values, 0, 2), Error);
}

}  // namespace
}  // namespace procgen::iotest

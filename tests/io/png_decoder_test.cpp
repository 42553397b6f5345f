// decodePng (procgen/png_decoder.hpp) against images encoded by the project's
// encoder (image.hpp) and the palette writer (quantize.hpp): every colour
// type at 8 and 16 bits round trips to the RGB(A) samples worked out here
// (gray replicated, 16-bit v·257 scaled back to v exactly, tRNS to alpha);
// malformed bytes and over-budget sizes are refused with the input's name.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/image.hpp"
#include "procgen/png_decoder.hpp"
#include "procgen/quantize.hpp"

namespace {

using namespace procgen;

uint8_t sample(int x, int y, int c) { return uint8_t((x * 37 + y * 91 + c * 53 + x * y) & 0xff); }

TEST(DecodePng, EveryDirectColourTypeRoundTrips) {
  for (int depth : {8, 16})
    for (int channels = 1; channels <= 4; ++channels)
      for (int width : {1, 5, 17}) {
        SCOPED_TRACE(std::to_string(depth) + " bits, " + std::to_string(channels) + " channels, width " +
                     std::to_string(width));
        const int height = 4;
        std::vector<uint8_t> p8(size_t(width) * height * channels);
        std::vector<uint16_t> p16(p8.size());
        for (int y = 0; y < height; ++y)
          for (int x = 0; x < width; ++x)
            for (int c = 0; c < channels; ++c) {
              const size_t i = (size_t(y) * width + x) * channels + c;
              p8[i] = sample(x, y, c);
              p16[i] = uint16_t(p8[i] * 257);  // scales back to p8 exactly (v·257·255/65535 = v)
            }
        const ImageView view{depth == 8 ? static_cast<const void*>(p8.data()) : p16.data(), width, height, channels,
                             depth, 0};
        const std::vector<uint8_t> png = encodePng(view);
        PngSourceFormat source;
        const Rgb8Image got = decodePng(png.data(), png.size(), "t.png", 0, &source);
        EXPECT_EQ(source.bit_depth, depth);
        const bool alpha = channels == 2 || channels == 4;
        ASSERT_EQ(got.channels, alpha ? 4 : 3);
        ASSERT_EQ(got.width, width);
        ASSERT_EQ(got.height, height);
        for (int y = 0; y < height; ++y)
          for (int x = 0; x < width; ++x) {
            const uint8_t* in = &p8[(size_t(y) * width + x) * channels];
            const uint8_t* out = &got.pixels[(size_t(y) * width + x) * got.channels];
            const bool gray = channels <= 2;
            for (int c = 0; c < 3; ++c) ASSERT_EQ(out[c], gray ? in[0] : in[c]) << x << "," << y << " c" << c;
            if (alpha) {
              ASSERT_EQ(out[3], in[channels - 1]);
            }
          }
      }
}

TEST(DecodePng, PaletteImagesExpandToTheirColours) {
  for (bool with_alpha : {false, true})
    for (uint32_t colors : {2u, 3u, 16u, 200u}) {  // bit depths 1, 2, 4, 8
      SCOPED_TRACE(std::to_string(colors) + (with_alpha ? " with alpha" : ""));
      QuantizedImage q;
      q.width = 13;
      q.height = 7;
      q.has_alpha = with_alpha;
      for (uint32_t k = 0; k < colors; ++k)
        q.palette.insert(q.palette.end(), {uint8_t(k * 7), uint8_t(255 - k), uint8_t(k * 13)});
      for (int i = 0; i < q.width * q.height; ++i) {
        q.indices.push_back(uint32_t(i * 5) % colors);
        if (with_alpha) q.alpha.push_back(i % 3 == 0 ? 0 : 255);
      }
      std::vector<uint8_t> bytes;
      {
        MemorySink sink;
        EXPECT_EQ(encodeQuantizedPng(q, sink), 3);  // palette PNG
        bytes = sink.take();
      }
      PngSourceFormat source;
      const Rgb8Image got = decodePng(bytes.data(), bytes.size(), "p.png", 0, &source);
      EXPECT_EQ(source.color_type, 3);
      ASSERT_EQ(got.channels, with_alpha ? 4 : 3);
      EXPECT_EQ(got.pixels, expandQuantized(q));
    }
}

TEST(DecodePng, MalformedBytesNameTheInput) {
  const uint8_t gray[4] = {1, 2, 3, 4};
  const std::vector<uint8_t> png = encodePng(ImageView{gray, 2, 2, 1, 8, 0});
  auto expectBad = [](const std::vector<uint8_t>& bytes, const std::string& words) {
    try {
      decodePng(bytes.data(), bytes.size(), "in.png");
      FAIL() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find("in.png"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expectBad({}, "not a PNG");
  expectBad({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}, "not a PNG");
  for (size_t cut : {size_t{8}, size_t{20}, png.size() / 2, png.size() - 13})  // truncated
    expectBad(std::vector<uint8_t>(png.begin(), png.begin() + long(cut)), "PNG error");
  std::vector<uint8_t> corrupt = png;
  corrupt[20] ^= 0x40;  // inside IHDR: its CRC no longer matches
  expectBad(corrupt, "PNG error");
}

TEST(DecodePng, SizeIsCheckedAgainstTheBudgetBeforeAllocating) {
  std::vector<uint8_t> rgb(64 * 64 * 3, 7);
  const std::vector<uint8_t> png = encodePng(ImageView{rgb.data(), 64, 64, 3, 8, 0});
  EXPECT_THROW(decodePng(png.data(), png.size(), "big.png", 1000), ResourceError);
  EXPECT_EQ(decodePng(png.data(), png.size(), "big.png", 1 << 20).pixels, rgb);
  // A 70-byte file claiming 50000 x 50000 pixels (IHDR patched, CRC fixed):
  // refused from its header, before 7.5 GB are allocated.
  std::vector<uint8_t> liar = png;
  for (int at : {16, 20}) liar[size_t(at)] = 0, liar[size_t(at) + 1] = 0, liar[size_t(at) + 2] = 0xc3, liar[size_t(at) + 3] = 0x50;
  const uLong crc = crc32(0, liar.data() + 12, 17);  // chunk type + 13 data bytes
  for (int k = 0; k < 4; ++k) liar[size_t(29 + k)] = uint8_t(crc >> (24 - 8 * k));
  try {
    decodePng(liar.data(), liar.size(), "liar.png", uint64_t(1) << 30);
    FAIL() << "accepted";
  } catch (const ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("50000x50000"), std::string::npos) << e.what();
  }
}

}  // namespace

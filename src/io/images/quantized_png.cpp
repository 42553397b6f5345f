// A quantized image as a PNG (quantize.hpp, encodeQuantizedPng): a palette
// PNG — bit depth 1, 2, 4 or 8 by the number of entries, with a tRNS chunk of
// the entries' alphas when the image has alpha — when at most 256 entries
// suffice, else 8-bit RGB(A) through encodePng. As in png_encoder.cpp, the
// function that calls libpng holds no C++ objects with destructors and sink
// failures are kept and rethrown (libpng_support.hpp).
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <exception>
#include <string>

#include "io/images/libpng_support.hpp"
#include "io/output_file.hpp"
#include "procgen/error.hpp"
#include "procgen/quantize.hpp"

namespace procgen {
namespace {

struct PaletteImage {
  const uint8_t* entries = nullptr;  // one byte per pixel, row-major
  int width = 0, height = 0;
  png_color colors[256];
  png_byte alphas[256];
  int count = 0;
  bool with_alpha = false;
  bool srgb = false;
};

// Under libpng's setjmp (io::PngWriteBody): no C++ objects with destructors.
void writePalette(png_structp png, png_infop info, const void* arg) {
  const PaletteImage& image = *static_cast<const PaletteImage*>(arg);
  png_set_PLTE(png, info, image.colors, image.count);
  if (image.with_alpha) png_set_tRNS(png, info, image.alphas, image.count, nullptr);
  if (image.srgb) png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  png_write_info(png, info);
  png_set_packing(png);  // one entry per byte in, 1/2/4 bits per pixel out
  for (int y = 0; y < image.height; ++y)
    png_write_row(png, const_cast<png_bytep>(image.entries + size_t(y) * size_t(image.width)));
  png_write_end(png, info);
}

}  // namespace

int encodeQuantizedPng(const QuantizedImage& image, ByteSink& sink, const PngOptions& options) {
  const size_t n = size_t(image.width) * size_t(image.height);
  if (image.width < 1 || image.height < 1 || image.indices.size() != n || (image.has_alpha && image.alpha.size() != n))
    throw Error("cannot encode PNG: inconsistent quantized image", ExitCode::kUsage);
  if (options.compression_level < 0 || options.compression_level > 9)
    throw Error("cannot encode PNG: compression level must be 0..9", ExitCode::kUsage);
  // Palette entries: the colours, or the distinct (colour, alpha) pairs.
  std::vector<uint64_t> entry_keys;
  if (image.has_alpha) {
    entry_keys.resize(n);
    for (size_t i = 0; i < n; ++i) entry_keys[i] = uint64_t(image.indices[i]) << 8 | image.alpha[i];
    std::sort(entry_keys.begin(), entry_keys.end());
    entry_keys.erase(std::unique(entry_keys.begin(), entry_keys.end()), entry_keys.end());
  }
  const size_t entries = image.has_alpha ? entry_keys.size() : image.colors();
  if (entries > 256) {
    const std::vector<uint8_t> pixels = expandQuantized(image);
    encodePng({pixels.data(), image.width, image.height, image.has_alpha ? 4 : 3, 8, 0}, sink, options);
    return image.has_alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB;
  }
  PaletteImage palette;
  palette.width = image.width;
  palette.height = image.height;
  palette.count = int(std::max<size_t>(entries, 1));
  palette.with_alpha = image.has_alpha;
  std::vector<uint8_t> rows(n);
  for (size_t e = 0; e < entries; ++e) {
    const uint64_t color = image.has_alpha ? entry_keys[e] >> 8 : e;
    palette.colors[e] = {image.palette[3 * color], image.palette[3 * color + 1], image.palette[3 * color + 2]};
    palette.alphas[e] = image.has_alpha ? uint8_t(entry_keys[e] & 0xff) : 255;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!image.has_alpha) {
      rows[i] = uint8_t(image.indices[i]);
      continue;
    }
    const uint64_t key = uint64_t(image.indices[i]) << 8 | image.alpha[i];
    rows[i] = uint8_t(std::lower_bound(entry_keys.begin(), entry_keys.end(), key) - entry_keys.begin());
  }
  palette.entries = rows.data();
  palette.srgb = options.srgb;
  const int depth = palette.count <= 2 ? 1 : palette.count <= 4 ? 2 : palette.count <= 16 ? 4 : 8;
  io::pngWrite(sink, {image.width, image.height, depth, PNG_COLOR_TYPE_PALETTE, options.compression_level}, writePalette,
               &palette);
  return PNG_COLOR_TYPE_PALETTE;
}

}  // namespace procgen

// PNG encoding of caller-owned 8/16-bit gray, gray+alpha, RGB and RGBA rows
// through libpng's write API, into any ByteSink. libpng reports errors by
// longjmp, so the part that calls it holds no C++ objects with destructors,
// and a sink failure is caught in the write callback, kept, and turned into a
// libpng error (an exception must not unwind through C frames).
#include <png.h>

#include <bit>
#include <csetjmp>
#include <cstdio>
#include <exception>
#include <string>

#include "io/images/libpng_support.hpp"
#include "io/output_file.hpp"
#include "procgen/error.hpp"
#include "procgen/image.hpp"

namespace procgen {
namespace {

int colorType(int channels) {
  switch (channels) {
    case 1: return PNG_COLOR_TYPE_GRAY;
    case 2: return PNG_COLOR_TYPE_GRAY_ALPHA;
    case 3: return PNG_COLOR_TYPE_RGB;
    default: return PNG_COLOR_TYPE_RGBA;
  }
}

struct Rows {
  const ImageView* image;
  size_t stride;
  bool srgb;
};

// Under libpng's setjmp (io::PngWriteBody): no C++ objects with destructors.
void writeRows(png_structp png, png_infop info, const void* arg) {
  const Rows& rows = *static_cast<const Rows*>(arg);
  const ImageView& image = *rows.image;
  if (rows.srgb) png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  png_write_info(png, info);
  // 16-bit samples arrive native (little-endian here); PNG stores them big-endian.
  if (image.bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(png);
  const auto* base = static_cast<const unsigned char*>(image.pixels);
  for (int y = 0; y < image.height; ++y)  // libpng copies each row before transforming it
    png_write_row(png, const_cast<png_bytep>(base + size_t(y) * rows.stride));
  png_write_end(png, info);
}

[[noreturn]] void badImage(const std::string& why) {
  throw Error("cannot encode PNG: " + why, ExitCode::kUsage);
}

// Validates the view and options; returns the row stride in bytes.
size_t checkedStride(const ImageView& image, const PngOptions& options) {
  if (!image.pixels) badImage("no pixels");
  if (image.width < 1 || image.height < 1)
    badImage("size must be positive, got " + std::to_string(image.width) + "x" + std::to_string(image.height));
  if (image.channels < 1 || image.channels > 4)
    badImage("channels must be 1..4, got " + std::to_string(image.channels));
  if (image.bit_depth != 8 && image.bit_depth != 16)
    badImage("bit depth must be 8 or 16, got " + std::to_string(image.bit_depth));
  if (options.compression_level < 0 || options.compression_level > 9)
    badImage("compression level must be 0..9, got " + std::to_string(options.compression_level));
  const size_t row_bytes = size_t(image.width) * size_t(image.channels) * size_t(image.bit_depth / 8);
  const size_t stride = image.row_stride == 0 ? row_bytes : image.row_stride;
  if (stride < row_bytes)
    badImage("row stride " + std::to_string(stride) + " is shorter than a row (" + std::to_string(row_bytes) +
             " bytes)");
  return stride;
}

}  // namespace

void encodePng(const ImageView& image, ByteSink& sink, const PngOptions& options) {
  const size_t stride = checkedStride(image, options);
  const Rows rows{&image, stride, options.srgb};
  io::pngWrite(sink, {image.width, image.height, image.bit_depth, colorType(image.channels), options.compression_level},
               writeRows, &rows);
}

std::vector<uint8_t> encodePng(const ImageView& image, const PngOptions& options) {
  return io::writeToMemory([&](ByteSink& sink) { encodePng(image, sink, options); });
}

void writePng(const ImageView& image, const std::filesystem::path& path, const PngOptions& options) {
  (void)checkedStride(image, options);  // a bad view fails before the file is created
  io::writeToFile(path, [&](ByteSink& sink) { encodePng(image, sink, options); });
}

}  // namespace procgen

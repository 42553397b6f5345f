// PNG decoding to 8-bit RGB/RGBA through libpng's read API (png_decoder.hpp).
// libpng reports errors by longjmp, so the functions that call it hold no C++
// objects with destructors: the header is read in one such function, the
// pixels are allocated by the C++ caller (after the budget check), and the
// rows are read in a second one; the png_struct lives between them in a guard
// of the caller's frame, which longjmp never skips.
#include "procgen/png_decoder.hpp"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include "io/images/libpng_support.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"

namespace procgen {
namespace {

struct ReadContext {
  const uint8_t* data = nullptr;
  size_t size = 0, at = 0;
  char message[256] = "libpng error";
};

void pngRead(png_structp png, png_bytep out, png_size_t n) {
  auto* context = static_cast<ReadContext*>(png_get_io_ptr(png));
  if (n > context->size - context->at) png_error(png, "file is truncated");
  std::memcpy(out, context->data + context->at, n);
  context->at += n;
}

struct ReadGuard {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~ReadGuard() {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
  }
};

struct Header {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, channels = 0;
};

// Reads the header and sets the conversions to 8-bit RGB(A). No destructors here.
bool readHeader(ReadGuard& g, ReadContext& context, Header& h) {
  g.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, io::pngErrorToContext<ReadContext>,
                                 io::pngIgnoreWarning);
  if (!g.png) return false;
  g.info = png_create_info_struct(g.png);
  if (!g.info || setjmp(png_jmpbuf(g.png))) return false;
  png_set_read_fn(g.png, &context, pngRead);
  png_set_user_limits(g.png, 0x7fffffff, 0x7fffffff);  // the memory budget decides, not libpng's 10^6 rows
  png_read_info(g.png, g.info);
  h.width = png_get_image_width(g.png, g.info);
  h.height = png_get_image_height(g.png, g.info);
  h.bit_depth = png_get_bit_depth(g.png, g.info);
  h.color_type = png_get_color_type(g.png, g.info);
  const bool trns = png_get_valid(g.png, g.info, PNG_INFO_tRNS) != 0;
  png_set_expand(g.png);  // palette → RGB, low-bit gray → 8, tRNS → alpha
  if (h.bit_depth == 16) png_set_scale_16(g.png);
  if (!(h.color_type & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(g.png);
  h.channels = (h.color_type & PNG_COLOR_MASK_ALPHA) || trns ? 4 : 3;
  png_set_interlace_handling(g.png);
  png_read_update_info(g.png, g.info);
  if (png_get_channels(g.png, g.info) != h.channels || png_get_bit_depth(g.png, g.info) != 8)
    png_error(g.png, "unexpected format after conversion");
  return true;
}

// Reads every row (all passes when interlaced) into `rows`. No destructors here.
bool readRows(ReadGuard& g, png_bytepp rows) {
  if (setjmp(png_jmpbuf(g.png))) return false;
  png_read_image(g.png, rows);
  png_read_end(g.png, nullptr);
  return true;
}

}  // namespace

Rgb8Image decodePng(const void* data, size_t size, std::string_view name, uint64_t budget_bytes,
                    PngSourceFormat* source) {
  const std::string who(name);
  if (size < 8 || png_sig_cmp(static_cast<png_const_bytep>(data), 0, 8) != 0)
    throw Error(who + ": not a PNG file");
  ReadContext context;
  context.data = static_cast<const uint8_t*>(data);
  context.size = size;
  ReadGuard guard;
  Header h;
  if (!readHeader(guard, context, h)) throw Error(who + ": PNG error: " + context.message);
  if (source) *source = {h.bit_depth, h.color_type};
  const uint64_t row_bytes = uint64_t(h.width) * uint64_t(h.channels);
  const uint64_t bytes = checkedMul(row_bytes, h.height).value_or(UINT64_MAX);
  // The pixels and one row pointer per row.
  requireMemory("PNG image '" + who + "' (" + std::to_string(h.width) + "x" + std::to_string(h.height) + ")",
                checkedAdd(bytes, uint64_t(h.height) * sizeof(png_bytep)).value_or(UINT64_MAX), budget_bytes);
  Rgb8Image image;
  image.width = int(h.width);
  image.height = int(h.height);
  image.channels = h.channels;
  image.pixels.resize(bytes);
  std::vector<png_bytep> rows(h.height);
  for (png_uint_32 y = 0; y < h.height; ++y) rows[y] = image.pixels.data() + y * row_bytes;
  if (!readRows(guard, rows.data())) throw Error(who + ": PNG error: " + context.message);
  return image;
}

Rgb8Image readPng(const std::filesystem::path& path, uint64_t budget_bytes, PngSourceFormat* source) {
  const std::string bytes = readInputFile(path, "PNG image", budget_bytes);
  return decodePng(bytes.data(), bytes.size(), path.string(), budget_bytes, source);
}

}  // namespace procgen

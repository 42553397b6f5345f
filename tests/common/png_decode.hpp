// A PNG decoder for the tests, on libpng's own reader: raw samples, no
// conversions but the byte swap of 16-bit samples to native order. Used by the
// encoder tests and the CLI tests (16-bit heightmap round trips).
#pragma once

#include <png.h>

#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <vector>

namespace procgen::test {

struct Decoded {
  bool ok = false;
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = -1, channels = 0;
  bool srgb = false;
  std::vector<uint16_t> samples;  // row-major, every sample widened (16-bit in native order)
};

struct ReadState {
  const uint8_t* data;
  size_t size, at;
};

inline void readBytes(png_structp png, png_bytep out, png_size_t n) {
  auto* s = static_cast<ReadState*>(png_get_io_ptr(png));
  if (s->at + n > s->size) png_error(png, "read past the end");
  std::memcpy(out, s->data + s->at, n);
  s->at += n;
}

// Raw samples, no conversions but the byte swap of 16-bit samples to native.
// Plain C-style so that libpng's longjmp skips no destructor.
inline void decodeRaw(const std::vector<uint8_t>& bytes, Decoded* out) {
  ReadState state{bytes.data(), bytes.size(), 0};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return;
  }
  png_set_read_fn(png, &state, readBytes);
  png_read_info(png, info);
  out->width = png_get_image_width(png, info);
  out->height = png_get_image_height(png, info);
  out->bit_depth = png_get_bit_depth(png, info);
  out->color_type = png_get_color_type(png, info);
  out->channels = png_get_channels(png, info);
  out->srgb = png_get_valid(png, info, PNG_INFO_sRGB) != 0;
  if (out->bit_depth == 16) png_set_swap(png);
  png_read_update_info(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<uint8_t> row(row_bytes);
  const size_t per_row = size_t(out->width) * size_t(out->channels);
  out->samples.resize(per_row * out->height);
  for (png_uint_32 y = 0; y < out->height; ++y) {
    png_read_row(png, row.data(), nullptr);
    for (size_t i = 0; i < per_row; ++i) {
      uint16_t v;
      if (out->bit_depth == 16) std::memcpy(&v, &row[2 * i], 2);
      else v = row[i];
      out->samples[size_t(y) * per_row + i] = v;
    }
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  out->ok = true;
}

inline Decoded decode(const std::vector<uint8_t>& bytes) {
  Decoded d;
  decodeRaw(bytes, &d);
  return d;
}

}  // namespace procgen::test

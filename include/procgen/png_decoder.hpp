// procgen PNG reading: any PNG (8/16-bit gray, gray+alpha, RGB, RGBA; 1/2/4/8-bit
// palette and low-bit gray; interlaced or not) decoded through libpng into 8-bit
// RGB or RGBA pixels, for the image consumers (colour quantization). The
// encoder is in image.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "procgen/image.hpp"

namespace procgen {

/// 8-bit RGB (channels 3) or RGBA (channels 4) pixels, packed rows, top row first.
struct Rgb8Image {
  std::vector<uint8_t> pixels;  ///< width × height × channels
  int width = 0;
  int height = 0;
  int channels = 3;
  ImageView view() const { return {pixels.data(), width, height, channels, 8, 0}; }
};

/// What the file held before conversion (for messages and statistics).
struct PngSourceFormat {
  int bit_depth = 8;   ///< 1, 2, 4, 8 or 16
  int color_type = 2;  ///< PNG colour type: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
};

/// Decodes PNG bytes. Conversions: palette → RGB (RGBA when it has a tRNS
/// chunk), gray → RGB (R = G = B), gray/RGB with a tRNS chunk → RGBA, bit
/// depths below 8 expanded, 16-bit samples scaled to 8 bits with rounding
/// (libpng's png_set_scale_16: v8 = round(v16 · 255 / 65535)). Gamma and
/// colour-space chunks are ignored (samples are returned as stored).
/// `name` names the input in messages. Throws Error (ExitCode::kBadInput)
/// "NAME: not a PNG file", "NAME: PNG error: <libpng's message>" (truncated
/// or corrupt data, bad CRC), and ResourceError before allocating the pixels
/// when width × height × channels exceeds the memory budget (`budget_bytes`,
/// 0 = half the RAM). `source` (optional) receives the stored format.
/// Thread safety: concurrent calls are safe. Complexity: linear in the pixels.
Rgb8Image decodePng(const void* data, size_t size, std::string_view name, uint64_t budget_bytes = 0,
                    PngSourceFormat* source = nullptr);

/// Reads the PNG file at `path` (readInputFile: regular files and pipes only,
/// sized against the budget) and decodes it; messages name the path.
Rgb8Image readPng(const std::filesystem::path& path, uint64_t budget_bytes = 0, PngSourceFormat* source = nullptr);

}  // namespace procgen

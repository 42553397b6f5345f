// procgen images: PNG encoding of caller-owned pixel buffers (8- or 16-bit
// gray, gray+alpha, RGB, RGBA) through libpng, and 16-bit heightmaps from
// float fields. docs/output-formats.md describes the files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "procgen/output.hpp"

namespace procgen {

/// A caller's image, read-only. Row y starts at `pixels + y * row_stride`
/// bytes, top row first; inside a row the samples are interleaved per pixel
/// in channel order (gray | gray, alpha | R, G, B | R, G, B, A).
/// 8-bit samples are bytes; 16-bit samples are native uint16_t (the encoder
/// writes them big-endian as PNG requires). No alignment is required.
struct ImageView {
  const void* pixels = nullptr;
  int width = 0;      ///< 1 .. 2^31-1
  int height = 0;     ///< 1 .. 2^31-1
  int channels = 3;   ///< 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  int bit_depth = 8;  ///< 8 or 16
  /// Bytes from one row's start to the next; 0 = packed (width × channels × bit_depth/8).
  size_t row_stride = 0;
};

struct PngOptions {
  /// zlib level 0 (none, fastest) .. 9 (smallest); 6 is libpng's usual trade.
  int compression_level = 6;
  /// Tag the image as sRGB (an sRGB chunk). Colour images meant for screens
  /// want this; data (heightmaps, masks) should leave it off.
  bool srgb = false;
};

/// Encodes `image` as a PNG into `sink` (non-interlaced, default filters,
/// colour type from `channels`), then calls sink.finish().
/// Throws Error (ExitCode::kUsage) for a bad view (null pixels, sizes out of
/// range, channels not 1..4, bit depth not 8/16, stride shorter than a row,
/// compression level not 0..9), OutputError when the
/// sink fails or libpng reports an error. Deterministic: the same pixels and
/// options give the same bytes. Thread safety: concurrent calls with distinct
/// sinks are safe. Complexity: linear in the pixels; memory one row.
void encodePng(const ImageView& image, ByteSink& sink, const PngOptions& options = {});

/// The PNG file's bytes, in memory.
std::vector<uint8_t> encodePng(const ImageView& image, const PngOptions& options = {});

/// Writes the PNG file at `path` (any extension). Throws as above; a file that
/// cannot be created is an OutputError.
void writePng(const ImageView& image, const std::filesystem::path& path,
              const PngOptions& options = {});

/// A float field mapped to 16-bit gray, with the mapping it used.
struct Heightmap16 {
  std::vector<uint16_t> samples;  ///< width × height, row-major, top row first (packed)
  int width = 0;
  int height = 0;
  float low = 0.0f;   ///< maps to 0
  float high = 1.0f;  ///< maps to 65535
  /// A gray 16-bit view of `samples` for encodePng.
  ImageView view() const { return {samples.data(), width, height, 1, 16, 0}; }
};

/// Maps `values` (row y at values + y × row_stride floats; 0 = width) to
/// 16-bit samples: s = round(65535 × clamp((v − low) / (high − low), 0, 1)),
/// NaN → 0. With low == high == 0 (the default) the range is the field's
/// finite minimum and maximum (a constant field maps to 0; no finite value:
/// low = high = 0, all 0). Throws Error (kUsage) for non-positive sizes or a
/// given range that is not finite with low < high.
/// Complexity: linear in the samples.
Heightmap16 heightmapToGray16(const float* values, int width, int height, size_t row_stride = 0,
                              float low = 0.0f, float high = 0.0f);

/// Colour maps for previews of scalar fields.
enum class ColorMap {
  kGray,     ///< black (low) to white (high)
  kViridis,  ///< matplotlib's perceptually uniform viridis (dark blue, green, yellow)
  kTerrain,  ///< matplotlib's terrain: deep water, shallows, green lowland, sand, rock, snow
};

/// Parses "gray" (or "grey"), "viridis" or "terrain"; nullopt otherwise.
std::optional<ColorMap> parseColorMap(std::string_view name);

/// The sRGB colour (components in [0, 1]) of t in [0, 1] (clamped; NaN is 0),
/// piecewise linear between the map's published anchor colours.
std::array<float, 3> colorMapColor(ColorMap map, float t);

/// A float field as an 8-bit image: kGray gives 1 channel with
/// s = round(255 × clamp((v − low) / (high − low), 0, 1)), the colour maps 3
/// (sRGB). Range and NaN as heightmapToGray16 (low == high == 0: the
/// field's finite min..max). Throws as heightmapToGray16.
struct FieldImage8 {
  std::vector<uint8_t> pixels;  ///< width × height × channels, top row first
  int width = 0;
  int height = 0;
  int channels = 1;
  float low = 0.0f, high = 1.0f;
  ImageView view() const { return {pixels.data(), width, height, channels, 8, 0}; }
};
FieldImage8 fieldToImage8(const float* values, int width, int height, ColorMap map = ColorMap::kGray,
                          float low = 0.0f, float high = 0.0f);

}  // namespace procgen

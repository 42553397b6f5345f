// One writer per format; writeGeometry (write_geometry.cpp) dispatches on the
// extension after validating the options.
#pragma once

#include <filesystem>

#include "procgen/io.hpp"

namespace procgen::io {

void writeObj(const Geometry& geometry, const std::filesystem::path& path,
              const WriteOptions& options);
void writePly(const Geometry& geometry, const std::filesystem::path& path,
              const WriteOptions& options);
/// `binary`: .glb container; otherwise .gltf JSON with the buffer embedded as a data URI.
void writeGltf(const Geometry& geometry, const std::filesystem::path& path,
               const WriteOptions& options, bool binary);
void writeSvg(const Geometry& geometry, const std::filesystem::path& path,
              const WriteOptions& options);
void writePng(const Geometry& geometry, const std::filesystem::path& path,
              const WriteOptions& options);

/// 0..255 sRGB bytes of paletteColor(index).
struct Rgb8 {
  uint8_t r, g, b;
};
Rgb8 paletteRgb8(int32_t index);

}  // namespace procgen::io

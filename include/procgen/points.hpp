// procgen point sets: positions with optional colours, normals and scalar
// properties, written as Stanford PLY (binary little-endian or ASCII) that
// MeshLab, CloudCompare, ParaView, Blender and Open3D read.
// docs/output-formats.md shows the header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "procgen/geometry.hpp"
#include "procgen/output.hpp"

namespace procgen {

/// One float property per point, e.g. density or age.
struct PointScalar {
  std::string name;  ///< PLY property name: [A-Za-z_][A-Za-z0-9_]*, not x y z nx ny nz red green blue
  const float* values = nullptr;  ///< one per point
};

/// A caller's point set, read-only. Every non-null array has `count` entries.
struct PointSetView {
  size_t count = 0;
  const Vec3* positions = nullptr;   ///< required (unless count is 0)
  const uint8_t* colors = nullptr;   ///< optional: R, G, B bytes per point (3 × count)
  const Vec3* normals = nullptr;     ///< optional
  std::vector<PointScalar> scalars;  ///< optional, in this order
};

struct PointWriteOptions {
  bool ascii = false;  ///< ASCII PLY instead of binary_little_endian
};

/// Writes the point set as PLY into `sink`, then sink.finish(). Header:
///   element vertex N
///   property float x / y / z
///   property float nx / ny / nz          (with normals)
///   property uchar red / green / blue    (with colours)
///   property float NAME                  (per scalar, in order)
/// Points in the view's order; ASCII floats are the shortest text that
/// reads back to the same float. Throws Error (kUsage) for a bad view (missing
/// positions, a scalar without values, an invalid or repeated property name),
/// OutputError when the sink fails. Deterministic; linear in the points.
void writePointsPly(const PointSetView& points, ByteSink& sink, const PointWriteOptions& options = {});

/// The PLY file's bytes, in memory.
std::vector<uint8_t> encodePointsPly(const PointSetView& points, const PointWriteOptions& options = {});

/// Writes the PLY file at `path` (any extension). Throws as above.
void writePointsPly(const PointSetView& points, const std::filesystem::path& path,
                    const PointWriteOptions& options = {});

}  // namespace procgen

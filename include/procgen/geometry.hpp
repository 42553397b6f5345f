// Geometry produced by turtle interpretation: line segments and polygons in
// string order. Flat arrays of plain structs, so a kernel can write them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "procgen/memory.hpp"

namespace procgen {

struct Vec3 {
  float x = 0, y = 0, z = 0;
};

/// One drawn turtle step (F or G). Layout matches PgSegment in src/lsystem/opencl/interpret_types.h
/// (checked by static_asserts in src/lsystem/opencl/interpret.cpp).
struct Segment {
  Vec3 start;
  Vec3 end;
  float width = 1.0f;      ///< line width in model units (set by `!`)
  int32_t color = 0;       ///< colour index (set by `'`)
  int32_t depth = 0;       ///< branch nesting depth at the segment
  int32_t instance = 0;    ///< which L-system instance produced it (multi-L-system scenes)
};

/// Axis-aligned bounds; empty() when nothing was added.
struct Bounds {
  Vec3 min{std::numeric_limits<float>::max(), std::numeric_limits<float>::max(),
           std::numeric_limits<float>::max()};
  Vec3 max{std::numeric_limits<float>::lowest(), std::numeric_limits<float>::lowest(),
           std::numeric_limits<float>::lowest()};
  bool empty() const { return min.x > max.x; }
  void add(const Vec3& p) {
    if (p.x < min.x) min.x = p.x;
    if (p.y < min.y) min.y = p.y;
    if (p.z < min.z) min.z = p.z;
    if (p.x > max.x) max.x = p.x;
    if (p.y > max.y) max.y = p.y;
    if (p.z > max.z) max.z = p.z;
  }
};

/// The segment array of Geometry: resize(n) leaves new segments unset.
using SegmentArray = OverwriteVector<Segment>;

/// Segments and polygons, both in the order the serial interpreter emits them.
/// Polygon p has vertices polygon_vertices[polygon_offsets[p] .. polygon_offsets[p+1]).
struct Geometry {
  SegmentArray segments;  ///< resize(n) leaves new segments unset: fill them
  std::vector<Vec3> polygon_vertices;
  std::vector<uint64_t> polygon_offsets{0};  ///< always polygonCount()+1 entries
  std::vector<int32_t> polygon_colors;       ///< one per polygon
  std::vector<int32_t> polygon_instances;    ///< one per polygon

  size_t polygonCount() const { return polygon_colors.size(); }
  Bounds bounds() const {
    Bounds b;
    for (const Segment& s : segments) {
      b.add(s.start);
      b.add(s.end);
    }
    for (const Vec3& v : polygon_vertices) b.add(v);
    return b;
  }
  void clear() {
    segments.clear();
    polygon_vertices.clear();
    polygon_offsets.assign(1, 0);
    polygon_colors.clear();
    polygon_instances.clear();
  }
};

}  // namespace procgen

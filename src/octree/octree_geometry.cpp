// Octree cells as boxes and line sets (issue 18 point 7): the box of a cube
// cell from its (level, prefix) — seed §3's cells of the quantized root cube
// (octree/keys.h) — and of a data-split node from its ancestors' split planes
// (seed §5, docs/octree.md); then the boxes' edges (and the points) as
// geometry for the existing OBJ, PLY and PNG writers.
#include <cmath>

#include "octree/keys.h"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/octree_io.hpp"

namespace procgen {

std::vector<double> octreeNodeBoxes(const Octree& t, uint64_t memory_budget_bytes) {
  const uint64_t n = t.size();
  requireMemory("octree boxes", checkedMul(n, 48).value_or(UINT64_MAX), memory_budget_bytes);
  std::vector<double> boxes(6 * n);
  const double side = t.cube.side;
  if (t.options.split != OctreeSplit::kData) {
    for (uint64_t i = 0; i < n; ++i) {
      const int level = t.level[i];
      const uint64_t p = t.prefix[i];
      const uint32_t cell[3] = {pgOctreeCompact(p), pgOctreeCompact(p >> 1), pgOctreeCompact(p >> 2)};
      for (int a = 0; a < 3; ++a) {
        boxes[6 * i + a] = t.cube.min[a] + std::ldexp(double(cell[a]), -level) * side;
        boxes[6 * i + 3 + a] = t.cube.min[a] + std::ldexp(double(cell[a]) + 1.0, -level) * side;
      }
    }
    return boxes;
  }
  // Data splits: level order puts a parent before its children.
  for (int a = 0; a < 3; ++a) {
    boxes[a] = t.cube.min[a];
    boxes[3 + a] = t.cube.min[a] + side;
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t first = t.first_child[i];
    if (first == kOctreeNone) continue;
    const uint8_t packed = t.split_axes[i];
    const int axes[3] = {packed & 3, (packed >> 2) & 3, (packed >> 4) & 3};
    for (uint32_t d = 0; d < 8; ++d) {
      double* child = &boxes[6 * uint64_t(first + d)];
      for (int k = 0; k < 6; ++k) child[k] = boxes[6 * i + uint64_t(k)];
      for (int pass = 0; pass < 3; ++pass) {
        const int axis = axes[pass];
        const bool upper = (d >> (2 - pass)) & 1;
        child[upper ? axis : 3 + axis] = t.split_center[3 * i + uint64_t(axis)];
      }
    }
  }
  return boxes;
}

Geometry octreeGeometry(const Octree& t, const OctreeGeometryOptions& options) {
  const uint64_t n = t.size();
  auto selected = [&](uint64_t i) {
    switch (options.boxes) {
      case OctreeBoxSelection::kNone: return false;
      case OctreeBoxSelection::kLeaves: return t.isLeaf(uint32_t(i));
      case OctreeBoxSelection::kNonEmptyLeaves: return t.isLeaf(uint32_t(i)) && t.begin[i] != t.end[i];
      case OctreeBoxSelection::kAllNodes: return true;
    }
    return false;
  };
  uint64_t boxes = 0;
  for (uint64_t i = 0; i < n; ++i) boxes += selected(i);
  const uint64_t point_total = options.points ? options.points->count : 0;
  const uint64_t stride = options.max_points == 0 ? 0 : std::max<uint64_t>(1, (point_total + options.max_points - 1) / options.max_points);
  const uint64_t drawn = stride == 0 ? 0 : (point_total + stride - 1) / stride;
  const uint64_t segments = drawn + 12 * boxes;
  requireMemory("octree line set", checkedMul(segments, sizeof(Segment)).value_or(UINT64_MAX) +
                                       (boxes ? 48 * n : 0),
                options.memory_budget_bytes);
  Geometry g;
  g.segments.resize(segments);
  size_t at = 0;
  for (uint64_t j = 0; j < drawn; ++j) {
    const uint64_t i = j * stride;
    const Vec3 p{float(options.points->coord(i, 0)), float(options.points->coord(i, 1)),
                 float(options.points->coord(i, 2))};
    g.segments[at++] = Segment{p, p, 0.0f, options.point_color, 0, 0};
  }
  if (boxes == 0) return g;
  const std::vector<double> box = octreeNodeBoxes(t, options.memory_budget_bytes);
  for (uint64_t i = 0; i < n; ++i) {
    if (!selected(i)) continue;
    const double* b = &box[6 * i];
    const int32_t color = options.box_color + (options.color_by_level ? int32_t(t.level[i]) : 0);
    auto corner = [&](int bits) {
      return Vec3{float(b[(bits & 1) ? 3 : 0]), float(b[(bits & 2) ? 4 : 1]), float(b[(bits & 4) ? 5 : 2])};
    };
    // Edges along axis a join the corners that differ in bit a only.
    for (int axis = 0; axis < 3; ++axis)
      for (int other = 0; other < 4; ++other) {
        const int low_bits = other & ((1 << axis) - 1), high_bits = (other >> axis) << (axis + 1);
        const int from = low_bits | high_bits;
        g.segments[at++] = Segment{corner(from), corner(from | (1 << axis)), 0.0f, color, int32_t(t.level[i]), 0};
      }
  }
  return g;
}

}  // namespace procgen

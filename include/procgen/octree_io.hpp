// procgen octree outputs (issue 18 point 7): the cells of a tree as boxes in
// input coordinates, as line-set geometry for the OBJ/PLY/PNG writers of
// procgen/io.hpp, and the tree serialized to a documented binary layout
// (docs/octree.md, "The .octree file") and read back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "procgen/geometry.hpp"
#include "procgen/octree.hpp"
#include "procgen/output.hpp"

namespace procgen {

/// The box of every node in input coordinates, 6 doubles per node:
/// x0 y0 z0 x1 y1 z1. Cube trees (any layout): the cell of (level, prefix),
/// min + cell coordinates · side / 2^level. Data-split trees: the region the
/// split planes cut out of the root cube (a child's box is its parent's with
/// each axis cut at split_center, the upper side for a set digit bit).
/// O(nodes). Throws ResourceError beyond the budget (0 = default).
std::vector<double> octreeNodeBoxes(const Octree& tree, uint64_t memory_budget_bytes = 0);

enum class OctreeBoxSelection {
  kNone,          ///< no boxes
  kLeaves,        ///< every leaf (empty ones included)
  kNonEmptyLeaves,///< leaves holding at least one point
  kAllNodes,      ///< every node, internal ones included
};

struct OctreeGeometryOptions {
  OctreeBoxSelection boxes = OctreeBoxSelection::kLeaves;
  /// Points drawn as dots (zero-length segments); null: none. At most
  /// max_points are drawn: every ⌈n / max_points⌉-th point, from point 0.
  const OctreePoints* points = nullptr;
  uint64_t max_points = 1000000;
  int32_t point_color = 7;  ///< palette index (io.hpp paletteColor)
  /// Box edges are coloured by level: palette index box_color + level.
  int32_t box_color = 0;
  bool color_by_level = true;
  uint64_t memory_budget_bytes = 0;
};

/// The tree as turtle-style geometry: first the points (one zero-length
/// segment each, width 0), then 12 segments per selected box (its edges:
/// the four along x, then y, then z), boxes in node order. writeGeometry
/// writes it as an OBJ/PLY line set (`l` lines, `edge` elements) or a PNG
/// preview through the preview rasterizer. Coordinates are rounded to float.
/// Throws ResourceError beyond the budget (40 bytes a segment).
Geometry octreeGeometry(const Octree& tree, const OctreeGeometryOptions& options = {});

/// Version written by writeOctree and the only one decodeOctree reads.
inline constexpr uint32_t kOctreeFileVersion = 1;

/// Serializes the tree (docs/octree.md, "The .octree file": an 80-byte
/// little-endian header, then the node arrays, then the point arrays, no
/// padding) into `sink`, then sink.finish(). Deterministic bytes.
/// Throws OutputError when the sink fails.
void writeOctree(const Octree& tree, ByteSink& sink);
/// The bytes of writeOctree in memory.
std::vector<uint8_t> encodeOctree(const Octree& tree);
/// Writes the file at `path` (atomically, FileSink).
void writeOctree(const Octree& tree, const std::filesystem::path& path);

/// Reads a tree written by writeOctree. The bytes are untrusted: every size
/// is checked against the byte count before allocating (and against the
/// budget), and every invariant the walks and queries rely on is checked —
/// levels ≤ 21, parents before (level order) or after (post-order) their
/// children, 8 consecutive children of a level-order parent pointing back
/// to it, child counts equal to the parent links, point ranges and indices
/// within the points — so a tree that decodes cannot make a query read out
/// of bounds or loop. Stats are recomputed from the arrays. Throws Error
/// (kBadInput) naming `name` and what is wrong, ResourceError over budget.
Octree decodeOctree(std::string_view bytes, std::string_view name, uint64_t memory_budget_bytes = 0);
/// readInputFile + decodeOctree.
Octree readOctree(const std::filesystem::path& path, uint64_t memory_budget_bytes = 0);

}  // namespace procgen

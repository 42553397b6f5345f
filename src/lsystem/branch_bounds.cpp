// Per-branch bounding boxes of an interpreted L-system string.
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §6: the
// string's branches are blend groups and its drawn geometry the leaves, so a
// branch's box is the union of everything drawn inside it — one tree
// bounding-box pass (treebox) over a scene built from the string.
//
// Stages: (1) replay string order to find which module produced each segment
// and polygon (segment k comes from the k-th F or G drawn outside a polygon;
// polygon k from the k-th '{' whose '}' closes it with >= 3 vertices, the
// vertices coming from F, f and '.'; this mirrors the serial interpreter and
// is checked against the geometry's counts); (2) build the scene: '[' opens a
// blend group, its matching ']' closes it, every segment and polygon is a
// leaf with the box of its points; (3) treeBoundingBoxes; (4) read each
// branch's box at its '['. Strings with homomorphism productions are refused:
// a module then draws whatever its successor draws.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "lsystem/lsystem_data.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/treebox.hpp"

namespace procgen {
namespace {

Box3 boxOf(const Vec3* points, size_t count) {
  Box3 b{points[0], points[0]};
  for (size_t i = 1; i < count; ++i) {
    const Vec3& p = points[i];
    b.min = {std::min(b.min.x, p.x), std::min(b.min.y, p.y), std::min(b.min.z, p.z)};
    b.max = {std::max(b.max.x, p.x), std::max(b.max.y, p.y), std::max(b.max.z, p.z)};
  }
  return b;
}

}  // namespace

std::vector<BranchBounds> branchBounds(const LSystem& lsystem, const ModuleString& string,
                                       const Geometry& geometry, const Execution& execution) {
  if (!lsystem.data().homomorphism.empty())
    throw Error("branch bounds: not supported for L-systems with homomorphism productions "
                "(a module draws what its successor draws, so segments cannot be traced to "
                "modules)");
  const uint64_t n = string.size();
  const uint8_t* sym = string.symbols.data();

  // 0. matching brackets, so unmatched ones (which the turtle ignores) are
  // left out of the tree.
  std::vector<int64_t> match(n);
  matchBrackets(sym, n, '[', ']', match.data(), execution);
  std::vector<uint8_t> closed(n, 0);  // '[' that has a ']'
  for (uint64_t i = 0; i < n; ++i)
    if (sym[i] == ']' && match[i] >= 0) closed[static_cast<uint64_t>(match[i])] = 1;

  // 1 + 2. replay and build the scene.
  BoxTree scene;
  scene.dimensions = 3;
  std::vector<uint64_t> branch_open;  // scene element of each '[' (in order)
  std::vector<BranchBounds> result;
  std::vector<uint64_t> open_depths;  // nesting of matched '[' during the replay
  struct PolygonFrame {
    uint64_t brace;
    uint64_t vertices;
  };
  std::vector<PolygonFrame> polygons;
  uint64_t segment = 0, polygon = 0;
  uint64_t unclosed = 0;
  auto leaf = [&](const Box3& b) {
    scene.kinds.push_back(BoxTreeNodeKind::kLeaf);
    scene.boxes.push_back(b);
  };
  for (uint64_t i = 0; i < n; ++i) {
    switch (sym[i]) {
      case 'F':
      case 'G':
        if (!polygons.empty()) {
          if (sym[i] == 'F') ++polygons.back().vertices;
          break;
        }
        if (segment >= geometry.segments.size())
          throw Error("branch bounds: the geometry has fewer segments than the string draws");
        {
          const Vec3 pts[2] = {geometry.segments[segment].start, geometry.segments[segment].end};
          leaf(boxOf(pts, 2));
        }
        ++segment;
        break;
      case 'f':
      case '.':
        if (!polygons.empty()) ++polygons.back().vertices;
        break;
      case '{': polygons.push_back(PolygonFrame{i, 0}); break;
      case '}':
        if (polygons.empty()) break;
        if (polygons.back().vertices >= 3) {
          if (polygon >= geometry.polygonCount())
            throw Error("branch bounds: the geometry has fewer polygons than the string draws");
          const uint64_t b = geometry.polygon_offsets[polygon];
          const uint64_t e = geometry.polygon_offsets[polygon + 1];
          leaf(boxOf(geometry.polygon_vertices.data() + b, static_cast<size_t>(e - b)));
          ++polygon;
        }
        polygons.pop_back();  // a nested polygon's vertices are not the outer one's
        break;
      case '[':
        result.push_back(BranchBounds{i, static_cast<int32_t>(open_depths.size() + 1), Bounds{}});
        branch_open.push_back(scene.size());
        scene.kinds.push_back(BoxTreeNodeKind::kBlend);
        scene.boxes.push_back(emptyBox());
        open_depths.push_back(i);
        if (!closed[i]) ++unclosed;
        break;
      case ']':
        if (match[i] < 0) break;
        scene.kinds.push_back(BoxTreeNodeKind::kEnd);
        scene.boxes.push_back(emptyBox());
        open_depths.pop_back();
        break;
      default: break;
    }
  }
  if (segment != geometry.segments.size() || polygon != geometry.polygonCount())
    throw Error("branch bounds: the geometry (" + std::to_string(geometry.segments.size()) +
                " segments, " + std::to_string(geometry.polygonCount()) +
                " polygons) does not match what the string draws (" + std::to_string(segment) +
                ", " + std::to_string(polygon) + ")");
  for (uint64_t k = 0; k < unclosed; ++k) {  // an unclosed '[' encloses the rest
    scene.kinds.push_back(BoxTreeNodeKind::kEnd);
    scene.boxes.push_back(emptyBox());
  }

  // 3 + 4.
  std::vector<Box3> boxes(scene.size());
  treeBoundingBoxes(scene, boxes.data(), execution);
  for (size_t k = 0; k < result.size(); ++k) {
    const Box3& b = boxes[branch_open[k]];
    if (!b.empty()) {
      result[k].bounds.add(b.min);
      result[k].bounds.add(b.max);
    }
  }
  return result;
}

}  // namespace procgen

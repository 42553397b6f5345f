// Stage tree_bbox, serial backend.
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §1 (the
// sequential algorithm: walk the flattened tree with a stack whose entries
// carry a clip box and a blend box) and §6 (clips intersect down, blends
// union up). Each stack frame keeps the clip region in force outside the
// group and the union of the leaves found inside it so far; closing a group
// folds its union into the parent frame, so the pass is O(n).
#include <stdexcept>
#include <vector>

#include "treebox/match_internal.hpp"
#include "treebox/monoids.h"

namespace procgen::treebox_detail {
namespace {

PgBox toPg(const Box3& b) { return PgBox{b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z}; }
Box3 fromPg(const PgBox& b) { return Box3{{b.min_x, b.min_y, b.min_z}, {b.max_x, b.max_y, b.max_z}}; }

struct Frame {
  PgBox outer_clip;  // clip region outside this group
  PgBox leaves;      // union of the clipped leaves inside it so far
  uint64_t open;     // element index of the group's open
};

}  // namespace

void treeBBoxSerial(const BoxTree& scene, Box3* out) {
  std::vector<Frame> stack;
  PgBox clip = pgBoxAll();
  const uint64_t n = scene.size();
  for (uint64_t i = 0; i < n; ++i) {
    switch (scene.kinds[i]) {
      case BoxTreeNodeKind::kLeaf: {
        PgBox r = pgBoxIntersect(toPg(scene.boxes[i]), clip);
        out[i] = fromPg(r);
        if (!stack.empty()) stack.back().leaves = pgBoxUnion(stack.back().leaves, r);
        break;
      }
      case BoxTreeNodeKind::kClip: {
        PgBox r = pgBoxIntersect(toPg(scene.boxes[i]), clip);
        out[i] = fromPg(r);
        stack.push_back(Frame{clip, pgBoxEmpty(), i});
        clip = r;
        break;
      }
      case BoxTreeNodeKind::kBlend:
        stack.push_back(Frame{clip, pgBoxEmpty(), i});
        break;
      case BoxTreeNodeKind::kEnd: {
        if (stack.empty())
          throw std::invalid_argument("treeBoundingBoxes: unmatched end at element " +
                                      std::to_string(i));
        Frame f = stack.back();
        stack.pop_back();
        clip = f.outer_clip;
        if (scene.kinds[f.open] == BoxTreeNodeKind::kBlend) out[f.open] = fromPg(f.leaves);
        out[i] = out[f.open];
        if (!stack.empty()) stack.back().leaves = pgBoxUnion(stack.back().leaves, f.leaves);
        break;
      }
      default:
        throw std::invalid_argument("treeBoundingBoxes: bad node kind at element " +
                                    std::to_string(i));
    }
  }
  if (!stack.empty())
    throw std::invalid_argument("treeBoundingBoxes: group opened at element " +
                                std::to_string(stack.back().open) + " is never closed");
}

}  // namespace procgen::treebox_detail

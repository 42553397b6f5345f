// The independent reference of tree bounding boxes (Levien §6): clip regions
// passed down, leaf unions returned up — the recursive definition, written
// with an explicit stack so that chains nested 10⁵ deep do not overflow the
// call stack. Shared by tests/treebox and tests/opencl.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "procgen/treebox.hpp"

namespace procgen::test {

inline Box3 intersectBoxes(const Box3& a, const Box3& b) {
  Box3 r{{std::max(a.min.x, b.min.x), std::max(a.min.y, b.min.y), std::max(a.min.z, b.min.z)},
         {std::min(a.max.x, b.max.x), std::min(a.max.y, b.max.y), std::min(a.max.z, b.max.z)}};
  return r.empty() ? emptyBox() : r;
}

inline Box3 uniteBoxes(const Box3& a, const Box3& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return Box3{{std::min(a.min.x, b.min.x), std::min(a.min.y, b.min.y), std::min(a.min.z, b.min.z)},
              {std::max(a.max.x, b.max.x), std::max(a.max.y, b.max.y), std::max(a.max.z, b.max.z)}};
}

/// One box per element of a balanced tree, as treeBoundingBoxes defines it.
inline std::vector<Box3> referenceBoxes(const BoxTree& s) {
  std::vector<Box3> out(s.size());
  struct Frame {
    size_t open;
    Box3 clip, acc;  // the parent's clip region and leaf union so far
  };
  const Box3 all{{-INFINITY, -INFINITY, -INFINITY}, {INFINITY, INFINITY, INFINITY}};
  std::vector<Frame> stack;
  Box3 clip = all, acc = emptyBox();
  for (size_t i = 0; i < s.size(); ++i) {
    switch (s.kinds[i]) {
      case BoxTreeNodeKind::kLeaf:
        out[i] = intersectBoxes(s.boxes[i], clip);
        acc = uniteBoxes(acc, out[i]);
        break;
      case BoxTreeNodeKind::kClip:
      case BoxTreeNodeKind::kBlend:
        stack.push_back({i, clip, acc});
        if (s.kinds[i] == BoxTreeNodeKind::kClip) clip = intersectBoxes(s.boxes[i], clip);
        acc = emptyBox();
        break;
      case BoxTreeNodeKind::kEnd: {
        const Frame f = stack.back();
        stack.pop_back();
        out[f.open] = s.kinds[f.open] == BoxTreeNodeKind::kClip ? clip : acc;
        out[i] = out[f.open];
        clip = f.clip;
        acc = uniteBoxes(f.acc, acc);
        break;
      }
    }
  }
  return out;
}

}  // namespace procgen::test

// Segment → open tube meshing shared by the OBJ, PLY and glTF writers.
//
// Each segment becomes `sides` quads around its axis: ring vertices 0..sides-1
// at the start, sides..2*sides-1 at the end, all at distance width/2 from the
// axis, normals pointing radially outwards. No end caps: in a turtle model the
// next segment starts where this one ends, so caps would be hidden anyway and
// would add a third of the triangles.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "procgen/geometry.hpp"

namespace procgen::io {

class CylinderMesher {
 public:
  explicit CylinderMesher(int sides);
  int sides() const { return sides_; }
  uint32_t verticesPerSegment() const { return 2u * static_cast<uint32_t>(sides_); }

  /// Writes verticesPerSegment() positions and (if non-null) unit normals.
  /// A zero-length segment gets an arbitrary but valid frame around +Y.
  void vertices(const Segment& segment, Vec3* positions, Vec3* normals) const;

  /// Local vertex indices of quad k (0 <= k < sides), counter-clockwise seen
  /// from outside the tube (so its geometric normal points outwards).
  std::array<uint32_t, 4> quad(int k) const {
    const uint32_t s = static_cast<uint32_t>(sides_);
    const uint32_t i = static_cast<uint32_t>(k);
    const uint32_t j = (i + 1) % s;
    return {i, j, s + j, s + i};
  }

 private:
  int sides_;
  std::vector<float> cos_, sin_;
};

}  // namespace procgen::io

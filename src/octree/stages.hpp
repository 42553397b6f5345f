// The octree stages per backend (STYLE.md practice 1): serial/octree_stages.cpp
// and cpu/octree_stages.cpp instantiate the same loops (build_impl.hpp,
// query_impl.hpp) with the serial and the cpu policy; opencl/octree_stages.cpp
// runs their kernel twins (octree_build.cl, octree_queries.cl); octree.cpp
// dispatches. The cpu twins take the thread count (0 = all hardware threads),
// the opencl twins the device index (Execution::device).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "procgen/octree.hpp"

namespace procgen::octree_impl {

/// The root cube from the points' bounds, one rule for every producer (the
/// serial/cpu chunks, the opencl reduction, the ranks of an MPI job): the side
/// is the largest extent, and a zero minimum or side is +0.0. Which zero
/// std::min(-0.0, +0.0) returns depends on the operands' order (a chunk plan,
/// work-groups, an MPI reduction), and the cube is written to .octree files
/// byte for byte. Keys do not change: x - (-0.0) == x - (+0.0).
inline OctreeCube cubeFromBounds(const double lo[3], const double hi[3]) {
  OctreeCube cube;
  for (int a = 0; a < 3; ++a) cube.min[a] = lo[a] + 0.0;  // -0.0 + 0.0 == +0.0 (no fast-math here)
  // + 0.0 again: all points on one plane of zeros give -0.0 - (+0.0) == -0.0.
  cube.side = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}) + 0.0;
  return cube;
}

#define PROCGEN_OCTREE_STAGES(...)                                                                                \
  OctreeCube rootCube(__VA_ARGS__ const OctreePoints& points);                                                   \
  void keys(__VA_ARGS__ const OctreePoints& points, const OctreeCube& cube, uint64_t* keys);                      \
  Octree build(__VA_ARGS__ const OctreePoints& points, const OctreeOptions& options);                             \
  void locate(__VA_ARGS__ const Octree& tree, const double* xyz, uint64_t m, uint32_t* out);                      \
  void knn(__VA_ARGS__ const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, uint32_t k, \
           uint32_t* out, double* dist2);                                                                         \
  OctreeQueryResult radius(__VA_ARGS__ const Octree& tree, const OctreePoints& points, const double* xyz,        \
                           uint64_t m, double radius);                                                            \
  OctreeQueryResult box(__VA_ARGS__ const Octree& tree, const OctreePoints& points, const double* boxes,         \
                        uint64_t m);                                                                              \
  void generate(__VA_ARGS__ PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz);

namespace serial {
PROCGEN_OCTREE_STAGES()
/// The bucketed tree's nodes from its internal cells (build_impl.hpp
/// writeBucketedNodes): rank 0's assembly of a distributed build
/// (distributed_build.cpp).
void writeBucketedNodes(Octree& tree, int depth_limit, uint32_t leaf_size, const OctreeArray<uint64_t>& ipref,
                        const OctreeArray<uint32_t>& iowner, const std::vector<uint64_t>& level_start,
                        uint64_t budget);
}
namespace cpu {
PROCGEN_OCTREE_STAGES(int threads, )
}
namespace opencl {
PROCGEN_OCTREE_STAGES(int device, )
}

}  // namespace procgen::octree_impl

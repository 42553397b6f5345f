// The octree stages per backend (STYLE.md practice 1): serial/octree_stages.cpp
// and cpu/octree_stages.cpp instantiate the same loops (build_impl.hpp,
// query_impl.hpp) with the serial and the cpu policy; opencl/octree_stages.cpp
// runs their kernel twins (octree_build.cl, octree_queries.cl); octree.cpp
// dispatches. The cpu twins take the thread count (0 = all hardware threads),
// the opencl twins the device index (Execution::device).
#pragma once

#include <cstdint>
#include <vector>

#include "procgen/octree.hpp"

namespace procgen::octree_impl {

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

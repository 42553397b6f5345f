// The serial twins of the octree stages (seed 004 §3–§5; the loops are in
// build_impl.hpp and query_impl.hpp): one chunk, the primitives' serial radix
// sort and scan. The reference every other backend must equal.
#include "octree/query_impl.hpp"
#include "octree/stages.hpp"

namespace procgen::octree_impl::serial {
namespace {

struct SerialPar {
  Plan plan(uint64_t n, uint64_t) const { return Plan{n, std::max<uint64_t>(n, 1), n ? 1u : 0u}; }
  template <typename F>
  void forEach(const Plan& p, F&& f) {
    if (p.count) f(uint64_t{0}, uint64_t{0}, p.n);
  }
  template <typename F>
  void forEachItem(uint64_t count, F&& f) {
    for (uint64_t i = 0; i < count; ++i) f(i);
  }
  void sort(uint64_t* keys, uint32_t* values, uint64_t n, primitives::RadixScratch& scratch) {
    primitives::serial::radixSort(keys, values, n, scratch);
  }
  void scanExclusive(const uint32_t* in, uint32_t* out, uint64_t n) {
    primitives::serial::scan<primitives::SumU32>(primitives::ScanKind::kExclusive, in, nullptr, out, n);
  }
};

}  // namespace

OctreeCube rootCube(const OctreePoints& points) {
  SerialPar par;
  return octree_impl::rootCube(par, points);
}
void keys(const OctreePoints& points, const OctreeCube& cube, uint64_t* out) {
  SerialPar par;
  computeKeys(par, points, cube, out, nullptr);
}
Octree build(const OctreePoints& points, const OctreeOptions& options) {
  SerialPar par;
  return octree_impl::build(par, points, options);
}
void locate(const Octree& tree, const double* xyz, uint64_t m, uint32_t* out) {
  SerialPar par;
  locateBatch(par, tree, xyz, m, out);
}
void knn(const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, uint32_t k, uint32_t* out,
         double* dist2) {
  SerialPar par;
  knnBatch(par, tree, points, xyz, m, k, out, dist2);
}
OctreeQueryResult radius(const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, double r) {
  SerialPar par;
  return radiusBatch(par, tree, points, xyz, m, r);
}
OctreeQueryResult box(const Octree& tree, const OctreePoints& points, const double* boxes, uint64_t m) {
  SerialPar par;
  return boxBatch(par, tree, points, boxes, m);
}
void generate(PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz) {
  SerialPar par;
  octree_impl::generate(par, distribution, n, seed, xyz);
}
void writeBucketedNodes(Octree& tree, int depth_limit, uint32_t leaf_size, const OctreeArray<uint64_t>& ipref,
                        const OctreeArray<uint32_t>& iowner, const std::vector<uint64_t>& level_start,
                        uint64_t budget) {
  SerialPar par;
  octree_impl::writeBucketedNodes(par, tree, depth_limit, leaf_size, ipref, iowner, level_start, budget,
                                  tree.point_count * 12);
}

}  // namespace procgen::octree_impl::serial

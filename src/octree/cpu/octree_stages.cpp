// The cpu twins of the octree stages (seed 004 §3–§5; the loops are in
// build_impl.hpp and query_impl.hpp): chunks of the CpuExecutor, the
// primitives' cpu radix sort and scan. The top-down build parallelizes over
// the nodes of a level, so — as the seed's §5 says — its parallelism grows
// with depth.
#include "cpu/executor.hpp"
#include "octree/query_impl.hpp"
#include "octree/stages.hpp"

namespace procgen::octree_impl::cpu {
namespace {

struct CpuPar {
  detail::CpuExecutor exec;
  explicit CpuPar(int threads) : exec(threads) {}
  Plan plan(uint64_t n, uint64_t grain) const { return exec.plan(n, grain); }
  template <typename F>
  void forEach(const Plan& p, F&& f) {
    exec.forEachChunk(p, [&](uint64_t c) { f(c, p.begin(c), p.end(c)); });
  }
  template <typename F>
  void forEachItem(uint64_t count, F&& f) {
    detail::ChunkPlan cp;
    cp.n = count;
    cp.size = 1;
    cp.count = count;
    exec.forEachChunk(cp, [&](uint64_t i) { f(i); });
  }
  void sort(uint64_t* keys, uint32_t* values, uint64_t n, primitives::RadixScratch& scratch) {
    primitives::cpu::radixSort(exec, keys, values, n, scratch);
  }
  void scanExclusive(const uint32_t* in, uint32_t* out, uint64_t n) {
    primitives::cpu::scan<primitives::SumU32>(exec, primitives::ScanKind::kExclusive, in, nullptr, out, n);
  }
};

}  // namespace

OctreeCube rootCube(int threads, const OctreePoints& points) {
  CpuPar par(threads);
  return octree_impl::rootCube(par, points);
}
void keys(int threads, const OctreePoints& points, const OctreeCube& cube, uint64_t* out) {
  CpuPar par(threads);
  computeKeys(par, points, cube, out, nullptr);
}
Octree build(int threads, const OctreePoints& points, const OctreeOptions& options) {
  CpuPar par(threads);
  return octree_impl::build(par, points, options);
}
void locate(int threads, const Octree& tree, const double* xyz, uint64_t m, uint32_t* out) {
  CpuPar par(threads);
  locateBatch(par, tree, xyz, m, out);
}
void knn(int threads, const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, uint32_t k,
         uint32_t* out, double* dist2) {
  CpuPar par(threads);
  knnBatch(par, tree, points, xyz, m, k, out, dist2);
}
OctreeQueryResult radius(int threads, const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m,
                         double r) {
  CpuPar par(threads);
  return radiusBatch(par, tree, points, xyz, m, r);
}
OctreeQueryResult box(int threads, const Octree& tree, const OctreePoints& points, const double* boxes, uint64_t m) {
  CpuPar par(threads);
  return boxBatch(par, tree, points, boxes, m);
}
void generate(int threads, PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz) {
  CpuPar par(threads);
  octree_impl::generate(par, distribution, n, seed, xyz);
}

}  // namespace procgen::octree_impl::cpu

// The cpu twin of Barnes–Hut and the direct sum (barnes_hut_impl.hpp;
// Barnes and Hut, Nature 324, 1986): the nodes of one level, and the targets,
// in CpuExecutor chunks. Every node's and every target's sum stays with one
// thread in the serial order, so the results equal the serial twin's bits.
#include "cpu/executor.hpp"
#include "octree/nbody_stages.hpp"

namespace procgen::nbody_impl::cpu {
namespace {

struct CpuPar {
  detail::CpuExecutor exec;
  explicit CpuPar(int threads) : exec(threads) {}
  template <typename F>
  void forEachRange(uint64_t n, uint64_t grain, F&& f) {
    const detail::ChunkPlan plan = exec.plan(n, grain);
    exec.forEachChunk(plan, [&](uint64_t c) { f(plan.begin(c), plan.end(c)); });
  }
};

}  // namespace

uint64_t barnesHut(int threads, const Octree& tree, const OctreePoints& points, MassOf mass_of,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  CpuPar par(threads);
  const Monopoles m = monopoles(par, tree, points, mass_of);
  return nbody_impl::barnesHut(par, tree, points, mass_of, m, options, acceleration, potential);
}

uint64_t directSum(int threads, const OctreePoints& points, MassOf mass_of, const uint32_t* targets, uint64_t count,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  CpuPar par(threads);
  return nbody_impl::directSum(par, points, mass_of, targets, count, options, acceleration, potential);
}

}  // namespace procgen::nbody_impl::cpu

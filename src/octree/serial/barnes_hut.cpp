// The serial twin of Barnes–Hut and the direct sum (barnes_hut_impl.hpp;
// Barnes and Hut, Nature 324, 1986): the reference the cpu twin is diffed
// against, one range over all nodes of a level and over all targets.
#include "octree/nbody_stages.hpp"

namespace procgen::nbody_impl::serial {
namespace {

struct SerialPar {
  template <typename F>
  void forEachRange(uint64_t n, uint64_t /*grain*/, F&& f) {
    if (n) f(uint64_t{0}, n);
  }
};

}  // namespace

Monopoles monopoles(const Octree& tree, const OctreePoints& points, MassOf mass_of) {
  SerialPar par;
  return nbody_impl::monopoles(par, tree, points, mass_of);
}

uint64_t barnesHut(const Octree& tree, const OctreePoints& points, MassOf mass_of, const NbodyOptions& options,
                   double* acceleration, double* potential) {
  SerialPar par;
  const Monopoles m = monopoles(par, tree, points, mass_of);
  return nbody_impl::barnesHut(par, tree, points, mass_of, m, options, acceleration, potential);
}

uint64_t directSum(const OctreePoints& points, MassOf mass_of, const uint32_t* targets, uint64_t count,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  SerialPar par;
  return nbody_impl::directSum(par, points, mass_of, targets, count, options, acceleration, potential);
}

}  // namespace procgen::nbody_impl::serial

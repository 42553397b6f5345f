// The Barnes–Hut entry points (include/procgen/nbody.hpp): argument checks,
// the memory budget, the backend dispatch to the serial and cpu twins
// (nbody_stages.hpp), and the error report against a direct-sum sample.
//
// Paper: Barnes and Hut, Nature 324 (1986); the octree of the seed
// (shared/seeds/004_ce32dc12e32b896e.txt, docs/octree.md "Barnes–Hut").
#include "procgen/nbody.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/dispatch.hpp"
#include "octree/nbody_stages.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen {
namespace {

template <typename S, typename C, typename O>
decltype(auto) run(const Execution& e, const char* what, S&& serial, C&& cpu, O&& opencl) {
  return detail::dispatch(
      e, what, std::forward<S>(serial), [&] { return cpu(e.threads); }, [&] { return opencl(e.device); });
}

void checkOptions(const NbodyOptions& o, const char* what) {
  if (!std::isfinite(o.theta) || o.theta < 0)
    throw std::invalid_argument(std::string(what) + ": theta must be finite and >= 0");
  if (!std::isfinite(o.softening) || o.softening < 0)
    throw std::invalid_argument(std::string(what) + ": softening must be finite and >= 0");
  if (!std::isfinite(o.gravity)) throw std::invalid_argument(std::string(what) + ": gravity must be finite");
}

nbody_impl::MassOf checkedMasses(const OctreePoints& points, const double* masses) {
  if (points.count == 0) throw Error("n-body: no points");
  if (points.count > kOctreeMaxPoints) throw Error("n-body: more than 2^32 - 2 points");
  if (masses)
    for (uint64_t i = 0; i < points.count; ++i)
      if (!std::isfinite(masses[i]) || masses[i] < 0)
        throw Error("mass " + std::to_string(i) + " is " + (std::isnan(masses[i]) ? "NaN" : !std::isfinite(masses[i]) ? "infinite" : "negative"),
                    ExitCode::kBadInput);
  return {masses, 1.0 / double(points.count)};
}

NbodyResult allocate(uint64_t targets, uint64_t extra_bytes, const NbodyOptions& o, const char* what) {
  requireMemory(what, checkedMul(targets, 4 * sizeof(double)).value_or(UINT64_MAX) + extra_bytes, o.memory_budget);
  NbodyResult r;
  r.acceleration.resize(3 * targets);
  r.potential.resize(targets);
  return r;
}

}  // namespace

NbodyResult octreeBarnesHut(const Octree& tree, const OctreePoints& points, const double* masses,
                            const NbodyOptions& options, const Execution& execution) {
  checkOptions(options, "octreeBarnesHut");
  if (tree.layout != OctreeLayout::kLevelOrder)
    throw std::invalid_argument("octreeBarnesHut: needs a level-order tree (bucketed or top-down), not compressed");
  if (tree.point_count != points.count)
    throw std::invalid_argument("octreeBarnesHut: the tree was built from another number of points");
  const nbody_impl::MassOf mass_of = checkedMasses(points, masses);
  // The result plus the monopoles (mass, centre, size², data-tree boxes).
  NbodyResult r = allocate(points.count, checkedMul(tree.size(), 11 * sizeof(double)).value_or(UINT64_MAX), options,
                           "Barnes-Hut");
  r.interactions = run(
      execution, "octreeBarnesHut",
      [&] {
        return nbody_impl::serial::barnesHut(tree, points, mass_of, options, r.acceleration.data(),
                                             r.potential.data());
      },
      [&](auto threads) {
        return nbody_impl::cpu::barnesHut(threads, tree, points, mass_of, options, r.acceleration.data(),
                                          r.potential.data());
      },
      [&](auto device) {
        return nbody_impl::opencl::barnesHut(device, tree, points, mass_of, options, r.acceleration.data(),
                                             r.potential.data());
      });
  return r;
}

NbodyResult directSumAt(const OctreePoints& points, const double* masses, const uint32_t* targets, uint64_t count,
                        const NbodyOptions& options, const Execution& execution) {
  checkOptions(options, "directSum");
  const nbody_impl::MassOf mass_of = checkedMasses(points, masses);
  if (targets)
    for (uint64_t t = 0; t < count; ++t)
      if (targets[t] >= points.count) throw std::out_of_range("directSumAt: target index out of range");
  NbodyResult r = allocate(count, 0, options, "direct n-body sum");
  r.interactions = run(
      execution, "directSum",
      [&] {
        return nbody_impl::serial::directSum(points, mass_of, targets, count, options, r.acceleration.data(),
                                             r.potential.data());
      },
      [&](auto threads) {
        return nbody_impl::cpu::directSum(threads, points, mass_of, targets, count, options, r.acceleration.data(),
                                          r.potential.data());
      },
      [&](auto device) {
        return nbody_impl::opencl::directSum(device, points, mass_of, targets, count, options, r.acceleration.data(),
                                             r.potential.data());
      });
  return r;
}

NbodyResult directSum(const OctreePoints& points, const double* masses, const NbodyOptions& options,
                      const Execution& execution) {
  return directSumAt(points, masses, nullptr, points.count, options, execution);
}

std::vector<uint32_t> nbodySampleTargets(uint64_t n, uint64_t samples) {
  const uint64_t m = std::min(n, samples);
  std::vector<uint32_t> out(m);
  for (uint64_t k = 0; k < m; ++k) out[k] = uint32_t((unsigned __int128)k * n / m);
  return out;
}

NbodyError nbodyForceError(const NbodyResult& approx, const NbodyResult& reference, const uint32_t* targets,
                           uint64_t count) {
  if (reference.acceleration.size() < 3 * count) throw std::invalid_argument("nbodyForceError: reference too short");
  NbodyError e;
  e.samples = count;
  double sum = 0;
  for (uint64_t t = 0; t < count; ++t) {
    const uint64_t i = targets[t];
    if (3 * i + 2 >= approx.acceleration.size()) throw std::out_of_range("nbodyForceError: target out of range");
    double diff2 = 0, ref2 = 0;
    for (int a = 0; a < 3; ++a) {
      const double d = approx.acceleration[3 * i + a] - reference.acceleration[3 * t + a];
      diff2 += d * d;
      ref2 += reference.acceleration[3 * t + a] * reference.acceleration[3 * t + a];
    }
    const double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : diff2 > 0 ? INFINITY : 0.0;
    e.max_relative = std::max(e.max_relative, rel);
    sum += rel;
  }
  e.mean_relative = count ? sum / double(count) : 0.0;
  return e;
}

}  // namespace procgen

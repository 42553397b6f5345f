// Barnes–Hut statistics for `procgen octree --nbody` (nbody_stats.hpp).
#include "nbody_stats.hpp"

#include <chrono>
#include <cmath>

#include "procgen/error.hpp"

namespace procgen::cli {

NbodyRunStats runNbodyStats(const Octree& tree, const OctreePoints& points, double theta, const Execution& execution,
                            uint64_t samples, double softening) {
  using Clock = std::chrono::steady_clock;
  if (!std::isfinite(theta) || theta < 0) throw Error("--theta must be a finite number >= 0", ExitCode::kUsage);
  if (!std::isfinite(softening) || softening < 0)
    throw Error("--softening must be a finite number >= 0", ExitCode::kUsage);
  if (tree.layout != OctreeLayout::kLevelOrder)
    throw Error("--nbody needs a level-order tree (the default or --method top-down), not --compressed",
                ExitCode::kUsage);
  NbodyOptions options;
  options.theta = theta;
  options.softening = softening;
  NbodyRunStats s;
  s.theta = theta;
  s.softening = softening;
  const auto t0 = Clock::now();
  const NbodyResult approx = octreeBarnesHut(tree, points, nullptr, options, execution);
  const auto t1 = Clock::now();
  const std::vector<uint32_t> targets = nbodySampleTargets(points.count, samples);
  const NbodyResult reference = directSumAt(points, nullptr, targets.data(), targets.size(), options, execution);
  const auto t2 = Clock::now();
  s.nbody_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  s.direct_sample_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  s.interactions = approx.interactions;
  s.error_samples = targets.size();
  const NbodyError e = nbodyForceError(approx, reference, targets.data(), targets.size());
  s.rel_error_max = e.max_relative;
  s.rel_error_mean = e.mean_relative;
  s.direct_ms_estimated = targets.size() < points.count;
  s.direct_ms = s.direct_sample_ms * double(points.count) / double(targets.empty() ? 1 : targets.size());
  s.speedup = s.nbody_ms > 0 ? s.direct_ms / s.nbody_ms : 0.0;
  return s;
}

Json nbodyStatsJson(const NbodyRunStats& s) {
  Json j;
  j["nbody_ms"] = s.nbody_ms;
  j["theta"] = s.theta;
  j["softening"] = s.softening;
  j["interactions"] = s.interactions;
  j["rel_error_max"] = s.rel_error_max;
  j["rel_error_mean"] = s.rel_error_mean;
  j["error_samples"] = s.error_samples;
  j["direct_ms"] = s.direct_ms;
  j["direct_ms_estimated"] = s.direct_ms_estimated;
  j["speedup"] = s.speedup;
  return j;
}

}  // namespace procgen::cli

// `procgen octree … --nbody --theta T` (issue 18 point 6): Barnes–Hut over the
// command's tree, timed, with its error and speed-up against the direct sum on
// a sample of points. The octree command adds it to its stats in two lines:
//   if (nbody) stats["nbody"] = nbodyStatsJson(runNbodyStats(tree, points, theta, execution));
#pragma once

#include <cstdint>

#include "json_output.hpp"
#include "procgen/nbody.hpp"
#include "procgen/octree.hpp"

namespace procgen::cli {

struct NbodyRunStats {
  double theta = 0;
  double softening = 0;
  double nbody_ms = 0;              ///< Barnes–Hut, all points (monopoles included)
  uint64_t interactions = 0;        ///< pair terms of Barnes–Hut
  uint64_t error_samples = 0;       ///< points the direct sum was computed at
  double rel_error_max = 0;         ///< relative force error over the sample
  double rel_error_mean = 0;
  double direct_sample_ms = 0;      ///< the direct sum at the sample
  double direct_ms = 0;             ///< the whole direct sum: measured when the sample is all points, else
                                    ///< direct_sample_ms × n / samples
  bool direct_ms_estimated = false;
  double speedup = 0;               ///< direct_ms / nbody_ms
};

/// Runs Barnes–Hut (equal masses, total 1, G = 1, softening ε) on `tree`
/// (built from `points`, level-order) and the direct sum at `samples` points
/// spread evenly over the input (nbodySampleTargets). Throws Error(kUsage) for
/// a θ or ε that is negative or not finite, or a compressed tree ("--nbody
/// needs …"); otherwise as octreeBarnesHut.
NbodyRunStats runNbodyStats(const Octree& tree, const OctreePoints& points, double theta, const Execution& execution,
                            uint64_t samples = 1000, double softening = 0.0);

/// The stats as a JSON object: nbody_ms, theta, softening, interactions,
/// rel_error_max, rel_error_mean, error_samples, direct_ms,
/// direct_ms_estimated, speedup.
Json nbodyStatsJson(const NbodyRunStats& stats);

}  // namespace procgen::cli

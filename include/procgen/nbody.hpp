// procgen nbody: gravitational accelerations and potentials of point masses by
// Barnes–Hut over procgen's octree, and the direct O(n²) sum they are checked
// against (issue 18 point 6).
//
// Papers: J. Barnes and P. Hut, "A hierarchical O(N log N) force-calculation
// algorithm", Nature 324 (1986) — monopole per cell, a cell of side s at
// distance d from the point is used as one mass when s/d < θ; the seed
// (shared/seeds/004_ce32dc12e32b896e.txt, "Scientific computing") motivates its
// octrees with exactly this use. docs/octree.md, "Barnes–Hut", has the details.
//
// Physics: a_i = G Σ_{j≠i} m_j (x_j − x_i) / (r² + ε²)^{3/2},
//          φ_i = −G Σ_{j≠i} m_j / (r² + ε²)^{1/2}     (Plummer softening ε).
// With ε = 0 a pair of coincident points (r = 0) contributes nothing (the force
// is undefined); give ε > 0 for point sets with duplicates.
//
// Determinism: every point's sum is computed by one thread (one work-item) in
// a fixed order (the tree walk, children in digit order; for the direct sum,
// increasing index), and the monopoles bottom-up in a fixed order on the host,
// so the results are identical bit for bit on serial, cpu at any thread count
// and chunk size, and opencl (double + − × ÷ and sqrt are correctly rounded
// in OpenCL C; contraction into fma is turned off). The opencl backend needs
// a device with cl_khr_fp64 (else OpenCLError with the build log).
#pragma once

#include <cstdint>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/octree.hpp"

namespace procgen {

struct NbodyOptions {
  /// Opening angle: a cell (not containing the point) of size s whose centre
  /// of mass is at distance d is used as one mass iff s < θ·d. 0 = every pair
  /// exactly (the direct sum in another order). Finite, >= 0.
  double theta = 0.5;
  /// Plummer softening length ε (finite, >= 0).
  double softening = 0.0;
  /// Gravitational constant G (finite).
  double gravity = 1.0;
  /// Bytes the call may allocate (budget.hpp; 0 = half the physical memory).
  uint64_t memory_budget = 0;
};

/// Accelerations and potentials, in the order of the targets (all points:
/// input order).
struct NbodyResult {
  std::vector<double> acceleration;  ///< 3 per target: ax ay az
  std::vector<double> potential;     ///< 1 per target
  /// Pair terms evaluated: point–point plus point–cell (monopole) terms.
  uint64_t interactions = 0;
};

/// Barnes–Hut for every point of `points`, on `tree` built from the same
/// points by buildOctree with a level-order layout (bucketed bottom-up, or
/// top-down with either split; compressed/full trees are refused with
/// std::invalid_argument). `masses`: one per point in input order, finite and
/// >= 0 (Error, ExitCode::kBadInput, naming the first bad one); nullptr =
/// equal masses 1/n (total mass 1).
/// Monopoles: per node the mass and centre of mass, bottom-up (leaves over
/// their points in `order` order, internal nodes over children in digit
/// order). Cell size s: cube trees the cell's side (cube.side / 2^level); data
/// trees (OctreeSplit::kData) the largest extent of the node's points'
/// bounding box. A node that contains the target point is always opened, so
/// no point ever attracts itself. Leaves that are opened are summed point by
/// point. Throws std::invalid_argument for options out of range or a tree of
/// another point count; ResourceError before allocating beyond the budget.
/// Work about O(n log n / θ³); memory 32 bytes per point + 48 per node.
NbodyResult octreeBarnesHut(const Octree& tree, const OctreePoints& points, const double* masses,
                            const NbodyOptions& options, const Execution& execution);

/// The direct sum at every point (j in increasing index, j ≠ i). O(n²).
/// `options.theta` is ignored. Throws as octreeBarnesHut for masses/options.
NbodyResult directSum(const OctreePoints& points, const double* masses, const NbodyOptions& options,
                      const Execution& execution);

/// The direct sum at the `count` points targets[0..count) only (indices into
/// `points`, each < points.count): result entry t is point targets[t]. O(count·n).
NbodyResult directSumAt(const OctreePoints& points, const double* masses, const uint32_t* targets, uint64_t count,
                        const NbodyOptions& options, const Execution& execution);

/// `samples` indices spread evenly over [0, n): ⌊k·n/samples⌋ for k = 0 ..
/// min(samples, n) − 1 (all points when samples >= n). Deterministic.
std::vector<uint32_t> nbodySampleTargets(uint64_t n, uint64_t samples);

/// Relative force error of an approximation against a reference.
struct NbodyError {
  double max_relative = 0;   ///< max over targets of |a − a_ref| / |a_ref|
  double mean_relative = 0;  ///< their mean
  uint64_t samples = 0;
};

/// Compares `approx` (all points, input order) at targets[0..count) with
/// `reference` (directSumAt of the same targets: entry t is targets[t]).
/// A target whose reference force is 0 counts 0 when the approximation is 0
/// too, else infinity.
NbodyError nbodyForceError(const NbodyResult& approx, const NbodyResult& reference, const uint32_t* targets,
                           uint64_t count);

}  // namespace procgen

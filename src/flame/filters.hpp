// flam3's two image filters (filters.c of flam3 3.1.1): the spatial filter
// that downsamples the supersampled accumulator to the output pixels
// (flam3_create_spatial_filter, 14 kernel shapes) and the density-estimation
// kernels (flam3_create_de_filters: Gaussian discs whose radius shrinks with
// the number of hits around a cell). Both are built once per render; the
// tone mapping (tonemap.cpp) applies them.
#pragma once

#include <cstdint>
#include <vector>

#include "procgen/flame.hpp"

namespace procgen::flame {

/// flam3_spatial_support: the kernel's half-width in units of the filter
/// radius (box 0.5, gaussian 1.5, lanczos3 3, …).
double spatialFilterSupport(FlameFilterShape shape);

/// flam3_spatial_filter: the kernel function of `shape` at x (unnormalised).
/// Note flam3's quirks, kept: the box is half-open, (−0.5, 0.5]; blackman,
/// hanning and hamming are sinc × window with no clamp at their support;
/// lanczos3/lanczos2 are multiplied by a second sinc window.
double spatialFilterValue(FlameFilterShape shape, double x);

/// The spatial filter of a render: `width` × `width` histogram cells around
/// each output pixel, separable. flam3 builds the 2-D kernel
/// f(x_i)·f(x_j) / Σ f(x_i)·f(x_j); since the sum factors, taps[i] =
/// f(x_i) / Σ f(x_k) gives the same kernel as taps[i]·taps[j].
struct SpatialFilter {
  int width = 0;
  std::vector<double> taps;  ///< `width` entries summing to 1
};

/// flam3_create_spatial_filter (pixel aspect 1, no fields): fw = 2 · support ·
/// supersample · radius, width = ⌊fw⌋ + 1 made the parity of the
/// supersampling, taps at ((2i+1)/width − 1) · support · width / fw. Throws
/// Error (ExitCode::kBadInput) when the taps sum to 0, as flam3 refuses it.
SpatialFilter makeSpatialFilter(FlameFilterShape shape, double radius, int supersample);

/// flam3's DE_THRESH: below this many hits a kernel per hit count, above it
/// the kernels thin out by the estimator curve.
inline constexpr int kDensityThreshold = 100;

/// One density-estimation kernel: a disc of radius `radius` cells, applied
/// over the offsets |dx|, |dy| ≤ reach = ⌈radius⌉ − 1 (flam3's
/// arr_filt_width) with √(dx² + dy²) ≤ radius, stored row by row (dy = −reach
/// .. reach); row dy spans dx = −half_width[dy] .. half_width[dy].
struct DensityKernel {
  double radius = 0;
  int reach = 0;
  std::vector<int> half_width;  ///< 2·reach + 1 rows
  std::vector<int> row_start;   ///< index in `coefs` of each row's first entry
  std::vector<float> coefs;     ///< the applied weights, summing to 1
};

/// flam3_create_de_filters for estimator radius/minimum/curve and the
/// supersampling, plus its kernel selection (rect.c de_thread).
struct DensityEstimator {
  /// False when flam3 runs the plain log pass instead: estimator_radius 0, or
  /// the radius not above the minimum (one kernel only).
  bool enabled = false;
  int supersample = 1;
  double curve = 0.4;
  int max_filter_index = 0;            ///< the last kernel (the minimum radius)
  int max_filtered_counts = 0;         ///< densities above this take the last kernel
  int max_reach = 0;                   ///< the largest kernel's reach
  std::vector<DensityKernel> kernels;  ///< 0 .. max_filter_index

  /// The kernel for a neighbourhood density (hits, flam3's f_select).
  int selectKernel(double density) const;
};

/// Throws Error (ExitCode::kBadInput) where flam3 refuses the estimator:
/// radius or minimum negative or not finite, curve ≤ 0 with a radius, radius
/// below the minimum, more than 10^7 kernels.
///
/// flam3 normalises each kernel over the whole disc but applies it only up to
/// ⌈radius⌉ − 1 cells out, so at integer radii (the minimum radius
/// estimator_minimum·supersample + 1 is one) it drops the ring at distance
/// exactly `radius` and the densest cells lose 4.2% of their light. Here each
/// kernel is normalised over the offsets it is applied to, so density
/// estimation preserves energy and keeps flam3's footprint and shape.
/// The kernels' weights are checked against `memory_budget` (0: the default;
/// procgen/budget.hpp) before they are built: ResourceError (exit 2).
DensityEstimator makeDensityEstimator(double radius, double minimum, double curve, int supersample,
                                      uint64_t memory_budget = 0);

}  // namespace procgen::flame

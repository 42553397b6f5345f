// flam3's spatial and density-estimation filters, after filters.c of flam3
// 3.1.1 (flam3_spatial_filter and its kernels "from Graphics Gems III and
// ImageMagick resize.c", flam3_create_spatial_filter, flam3_create_de_filters)
// and rect.c de_thread (the kernel selection). See filters.hpp.
#include "flame/filters.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::flame {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kMitchellB = 1.0 / 3.0, kMitchellC = 1.0 / 3.0;

[[noreturn]] void badGenome(const std::string& message) {
  throw Error("flame: " + message, ExitCode::kBadInput);
}

double sinc(double x) {
  x *= kPi;
  return x != 0 ? std::sin(x) / x : 1.0;
}

double hermite(double t) {
  t = std::fabs(t);
  return t < 1.0 ? (2.0 * t - 3.0) * t * t + 1.0 : 0.0;
}

double box(double t) {
  return t > -0.5 && t <= 0.5 ? 1.0 : 0.0;
}

double triangle(double t) {
  t = std::fabs(t);
  return t < 1.0 ? 1.0 - t : 0.0;
}

double bell(double t) {  // box ⊛ box ⊛ box
  t = std::fabs(t);
  if (t < 0.5) return 0.75 - t * t;
  if (t < 1.5) return 0.5 * (t - 1.5) * (t - 1.5);
  return 0.0;
}

double bspline(double t) {  // box ⊛ box ⊛ box ⊛ box
  t = std::fabs(t);
  if (t < 1) return 0.5 * t * t * t - t * t + 2.0 / 3.0;
  if (t < 2) return (2 - t) * (2 - t) * (2 - t) / 6.0;
  return 0.0;
}

double mitchell(double t) {  // Mitchell–Netravali, B = C = 1/3
  const double tt = t * t;
  t = std::fabs(t);
  if (t < 1.0)
    return ((12.0 - 9.0 * kMitchellB - 6.0 * kMitchellC) * (t * tt) +
            (-18.0 + 12.0 * kMitchellB + 6.0 * kMitchellC) * tt + (6.0 - 2 * kMitchellB)) /
           6.0;
  if (t < 2.0)
    return ((-kMitchellB - 6.0 * kMitchellC) * (t * tt) + (6.0 * kMitchellB + 30.0 * kMitchellC) * tt +
            (-12.0 * kMitchellB - 48.0 * kMitchellC) * t + (8.0 * kMitchellB + 24 * kMitchellC)) /
           6.0;
  return 0.0;
}

double catrom(double x) {  // Catmull–Rom
  if (x < -2.0) return 0.0;
  if (x < -1.0) return 0.5 * (4.0 + x * (8.0 + x * (5.0 + x)));
  if (x < 0.0) return 0.5 * (2.0 + x * x * (-5.0 - 3.0 * x));
  if (x < 1.0) return 0.5 * (2.0 + x * x * (-5.0 + 3.0 * x));
  if (x < 2.0) return 0.5 * (4.0 + x * (-8.0 + x * (5.0 - x)));
  return 0.0;
}

double lanczos(double t, double lobes) {
  t = std::fabs(t);
  return t < lobes ? sinc(t) * sinc(t / lobes) : 0.0;
}

double quadratic(double x) {
  if (x < -1.5) return 0.0;
  if (x < -0.5) return 0.5 * (x + 1.5) * (x + 1.5);
  if (x < 0.5) return 0.75 - x * x;
  if (x < 1.5) return 0.5 * (x - 1.5) * (x - 1.5);
  return 0.0;
}

double gaussian(double x) {
  return std::exp(-2.0 * x * x) * std::sqrt(2.0 / kPi);
}

}  // namespace

double spatialFilterSupport(FlameFilterShape shape) {
  switch (shape) {
    case FlameFilterShape::kGaussian:
      return 1.5;
    case FlameFilterShape::kHermite:
      return 1.0;
    case FlameFilterShape::kBox:
      return 0.5;
    case FlameFilterShape::kTriangle:
      return 1.0;
    case FlameFilterShape::kBell:
      return 1.5;
    case FlameFilterShape::kBspline:
      return 2.0;
    case FlameFilterShape::kMitchell:
      return 2.0;
    case FlameFilterShape::kBlackman:
      return 1.0;
    case FlameFilterShape::kCatrom:
      return 2.0;
    case FlameFilterShape::kHanning:
      return 1.0;
    case FlameFilterShape::kHamming:
      return 1.0;
    case FlameFilterShape::kLanczos3:
      return 3.0;
    case FlameFilterShape::kLanczos2:
      return 2.0;
    case FlameFilterShape::kQuadratic:
      return 1.5;
  }
  return 1.5;
}

double spatialFilterValue(FlameFilterShape shape, double x) {
  switch (shape) {
    case FlameFilterShape::kGaussian:
      return gaussian(x);
    case FlameFilterShape::kHermite:
      return hermite(x);
    case FlameFilterShape::kBox:
      return box(x);
    case FlameFilterShape::kTriangle:
      return triangle(x);
    case FlameFilterShape::kBell:
      return bell(x);
    case FlameFilterShape::kBspline:
      return bspline(x);
    case FlameFilterShape::kMitchell:
      return mitchell(x);
    case FlameFilterShape::kBlackman:
      return sinc(x) * (0.42 + 0.5 * std::cos(kPi * x) + 0.08 * std::cos(2 * kPi * x));
    case FlameFilterShape::kCatrom:
      return catrom(x);
    case FlameFilterShape::kHanning:
      return sinc(x) * (0.5 + 0.5 * std::cos(kPi * x));
    case FlameFilterShape::kHamming:
      return sinc(x) * (0.54 + 0.46 * std::cos(kPi * x));
    case FlameFilterShape::kLanczos3:
      return lanczos(x, 3.0) * sinc(x / 3.0);
    case FlameFilterShape::kLanczos2:
      return lanczos(x, 2.0) * sinc(x / 2.0);
    case FlameFilterShape::kQuadratic:
      return quadratic(x);
  }
  return gaussian(x);
}

SpatialFilter makeSpatialFilter(FlameFilterShape shape, double radius, int supersample) {
  if (!(radius >= 0) || radius > 1e4) badGenome("filter must be a number in 0 .. 10^4");
  const double support = spatialFilterSupport(shape);
  const double fw = 2.0 * support * supersample * radius;
  SpatialFilter filter;
  filter.width = static_cast<int>(fw) + 1;
  if ((filter.width ^ supersample) & 1) ++filter.width;  // same parity as the supersampling
  const double adjust = fw > 0.0 ? support * filter.width / fw : 1.0;
  filter.taps.resize(filter.width);
  double sum = 0;
  for (int i = 0; i < filter.width; ++i) {
    filter.taps[i] = spatialFilterValue(shape, ((2.0 * i + 1.0) / filter.width - 1.0) * adjust);
    sum += filter.taps[i];
  }
  if (sum == 0.0 || !std::isfinite(sum))
    badGenome("the spatial filter sums to zero (filter " + std::to_string(radius) + " is too small)");
  for (double& t : filter.taps) t /= sum;
  return filter;
}

int DensityEstimator::selectKernel(double density) const {
  int index;
  if (!(density > 0))
    index = 0;  // no hits (or a hand-made negative count)
  else if (density > max_filtered_counts)
    index = max_filter_index;
  else if (density <= kDensityThreshold)
    index = static_cast<int>(std::ceil(density)) - 1;
  else
    index = kDensityThreshold + static_cast<int>(std::floor(std::pow(density - kDensityThreshold, curve)));
  return index > max_filter_index ? max_filter_index : index;
}

DensityEstimator makeDensityEstimator(double radius, double minimum, double curve, int supersample,
                                      uint64_t memory_budget) {
  DensityEstimator de;
  de.supersample = supersample;
  de.curve = curve;
  if (!(radius >= 0) || !(minimum >= 0) || !std::isfinite(radius) || !std::isfinite(minimum))
    badGenome("density estimator widths must be finite and >= 0");
  if (radius == 0) return de;
  if (!(curve > 0) || !std::isfinite(curve)) badGenome("estimator_curve must be > 0");
  if (radius < minimum) badGenome("estimator_radius must not be smaller than estimator_minimum");

  if (radius * supersample > 1e6) badGenome("estimator_radius × supersample is over 10^6 cells");
  // The '+1' is flam3's assumed distance to the first pixel.
  const double max_radius = radius * supersample + 1;
  const double min_radius = minimum * supersample + 1;
  const double filters_needed = std::pow(max_radius / min_radius, 1.0 / curve);
  if (filters_needed > 1e7)
    badGenome("the density estimator needs too many kernels (" + std::to_string(filters_needed) +
              "); raise estimator_curve or estimator_minimum");
  const int filter_count = static_cast<int>(std::ceil(filters_needed));
  if (filter_count <= 1) return de;  // radius = minimum: one kernel, flam3's plain log pass
  // Above DE_THRESH hits flam3 keeps one kernel per step of density^curve.
  int kernel_count;
  if (filter_count > kDensityThreshold) {
    kernel_count =
        static_cast<int>(std::ceil(kDensityThreshold + std::pow(filter_count - kDensityThreshold, curve))) +
        1;
    de.max_filtered_counts =
        static_cast<int>(std::pow(static_cast<double>(kernel_count - kDensityThreshold), 1.0 / curve)) +
        kDensityThreshold;
  } else {
    kernel_count = filter_count;
    de.max_filtered_counts = kernel_count;
  }

  // The radii first: their weights are counted against the memory budget.
  std::vector<double> radii;
  uint64_t weights_total = 0;
  de.max_filter_index = 0;
  for (int k = 0; k < kernel_count; ++k) {
    const double hits =
        k < kDensityThreshold ? k : std::pow(k - kDensityThreshold, 1.0 / curve) + kDensityThreshold;
    double width = max_radius / std::pow(hits + 1, curve);
    if (width <= min_radius) {  // reached the minimum: the last kernel
      width = min_radius;
      de.max_filter_index = k;
    }
    radii.push_back(width);
    const uint64_t side = 2 * static_cast<uint64_t>(std::ceil(width)) - 1;
    weights_total += side * side;
    if (de.max_filter_index > 0) break;
  }
  requireMemory("flame density-estimation kernels", weights_total * (sizeof(float) + sizeof(double)),
                memory_budget);

  for (const double width : radii) {
    DensityKernel kernel;
    kernel.radius = width;
    kernel.reach = static_cast<int>(std::ceil(width)) - 1;
    const int rows = 2 * kernel.reach + 1;
    kernel.half_width.resize(rows);
    kernel.row_start.resize(rows);
    std::vector<double> weights;
    double sum = 0;
    for (int dy = -kernel.reach; dy <= kernel.reach; ++dy) {
      kernel.row_start[dy + kernel.reach] = static_cast<int>(weights.size());
      int half = 0;
      while (half < kernel.reach &&
             std::sqrt(static_cast<double>(dy * dy + (half + 1) * (half + 1))) / width <= 1.0)
        ++half;
      kernel.half_width[dy + kernel.reach] = half;
      for (int dx = -half; dx <= half; ++dx) {
        const double d = std::sqrt(static_cast<double>(dx * dx + dy * dy)) / width;
        const double w = spatialFilterValue(FlameFilterShape::kGaussian,
                                            spatialFilterSupport(FlameFilterShape::kGaussian) * d);
        weights.push_back(w);
        sum += w;
      }
    }
    kernel.coefs.reserve(weights.size());
    for (double w : weights) kernel.coefs.push_back(static_cast<float>(w / sum));
    de.max_reach = std::max(de.max_reach, kernel.reach);
    de.kernels.push_back(std::move(kernel));
  }
  if (de.max_filter_index == 0) de.max_filter_index = static_cast<int>(de.kernels.size()) - 1;
  de.enabled = de.max_filter_index > 0;
  return de;
}

}  // namespace procgen::flame

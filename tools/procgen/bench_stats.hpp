// Statistics of `procgen bench`: medians of run times, and speedups taken
// as paired ratios.
//
// Why paired: on a shared virtual machine the speed of the whole machine
// drifts (neighbours, host frequency), by up to 2x over a minute on the AMD
// guest of 2026-11-24, while within one round of the benchmark — serial and
// every parallel column run back to back, a few milliseconds apart — it is
// nearly the same. The ratio serial / parallel of one round cancels that
// drift; the median over rounds of those ratios is a steadier speedup than
// the ratio of the two medians, and its interquartile range shows how much
// the rounds disagreed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace procgen::cli {

/// The q-quantile (0 <= q <= 1) of `v` by linear interpolation between the
/// order statistics (position (n - 1) q; NumPy's default). NaN when empty.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = static_cast<double>(v.size() - 1) * q;
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

inline double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

struct Speedup {
  double median = std::nan("");
  double q1 = std::nan("");  ///< first quartile of the per-round ratios
  double q3 = std::nan("");  ///< third quartile
  bool valid() const { return !std::isnan(median); }
};

/// Speedup of `fast` over `base` from runs taken in rounds: round r ran
/// base[r] and fast[r] back to back. Rounds where either is missing or not
/// positive are skipped; invalid when none is left.
inline Speedup pairedSpeedup(const std::vector<double>& base, const std::vector<double>& fast) {
  std::vector<double> ratios;
  for (size_t r = 0; r < std::min(base.size(), fast.size()); ++r)
    if (base[r] > 0 && fast[r] > 0) ratios.push_back(base[r] / fast[r]);
  Speedup s;
  if (ratios.empty()) return s;
  s.median = quantile(ratios, 0.5);
  s.q1 = quantile(ratios, 0.25);
  s.q3 = quantile(ratios, 0.75);
  return s;
}

}  // namespace procgen::cli

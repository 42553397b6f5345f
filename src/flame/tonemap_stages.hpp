// The stages of flame tone mapping (tonemap.cpp), shared by the serial and the
// cpu driver: each works on a range of rows (or one density-estimation band)
// and computes every element from the same inputs with the same operations
// whatever the range, so any partition of the rows gives the same bits.
//
//   accumulator  ← log density (no DE) or density estimation (bands, 2 phases)
//   accumulator  ← earlyclip: gamma and clipping per cell (optional)
//   columns      ← spatial filter along x, one histogram row → one row of
//                  output columns (every supersample-th window)
//   image        ← spatial filter along y, then gamma/vibrancy/highlight
//                  power/background (unless earlyclip did it) → 8/16 bit
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "flame/filters.hpp"
#include "procgen/flame_render.hpp"

namespace procgen::flame {

/// flam3's PREFILTER_WHITE and WHITE_LEVEL (rect.c, private.h).
inline constexpr double kWhiteLevel = 255.0;

/// flam3's k1 (brightness) and k2 (density normalisation) of the log pass:
/// ls = k1 · log(1 + a·k2) / a for a bucket of alpha a.
struct LogScale {
  double k1 = 0, k2 = 0;
};
/// rect.c: k1 = brightness · 255 · 268 / 256, k2 = supersample² / (area · 255
/// · sample_density), area = image pixels / ppu² (contrast 1, as flam3's
/// parser leaves it; one temporal sample, as flam3-render forces). flam3
/// splits the samples into `passes` batches and log-maps each with k1/passes
/// and k2·passes; the histogram holds every pass, which is that sum (exactly
/// in expectation), so passes do not appear.
LogScale flameLogScale(const FlameGenome& genome, const FlameHistogramLayout& layout);

/// The gamma curve with flam3's linear blend below the threshold
/// (palettes.c flam3_calc_alpha): d^g at and above `threshold`, below it
/// (1 − d/threshold) · d · threshold^g / threshold + (d/threshold) · d^g.
double gammaAlpha(double density, double g, double threshold);

/// Everything the stages need, resolved once per image.
struct ToneMapSetup {
  int hist_width = 0, hist_height = 0;
  int image_width = 0, image_height = 0;
  int supersample = 1;
  LogScale scale;
  DensityEstimator de;
  int de_band_rows = 0;  ///< rows per density-estimation band (≥ 2 × the largest reach)
  SpatialFilter filter;
  int filter_origin = 0;  ///< histogram cell where output pixel 0's filter window starts (x and y)
  // The colour curve (rect.c, after the accumulation).
  double gamma_inverse = 0.25, gamma_threshold = 0.01, vibrancy = 1, highlight_power = -1;
  double background[3] = {0, 0, 0};  ///< × 256, as flam3 scales it
  bool earlyclip = false, transparency = false;
  int bits_per_channel = 8, channels = 3;

  int columnRows() const { return (image_height - 1) * supersample + filter.width; }
  /// Density estimation source rows: flam3's interior, where the density
  /// neighbourhood fits (supersample − 1 cells from every edge).
  int deFirstRow() const { return supersample - 1; }
  int deEndRow() const { return hist_height - (supersample - 1); }
  int deBandCount() const;
};

/// Validates the histogram against its layout and the genome, resolves the
/// tone curve and builds the filters. Throws Error as toneMapFlame.
ToneMapSetup makeToneMapSetup(const FlameGenome& genome, const FlameHistogram& histogram,
                              const FlameRenderOptions& options);

/// One accumulator cell: flam3's abucket (red, green, blue, alpha).
struct alignas(16) AccumCell {
  float v[4];
};

// --- Stages (rows [y0, y1) unless stated) -----------------------------------
void clearAccumulatorRows(const ToneMapSetup& s, AccumCell* acc, int y0, int y1);
/// The plain log-density pass (estimator off).
void logDensityRows(const ToneMapSetup& s, const FlameBucket* hist, AccumCell* acc, int y0, int y1);
/// Density estimation of the source rows of band `band`: each cell with hits
/// spreads its log-scaled colour over the kernel its neighbourhood density
/// selects (rect.c de_thread, as a scatter). Bands of one parity write
/// disjoint rows (a band is ≥ 2 reaches tall), so the driver runs the even
/// bands, then the odd ones, each set in any order or in parallel; every cell
/// then receives its contributions in one fixed order.
void densityEstimationBand(const ToneMapSetup& s, const FlameBucket* hist, AccumCell* acc, int band);
/// earlyclip: the colour curve on every accumulator cell before the filter.
void earlyClipRows(const ToneMapSetup& s, AccumCell* acc, int y0, int y1);
/// The horizontal half of the spatial filter: column-row r (histogram row
/// filter_origin + r) of image_width cells.
void filterColumnRows(const ToneMapSetup& s, const AccumCell* acc, AccumCell* columns, int r0, int r1);
/// The vertical half of the spatial filter and the colour curve: output rows.
void finishImageRows(const ToneMapSetup& s, const AccumCell* columns, FlameImage& image, int y0, int y1);

/// Runs body(begin, end) over a partition of [0, n) (grain: a hint of the
/// elements per piece); the serial runner calls body(0, n).
using RangeRunner = std::function<void(int n, int grain, const std::function<void(int, int)>& body)>;

/// The whole tone mapping with the ranges handed out by `run`.
FlameImage runToneMap(const ToneMapSetup& setup, const FlameHistogram& histogram, const RangeRunner& run);

/// The cpu driver (src/flame/cpu/tonemap.cpp): runToneMap on the executor.
FlameImage toneMapCpu(const ToneMapSetup& setup, const FlameHistogram& histogram, int threads);

}  // namespace procgen::flame

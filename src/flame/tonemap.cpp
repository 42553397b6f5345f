// Flame tone mapping: the accumulated histogram → an 8- or 16-bit image, as
// flam3 3.1.1 does it after the chaos game (rect.c render_rectangle from
// "k1 = …" to the end, de_thread; palettes.c flam3_calc_alpha and
// flam3_calc_newrgb; filters.c via filters.hpp). Stages (tonemap_stages.hpp):
//   1. log density: each cell's colour × k1·log(1 + a·k2)/a — or, with an
//      estimator radius, density estimation: the same scaled colour spread
//      over a Gaussian disc whose radius falls with the hits around the cell
//      (Suykens & Willems' adaptive filter, flam3's kernels);
//   2. earlyclip (optional): the colour curve per cell, before filtering;
//   3. the spatial filter (filter_shape, radius filter × supersample), as two
//      separable passes that also downsample to the output pixels;
//   4. the colour curve: gamma with the linear blend below gamma_threshold,
//      vibrancy, highlight_power, background or alpha; 8 or 16 bits.
// Paper: shared/seeds/003_*.txt ("Rendering"); notes in
// shared/reference/flam3/FLAM3_SPEC.md ("Display / tone mapping").
//
// Determinism: every stage computes each element from the same inputs with
// the same operations whatever the partition of rows (density estimation in
// bands of fixed height, even bands before odd ones), so serial and cpu give
// identical bytes at any thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "common/dispatch.hpp"
#include "flame/tonemap_stages.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen {
namespace flame {
namespace {

[[noreturn]] void badGenome(const std::string& message) {
  throw Error("flame: " + message, ExitCode::kBadInput);
}
[[noreturn]] void badCall(const std::string& message) {
  throw Error("toneMapFlame: " + message, ExitCode::kUsage);
}

void requireFinite(double value, const char* name) {
  if (!std::isfinite(value)) badGenome(std::string(name) + " must be a finite number");
}

// palettes.c rgb2hsv / hsv2rgb: h in 0..6, s and v in 0..1.
void rgbToHsv(const double rgb[3], double hsv[3]) {
  const double r = rgb[0], g = rgb[1], b = rgb[2];
  const double max = std::max({r, g, b}), min = std::min({r, g, b});
  const double del = max - min;
  const double s = max != 0.0 ? del / max : 0.0;
  double h = 0;
  if (s != 0.0) {
    const double rc = (max - r) / del, gc = (max - g) / del, bc = (max - b) / del;
    if (r == max)
      h = bc - gc;
    else if (g == max)
      h = 2 + rc - bc;
    else if (b == max)
      h = 4 + gc - rc;
    if (h < 0) h += 6;
  }
  hsv[0] = h;
  hsv[1] = s;
  hsv[2] = max;
}

void hsvToRgb(const double hsv[3], double rgb[3]) {
  double h = hsv[0];
  const double s = hsv[1], v = hsv[2];
  while (h >= 6.0) h -= 6.0;
  while (h < 0.0) h += 6.0;
  const int j = static_cast<int>(std::floor(h));
  const double f = h - j;
  const double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  switch (j) {
    case 1:
      rgb[0] = q, rgb[1] = v, rgb[2] = p;
      break;
    case 2:
      rgb[0] = p, rgb[1] = v, rgb[2] = t;
      break;
    case 3:
      rgb[0] = p, rgb[1] = q, rgb[2] = v;
      break;
    case 4:
      rgb[0] = t, rgb[1] = p, rgb[2] = v;
      break;
    case 5:
      rgb[0] = v, rgb[1] = p, rgb[2] = q;
      break;
    default:
      rgb[0] = v, rgb[1] = t, rgb[2] = p;
      break;
  }
}

/// palettes.c flam3_calc_newrgb: the colour × ls, where a channel would pass
/// 255 either clipped later (highlight_power < 0, blended towards the
/// brightest-channel scaling for −1 < power < 0) or scaled so the brightest
/// channel is 255 and desaturated by (that scale / ls)^power (power ≥ 0),
/// which keeps the hue.
void highlightColour(const double c[3], double ls, double power, double out[3]) {
  if (ls == 0.0 || (c[0] == 0.0 && c[1] == 0.0 && c[2] == 0.0)) {
    out[0] = out[1] = out[2] = 0.0;
    return;
  }
  double max_scaled = -1.0, max_channel = 0;
  for (int i = 0; i < 3; ++i) {
    const double a = ls * (c[i] / kWhiteLevel);
    if (a > max_scaled) {
      max_scaled = a;
      max_channel = c[i] / kWhiteLevel;
    }
  }
  const double new_ls = 255.0 / max_channel;
  if (max_scaled > 255 && power >= 0.0) {
    const double ratio = std::pow(new_ls / ls, power);
    double rgb[3], hsv[3];
    for (int i = 0; i < 3; ++i) rgb[i] = new_ls * (c[i] / kWhiteLevel) / 255.0;
    rgbToHsv(rgb, hsv);
    hsv[1] *= ratio;
    hsvToRgb(hsv, rgb);
    for (int i = 0; i < 3; ++i) out[i] = rgb[i] * 255.0;
  } else {
    double blend = std::min(-power, 1.0);
    if (max_scaled <= 255) blend = 1.0;
    for (int i = 0; i < 3; ++i) out[i] = ((1.0 - blend) * new_ls + blend * ls) * (c[i] / kWhiteLevel);
  }
}

/// rect.c's colour curve of one filtered (or, with earlyclip, unfiltered)
/// cell t (accumulator units): rgb in 0..255 and alpha in 0..1. A channel
/// that comes out NaN (a negative lobe of the spatial filter under the
/// gamma power) is 0, which is what flam3's cast gives on x86.
void colourCurve(const ToneMapSetup& s, const double t[4], double out[4]) {
  double alpha = 0, ls = 0;
  if (t[3] > 0) {
    const double density = t[3] / kWhiteLevel;
    alpha = gammaAlpha(density, s.gamma_inverse, s.gamma_threshold);
    ls = s.vibrancy * 256.0 * alpha / density;
    alpha = std::clamp(alpha, 0.0, 1.0);
  }
  double rgb[3];
  highlightColour(t, ls, s.highlight_power, rgb);
  for (int i = 0; i < 3; ++i) {
    double a = rgb[i];
    // (1 − vibrancy) · 256 · (t/255)^g; at vibrancy 1 that is 0, or NaN for t < 0: pow only then.
    if (s.vibrancy != 1.0 || !(t[i] >= 0))
      a += (1.0 - s.vibrancy) * 256.0 * std::pow(t[i] / kWhiteLevel, s.gamma_inverse);
    if (!s.transparency)
      a += (1.0 - alpha) * s.background[i];
    else
      a = alpha > 0 ? a / alpha : 0;
    if (!(a >= 0)) a = 0;
    if (a > 255) a = 255;
    out[i] = a;
  }
  out[3] = alpha;
}

template <typename T>
void storePixel(const ToneMapSetup& s, const double px[4], T* out) {
  for (int i = 0; i < 3; ++i) {
    double a = px[i];
    if (!(a >= 0)) a = 0;
    if (a > 255) a = 255;
    out[i] = sizeof(T) == 2 ? static_cast<T>(a * 256.0) : static_cast<T>(a);  // 16 bit: 0 .. 65280, as flam3
  }
  if (s.channels == 4) {
    const double alpha = std::clamp(std::isnan(px[3]) ? 0.0 : px[3], 0.0, 1.0);
    out[3] = static_cast<T>(alpha * (sizeof(T) == 2 ? 65535.0 : 255.0));
  }
}

}  // namespace

LogScale flameLogScale(const FlameGenome& genome, const FlameHistogramLayout& layout) {
  LogScale scale;
  scale.k1 = genome.brightness * kWhiteLevel * 268.0 / 256.0;
  const double ppu = layout.pixels_per_unit;
  const double area = static_cast<double>(layout.image_width) * layout.image_height / (ppu * ppu);
  const double ss = layout.supersample;
  scale.k2 = ss * ss / (area * kWhiteLevel * layout.sample_density);
  return scale;
}

double gammaAlpha(double density, double g, double threshold) {
  if (!(density > 0)) return 0;
  if (density < threshold) {
    const double frac = density / threshold;
    return (1.0 - frac) * density * (std::pow(threshold, g) / threshold) + frac * std::pow(density, g);
  }
  return std::pow(density, g);
}

int ToneMapSetup::deBandCount() const {
  const int rows = deEndRow() - deFirstRow();
  return rows <= 0 ? 0 : (rows + de_band_rows - 1) / de_band_rows;
}

ToneMapSetup makeToneMapSetup(const FlameGenome& genome, const FlameHistogram& histogram,
                              const FlameRenderOptions& options) {
  const FlameHistogramLayout& layout = histogram.layout;
  ToneMapSetup s;
  s.hist_width = layout.width;
  s.hist_height = layout.height;
  s.image_width = layout.image_width;
  s.image_height = layout.image_height;
  s.supersample = layout.supersample;
  if (s.image_width < 1 || s.image_height < 1 || s.supersample < 1 || s.hist_width < 1 || s.hist_height < 1)
    badCall("the histogram layout has no image (build it with flameHistogramLayout)");
  if (static_cast<int64_t>(s.image_width) * s.supersample + 2 * static_cast<int64_t>(layout.gutter) !=
          s.hist_width ||
      static_cast<int64_t>(s.image_height) * s.supersample + 2 * static_cast<int64_t>(layout.gutter) !=
          s.hist_height)
    badCall("the histogram size is not image × supersample + 2 × gutter");
  if (histogram.buckets.size() != static_cast<size_t>(s.hist_width) * static_cast<size_t>(s.hist_height))
    badCall("the histogram has " + std::to_string(histogram.buckets.size()) + " buckets, its layout " +
            std::to_string(static_cast<size_t>(s.hist_width) * s.hist_height));
  if (!(layout.pixels_per_unit > 0) || !(layout.sample_density > 0))
    badCall("the histogram layout has no pixels per unit or sample density");
  if (options.bits_per_channel != 8 && options.bits_per_channel != 16)
    badCall("bits per channel must be 8 or 16, not " + std::to_string(options.bits_per_channel));

  requireFinite(genome.brightness, "brightness");
  requireFinite(genome.gamma, "gamma");
  if (!(genome.gamma > 0)) badGenome("gamma must be positive");
  requireFinite(genome.gamma_threshold, "gamma_threshold");
  requireFinite(genome.vibrancy, "vibrancy");
  requireFinite(genome.highlight_power, "highlight_power");
  for (double b : genome.background) requireFinite(b, "background");

  s.scale = flameLogScale(genome, layout);
  s.de = makeDensityEstimator(genome.estimator_radius, genome.estimator_minimum, genome.estimator_curve,
                              s.supersample, options.memory_budget);
  // Bands of one parity never write the same row: 2 reaches apart at least.
  s.de_band_rows = std::max(2 * s.de.max_reach, 16);

  s.filter = makeSpatialFilter(genome.filter_shape, genome.filter_radius, s.supersample);
  if (s.filter.width != layout.spatial_filter_width)
    badCall("the histogram layout's spatial filter width " + std::to_string(layout.spatial_filter_width) +
            " is not the genome's " + std::to_string(s.filter.width));
  // rect.c de_offset: the gutter beyond the spatial filter's own margin.
  s.filter_origin = layout.gutter - (s.filter.width - s.supersample) / 2;
  if (s.filter_origin < 0 ||
      s.filter_origin + (s.image_width - 1) * s.supersample + s.filter.width > s.hist_width ||
      s.filter_origin + (s.image_height - 1) * s.supersample + s.filter.width > s.hist_height)
    badCall("the spatial filter does not fit in the histogram's gutter");

  s.gamma_inverse = 1.0 / genome.gamma;
  s.gamma_threshold = genome.gamma_threshold;
  s.vibrancy = genome.vibrancy;
  s.highlight_power = genome.highlight_power;
  for (int i = 0; i < 3; ++i) s.background[i] = genome.background[i] * 256.0;
  s.earlyclip = options.earlyclip;
  s.transparency = options.transparency;
  s.bits_per_channel = options.bits_per_channel;
  s.channels = options.transparency ? 4 : 3;

  const uint64_t cells = static_cast<uint64_t>(s.hist_width) * s.hist_height;
  const uint64_t columns = static_cast<uint64_t>(s.image_width) * s.columnRows();
  const uint64_t pixels = static_cast<uint64_t>(s.image_width) * s.image_height * s.channels;
  requireMemory("flame tone mapping",
                (cells + columns) * sizeof(AccumCell) + pixels * (s.bits_per_channel / 8),
                options.memory_budget, cells * sizeof(FlameBucket));
  return s;
}

void clearAccumulatorRows(const ToneMapSetup& s, AccumCell* acc, int y0, int y1) {
  std::fill(acc + static_cast<size_t>(y0) * s.hist_width, acc + static_cast<size_t>(y1) * s.hist_width,
            AccumCell{{0, 0, 0, 0}});
}

void logDensityRows(const ToneMapSetup& s, const FlameBucket* hist, AccumCell* acc, int y0, int y1) {
  const double k1 = s.scale.k1, k2 = s.scale.k2;
  for (size_t i = static_cast<size_t>(y0) * s.hist_width, end = static_cast<size_t>(y1) * s.hist_width;
       i < end; ++i) {
    const FlameBucket& b = hist[i];
    if (b.alpha == 0) {
      acc[i] = AccumCell{{0, 0, 0, 0}};
      continue;
    }
    const double ls = k1 * std::log(1.0 + b.alpha * k2) / b.alpha;
    acc[i] = AccumCell{{static_cast<float>(b.red * ls), static_cast<float>(b.green * ls),
                        static_cast<float>(b.blue * ls), static_cast<float>(b.alpha * ls)}};
  }
}

// Four floats as one SSE/NEON register (GCC and Clang vector extension):
// the same IEEE single operations per lane as scalar code, in one instruction.
typedef float Float4 __attribute__((vector_size(16)));

namespace {

/// A density-estimation source: the cell's log-scaled colour and its kernel.
struct DeSource {
  const DensityKernel* kernel = nullptr;
  Float4 value;
};

/// rect.c de_thread for one cell: false when it has no hits.
bool deSource(const ToneMapSetup& s, const FlameBucket* hist, int x, int y, double even_scale,
              DeSource* out) {
  const int w = s.hist_width, half = s.supersample / 2;
  const FlameBucket& b = hist[static_cast<size_t>(y) * w + x];
  if (b.count == 0 || b.alpha == 0) return false;
  // The density: hits in the (2⌊ss/2⌋ + 1)² cells around, scaled to ss² for
  // even ss. flam3 sums count/255 per cell; one division of the sum is the
  // same number for counts that are multiples of 255 × opacity (as plotted).
  double count = 0.0;
  for (int ii = -half; ii <= half; ++ii)
    for (int jj = -half; jj <= half; ++jj) count += hist[static_cast<size_t>(y + jj) * w + (x + ii)].count;
  double density = count / 255.0;
  if ((s.supersample & 1) == 0) density *= even_scale;
  out->kernel = &s.de.kernels[s.de.selectKernel(density)];
  const double ls = s.scale.k1 * std::log(1.0 + b.alpha * s.scale.k2) / b.alpha;
  out->value = Float4{static_cast<float>(b.red * ls), static_cast<float>(b.green * ls),
                      static_cast<float>(b.blue * ls), static_cast<float>(b.alpha * ls)};
  return true;
}

/// Columns [begin, end] of one kernel row, clipped to the histogram; empty when begin > end.
struct Span {
  int begin = 0, end = -1;
  const float* coef = nullptr;  ///< the weight of column `begin`
};

[[gnu::always_inline]] inline Span kernelRow(const DeSource& src, int x, int dy, int w) {
  const DensityKernel& k = *src.kernel;
  Span span;
  if (dy < -k.reach || dy > k.reach) return span;
  const int hw = k.half_width[dy + k.reach];
  span.begin = std::max(x - hw, 0);
  span.end = std::min(x + hw, w - 1);
  span.coef = k.coefs.data() + k.row_start[dy + k.reach] + (span.begin - (x - hw));
  return span;
}

void addSpan(AccumCell* row, int begin, int end, const float* coef, Float4 value) {
  for (int t = begin; t <= end; ++t, ++coef) {
    Float4 cell;
    std::memcpy(&cell, row[t].v, sizeof cell);
    cell += *coef * value;  // the four channels in one vector operation
    std::memcpy(row[t].v, &cell, sizeof cell);
  }
}

/// Targets of two sources: the first's weight added, then the second's — the
/// order in which scattering the first source, then the second, adds them.
void addSpans(AccumCell* row, int begin, int end, const float* coef_a, Float4 value_a, const float* coef_b,
              Float4 value_b) {
  for (int t = begin; t <= end; ++t, ++coef_a, ++coef_b) {
    Float4 cell;
    std::memcpy(&cell, row[t].v, sizeof cell);
    cell += *coef_a * value_a;
    cell += *coef_b * value_b;
    std::memcpy(row[t].v, &cell, sizeof cell);
  }
}

void scatterOne(const ToneMapSetup& s, AccumCell* acc, const DeSource& a, int x, int y) {
  const int r = a.kernel->reach, w = s.hist_width;
  for (int dy = std::max(-r, -y), dy1 = std::min(r, s.hist_height - 1 - y); dy <= dy1; ++dy) {
    const Span span = kernelRow(a, x, dy, w);
    addSpan(acc + static_cast<size_t>(y + dy) * w, span.begin, span.end, span.coef, a.value);
  }
}

/// Sources a at x and b at x + 1 (consecutive in the scan, so no other source
/// comes between them): each target cell is loaded and stored once for both.
void scatterPair(const ToneMapSetup& s, AccumCell* acc, const DeSource& a, const DeSource& b, int x, int y) {
  const int r = std::max(a.kernel->reach, b.kernel->reach), w = s.hist_width;
  for (int dy = std::max(-r, -y), dy1 = std::min(r, s.hist_height - 1 - y); dy <= dy1; ++dy) {
    AccumCell* row = acc + static_cast<size_t>(y + dy) * w;
    const Span sa = kernelRow(a, x, dy, w), sb = kernelRow(b, x + 1, dy, w);
    const int both_begin = std::max(sa.begin, sb.begin), both_end = std::min(sa.end, sb.end);
    if (both_begin > both_end) {  // disjoint (or one empty): one after the other
      addSpan(row, sa.begin, sa.end, sa.coef, a.value);
      addSpan(row, sb.begin, sb.end, sb.coef, b.value);
      continue;
    }
    // The parts outside the overlap get one contribution each.
    addSpan(row, sa.begin, both_begin - 1, sa.coef, a.value);
    addSpan(row, both_end + 1, sa.end, sa.coef + (both_end + 1 - sa.begin), a.value);
    addSpan(row, sb.begin, both_begin - 1, sb.coef, b.value);
    addSpan(row, both_end + 1, sb.end, sb.coef + (both_end + 1 - sb.begin), b.value);
    addSpans(row, both_begin, both_end, sa.coef + (both_begin - sa.begin), a.value,
             sb.coef + (both_begin - sb.begin), b.value);
  }
}

}  // namespace

void densityEstimationBand(const ToneMapSetup& s, const FlameBucket* hist, AccumCell* acc, int band) {
  const int ss = s.supersample;
  const int y_begin = s.deFirstRow() + band * s.de_band_rows;
  const int y_end = std::min(s.deEndRow(), y_begin + s.de_band_rows);
  const int x_begin = ss - 1, x_end = s.hist_width - (ss - 1);
  const double even_scale = std::pow(ss / (ss + 1.0), 2.0);  // (ss/(ss+1))², flam3's scfact
  for (int y = y_begin; y < y_end; ++y) {
    DeSource a, b;
    for (int x = x_begin; x < x_end; ++x) {
      if (!deSource(s, hist, x, y, even_scale, &a)) continue;
      if (x + 1 < x_end && deSource(s, hist, x + 1, y, even_scale, &b)) {
        scatterPair(s, acc, a, b, x, y);
        ++x;
      } else {
        scatterOne(s, acc, a, x, y);
        ++x;  // x + 1 has no hits
      }
    }
  }
}

void earlyClipRows(const ToneMapSetup& s, AccumCell* acc, int y0, int y1) {
  for (size_t i = static_cast<size_t>(y0) * s.hist_width, end = static_cast<size_t>(y1) * s.hist_width;
       i < end; ++i) {
    const double t[4] = {acc[i].v[0], acc[i].v[1], acc[i].v[2], acc[i].v[3]};
    double out[4];
    colourCurve(s, t, out);
    for (int c = 0; c < 4; ++c) acc[i].v[c] = static_cast<float>(out[c]);
  }
}

void filterColumnRows(const ToneMapSetup& s, const AccumCell* acc, AccumCell* columns, int r0, int r1) {
  const int fw = s.filter.width;
  const double* taps = s.filter.taps.data();
  for (int r = r0; r < r1; ++r) {
    const AccumCell* row = acc + static_cast<size_t>(s.filter_origin + r) * s.hist_width + s.filter_origin;
    AccumCell* out = columns + static_cast<size_t>(r) * s.image_width;
    for (int x = 0; x < s.image_width; ++x) {
      const AccumCell* window = row + static_cast<size_t>(x) * s.supersample;
      double t[4] = {0, 0, 0, 0};
      for (int i = 0; i < fw; ++i)
        for (int c = 0; c < 4; ++c) t[c] += taps[i] * window[i].v[c];
      for (int c = 0; c < 4; ++c) out[x].v[c] = static_cast<float>(t[c]);
    }
  }
}

void finishImageRows(const ToneMapSetup& s, const AccumCell* columns, FlameImage& image, int y0, int y1) {
  const int fw = s.filter.width;
  const double* taps = s.filter.taps.data();
  for (int y = y0; y < y1; ++y) {
    const AccumCell* window = columns + static_cast<size_t>(y) * s.supersample * s.image_width;
    for (int x = 0; x < s.image_width; ++x) {
      double t[4] = {0, 0, 0, 0};
      for (int j = 0; j < fw; ++j)
        for (int c = 0; c < 4; ++c) t[c] += taps[j] * window[static_cast<size_t>(j) * s.image_width + x].v[c];
      double px[4];
      if (s.earlyclip)
        std::copy(t, t + 4, px);
      else
        colourCurve(s, t, px);
      const size_t at = (static_cast<size_t>(y) * s.image_width + x) * s.channels;
      if (s.bits_per_channel == 16)
        storePixel(s, px, image.pixels16.data() + at);
      else
        storePixel(s, px, image.pixels8.data() + at);
    }
  }
}

FlameImage runToneMap(const ToneMapSetup& s, const FlameHistogram& histogram, const RangeRunner& run) {
  const size_t cells = static_cast<size_t>(s.hist_width) * s.hist_height;
  // Default-initialised: every cell is written (log pass) or cleared (DE) by a stage.
  std::unique_ptr<AccumCell[]> acc(new AccumCell[cells]);
  const FlameBucket* hist = histogram.buckets.data();
  const int row_grain = std::max(1, 65536 / s.hist_width);

  if (s.de.enabled) {
    run(s.hist_height, row_grain, [&](int y0, int y1) { clearAccumulatorRows(s, acc.get(), y0, y1); });
    const int bands = s.deBandCount();
    for (int parity = 0; parity < 2; ++parity) {
      const int count = (bands - parity + 1) / 2;
      run(count, 1, [&](int b0, int b1) {
        for (int b = b0; b < b1; ++b) densityEstimationBand(s, hist, acc.get(), 2 * b + parity);
      });
    }
  } else {
    run(s.hist_height, row_grain, [&](int y0, int y1) { logDensityRows(s, hist, acc.get(), y0, y1); });
  }

  const int column_rows = s.columnRows();
  if (s.earlyclip)  // only the rows the spatial filter reads
    run(column_rows, row_grain,
        [&](int r0, int r1) { earlyClipRows(s, acc.get(), s.filter_origin + r0, s.filter_origin + r1); });

  std::unique_ptr<AccumCell[]> columns(new AccumCell[static_cast<size_t>(s.image_width) * column_rows]);
  const int column_grain = std::max(1, 16384 / s.image_width);
  run(column_rows, column_grain,
      [&](int r0, int r1) { filterColumnRows(s, acc.get(), columns.get(), r0, r1); });
  acc.reset();

  FlameImage image;
  image.width = s.image_width;
  image.height = s.image_height;
  image.bits_per_channel = s.bits_per_channel;
  image.channels = s.channels;
  const size_t samples = static_cast<size_t>(s.image_width) * s.image_height * s.channels;
  if (s.bits_per_channel == 16)
    image.pixels16.resize(samples);
  else
    image.pixels8.resize(samples);
  run(s.image_height, column_grain,
      [&](int y0, int y1) { finishImageRows(s, columns.get(), image, y0, y1); });
  return image;
}

}  // namespace flame

FlameImage toneMapFlame(const FlameGenome& genome, const FlameHistogram& histogram,
                        const FlameRenderOptions& options, const Execution& execution) {
  const flame::ToneMapSetup setup = flame::makeToneMapSetup(genome, histogram, options);
  auto serial = [&] {
    return flame::runToneMap(setup, histogram, [](int n, int, const std::function<void(int, int)>& body) {
      if (n > 0) body(0, n);
    });
  };
  auto cpu = [&] { return flame::toneMapCpu(setup, histogram, effectiveThreads(execution)); };
  // The opencl backend tone-maps on the host: on the cpu path when it is
  // built (with the execution's threads), else serially.
  auto opencl = [&] {
    if constexpr (detail::kHaveCpuBackend)
      return cpu();
    else
      return serial();
  };
  return detail::dispatch(execution, "toneMapFlame", serial, cpu, opencl);
}

}  // namespace procgen

// Flame tone mapping (src/flame/tonemap.cpp, filters.cpp) against flam3's
// formulas derived by hand, textbook kernel values, and a brute-force
// re-implementation of the whole pipeline in double written here from flam3
// 3.1.1's rect.c / filters.c / palettes.c.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

#include "flame/filters.hpp"
#include "flame/tonemap_helpers.hpp"
#include "flame/tonemap_stages.hpp"
#include "procgen/error.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

using test::emptyHistogram;
using test::hitsBucket;
using test::pixelBucket;
using test::toneMapGenome;

constexpr Execution kSerial{Backend::kSerial, 1};

const FlameFilterShape kAllShapes[] = {
    FlameFilterShape::kGaussian, FlameFilterShape::kHermite,  FlameFilterShape::kBox,
    FlameFilterShape::kTriangle, FlameFilterShape::kBell,     FlameFilterShape::kBspline,
    FlameFilterShape::kMitchell, FlameFilterShape::kBlackman, FlameFilterShape::kCatrom,
    FlameFilterShape::kHanning,  FlameFilterShape::kHamming,  FlameFilterShape::kLanczos3,
    FlameFilterShape::kLanczos2, FlameFilterShape::kQuadratic};

/// flam3_spatial_support (filters.c), in the order of kAllShapes.
const double kFlam3Support[] = {1.5, 1.0, 0.5, 1.0, 1.5, 2.0, 2.0, 1.0, 2.0, 1.0, 1.0, 3.0, 2.0, 1.5};

uint16_t p16(const FlameImage& im, int x, int y, int c) {
  return im.pixels16[(y * im.width + x) * im.channels + c];
}
uint8_t p8(const FlameImage& im, int x, int y, int c) {
  return im.pixels8[(y * im.width + x) * im.channels + c];
}

// ---------------------------------------------------------------------------
// One bucket through the pipeline, by hand.

/// rect.c's path for one pixel whose filter is the identity: k1, k2, the log,
/// gamma above the threshold, vibrancy 1, highlight_power −1, no background.
/// `share` is the spatial filter's weight on the bucket's cell.
double handPixel(double colour, double alpha_sum, double brightness, double gamma, double area,
                 double quality, int supersample, double share) {
  const double k1 = brightness * 255.0 * 268.0 / 256.0;
  const double k2 = supersample * supersample / (area * 255.0 * quality);
  const double ls = k1 * std::log(1.0 + alpha_sum * k2) / alpha_sum;
  const double t_colour = share * colour * ls, t_alpha = share * alpha_sum * ls;
  const double density = t_alpha / 255.0;
  const double alpha = std::pow(density, 1.0 / gamma);
  const double value = 256.0 * alpha / density * t_colour / 255.0;
  return std::min(value, 255.0);
}

TEST(FlameToneMap, SingleBucketIsFlam3sFormula) {
  for (int ss : {1, 2}) {
    SCOPED_TRACE("supersample " + std::to_string(ss));
    FlameGenome g = toneMapGenome(8, 6);
    g.gamma = 2.5;
    g.brightness = 0.3;  // no channel reaches 255
    g.supersample = ss;
    // ss 1: box 0.5 is one cell; ss 2: box 1 is the 2×2 block of the pixel, ¼ each.
    g.filter_radius = ss == 1 ? 0.5 : 1.0;
    FlameRenderOptions o;
    o.bits_per_channel = 16;
    FlameHistogram h = emptyHistogram(g, o);
    ASSERT_EQ(h.layout.spatial_filter_width, ss == 1 ? 1 : 4);
    const double hits = 37;
    pixelBucket(h, 3, 2) = hitsBucket(hits, 0.8, 0.4, 0.2);
    FlameImage im = toneMapFlame(g, h, o, kSerial);
    ASSERT_EQ(im.width, 8);
    ASSERT_EQ(im.height, 6);
    ASSERT_EQ(im.channels, 3);
    const double area = 8.0 * 6.0 / (10.0 * 10.0);  // pixels / ppu²
    const double share = ss == 1 ? 1.0 : 0.25;
    const double colours[3] = {0.8, 0.4, 0.2};
    for (int c = 0; c < 3; ++c) {
      const double expected = handPixel(colours[c] * 255 * hits, 255 * hits, 0.3, 2.5, area, 20, ss, share);
      EXPECT_NEAR(p16(im, 3, 2, c), std::floor(expected * 256), 1.0) << "channel " << c;
    }
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 8; ++x)
        if (x != 3 || y != 2) {
          for (int c = 0; c < 3; ++c) ASSERT_EQ(p16(im, x, y, c), 0) << x << "," << y;
        }
  }
}

// ---------------------------------------------------------------------------
// Spatial kernels.

TEST(FlameToneMap, KernelFunctionsHaveTheirTextbookValues) {
  using flame::spatialFilterValue;
  const double pi = std::numbers::pi;
  EXPECT_DOUBLE_EQ(spatialFilterValue(FlameFilterShape::kGaussian, 0.7),
                   std::exp(-2 * 0.49) * std::sqrt(2 / pi));
  // Mitchell–Netravali B = C = 1/3: (6 − 2B)/6 at 0, B/6 at 1.
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kMitchell, 0), 8.0 / 9.0, 1e-15);
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kMitchell, 1), 1.0 / 18.0, 1e-15);
  // Cubic B-spline 2/3, 1/6; quadratic B-spline ("bell", "quadratic") 3/4, 1/8.
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kBspline, 0), 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kBspline, -1), 1.0 / 6.0, 1e-15);
  for (FlameFilterShape s : {FlameFilterShape::kBell, FlameFilterShape::kQuadratic}) {
    EXPECT_NEAR(spatialFilterValue(s, 0), 0.75, 1e-15);
    EXPECT_NEAR(spatialFilterValue(s, 1), 0.125, 1e-15);
    EXPECT_NEAR(spatialFilterValue(s, -1), 0.125, 1e-15);
  }
  // Interpolating kernels: 1 at 0, 0 at the other integers.
  for (FlameFilterShape s :
       {FlameFilterShape::kHermite, FlameFilterShape::kTriangle, FlameFilterShape::kCatrom,
        FlameFilterShape::kBlackman, FlameFilterShape::kHanning, FlameFilterShape::kHamming,
        FlameFilterShape::kLanczos3, FlameFilterShape::kLanczos2}) {
    EXPECT_NEAR(spatialFilterValue(s, 0), 1.0, 1e-15) << static_cast<int>(s);
    for (double k : {1.0, 2.0, -1.0, -2.0})
      EXPECT_NEAR(spatialFilterValue(s, k), 0.0, 1e-15) << static_cast<int>(s);
  }
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kCatrom, 0.5), 0.5 * (2 - 0.25 * 5 + 3 * 0.125), 1e-15);
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kTriangle, 0.25), 0.75, 1e-15);
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kHermite, 0.5), 0.5, 1e-15);  // 2t³ − 3t² + 1
  // sinc(x)·sinc(x/3) times flam3's second window sinc(x/3).
  const double x = 1.3, sinc = std::sin(pi * x) / (pi * x), sinc3 = std::sin(pi * x / 3) / (pi * x / 3);
  EXPECT_NEAR(spatialFilterValue(FlameFilterShape::kLanczos3, x), sinc * sinc3 * sinc3, 1e-15);
  // flam3's box is half-open.
  EXPECT_EQ(spatialFilterValue(FlameFilterShape::kBox, 0.5), 1.0);
  EXPECT_EQ(spatialFilterValue(FlameFilterShape::kBox, -0.5), 0.0);
}

TEST(FlameToneMap, EverySpatialKernelIsNormalisedSymmetricWithFlam3sSupport) {
  for (size_t k = 0; k < std::size(kAllShapes); ++k) {
    const FlameFilterShape shape = kAllShapes[k];
    const double support = kFlam3Support[k];
    EXPECT_EQ(flame::spatialFilterSupport(shape), support);
    // Compact kernels vanish beyond their support (blackman, hanning and
    // hamming at it: sinc's zero; the gaussian is cut there at e^-4.5).
    const double v0 = flame::spatialFilterValue(shape, 0);
    if (shape == FlameFilterShape::kGaussian) {
      EXPECT_NEAR(flame::spatialFilterValue(shape, support) / v0, std::exp(-4.5), 1e-12);
    } else if (shape == FlameFilterShape::kBlackman || shape == FlameFilterShape::kHanning ||
               shape == FlameFilterShape::kHamming) {
      EXPECT_NEAR(flame::spatialFilterValue(shape, support), 0.0, 1e-15);
    } else {
      for (double over : {1e-9, 0.1, 1.0})
        EXPECT_EQ(flame::spatialFilterValue(shape, support + over), 0.0) << k;
      EXPECT_NE(flame::spatialFilterValue(shape, 0.9 * support), 0.0) << k;
    }
    for (int ss : {1, 2, 3}) {
      for (double radius : {0.3, 0.5, 0.75, 1.0, 1.3, 2.0}) {
        SCOPED_TRACE("shape " + std::to_string(k) + " ss " + std::to_string(ss) + " radius " +
                     std::to_string(radius));
        // Width: ⌊2 · support · ss · radius⌋ + 1, then the parity of ss.
        const double fw = 2 * support * ss * radius;
        int width = static_cast<int>(std::floor(fw)) + 1;
        if (width % 2 != ss % 2) ++width;
        // flam3 refuses a filter whose samples all fall outside the kernel
        // (the box at radius 0.3 and ss 2: taps at ±0.83).
        double raw_sum = 0;
        for (int i = 0; i < width; ++i)
          raw_sum += flame::spatialFilterValue(shape, ((2.0 * i + 1.0) / width - 1.0) * support * width / fw);
        if (raw_sum == 0) {
          EXPECT_THROW(flame::makeSpatialFilter(shape, radius, ss), Error);
          continue;
        }
        const flame::SpatialFilter f = flame::makeSpatialFilter(shape, radius, ss);
        ASSERT_EQ(f.width, width);
        ASSERT_EQ(static_cast<int>(f.taps.size()), width);
        double sum = 0;
        for (double t : f.taps) sum += t;
        EXPECT_NEAR(sum, 1.0, 1e-12);
        // The 2-D kernel taps[i]·taps[j] then sums to 1 as well, and is
        // symmetric when the taps are — unless a tap sits exactly on the box's
        // open end (x = ±0.5), where flam3's kernel is one-sided.
        bool box_edge = false;
        for (int i = 0; i < width; ++i) {
          const double x = ((2.0 * i + 1.0) / width - 1.0) * support * width / fw;
          if (shape == FlameFilterShape::kBox && std::fabs(x) == 0.5) box_edge = true;
        }
        if (box_edge) continue;
        for (int i = 0; i < width; ++i)
          EXPECT_NEAR(f.taps[i], f.taps[width - 1 - i], 1e-12) << i;  // tap positions round asymmetrically
      }
    }
  }
  // The box at radius 0.5 and ss 2 is one of the two cells, as in flam3.
  const flame::SpatialFilter box = flame::makeSpatialFilter(FlameFilterShape::kBox, 0.5, 2);
  ASSERT_EQ(box.width, 2);
  EXPECT_EQ(box.taps[0], 0.0);
  EXPECT_EQ(box.taps[1], 1.0);
}

TEST(FlameToneMap, DefaultGaussianAtSupersampleOneIsNearlyOneCell) {
  // flam3's default (gaussian, 0.5, ss 1) samples the kernel at −2, 0, 2.
  const flame::SpatialFilter f = flame::makeSpatialFilter(FlameFilterShape::kGaussian, 0.5, 1);
  ASSERT_EQ(f.width, 3);
  const double edge = std::exp(-8.0);
  EXPECT_NEAR(f.taps[1], 1.0 / (1 + 2 * edge), 1e-15);
  EXPECT_NEAR(f.taps[0], edge / (1 + 2 * edge), 1e-15);
}

// ---------------------------------------------------------------------------
// Density estimation (through the stages: the accumulator before the filter).

std::vector<flame::AccumCell> accumulate(const flame::ToneMapSetup& s, const FlameHistogram& h, bool de) {
  std::vector<flame::AccumCell> acc(h.buckets.size());
  if (!de) {
    flame::logDensityRows(s, h.buckets.data(), acc.data(), 0, s.hist_height);
    return acc;
  }
  flame::clearAccumulatorRows(s, acc.data(), 0, s.hist_height);
  for (int parity = 0; parity < 2; ++parity)
    for (int b = parity; b < s.deBandCount(); b += 2)
      flame::densityEstimationBand(s, h.buckets.data(), acc.data(), b);
  return acc;
}

TEST(FlameToneMap, DensityEstimationPreservesEnergyAndBlursSparseCellsMore) {
  for (int ss : {1, 2, 3}) {
    SCOPED_TRACE("supersample " + std::to_string(ss));
    FlameGenome g = toneMapGenome(40, 30);
    g.supersample = ss;
    g.estimator_radius = 5;
    g.estimator_minimum = 0;
    g.estimator_curve = 0.4;
    FlameRenderOptions o;
    FlameHistogram h = emptyHistogram(g, o);
    const flame::ToneMapSetup s = flame::makeToneMapSetup(g, h, o);
    ASSERT_TRUE(s.de.enabled);
    const int w = h.layout.width;
    // One sparse cell (1 hit) and one dense one (5000 hits), far apart.
    const int sparse_x = w / 4, dense_x = 3 * w / 4, y = h.layout.height / 2;
    h.buckets[static_cast<size_t>(y) * w + sparse_x] = hitsBucket(1, 0.9, 0.5, 0.1);
    h.buckets[static_cast<size_t>(y) * w + dense_x] = hitsBucket(5000, 0.2, 0.7, 0.4);
    const auto plain = accumulate(s, h, false);
    const auto spread = accumulate(s, h, true);
    // Energy: per source cell, per channel.
    for (int source : {sparse_x, dense_x}) {
      for (int c = 0; c < 4; ++c) {
        double before = plain[static_cast<size_t>(y) * w + source].v[c], after = 0;
        for (int yy = 0; yy < h.layout.height; ++yy)
          for (int xx = (source == sparse_x ? 0 : w / 2); xx < (source == sparse_x ? w / 2 : w); ++xx)
            after += spread[static_cast<size_t>(yy) * w + xx].v[c];
        EXPECT_NEAR(after, before, 2e-6 * before) << "source " << source << " channel " << c;
      }
    }
    // Spread: the share left in the centre cell and the mean squared distance.
    auto spreadOf = [&](int source, double* centre_share) {
      double total = 0, moment = 0;
      for (int yy = 0; yy < h.layout.height; ++yy)
        for (int xx = source - w / 4; xx < source + w / 4; ++xx) {
          const double e = spread[static_cast<size_t>(yy) * w + xx].v[3];
          total += e;
          moment += e * ((xx - source) * (xx - source) + (yy - y) * (yy - y));
        }
      *centre_share = spread[static_cast<size_t>(y) * w + source].v[3] / total;
      return moment / total;
    };
    double sparse_centre, dense_centre;
    const double sparse_spread = spreadOf(sparse_x, &sparse_centre);
    const double dense_spread = spreadOf(dense_x, &dense_centre);
    EXPECT_GT(sparse_spread, 4 * dense_spread + 1);
    EXPECT_LT(sparse_centre, 0.2);
    EXPECT_GT(dense_centre, 0.5);
  }
}

TEST(FlameToneMap, DensityEstimatorKernelsAreFlam3s) {
  // radius 9, minimum 0, curve 0.4, ss 1: widths 10/(n+1)^0.4 for n < 100
  // hits, then thinned, down to the minimum width 1 (filters.c).
  const flame::DensityEstimator de = flame::makeDensityEstimator(9, 0, 0.4, 1);
  ASSERT_TRUE(de.enabled);
  EXPECT_DOUBLE_EQ(de.kernels[0].radius, 10.0);
  EXPECT_EQ(de.kernels[0].reach, 9);  // ⌈10⌉ − 1: flam3 never reaches the ring at exactly 10
  EXPECT_DOUBLE_EQ(de.kernels[4].radius, 10.0 / std::pow(5.0, 0.4));
  EXPECT_EQ(de.kernels.back().radius, 1.0);
  EXPECT_EQ(de.kernels.back().reach, 0);
  EXPECT_EQ(static_cast<int>(de.kernels.size()), de.max_filter_index + 1);
  // Selection (rect.c): ⌈hits⌉ − 1 up to 100, then 100 + ⌊(hits − 100)^curve⌋.
  EXPECT_EQ(de.selectKernel(0.5), 0);
  EXPECT_EQ(de.selectKernel(1.0), 0);
  EXPECT_EQ(de.selectKernel(1.5), 1);
  EXPECT_EQ(de.selectKernel(57), 56);
  EXPECT_EQ(de.selectKernel(100 + std::pow(3.0, 1 / 0.4) + 0.01), std::min(103, de.max_filter_index));
  EXPECT_EQ(de.selectKernel(1e9), de.max_filter_index);
  for (const flame::DensityKernel& k : de.kernels) {
    double sum = 0;
    for (float c : k.coefs) sum += c;
    EXPECT_NEAR(sum, 1.0, 1e-5);
    // A disc: row dy spans |dx| ≤ √(r² − dy²), within the reach.
    for (int dy = -k.reach; dy <= k.reach; ++dy) {
      int expected = 0;
      while (expected < k.reach && (expected + 1) * (expected + 1) + dy * dy <= k.radius * k.radius)
        ++expected;
      EXPECT_EQ(k.half_width[dy + k.reach], expected);
    }
  }
  // No estimator, or radius = minimum: flam3's plain log pass.
  EXPECT_FALSE(flame::makeDensityEstimator(0, 0, 0.4, 2).enabled);
  EXPECT_FALSE(flame::makeDensityEstimator(2, 2, 0.4, 2).enabled);
}

// ---------------------------------------------------------------------------
// Whole images.

TEST(FlameToneMap, UniformHistogramGivesUniformImage) {
  for (bool earlyclip : {false, true}) {
    for (int ss : {1, 2}) {
      SCOPED_TRACE("earlyclip " + std::to_string(earlyclip) + " ss " + std::to_string(ss));
      FlameGenome g = toneMapGenome(24, 18);
      g.supersample = ss;
      g.estimator_radius = 4;
      g.filter_shape = FlameFilterShape::kGaussian;
      g.filter_radius = 1.0;
      g.vibrancy = 0.7;
      FlameRenderOptions o;
      o.earlyclip = earlyclip;
      o.bits_per_channel = 16;
      FlameHistogram h = emptyHistogram(g, o);
      for (FlameBucket& b : h.buckets) b = hitsBucket(30, 0.6, 0.3, 0.9);
      const FlameImage im = toneMapFlame(g, h, o, kSerial);
      for (int c = 0; c < 3; ++c) {
        int lo = 65535, hi = 0;
        for (int y = 0; y < im.height; ++y)
          for (int x = 0; x < im.width; ++x) {
            lo = std::min<int>(lo, p16(im, x, y, c));
            hi = std::max<int>(hi, p16(im, x, y, c));
          }
        EXPECT_LE(hi - lo, 1) << "channel " << c;
        EXPECT_GT(lo, 0);
      }
    }
  }
}

TEST(FlameToneMap, GammaThresholdBlendIsContinuous) {
  const double g = 1.0 / 4.0;
  for (double threshold : {0.01, 0.1, 0.5}) {
    EXPECT_NEAR(flame::gammaAlpha(threshold * (1 - 1e-9), g, threshold), std::pow(threshold, g), 1e-8);
    EXPECT_EQ(flame::gammaAlpha(threshold, g, threshold), std::pow(threshold, g));
    // Half way: ½ · d · t^g / t + ½ · d^g.
    const double d = threshold / 2;
    EXPECT_NEAR(flame::gammaAlpha(d, g, threshold),
                0.5 * d * std::pow(threshold, g) / threshold + 0.5 * std::pow(d, g), 1e-15);
    double previous = 0;
    for (double x = 1e-6; x < 4 * threshold; x *= 1.01) {
      const double a = flame::gammaAlpha(x, g, threshold);
      EXPECT_GE(a, previous);
      previous = a;
    }
  }
  // In an image: densities rising across the threshold give rising alpha.
  FlameGenome genome = toneMapGenome(64, 1);
  genome.gamma_threshold = 0.2;
  FlameRenderOptions o;
  o.transparency = true;
  o.bits_per_channel = 16;
  FlameHistogram h = emptyHistogram(genome, o);
  for (int x = 0; x < 64; ++x) pixelBucket(h, x, 0) = hitsBucket(0.05 * std::pow(1.15, x), 1, 1, 1);
  const FlameImage im = toneMapFlame(genome, h, o, kSerial);
  for (int x = 1; x < 64; ++x) {
    EXPECT_GE(p16(im, x, 0, 3), p16(im, x - 1, 0, 3)) << x;
    EXPECT_LE(p16(im, x, 0, 3) - p16(im, x - 1, 0, 3), 0.1 * 65535) << x;
  }
}

double hueDegrees(double r, double g, double b) {
  const double max = std::max({r, g, b}), min = std::min({r, g, b});
  if (max == min) return 0;
  double h;
  if (max == r)
    h = std::fmod((g - b) / (max - min), 6.0);
  else if (max == g)
    h = (b - r) / (max - min) + 2;
  else
    h = (r - g) / (max - min) + 4;
  return std::fmod(60 * h + 360, 360);
}

TEST(FlameToneMap, HighlightPowerKeepsHueWhereClippingShiftsIt) {
  const double colour[3] = {1.0, 0.5, 0.1};
  const double hue = hueDegrees(colour[0], colour[1], colour[2]);
  auto render = [&](double power) {
    FlameGenome g = toneMapGenome(3, 3);
    g.brightness = 60;  // bright enough that red and green pass 255
    g.highlight_power = power;
    FlameRenderOptions o;
    o.bits_per_channel = 16;
    FlameHistogram h = emptyHistogram(g, o);
    pixelBucket(h, 1, 1) = hitsBucket(500, colour[0], colour[1], colour[2]);
    const FlameImage im = toneMapFlame(g, h, o, kSerial);
    return std::vector<double>{p16(im, 1, 1, 0) / 256.0, p16(im, 1, 1, 1) / 256.0, p16(im, 1, 1, 2) / 256.0};
  };
  const auto clipped = render(-1);
  EXPECT_EQ(clipped[0], 255);
  EXPECT_EQ(clipped[1], 255);  // green clipped too: the hue moved to yellow
  EXPECT_GT(std::fabs(hueDegrees(clipped[0], clipped[1], clipped[2]) - hue), 10);
  const auto kept = render(0);  // power 0: the colour scaled so its brightest channel is 255
  EXPECT_NEAR(kept[0], 255, 0.01);
  EXPECT_NEAR(kept[1], 127.5, 0.01);
  EXPECT_NEAR(kept[2], 25.5, 0.01);
  const auto desaturated = render(1);
  EXPECT_NEAR(hueDegrees(desaturated[0], desaturated[1], desaturated[2]), hue, 0.5);
  EXPECT_GT(desaturated[2], kept[2] + 1);  // lower saturation, same hue
  EXPECT_NEAR(desaturated[0], 255, 0.01);
}

TEST(FlameToneMap, BackgroundShowsWhereTheHistogramIsEmpty) {
  FlameGenome g = toneMapGenome(16, 12);
  g.background = {0.2, 0.5, 0.9};
  g.estimator_radius = 2;
  g.filter_shape = FlameFilterShape::kGaussian;
  for (bool transparency : {false, true}) {
    FlameRenderOptions o;
    o.transparency = transparency;
    FlameHistogram h = emptyHistogram(g, o);
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x) pixelBucket(h, x, y) = hitsBucket(200, 1, 1, 1);
    const FlameImage im = toneMapFlame(g, h, o, kSerial);
    ASSERT_EQ(im.channels, transparency ? 4 : 3);
    // Far from the blob: background × 256 (flam3's scale), or transparent black.
    const int expected[3] = {51, 128, 230};
    for (int y = 8; y < 12; ++y)
      for (int x = 10; x < 16; ++x) {
        for (int c = 0; c < 3; ++c) ASSERT_EQ(p8(im, x, y, c), transparency ? 0 : expected[c]);
        if (transparency) {
          ASSERT_EQ(p8(im, x, y, 3), 0);
        }
      }
    // On the blob: white-ish, opaque.
    for (int c = 0; c < 3; ++c) EXPECT_GT(p8(im, 1, 1, c), 200);
    if (transparency) {
      EXPECT_GT(p8(im, 1, 1, 3), 200);
    }
  }
}

TEST(FlameToneMap, SixteenAndEightBitAgreeAfterScaling) {
  FlameGenome g = toneMapGenome(20, 15);
  g.supersample = 2;
  g.estimator_radius = 3;
  g.filter_shape = FlameFilterShape::kMitchell;
  g.filter_radius = 0.8;
  g.vibrancy = 0.8;
  for (bool transparency : {false, true}) {
    FlameRenderOptions o;
    o.transparency = transparency;
    FlameHistogram h = emptyHistogram(g, o);
    test::fillRandom(h, 7, 0.7);
    const FlameImage im8 = toneMapFlame(g, h, o, kSerial);
    o.bits_per_channel = 16;
    const FlameImage im16 = toneMapFlame(g, h, o, kSerial);
    ASSERT_EQ(im8.pixels8.size(), im16.pixels16.size());
    ASSERT_TRUE(im8.pixels16.empty());
    ASSERT_TRUE(im16.pixels8.empty());
    for (size_t i = 0; i < im8.pixels8.size(); ++i) {
      if (transparency && i % 4 == 3) {
        ASSERT_NEAR(im16.pixels16[i] / 257.0, im8.pixels8[i], 1.0) << i;
      } else {
        ASSERT_EQ(im16.pixels16[i] >> 8, im8.pixels8[i]) << i;  // 16 bit is 0..65280: value × 256
      }
    }
  }
}

TEST(FlameToneMap, BadInputIsRefused) {
  FlameGenome g = toneMapGenome(8, 8);
  FlameRenderOptions o;
  FlameHistogram h = emptyHistogram(g, o);
  auto code = [&](const FlameGenome& genome, const FlameHistogram& hist, const FlameRenderOptions& opts) {
    try {
      toneMapFlame(genome, hist, opts, kSerial);
    } catch (const Error& e) {
      return e.exitCode();
    }
    return ExitCode::kOk;
  };
  EXPECT_EQ(code(g, h, o), ExitCode::kOk);
  FlameHistogram short_h = h;
  short_h.buckets.pop_back();
  EXPECT_EQ(code(g, short_h, o), ExitCode::kUsage);
  FlameRenderOptions bits = o;
  bits.bits_per_channel = 12;
  EXPECT_EQ(code(g, h, bits), ExitCode::kUsage);
  FlameGenome bad = g;
  bad.gamma = 0;
  EXPECT_EQ(code(bad, h, o), ExitCode::kBadInput);
  bad = g;
  bad.estimator_radius = 1;
  bad.estimator_curve = 0;
  EXPECT_EQ(code(bad, emptyHistogram(bad, o), o), ExitCode::kBadInput);
  bad.estimator_curve = 0.4;
  bad.estimator_minimum = 2;  // above the radius
  EXPECT_EQ(code(bad, emptyHistogram(bad, o), o), ExitCode::kBadInput);
  // A huge estimator on a small histogram: its kernels are refused before they are built.
  bad = g;
  bad.estimator_radius = 5000;
  bad.estimator_minimum = 1000;  // few kernels, but the first one 10001 cells wide
  FlameRenderOptions small_budget = o;
  small_budget.memory_budget = 1 << 20;
  try {
    toneMapFlame(bad, h, small_budget, kSerial);
    ADD_FAILURE() << "no ResourceError";
  } catch (const ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("density-estimation kernels"), std::string::npos) << e.what();
  }
  bad = g;
  bad.filter_shape = FlameFilterShape::kGaussian;  // the histogram's layout has the box's width
  bad.filter_radius = 2;
  EXPECT_EQ(code(bad, h, o), ExitCode::kUsage);
}

// ---------------------------------------------------------------------------
// The whole pipeline, brute force, in double: straightforward loops over
// flam3 3.1.1's rect.c (k1/k2, de_thread, the spatial filter, the colour
// curve), filters.c (the DE widths; the kernel functions are the ones tested
// against textbook values above) and palettes.c (calc_alpha, calc_newrgb,
// rgb2hsv/hsv2rgb). Density-estimation kernels are normalised over the cells
// they are applied to (filters.hpp says why).

struct Reference {
  std::vector<double> rgba;  // per pixel: rgb 0..255, alpha 0..1
};

void refHsv(const double* rgb, double* hsv) {
  double mx = std::max({rgb[0], rgb[1], rgb[2]}), mn = std::min({rgb[0], rgb[1], rgb[2]});
  double s = mx != 0 ? (mx - mn) / mx : 0, h = 0;
  if (s != 0) {
    double rc = (mx - rgb[0]) / (mx - mn), gc = (mx - rgb[1]) / (mx - mn), bc = (mx - rgb[2]) / (mx - mn);
    h = rgb[0] == mx ? bc - gc : rgb[1] == mx ? 2 + rc - bc : 4 + gc - rc;
    if (h < 0) h += 6;
  }
  hsv[0] = h, hsv[1] = s, hsv[2] = mx;
}

void refRgb(const double* hsv, double* rgb) {
  double h = std::fmod(hsv[0], 6.0), s = hsv[1], v = hsv[2];
  int j = static_cast<int>(std::floor(h));
  double f = h - j, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  const double table[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
  for (int i = 0; i < 3; ++i) rgb[i] = table[j][i];
}

void refCurve(const FlameGenome& g, bool transparency, const double* t, double* out) {
  const double gi = 1 / g.gamma, thr = g.gamma_threshold;
  double alpha = 0, ls = 0;
  if (t[3] > 0) {
    double d = t[3] / 255;
    alpha =
        d < thr ? (1 - d / thr) * d * std::pow(thr, gi) / thr + d / thr * std::pow(d, gi) : std::pow(d, gi);
    ls = g.vibrancy * 256 * alpha / d;
    alpha = std::clamp(alpha, 0.0, 1.0);
  }
  double nrgb[3] = {0, 0, 0};
  if (ls != 0 && (t[0] != 0 || t[1] != 0 || t[2] != 0)) {
    int m = 0;
    for (int i = 1; i < 3; ++i)
      if (t[i] > t[m]) m = i;
    const double maxc = t[m] / 255, maxa = ls * maxc, newls = 255 / maxc;
    if (maxa > 255 && g.highlight_power >= 0) {
      double rgb[3], hsv[3];
      for (int i = 0; i < 3; ++i) rgb[i] = newls * t[i] / 255 / 255;
      refHsv(rgb, hsv);
      hsv[1] *= std::pow(newls / ls, g.highlight_power);
      refRgb(hsv, rgb);
      for (int i = 0; i < 3; ++i) nrgb[i] = rgb[i] * 255;
    } else {
      double blend = maxa <= 255 ? 1.0 : std::min(1.0, -g.highlight_power);
      for (int i = 0; i < 3; ++i) nrgb[i] = ((1 - blend) * newls + blend * ls) * t[i] / 255;
    }
  }
  for (int i = 0; i < 3; ++i) {
    double a = nrgb[i] + (1 - g.vibrancy) * 256 * std::pow(t[i] / 255, gi);
    a = transparency ? (alpha > 0 ? a / alpha : 0) : a + (1 - alpha) * g.background[i] * 256;
    out[i] = std::isnan(a) ? 0 : std::clamp(a, 0.0, 255.0);
  }
  out[3] = alpha;
}

Reference bruteForce(const FlameGenome& g, const FlameHistogram& hist, const FlameRenderOptions& o) {
  const FlameHistogramLayout& l = hist.layout;
  const int W = l.width, H = l.height, ss = l.supersample;
  const double k1 = g.brightness * 255 * 268 / 256.0;
  const double area = l.image_width * l.image_height / (l.pixels_per_unit * l.pixels_per_unit);
  const double k2 = ss * ss / (area * 255 * l.sample_density);
  std::vector<double> acc(static_cast<size_t>(W) * H * 4, 0.0);
  auto bucket = [&](int x, int y) -> const FlameBucket& {
    return hist.buckets[static_cast<size_t>(y) * W + x];
  };

  // Density-estimation widths (filters.c), one per kernel index.
  std::vector<double> widths;
  int max_index = 0, max_counts = 0;
  if (g.estimator_radius > 0) {
    const double rmax = g.estimator_radius * ss + 1, rmin = g.estimator_minimum * ss + 1,
                 curve = g.estimator_curve;
    const int n = static_cast<int>(std::ceil(std::pow(rmax / rmin, 1 / curve)));
    const int count = n > 100 ? static_cast<int>(std::ceil(100 + std::pow(n - 100, curve))) + 1 : n;
    max_counts = n > 100 ? static_cast<int>(std::pow(count - 100.0, 1 / curve)) + 100 : count;
    for (int k = 0; k < count; ++k) {
      const double hits = k < 100 ? k : std::pow(k - 100, 1 / curve) + 100;
      const double w = rmax / std::pow(hits + 1, curve);
      if (w <= rmin) {
        widths.push_back(rmin);
        max_index = k;
        break;
      }
      widths.push_back(w);
    }
    if (max_index == 0) max_index = static_cast<int>(widths.size()) - 1;
  }
  if (max_index > 0) {
    for (int y = ss - 1; y < H - (ss - 1); ++y)
      for (int x = ss - 1; x < W - (ss - 1); ++x) {
        const FlameBucket& b = bucket(x, y);
        if (b.count == 0 || b.alpha == 0) continue;
        double f = 0;
        for (int i = -ss / 2; i <= ss / 2; ++i)
          for (int j = -ss / 2; j <= ss / 2; ++j) f += bucket(x + i, y + j).count / 255.0;
        if (ss % 2 == 0) f *= std::pow(ss / (ss + 1.0), 2.0);
        int k = f > max_counts ? max_index
                : f <= 100     ? static_cast<int>(std::ceil(f)) - 1
                               : 100 + static_cast<int>(std::floor(std::pow(f - 100, g.estimator_curve)));
        k = std::min(k, max_index);
        const double w = widths[k];
        const int reach = static_cast<int>(std::ceil(w)) - 1;
        auto weight = [&](int dx, int dy) {
          const double d = std::sqrt(static_cast<double>(dx * dx + dy * dy)) / w;
          return d <= 1 ? std::exp(-2 * (1.5 * d) * (1.5 * d)) : 0.0;
        };
        double sum = 0;
        for (int dy = -reach; dy <= reach; ++dy)
          for (int dx = -reach; dx <= reach; ++dx) sum += weight(dx, dy);
        const double ls = k1 * std::log(1 + b.alpha * k2) / b.alpha;
        const double c[4] = {b.red * ls, b.green * ls, b.blue * ls, b.alpha * ls};
        for (int dy = -reach; dy <= reach; ++dy)
          for (int dx = -reach; dx <= reach; ++dx) {
            if (x + dx < 0 || x + dx >= W || y + dy < 0 || y + dy >= H) continue;
            for (int ch = 0; ch < 4; ++ch)
              acc[(static_cast<size_t>(y + dy) * W + x + dx) * 4 + ch] += weight(dx, dy) / sum * c[ch];
          }
      }
  } else {
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        const FlameBucket& b = bucket(x, y);
        if (b.alpha == 0) continue;
        const double ls = k1 * std::log(1 + b.alpha * k2) / b.alpha;
        const double c[4] = {b.red * ls, b.green * ls, b.blue * ls, b.alpha * ls};
        for (int ch = 0; ch < 4; ++ch) acc[(static_cast<size_t>(y) * W + x) * 4 + ch] = c[ch];
      }
  }
  if (o.earlyclip)
    for (size_t i = 0; i < acc.size(); i += 4) {
      double out[4];
      refCurve(g, o.transparency, &acc[i], out);
      std::copy(out, out + 4, &acc[i]);
    }

  // The spatial filter as flam3 builds it: 2-D, normalised over its sum.
  const double supp = kFlam3Support[static_cast<int>(g.filter_shape)];
  const double fw = 2 * supp * ss * g.filter_radius;
  int fwidth = static_cast<int>(fw) + 1;
  if ((fwidth ^ ss) & 1) ++fwidth;
  const double adjust = fw > 0 ? supp * fwidth / fw : 1;
  std::vector<double> kernel(static_cast<size_t>(fwidth) * fwidth);
  double ksum = 0;
  for (int i = 0; i < fwidth; ++i)
    for (int j = 0; j < fwidth; ++j) {
      const double ii = ((2.0 * i + 1) / fwidth - 1) * adjust, jj = ((2.0 * j + 1) / fwidth - 1) * adjust;
      kernel[i + j * fwidth] =
          flame::spatialFilterValue(g.filter_shape, ii) * flame::spatialFilterValue(g.filter_shape, jj);
      ksum += kernel[i + j * fwidth];
    }
  // rect.c: the gutter is the filter's unless density estimation needs more; de_offset the excess.
  const int filter_gutter = (fwidth - ss) / 2;
  const int de_offset = l.de_max_width > filter_gutter ? l.de_max_width - filter_gutter : 0;
  Reference ref;
  for (int y = 0; y < l.image_height; ++y)
    for (int x = 0; x < l.image_width; ++x) {
      double t[4] = {0, 0, 0, 0};
      for (int i = 0; i < fwidth; ++i)
        for (int j = 0; j < fwidth; ++j)
          for (int ch = 0; ch < 4; ++ch)
            t[ch] += kernel[i + j * fwidth] / ksum *
                     acc[(static_cast<size_t>(de_offset + y * ss + j) * W + de_offset + x * ss + i) * 4 + ch];
      double out[4];
      if (o.earlyclip) {
        for (int ch = 0; ch < 3; ++ch) out[ch] = std::isnan(t[ch]) ? 0 : std::clamp(t[ch], 0.0, 255.0);
        out[3] = std::clamp(t[3], 0.0, 1.0);
      } else {
        refCurve(g, o.transparency, t, out);
      }
      ref.rgba.insert(ref.rgba.end(), out, out + 4);
    }
  return ref;
}

struct BruteForceCase {
  const char* name;
  int supersample;
  double estimator, minimum, curve;
  FlameFilterShape shape;
  double filter;
  double vibrancy, highlight_power, gamma, gamma_threshold;
  bool earlyclip, transparency;
};

TEST(FlameToneMap, WholePipelineAgreesWithBruteForce) {
  const BruteForceCase cases[] = {
      {"defaults", 1, 9, 0, 0.4, FlameFilterShape::kGaussian, 0.5, 1, -1, 4, 0.01, false, false},
      {"ss2", 2, 3, 0, 0.4, FlameFilterShape::kGaussian, 0.8, 0.6, 1.5, 3, 0.1, false, false},
      {"ss3_minimum", 3, 2.5, 0.5, 0.6, FlameFilterShape::kBspline, 1, 0.8, -0.5, 2.2, 0.05, false, false},
      {"earlyclip_alpha", 2, 4, 0, 0.4, FlameFilterShape::kHermite, 1, 0.7, 0.5, 4, 0.01, true, true},
      {"no_de_lanczos", 2, 0, 0, 0.4, FlameFilterShape::kLanczos3, 0.9, 1, -1, 4, 0.01, false, true},
      {"many_kernels", 2, 12, 0, 0.3, FlameFilterShape::kQuadratic, 0.6, 1, 2, 2.5, 0.02, false, false},
      // A filter narrower than the supersampling: flam3's filter gutter (2 − 4)/2 = −1 becomes the DE
      // gutter 0, and each pixel's window starts one cell in (de_offset 1).
      {"negative_gutter", 4, 0, 0, 0.4, FlameFilterShape::kBox, 0.3, 0.9, -1, 4, 0.01, false, false},
  };
  for (const BruteForceCase& bc : cases) {
    SCOPED_TRACE(bc.name);
    FlameGenome g = toneMapGenome(22, 15);
    g.supersample = bc.supersample;
    g.estimator_radius = bc.estimator;
    g.estimator_minimum = bc.minimum;
    g.estimator_curve = bc.curve;
    g.filter_shape = bc.shape;
    g.filter_radius = bc.filter;
    g.vibrancy = bc.vibrancy;
    g.highlight_power = bc.highlight_power;
    g.gamma = bc.gamma;
    g.gamma_threshold = bc.gamma_threshold;
    g.background = {0.1, 0.3, 0.2};
    g.brightness = 6;
    FlameRenderOptions o;
    o.earlyclip = bc.earlyclip;
    o.transparency = bc.transparency;
    o.bits_per_channel = 16;
    FlameHistogram h = emptyHistogram(g, o);
    if (std::string(bc.name) == "negative_gutter") {
      ASSERT_EQ(h.layout.gutter, 0);
      ASSERT_EQ(h.layout.spatial_filter_width, 2);
    }
    test::fillRandom(h, 99, 0.6);
    const Reference ref = bruteForce(g, h, o);
    const FlameImage im = toneMapFlame(g, h, o, kSerial);
    // Tolerance: 2 of 65280 per channel. The accumulator is float (flam3's
    // default 33-bit buffers are too), relative error ~1e-6, and a value can
    // truncate to the neighbouring integer.
    int worst = 0;
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width; ++x) {
        const double* r = &ref.rgba[(static_cast<size_t>(y) * im.width + x) * 4];
        for (int c = 0; c < 3; ++c) {
          const int diff = std::abs(static_cast<int>(p16(im, x, y, c)) - static_cast<int>(r[c] * 256));
          worst = std::max(worst, diff);
          ASSERT_LE(diff, 2) << x << "," << y << " channel " << c << " ref " << r[c] * 256;
        }
        if (im.channels == 4) {
          ASSERT_LE(std::abs(p16(im, x, y, 3) - static_cast<int>(r[3] * 65535)), 2);
        }
      }
    RecordProperty(std::string("worst_") + bc.name, worst);
  }
}

}  // namespace
}  // namespace procgen

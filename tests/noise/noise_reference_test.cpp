// Noise values against a straightforward, independent reference written here
// in double from the specification in docs/noise.md (the seed paper's hash and
// gradients, textbook interpolation, Gustavson's simplex walk, brute-force
// Worley search) — it does not call src/noise. Also: gradient noise is 0 at
// lattice points, continuity, analytic gradients = finite differences, the
// range on 10⁶ random points, tileability, smoothness near 10⁷ and the
// argument checks of validateNoise.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/noise.hpp"

namespace procgen {
namespace {

// ---- the reference -----------------------------------------------------------

uint32_t refHash(uint32_t x) {  // the seed paper §4.2
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  return (x >> 16) ^ x;
}
uint32_t refKey(uint64_t seed, uint32_t octave) {
  uint32_t key = refHash(uint32_t(seed) ^ refHash(uint32_t(seed >> 32) + 0x9e3779b9u));
  return refHash(key + 0x9e3779b9u * (octave + 1));
}
uint32_t refCornerHash(uint32_t key, const std::vector<int64_t>& cell) {
  uint32_t h = key;
  for (int64_t c : cell) h = refHash(h ^ uint32_t(c));
  return h;
}
// Gradient sets, written as lists (docs/noise.md): bit b of the hash is the
// sign of component b; 2D: (h>>2)&3 = 0,1 diagonal, 2 the x axis ·√2, 3 the y
// axis ·√2; 3D: component (h>>3)%3 zero; 4D: component (h>>4)&3 zero.
std::vector<double> refGradient(int dims, uint32_t h) {
  std::vector<double> g(dims);
  for (int d = 0; d < dims; ++d) g[d] = (h >> d) & 1 ? -1.0 : 1.0;
  if (dims == 2) {
    uint32_t k = (h >> 2) & 3;
    if (k == 2) g = {g[0] * std::sqrt(2.0), 0.0};
    if (k == 3) g = {0.0, g[1] * std::sqrt(2.0)};
  } else if (dims == 3) {
    g[(h >> 3) % 3] = 0;
  } else {
    g[(h >> 4) & 3] = 0;
  }
  return g;
}
double refFade(double t) { return t * t * t * (t * (t * 6 - 15) + 10); }
// The documented range factors (docs/noise.md, "Range").
double refPerlinScale(int dims) { return dims == 2 ? 1.0 : dims == 3 ? 0.964921 : 0.65079; }
double refSimplexScale(int dims) { return dims == 2 ? 70.1 : dims == 3 ? 76.8 : 62.7; }

double refPerlin(int dims, uint32_t key, const std::vector<double>& p) {
  std::vector<int64_t> c0(dims);
  std::vector<double> f(dims);
  for (int d = 0; d < dims; ++d) {
    c0[d] = int64_t(std::floor(p[d]));
    f[d] = p[d] - double(c0[d]);
  }
  // Σ over corners of (Π weights) · (g · (p − corner))
  double sum = 0;
  for (int corner = 0; corner < (1 << dims); ++corner) {
    std::vector<int64_t> cell(dims);
    double w = 1, dot = 0;
    for (int d = 0; d < dims; ++d) {
      int bit = (corner >> d) & 1;
      cell[d] = c0[d] + bit;
      w *= bit ? refFade(f[d]) : 1 - refFade(f[d]);
    }
    std::vector<double> g = refGradient(dims, refCornerHash(key, cell));
    for (int d = 0; d < dims; ++d) dot += g[d] * (f[d] - ((corner >> d) & 1));
    sum += w * dot;
  }
  return sum * refPerlinScale(dims);
}

double refValue(int dims, uint32_t key, const std::vector<double>& p) {
  double sum = 0;
  for (int corner = 0; corner < (1 << dims); ++corner) {
    std::vector<int64_t> cell(dims);
    double w = 1;
    for (int d = 0; d < dims; ++d) {
      int bit = (corner >> d) & 1;
      cell[d] = int64_t(std::floor(p[d])) + bit;
      double u = refFade(p[d] - std::floor(p[d]));
      w *= bit ? u : 1 - u;
    }
    sum += w * (double(refCornerHash(key, cell) >> 8) / 8388608.0 - 1.0);
  }
  return sum;
}

double refSimplex(int dims, uint32_t key, const std::vector<double>& p) {
  const double n = dims, F = (std::sqrt(n + 1) - 1) / n, G = (1 - 1 / std::sqrt(n + 1)) / n;
  double s = 0;
  for (double x : p) s += x;
  std::vector<int64_t> cell(dims);
  std::vector<double> fy(dims);
  for (int d = 0; d < dims; ++d) {
    double y = p[d] + s * F;
    cell[d] = int64_t(std::floor(y));
    fy[d] = y - double(cell[d]);
  }
  double t = 0;
  for (int d = 0; d < dims; ++d) t += double(cell[d]);
  std::vector<double> x0(dims);  // p − unskew(cell)
  for (int d = 0; d < dims; ++d) x0[d] = p[d] - (double(cell[d]) - t * G);
  // visit axes by decreasing fraction (ties: lower axis first)
  std::vector<int> order(dims);
  for (int d = 0; d < dims; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return fy[a] > fy[b]; });
  double sum = 0;
  std::vector<int64_t> corner = cell;
  std::vector<double> off = x0;
  for (int k = 0; k <= dims; ++k) {
    if (k > 0) {
      corner[order[k - 1]] += 1;
      off[order[k - 1]] -= 1;
    }
    double r2 = 0, dot = 0;
    std::vector<double> g = refGradient(dims, refCornerHash(key, corner));
    for (int d = 0; d < dims; ++d) {
      double dd = off[d] + k * G;
      r2 += dd * dd;
      dot += g[d] * dd;
    }
    double tt = 0.5 - r2;
    if (tt > 0) sum += tt * tt * tt * tt * dot;
  }
  return sum * refSimplexScale(dims);
}

// metric: 0 Euclidean, 1 squared, 2 Manhattan, 3 Chebyshev; ret: 0 F1, 1 F2, 2 F2−F1, 3 cell value.
double refCellular(int dims, uint32_t key, const std::vector<double>& p, int metric, int ret, double jitter) {
  const double spread = 0.45 * jitter;
  auto dist = [&](const std::vector<double>& v) {
    double sq = 0, man = 0, cheb = 0;
    for (double x : v) sq += x * x, man += std::fabs(x), cheb = std::max(cheb, std::fabs(x));
    return metric == 0 ? std::sqrt(sq) : metric == 1 ? sq : metric == 2 ? man : cheb;
  };
  std::vector<double> best;  // distances with their cell hashes
  double f1 = 1e30, f2 = 1e30;
  uint32_t nearest = 0;
  const int count = dims == 2 ? 9 : 27;
  for (int nb = 0; nb < count; ++nb) {
    std::vector<int64_t> cell(dims);
    std::vector<double> v(dims);
    int off[3] = {nb % 3 - 1, nb / 3 % 3 - 1, nb / 9 - 1};
    for (int d = 0; d < dims; ++d) cell[d] = int64_t(std::floor(p[d])) + off[d];
    uint32_t h = refCornerHash(key, cell);
    for (int d = 0; d < dims; ++d) {
      double r = double(refHash(h + 0x27d4eb2fu * uint32_t(d + 1)) >> 8) / 16777216.0;
      v[d] = double(cell[d]) + 0.5 + (2 * r - 1) * spread - p[d];
    }
    double dd = dist(v);
    if (dd < f1) f2 = f1, f1 = dd, nearest = h;
    else if (dd < f2) f2 = dd;
  }
  if (ret == 3) return double(refHash(nearest ^ 0x5bd1e995u) >> 8) / 8388608.0 - 1.0;
  std::vector<double> b1(dims, 0.5 + spread), b2 = b1;
  b2[0] = 1 + spread;
  double v = ret == 0 ? f1 / dist(b1) : ret == 1 ? f2 / dist(b2) : (f2 - f1) / dist(b2);
  return std::clamp(2 * v - 1, -1.0, 1.0);
}

double reference(NoiseType type, int dims, uint32_t key, const std::vector<double>& p) {
  switch (type) {
    case NoiseType::kPerlin: return refPerlin(dims, key, p);
    case NoiseType::kSimplex: return refSimplex(dims, key, p);
    case NoiseType::kValue: return refValue(dims, key, p);
    case NoiseType::kCellular: return refCellular(dims, key, p, 0, 0, 1.0);
  }
  return 0;
}

NoiseParams single(NoiseType type, int dims, uint64_t seed = 1337) {
  NoiseParams p;
  p.type = type;
  p.dims = dims;
  p.seed = seed;
  p.frequency = 1.0;
  p.fractal = FractalType::kNone;
  p.octaves = 1;
  return p;
}

struct TypeDims {
  NoiseType type;
  int dims;
};
std::vector<TypeDims> everyTypeAndDims() {
  std::vector<TypeDims> out;
  for (NoiseType t : {NoiseType::kPerlin, NoiseType::kSimplex, NoiseType::kValue})
    for (int d = 2; d <= 4; ++d) out.push_back({t, d});
  out.push_back({NoiseType::kCellular, 2});
  out.push_back({NoiseType::kCellular, 3});
  return out;
}

std::vector<double> randomPoint(std::mt19937_64& rng, int dims, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> p(dims);
  for (double& x : p) x = u(rng);
  return p;
}

// ---- golden vectors ------------------------------------------------------------

TEST(NoiseReference, EveryTypeAndDimensionMatchesTheIndependentReference) {
  std::mt19937_64 rng(42);
  for (TypeDims td : everyTypeAndDims()) {
    SCOPED_TRACE(std::string(noiseTypeName(td.type)) + std::to_string(td.dims));
    for (uint64_t seed : {uint64_t{0}, uint64_t{1337}, uint64_t{0xfedcba9876543210ULL}}) {
      NoiseParams params = single(td.type, td.dims, seed);
      for (int i = 0; i < 300; ++i) {
        std::vector<double> p = randomPoint(rng, td.dims, -40.0, 40.0);
        const double want = reference(td.type, td.dims, refKey(seed, 0), p);
        const float got = noiseAt(params, p);
        ASSERT_NEAR(got, want, 2e-5) << "seed " << seed << " point " << p[0] << "," << p[1];
      }
    }
  }
}

TEST(NoiseReference, CellularMetricsAndReturnsMatchTheReference) {
  std::mt19937_64 rng(7);
  for (int dims : {2, 3})
    for (int metric = 0; metric < 4; ++metric)
      for (int ret = 0; ret < 4; ++ret)
        for (float jitter : {0.0f, 0.6f, 1.0f}) {
          NoiseParams params = single(NoiseType::kCellular, dims, 99);
          params.cellular_distance = static_cast<CellularDistance>(metric);
          params.cellular_return = static_cast<CellularReturn>(ret);
          params.cellular_jitter = jitter;
          for (int i = 0; i < 50; ++i) {
            std::vector<double> p = randomPoint(rng, dims, -20.0, 20.0);
            ASSERT_NEAR(noiseAt(params, p), refCellular(dims, refKey(99, 0), p, metric, ret, jitter), 2e-5)
                << "dims " << dims << " metric " << metric << " return " << ret << " jitter " << jitter;
          }
        }
}

TEST(NoiseReference, FbmIsTheNormalisedSumOfOctaves) {
  // fBm (the paper's moPerlin): Σ gainᵒ · noise_o(p · frequency · lacunarityᵒ) / Σ gainᵒ.
  std::mt19937_64 rng(3);
  NoiseParams params = single(NoiseType::kPerlin, 3, 5);
  params.fractal = FractalType::kFbm;
  params.octaves = 4;
  params.frequency = 0.37;
  params.lacunarity = 2.1f;
  params.gain = 0.55f;
  for (int i = 0; i < 200; ++i) {
    std::vector<double> p = randomPoint(rng, 3, -50.0, 50.0);
    double sum = 0, amp = 1, total = 0, f = params.frequency;
    for (int o = 0; o < params.octaves; ++o) {
      std::vector<double> q = p;
      for (double& x : q) x *= f;
      sum += amp * refPerlin(3, refKey(5, o), q);
      total += amp;
      amp *= double(params.gain);
      f *= double(params.lacunarity);
    }
    ASSERT_NEAR(noiseAt(params, p), sum / total, 3e-5);
  }
}

TEST(NoiseReference, GridSampleIsNoiseAtOriginPlusStepTimesIndex) {
  NoiseParams params = single(NoiseType::kSimplex, 3, 11);
  params.frequency = 0.05;
  NoiseGrid grid;
  grid.size = {7, 5, 3, 1};
  grid.origin = {-12.5, 3.25, 100.0, 0};
  grid.step = 0.75;
  std::vector<float> out(grid.points());
  generateNoise(params, grid, out, Execution{Backend::kSerial, 1}, NoiseEvaluation::kNaive);
  for (uint64_t z = 0; z < 3; ++z)
    for (uint64_t y = 0; y < 5; ++y)
      for (uint64_t x = 0; x < 7; ++x) {
        std::vector<double> p = {(grid.origin[0] + grid.step * x) * params.frequency,
                                 (grid.origin[1] + grid.step * y) * params.frequency,
                                 (grid.origin[2] + grid.step * z) * params.frequency};
        ASSERT_NEAR(out[x + 7 * (y + 5 * z)], refSimplex(3, refKey(11, 0), p), 2e-5);
      }
}

// ---- properties -------------------------------------------------------------------

TEST(NoiseProperties, PerlinIsZeroAtLatticePoints) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> cell(-1000, 1000);
  for (int dims = 2; dims <= 4; ++dims) {
    NoiseParams params = single(NoiseType::kPerlin, dims, 77);
    for (int i = 0; i < 200; ++i) {
      std::vector<double> p(dims);
      for (double& x : p) x = cell(rng);
      ASSERT_EQ(noiseAt(params, p), 0.0f);
    }
  }
  // simplex vanishes at the lattice origin (its own kernel is 0 there, the others do not reach it)
  for (int dims = 2; dims <= 4; ++dims)
    EXPECT_EQ(noiseAt(single(NoiseType::kSimplex, dims), std::vector<double>(dims, 0.0)), 0.0f);
}

TEST(NoiseProperties, ContinuousAcrossCellBorders) {
  // Points just before and after integer coordinates (Perlin/value/cellular
  // cell borders) and random points (simplex borders are everywhere): the
  // value moves by at most L·distance.
  std::mt19937_64 rng(9);
  const double eps = 1e-5;
  for (TypeDims td : everyTypeAndDims()) {
    SCOPED_TRACE(std::string(noiseTypeName(td.type)) + std::to_string(td.dims));
    NoiseParams params = single(td.type, td.dims, 3);
    for (int i = 0; i < 2000; ++i) {
      std::vector<double> p = randomPoint(rng, td.dims, -30.0, 30.0);
      if (i % 2) p[i % td.dims] = std::round(p[i % td.dims]) - eps / 2;
      std::vector<double> q = p;
      q[i % td.dims] += eps;
      ASSERT_LE(std::fabs(noiseAt(params, p) - noiseAt(params, q)), 2e-3) << p[0] << "," << p[1];
    }
  }
}

TEST(NoiseProperties, AnalyticGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(5);
  for (NoiseType type : {NoiseType::kPerlin, NoiseType::kSimplex})
    for (int dims = 2; dims <= 4; ++dims)
      for (FractalType fractal : {FractalType::kNone, FractalType::kFbm, FractalType::kRidged,
                                  FractalType::kBillow, FractalType::kPingPong}) {
        SCOPED_TRACE(std::string(noiseTypeName(type)) + std::to_string(dims) + " fractal " +
                     std::to_string(int(fractal)));
        NoiseParams params = single(type, dims, 21);
        params.fractal = fractal;
        params.octaves = 3;
        params.frequency = 0.3;
        params.weighted_strength = fractal == FractalType::kNone ? 0.0f : 0.4f;
        const double h = 1e-3;
        int checked = 0;
        for (int i = 0; i < 100; ++i) {
          std::vector<double> p = randomPoint(rng, dims, -20.0, 20.0);
          std::vector<float> g(dims);
          noiseAt(params, p, g);
          for (int d = 0; d < dims; ++d) {
            std::vector<double> a = p, b = p;
            a[d] += h;
            b[d] -= h;
            const double fa = noiseAt(params, a), fb = noiseAt(params, b);
            const double fd = (fa - fb) / (2 * h);
            // ridged, billow and ping-pong have kinks (|n| at n = 0): across one the
            // difference quotient mixes both slopes, so the allowance grows by the
            // jump of the analytic gradient between the two samples (tiny elsewhere).
            std::vector<float> ga(dims), gb(dims);
            noiseAt(params, a, ga);
            noiseAt(params, b, gb);
            const double jump = std::fabs(double(ga[d]) - gb[d]);
            ++checked;
            ASSERT_NEAR(g[d], fd, 2e-3 * (1 + std::fabs(fd)) + jump) << "axis " << d;
          }
        }
        EXPECT_GT(checked, 150);
      }
}

TEST(NoiseProperties, RangeOnAMillionRandomPoints) {
  // Every type and dimension, the raw noise: all within [−1, 1], and the
  // extremes come close to the bounds for the gradient types (the scale
  // factors are tight, not merely safe).
  std::mt19937_64 rng(1234);
  for (TypeDims td : everyTypeAndDims()) {
    SCOPED_TRACE(std::string(noiseTypeName(td.type)) + std::to_string(td.dims));
    NoiseParams params = single(td.type, td.dims, 8);
    params.frequency = 0.7371;
    NoiseGrid grid;
    // a million points of an irrational-step grid: as good as random positions for
    // the fractions, and fast
    grid.size = {1000, 1000, 1, 1};
    if (td.dims >= 3) grid.size = {100, 100, 100, 1};
    if (td.dims == 4) grid.size = {32, 32, 32, 31};
    grid.step = 1.0 / 3.14159265;
    grid.origin = {-101.3, 7.7, 13.1, -5.5};
    std::vector<float> out(grid.points());
    const NoiseRange r = generateNoise(params, grid, out, Execution{Backend::kSerial, 1}, NoiseEvaluation::kNaive);
    EXPECT_GE(r.min, -1.0f);
    EXPECT_LE(r.max, 1.0f);
    if (td.type != NoiseType::kCellular) {
      EXPECT_LT(r.min, -0.6f);
      EXPECT_GT(r.max, 0.6f);
    }
  }
  // fractal sums and warps on random points
  for (FractalType fractal : {FractalType::kFbm, FractalType::kRidged, FractalType::kBillow, FractalType::kPingPong})
    for (NoiseType type : {NoiseType::kPerlin, NoiseType::kSimplex, NoiseType::kValue, NoiseType::kCellular}) {
      NoiseParams params = single(type, 3, 8);
      params.fractal = fractal;
      params.octaves = 4;
      params.weighted_strength = 0.3f;
      params.gain = 0.8f;
      params.warp = DomainWarp::kFractal;
      params.warp_amplitude = 2.0f;
      for (int i = 0; i < 20000; ++i) {
        const float v = noiseAt(params, randomPoint(rng, 3, -1e3, 1e3));
        ASSERT_GE(v, -1.0f);
        ASSERT_LE(v, 1.0f);
      }
    }
}

TEST(NoiseProperties, TileableGridsRepeatWithTheirExtent) {
  // A tiled grid shifted by its extent along an axis is the same grid: the
  // sample at index size[d] equals the sample at index 0. And the seam is as
  // smooth as the inside: the jump from the last sample to the first of the
  // next tile is no larger than the largest step inside.
  for (NoiseType type : {NoiseType::kPerlin, NoiseType::kValue, NoiseType::kCellular})
    for (int dims : {2, 3}) {
      SCOPED_TRACE(std::string(noiseTypeName(type)) + std::to_string(dims));
      NoiseParams params = single(type, dims, 4);
      params.frequency = 0.0813;
      params.fractal = FractalType::kFbm;
      params.octaves = 3;
      NoiseGrid grid;
      grid.size = {48, 40, dims == 3 ? 24u : 1u, 1};
      grid.step = 0.9;
      grid.tile = true;
      std::vector<float> base(grid.points());
      generateNoise(params, grid, base, Execution{Backend::kSerial, 1});
      for (int axis = 0; axis < dims; ++axis) {
        NoiseGrid shifted = grid;
        shifted.origin[axis] += grid.step * double(grid.size[axis]);
        std::vector<float> next(grid.points());
        generateNoise(params, shifted, next, Execution{Backend::kSerial, 1});
        for (uint64_t i = 0; i < base.size(); ++i) ASSERT_NEAR(base[i], next[i], 1e-5) << "axis " << axis;
        // seam along x
      }
      const uint64_t nx = grid.size[0];
      float inside = 0, seam = 0;
      for (uint64_t row = 0; row < grid.points() / nx; ++row) {
        for (uint64_t x = 0; x + 1 < nx; ++x)
          inside = std::max(inside, std::fabs(base[row * nx + x + 1] - base[row * nx + x]));
        seam = std::max(seam, std::fabs(base[row * nx] - base[row * nx + nx - 1]));
      }
      EXPECT_LE(seam, inside * 1.01f);
    }
}

TEST(NoiseProperties, AsSmoothNearTenMillionAsNearZero) {
  // Second differences along a fine line of samples: near 1e7 they must look
  // like those near 0 (a float position would quantise to 1 there: steps and
  // spikes). Also compare with the double reference directly.
  for (NoiseType type : {NoiseType::kPerlin, NoiseType::kSimplex, NoiseType::kValue})
    for (int dims : {2, 3}) {
      SCOPED_TRACE(std::string(noiseTypeName(type)) + std::to_string(dims));
      NoiseParams params = single(type, dims, 6);
      NoiseGrid grid;
      grid.size = {4000, 1, 1, 1};
      grid.step = 1e-3;
      auto secondDiff = [&](double origin) {
        grid.origin = {origin, origin * 0.5 + 0.25, -origin + 0.125, 0};
        std::vector<float> out(grid.points());
        generateNoise(params, grid, out, Execution{Backend::kSerial, 1}, NoiseEvaluation::kNaive);
        double m = 0;
        for (size_t i = 1; i + 1 < out.size(); ++i) m = std::max(m, std::fabs(double(out[i + 1]) - 2 * out[i] + out[i - 1]));
        // and the values are the reference's
        for (size_t i = 0; i < out.size(); i += 97) {
          std::vector<double> p = {grid.origin[0] + grid.step * double(i), grid.origin[1], grid.origin[2]};
          p.resize(dims);
          EXPECT_NEAR(out[i], reference(type, dims, refKey(6, 0), p), 3e-5);
        }
        return m;
      };
      const double near0 = secondDiff(0.3);
      const double far = secondDiff(1e7 + 0.3);
      EXPECT_LT(far, 4 * near0 + 1e-6);
      EXPECT_LT(far, 1e-4);  // a quantised position would jump by ~noise slope · 1
    }
}

TEST(NoiseProperties, TimeIsOneMoreCoordinate) {
  // 2D + T equals 3D noise at (x, y, t) — the paper's 2D+T.
  NoiseParams with_time = single(NoiseType::kPerlin, 2, 31);
  with_time.time = 4.375;
  NoiseParams three = single(NoiseType::kPerlin, 3, 31);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 100; ++i) {
    std::vector<double> p = randomPoint(rng, 2, -10, 10);
    EXPECT_EQ(noiseAt(with_time, p), noiseAt(three, std::vector<double>{p[0], p[1], 4.375}));
  }
}

TEST(NoiseProperties, SeedsGiveDifferentFields) {
  std::vector<double> p = {3.7, -1.2, 0.55};
  EXPECT_NE(noiseAt(single(NoiseType::kPerlin, 3, 1), p), noiseAt(single(NoiseType::kPerlin, 3, 2), p));
  EXPECT_NE(noiseAt(single(NoiseType::kPerlin, 3, 1), p),
            noiseAt(single(NoiseType::kPerlin, 3, 1 + (uint64_t{1} << 32)), p));
}

// ---- errors ---------------------------------------------------------------------------

ExitCode codeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exitCode();
  }
  return ExitCode::kOk;
}

TEST(NoiseValidate, RejectsBadParametersAndGrids) {
  NoiseParams ok;
  NoiseGrid grid;
  grid.size = {4, 4, 4, 1};
  EXPECT_EQ(codeOf([&] { validateNoise(ok, &grid); }), ExitCode::kOk);
  auto bad = [&](auto mutate, ExitCode want = ExitCode::kUsage) {
    NoiseParams p = ok;
    NoiseGrid g = grid;
    mutate(p, g);
    EXPECT_EQ(codeOf([&] { validateNoise(p, &g); }), want);
  };
  const double nan = std::nan(""), inf = INFINITY;
  bad([&](NoiseParams& p, NoiseGrid&) { p.frequency = nan; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.frequency = inf; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.frequency = 0; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.lacunarity = float(nan); });
  bad([&](NoiseParams& p, NoiseGrid&) { p.gain = float(inf); });
  bad([&](NoiseParams& p, NoiseGrid&) { p.warp_amplitude = float(nan); });
  bad([&](NoiseParams& p, NoiseGrid&) { p.time = nan; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.dims = 5; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.dims = 1; });
  bad([&](NoiseParams& p, NoiseGrid& g) { p.dims = 4, p.time = 1.0, g.size = {2, 2, 2, 2}; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.octaves = 0; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.octaves = kMaxOctaves + 1; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.cellular_jitter = 1.5f; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.type = NoiseType::kCellular, p.dims = 4; });
  bad([&](NoiseParams& p, NoiseGrid&) { p.type = NoiseType(9); });
  bad([&](NoiseParams&, NoiseGrid& g) { g.step = nan; });
  bad([&](NoiseParams&, NoiseGrid& g) { g.step = -1; });
  bad([&](NoiseParams&, NoiseGrid& g) { g.origin[1] = inf; });
  bad([&](NoiseParams&, NoiseGrid& g) { g.size[0] = 0; });
  bad([&](NoiseParams&, NoiseGrid& g) { g.size[3] = 2; });  // dims 3: the w axis is unused
  bad([&](NoiseParams&, NoiseGrid& g) { g.origin[0] = 1e12; });  // beyond 2^31 cells
  bad([&](NoiseParams& p, NoiseGrid& g) { p.type = NoiseType::kSimplex, g.tile = true; });
  bad([&](NoiseParams&, NoiseGrid& g) { g.size = {uint64_t{1} << 31, uint64_t{1} << 31, 1u << 20, 1}; },
      ExitCode::kBadInput);
  bad([&](NoiseParams&, NoiseGrid& g) { g.size = {uint64_t{1} << 30, uint64_t{1} << 30, 4, 1}; },
      ExitCode::kBadInput);

  // the entry points validate too
  std::vector<float> out(10);
  EXPECT_EQ(codeOf([&] { generateNoise(ok, grid, out, Execution{}); }), ExitCode::kUsage);  // wrong size
  NoiseParams value = ok;
  value.type = NoiseType::kValue;
  std::vector<double> p = {1, 2, 3};
  std::vector<float> g(3);
  EXPECT_EQ(codeOf([&] { noiseAt(value, p, g); }), ExitCode::kUsage);
  EXPECT_EQ(codeOf([&] { noiseAt(ok, std::vector<double>{1, 2}); }), ExitCode::kUsage);
  EXPECT_EQ(codeOf([&] { noiseAt(ok, std::vector<double>{1, nan, 2}); }), ExitCode::kUsage);
}

TEST(NoiseNames, ParseAndNameRoundTrip) {
  for (NoiseType t : {NoiseType::kPerlin, NoiseType::kSimplex, NoiseType::kValue, NoiseType::kCellular})
    EXPECT_EQ(parseNoiseType(noiseTypeName(t)), t);
  EXPECT_FALSE(parseNoiseType("worley"));
  EXPECT_EQ(parseFractalType("pingpong"), FractalType::kPingPong);
  EXPECT_EQ(parseFractalType("none"), FractalType::kNone);
  EXPECT_FALSE(parseFractalType("fBm "));
  EXPECT_EQ(parseCellularDistance("sq"), CellularDistance::kEuclideanSq);
  EXPECT_EQ(parseCellularDistance("chebyshev"), CellularDistance::kChebyshev);
  EXPECT_EQ(parseCellularReturn("f2-f1"), CellularReturn::kF2MinusF1);
  EXPECT_EQ(parseCellularReturn("value"), CellularReturn::kCellValue);
  EXPECT_FALSE(parseCellularReturn("f3"));
}

}  // namespace
}  // namespace procgen

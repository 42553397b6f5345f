// The opencl chaos game (src/flame/opencl/iterate.*) against an independent
// reference written here: a naive per-point chaos game in double with flam3's
// semantics (flam3.c flam3_iterate, rect.c iter_thread, variations.c
// apply_xform for linear and spherical; FLAM3_SPEC.md "Iteration
// semantics"): fresh start points every 10000 samples, 15 fuse steps, the
// xform drawn by weight (× the xaos row of the last xform), bad values
// replaced and retried five times, the final xform on the plotted copy only,
// the plot weighted by flam3's adjusted opacity, the palette step or linear.
//
// The statistical bound. Both sides are Monte Carlo estimates of the same
// measure, so the histograms are compared after normalising and summing
// 8×8-cell blocks: the total-variation distance TV = ½ Σ |p_k − q_k| over
// blocks, on the counts and on the red channel. With N independent samples
// E[TV] ≈ ½ Σ sqrt(2 p_k / (π N)) ≤ ½ sqrt(2K / (π N)): about 0.006 for the
// K ≈ 470 blocks and N ≈ 1.2·10^6 samples here; chaos-game samples are
// correlated along a trajectory, which inflates that by the chain's
// autocorrelation time: two reference runs with different seeds differ by
// 0.0085, opencl and the reference by 0.006–0.010 on PoCL. The bound is
// kTvBound = 0.025, about 3× the observed noise; a negative control shows
// that moving 10% of the weight between two xforms gives TV 0.165.
//
// Exact checks: samples plotted == layout.samples (and 255 × samples in the
// count channel when every point is in view); an xaos-forbidden transition
// leaves its region empty; an opacity-0 xform's region is empty; a genome
// whose only xform always overflows counts exactly five bad values per step;
// the same seed on one device gives the same histogram bit for bit, and so
// do the two ways of plotting (direct atomics, binned bands).
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "flame/chaos_program.hpp"
#include "flame/flame_stages.hpp"
#include "flame/opencl/iterate_opencl.hpp"
#include "opencl/runtime.hpp"
#include "procgen/error.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

using flame::OpenCLAccumulation;
using flame::OpenCLIterateReport;
using flame::OpenCLIterateTuning;

constexpr double kTvBound = 0.025;
constexpr int kBlock = 8;
constexpr int kLinear = 0, kSpherical = 2;  // catalogue indices

const Execution kOpenCL{Backend::kOpenCL, 1, -1};

// ---- genomes ----------------------------------------------------------------

FlameXform makeXform(double weight, double color, FlameAffine affine,
                     std::vector<FlameVariationTerm> variations) {
  FlameXform xf;
  xf.weight = weight;
  xf.color = color;
  xf.affine = affine;
  xf.variations = std::move(variations);
  return xf;
}

/// A camera on [-w/2s, w/2s] × [-h/2s, h/2s] and a palette whose channels
/// differ (red rises, green falls, blue is a step), so colour errors show;
/// alpha is not a multiple of 1/255, so float sums of it round and depend on
/// the order of the additions.
FlameGenome baseGenome(int width, int height, double scale, double quality) {
  FlameGenome g;
  g.width = width;
  g.height = height;
  g.scale = scale;
  g.quality = quality;
  g.estimator_radius = 0;
  for (int i = 0; i < 256; ++i)
    g.palette[i] = {i / 255.0, 1.0 - i / 255.0, i < 128 ? 0.2 : 0.9, 0.9 - i / 1000.0};
  return g;
}

/// Sierpinski's triangle with corners (-1,-1), (1,-1), (0,1): f_k(p) = (p + v_k) / 2.
FlameGenome sierpinski() {
  FlameGenome g = baseGenome(128, 128, 128 / 2.4, 30);
  const double v[3][2] = {{-1, -1}, {1, -1}, {0, 1}};
  for (int k = 0; k < 3; ++k)
    g.xforms.push_back(
        makeXform(1.0, k / 2.0, {0.5, 0, 0.5 * v[k][0], 0, 0.5, 0.5 * v[k][1]}, {{kLinear, 1.0}}));
  return g;
}

/// Linear and spherical terms, a post transform, uneven weights and colour speeds.
FlameGenome mixedGenome() {
  FlameGenome g = baseGenome(200, 150, 50, 40);
  g.xforms.push_back(
      makeXform(0.5, 0.0, {0.6, -0.3, 0.2, 0.3, 0.6, -0.1}, {{kLinear, 0.7}, {kSpherical, 0.3}}));
  FlameXform b = makeXform(0.3, 0.5, {0.5, 0.1, -0.4, -0.1, 0.5, 0.3}, {{kSpherical, 1.0}});
  b.post = {0.9, 0.1, 0.0, -0.1, 0.9, 0.05};
  g.xforms.push_back(b);
  FlameXform c = makeXform(0.2, 1.0, {-0.4, 0, 0.5, 0, -0.4, 0.5}, {{kLinear, 1.0}});
  c.color_speed = 0.3;
  g.xforms.push_back(c);
  return g;
}

// ---- the reference: a naive chaos game in double ---------------------------

struct Point {
  double x, y, color, opacity;
};

struct Reference {
  explicit Reference(const FlameGenome& genome, uint64_t seed) : g(genome), rng(seed) {}

  double uniform01() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }
  double uniform11() { return std::uniform_real_distribution<double>(-1.0, 1.0)(rng); }

  /// variations.c apply_xform for linear and spherical; true when the result is bad.
  bool apply(const FlameXform& xf, const Point& p, Point& q) {
    q.color = xf.color_speed * xf.color + (1.0 - xf.color_speed) * p.color;
    q.opacity = xf.opacity == 0 ? 0.0 : std::pow(10.0, -std::log(1.0 / xf.opacity) / std::log(2.0));
    const FlameAffine& a = xf.affine;
    const double tx = a.a * p.x + a.b * p.y + a.c, ty = a.d * p.x + a.e * p.y + a.f;
    double sx = 0, sy = 0;
    for (const FlameVariationTerm& t : xf.variations) {
      if (t.index == kLinear) {
        sx += t.weight * tx;
        sy += t.weight * ty;
      } else if (t.index == kSpherical) {
        const double r2 = t.weight / (tx * tx + ty * ty + 1e-10);
        sx += r2 * tx;
        sy += r2 * ty;
      } else {
        ADD_FAILURE() << "reference: variation " << t.index << " not supported";
      }
    }
    if (!xf.post.isIdentity()) {
      const FlameAffine& m = xf.post;
      const double px = m.a * sx + m.b * sy + m.c, py = m.d * sx + m.e * sy + m.f;
      sx = px;
      sy = py;
    }
    q.x = sx;
    q.y = sy;
    const auto bad = [](double v) { return v != v || v > 1e10 || v < -1e10; };
    if (bad(q.x) || bad(q.y)) {
      q.x = uniform11();
      q.y = uniform11();
      return true;
    }
    return false;
  }

  int choose(int last) {
    const size_t n = g.xforms.size();
    std::vector<double> w(n);
    for (size_t j = 0; j < n; ++j) {
      w[j] = g.xforms[j].weight;
      if (last >= 0 && j < g.xforms[static_cast<size_t>(last)].chaos.size())
        w[j] *= g.xforms[static_cast<size_t>(last)].chaos[j];
    }
    return std::discrete_distribution<int>(w.begin(), w.end())(rng);
  }

  void plot(const FlameHistogramLayout& layout, Point p, std::vector<double>& hist) {
    if (layout.rotate_radians != 0) {
      const double c = std::cos(layout.rotate_radians), s = std::sin(layout.rotate_radians);
      const double dx = p.x - layout.center_x, dy = p.y - layout.center_y;
      p.x = dx * c - dy * s + layout.center_x;
      p.y = dx * s + dy * c + layout.center_y;
    }
    const double* b = layout.bounds;
    if (!(p.x >= b[0] && p.y >= b[1] && p.x <= b[2] && p.y <= b[3]) || p.opacity == 0) return;
    const int ix = static_cast<int>(layout.width * (p.x - b[0]) / (b[2] - b[0]));
    const int iy = static_cast<int>(layout.height * (p.y - b[1]) / (b[3] - b[1]));
    if (ix >= layout.width || iy >= layout.height) return;
    double rgba[4];
    const double index = p.color * 256.0;
    int ci = static_cast<int>(index);
    if (g.palette_mode == FlamePaletteMode::kLinear) {
      double frac = index - ci;
      if (ci < 0) ci = 0, frac = 0;
      if (ci >= 255) ci = 254, frac = 1;
      for (int k = 0; k < 4; ++k)
        rgba[k] = 255 * (g.palette[ci][k] * (1 - frac) + g.palette[ci + 1][k] * frac);
    } else {
      ci = std::clamp(ci, 0, 255);
      for (int k = 0; k < 4; ++k) rgba[k] = 255 * g.palette[ci][k];
    }
    double* cell = &hist[5 * (static_cast<size_t>(iy) * layout.width + ix)];
    for (int k = 0; k < 4; ++k) cell[k] += p.opacity * rgba[k];
    cell[4] += p.opacity * 255.0;
  }

  /// flam3_iterate over sub-batches of 10000, plotted as iter_thread does.
  std::vector<double> run(const FlameHistogramLayout& layout) {
    std::vector<double> hist(5 * static_cast<size_t>(layout.width) * layout.height, 0.0);
    const uint64_t samples = layout.samples;
    for (uint64_t done = 0; done < samples;) {
      const uint64_t n = std::min<uint64_t>(10000, samples - done);
      Point p{uniform11(), uniform11(), uniform01(), uniform01()};
      int last = -1, consec = 0;
      for (int64_t i = -15; i < static_cast<int64_t>(n); ++i) {
        const int fn = choose(last);
        Point q;
        if (apply(g.xforms[static_cast<size_t>(fn)], p, q)) {
          ++bad_values;
          if (++consec < 5) {
            p = q;
            --i;
            continue;
          }
        }
        consec = 0;
        last = fn;
        p = q;
        Point plotted = p;
        if (g.final_xform && (g.final_xform->opacity == 1 || uniform01() < g.final_xform->opacity)) {
          apply(*g.final_xform, p, plotted);
          plotted.opacity = p.opacity;
        }
        if (i >= 0) plot(layout, plotted, hist);
      }
      done += n;
    }
    return hist;
  }

  const FlameGenome& g;
  std::mt19937_64 rng;
  uint64_t bad_values = 0;
};

// ---- comparison ---------------------------------------------------------------

std::vector<double> toDoubles(const FlameHistogram& h) {
  std::vector<double> out(h.buckets.size() * 5);
  for (size_t i = 0; i < h.buckets.size(); ++i) {
    const FlameBucket& b = h.buckets[i];
    const double v[5] = {b.red, b.green, b.blue, b.alpha, b.count};
    std::copy(v, v + 5, &out[5 * i]);
  }
  return out;
}

/// Channel `channel` summed over kBlock×kBlock blocks and normalised to sum 1.
std::vector<double> blocks(const std::vector<double>& hist, const FlameHistogramLayout& layout, int channel) {
  const int bw = (layout.width + kBlock - 1) / kBlock, bh = (layout.height + kBlock - 1) / kBlock;
  std::vector<double> out(static_cast<size_t>(bw) * bh, 0.0);
  double total = 0;
  for (int y = 0; y < layout.height; ++y)
    for (int x = 0; x < layout.width; ++x) {
      const double v = hist[5 * (static_cast<size_t>(y) * layout.width + x) + channel];
      out[static_cast<size_t>(y / kBlock) * bw + x / kBlock] += v;
      total += v;
    }
  for (double& v : out) v /= total;
  return out;
}

double totalVariation(const std::vector<double>& a, const std::vector<double>& b,
                      const FlameHistogramLayout& layout, int channel) {
  const std::vector<double> p = blocks(a, layout, channel), q = blocks(b, layout, channel);
  double tv = 0;
  for (size_t k = 0; k < p.size(); ++k) tv += std::fabs(p[k] - q[k]);
  return tv / 2;
}

double channelSum(const std::vector<double>& hist, int channel) {
  double s = 0;
  for (size_t i = channel; i < hist.size(); i += 5) s += hist[i];
  return s;
}

FlameHistogram runOpenCL(const FlameGenome& genome, const FlameRenderOptions& options,
                         const OpenCLIterateTuning& tuning = {}, OpenCLIterateReport* report = nullptr) {
  const flame::ChaosProgram program = flame::compileChaosProgram(genome);
  const FlameHistogramLayout layout = flameHistogramLayout(genome, options);
  return flame::iterateOpenCLTuned(program, layout, options, kOpenCL, tuning, report);
}

/// The opencl histogram against the reference: counts and red within kTvBound,
/// mean colour per hit within 1%.
void expectMatchesReference(const FlameGenome& genome, const OpenCLIterateTuning& tuning = {},
                            const FlameRenderOptions& options = {}) {
  const FlameHistogram got = runOpenCL(genome, options, tuning);
  EXPECT_EQ(got.samples, got.layout.samples);
  Reference reference(genome, 12345);
  const std::vector<double> want = reference.run(got.layout);
  const std::vector<double> have = toDoubles(got);
  const double tv_count = totalVariation(have, want, got.layout, 4);
  const double tv_red = totalVariation(have, want, got.layout, 0);
  EXPECT_LT(tv_count, kTvBound);
  EXPECT_LT(tv_red, kTvBound);
  for (int channel = 0; channel < 3; ++channel) {
    const double mean_have = channelSum(have, channel) / channelSum(have, 4);
    const double mean_want = channelSum(want, channel) / channelSum(want, 4);
    EXPECT_NEAR(mean_have, mean_want, 0.01 * std::max(mean_want, 0.05)) << "channel " << channel;
  }
  // The in-view weight agrees too (the same share of samples lands in view).
  EXPECT_NEAR(channelSum(have, 4) / channelSum(want, 4), 1.0, 0.01);
  std::printf("    TV counts %.4f, TV red %.4f (bound %.3f)\n", tv_count, tv_red, kTvBound);
}

/// Cells whose centre lies in the triangle (a, b, c) shrunk by `margin` cells.
template <typename Fn>
void forCellsInTriangle(const FlameHistogramLayout& layout, const double a[2], const double b[2],
                        const double c[2], double margin, Fn&& fn) {
  const double* bd = layout.bounds;
  const double cell = (bd[2] - bd[0]) / layout.width;
  auto side = [](const double p[2], const double q[2], double x, double y) {
    const double nx = q[1] - p[1], ny = p[0] - q[0], len = std::hypot(nx, ny);
    return ((x - p[0]) * nx + (y - p[1]) * ny) / len;
  };
  const double orient = side(a, b, c[0], c[1]) > 0 ? 1 : -1;
  for (int y = 0; y < layout.height; ++y)
    for (int x = 0; x < layout.width; ++x) {
      const double wx = bd[0] + (x + 0.5) * cell, wy = bd[1] + (y + 0.5) * (bd[3] - bd[1]) / layout.height;
      const double m = margin * cell;
      if (orient * side(a, b, wx, wy) > m && orient * side(b, c, wx, wy) > m &&
          orient * side(c, a, wx, wy) > m)
        fn(static_cast<size_t>(y) * layout.width + x);
    }
}

// ---- tests ----------------------------------------------------------------------

// Every build (fixed-point or float accumulation, direct or banded plotting)
// compiles without warnings (fixed point where the device has 64-bit atomics).
TEST(FlameIterateOpenCL, KernelsBuildWithoutWarnings) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  opencl::Context& ctx = opencl::Context::get();
  size_t size = 0;
  clGetDeviceInfo(ctx.device(), CL_DEVICE_EXTENSIONS, 0, nullptr, &size);
  std::string extensions(size, '\0');
  clGetDeviceInfo(ctx.device(), CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr);
  const bool int64_atomics = extensions.find("cl_khr_int64_base_atomics") != std::string::npos;
  for (const char* options :
       {"-DPG_FLAME_FIXED_POINT=1 -DPG_FLAME_BANDED=0", "-DPG_FLAME_FIXED_POINT=0 -DPG_FLAME_BANDED=0",
        "-DPG_FLAME_FIXED_POINT=1 -DPG_FLAME_BANDED=1", "-DPG_FLAME_FIXED_POINT=0 -DPG_FLAME_BANDED=1"}) {
    SCOPED_TRACE(options);
    if (!int64_atomics && std::string(options).find("FIXED_POINT=1") != std::string::npos) continue;
    std::string log;
    cl_program p = ctx.buildSource(opencl::expandIncludes("flame/opencl/iterate.cl"),
                                   std::string("-Werror ") + options, &log);
    clReleaseProgram(p);
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

// The bound has power: the reference against itself with another seed stays
// well inside it, a genome with 10% of the weight moved between two xforms
// goes well beyond it.
TEST(FlameIterateOpenCL, BoundSeparatesEqualFromDifferentGenomes) {
  const FlameGenome genome = mixedGenome();
  const FlameHistogramLayout layout = flameHistogramLayout(genome, {});
  const std::vector<double> a = Reference(genome, 1).run(layout), b = Reference(genome, 2).run(layout);
  FlameGenome moved = genome;
  moved.xforms[0].weight -= 0.1;
  moved.xforms[2].weight += 0.1;
  const std::vector<double> c = Reference(moved, 3).run(layout);
  const double same = totalVariation(a, b, layout, 4), different = totalVariation(a, c, layout, 4);
  std::printf("    reference vs reference: TV %.4f; vs moved weights: TV %.4f\n", same, different);
  EXPECT_LT(same, kTvBound / 2);
  EXPECT_GT(different, 2 * kTvBound);
}

TEST(FlameIterateOpenCL, PresortedMatchesNaiveReference) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  expectMatchesReference(mixedGenome());
}

TEST(FlameIterateOpenCL, GroupedPathMatchesNaiveReference) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  OpenCLIterateTuning tuning;
  tuning.grouped = true;
  expectMatchesReference(mixedGenome(), tuning);
}

// Every accumulation: direct float cmpxchg atomics, direct and banded fixed point.
TEST(FlameIterateOpenCL, EveryAccumulationMatchesNaiveReference) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  OpenCLIterateTuning tuning;
  tuning.plotting = flame::OpenCLPlotting::kDirect;
  tuning.accumulation = OpenCLAccumulation::kFloat;
  expectMatchesReference(mixedGenome(), tuning);
  OpenCLIterateReport report;
  tuning.accumulation = OpenCLAccumulation::kAuto;  // direct: fixed point where the device can
  (void)runOpenCL(sierpinski(), {}, tuning, &report);
  if (!report.fixed_point) GTEST_SKIP() << "no 64-bit atomics for the fixed-point histogram";
  tuning.accumulation = OpenCLAccumulation::kFixedPoint;
  expectMatchesReference(mixedGenome(), tuning);
  tuning.plotting = flame::OpenCLPlotting::kBanded;
  expectMatchesReference(mixedGenome(), tuning);
}

TEST(FlameIterateOpenCL, LinearPaletteAndRotationMatchReference) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = mixedGenome();
  genome.palette_mode = FlamePaletteMode::kLinear;
  genome.rotate = 30;
  genome.center_x = 0.2;
  genome.center_y = -0.1;
  expectMatchesReference(genome);
}

// The final xform bends the plotted copies only: were it fed back, the
// attractor would differ (a spherical final turns the triangle inside out).
TEST(FlameIterateOpenCL, FinalXformAppliesToPlottedCopiesOnly) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = sierpinski();
  genome.scale = 128 / 6.0;
  FlameXform fin = makeXform(0, 0.8, {1.2, 0.3, 0.4, -0.3, 1.2, 0.5}, {{kSpherical, 1.0}, {kLinear, 0.2}});
  fin.color_speed = 0.6;
  genome.final_xform = fin;
  expectMatchesReference(genome);
  genome.final_xform->opacity = 0.5;  // applied to about half of the plotted points
  expectMatchesReference(genome);
}

// xaos: after xform 0, xform 1 is forbidden, so the sub-triangle f1(f0(T))
// receives nothing; the rest matches the reference (which draws by the rows).
TEST(FlameIterateOpenCL, XaosForbiddenTransitionLeavesItsRegionEmpty) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = sierpinski();
  genome.xforms[0].chaos = {1.0, 0.0, 2.0};
  genome.xforms[2].chaos = {0.5};  // entries past the end are 1
  const FlameHistogram got = runOpenCL(genome, {});
  // f1(f0(T)): corners of T mapped by f0 then f1.
  const double v[3][2] = {{-1, -1}, {1, -1}, {0, 1}};
  double corner[3][2];
  for (int k = 0; k < 3; ++k) {
    const double x0 = (v[k][0] + v[0][0]) / 2, y0 = (v[k][1] + v[0][1]) / 2;
    corner[k][0] = (x0 + v[1][0]) / 2;
    corner[k][1] = (y0 + v[1][1]) / 2;
  }
  double forbidden = 0;
  size_t cells = 0;
  forCellsInTriangle(got.layout, corner[0], corner[1], corner[2], 1.5, [&](size_t i) {
    forbidden += got.buckets[i].count;
    ++cells;
  });
  EXPECT_GT(cells, 20u);
  EXPECT_EQ(forbidden, 0.0);
  // The permitted mirror image f0(f1(T)) is populated.
  double permitted = 0;
  for (int k = 0; k < 3; ++k) {
    const double x1 = (v[k][0] + v[1][0]) / 2, y1 = (v[k][1] + v[1][1]) / 2;
    corner[k][0] = (x1 + v[0][0]) / 2;
    corner[k][1] = (y1 + v[0][1]) / 2;
  }
  forCellsInTriangle(got.layout, corner[0], corner[1], corner[2], 1.5,
                     [&](size_t i) { permitted += got.buckets[i].count; });
  EXPECT_GT(permitted, 0.0);
  expectMatchesReference(genome);
}

// Beyond 256 xforms the xaos draw counts in global memory instead of local:
// Sierpinski's three maps, each repeated 100 times with xaos rows that keep
// a third of the weight per map, make the same attractor as the three alone.
TEST(FlameIterateOpenCL, XaosWithManyXforms) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const FlameGenome three = sierpinski();
  FlameGenome many = three;
  many.xforms.clear();
  for (int copy = 0; copy < 100; ++copy)
    for (const FlameXform& xf : three.xforms) {
      FlameXform c = xf;
      c.weight = 0.01;
      // Even copies twice the weight, odd ones forbidden: each map keeps a third.
      for (int j = 0; j < 300; ++j) c.chaos.push_back((j / 3) % 2 == 0 ? 2.0 : 0.0);
      many.xforms.push_back(c);
    }
  OpenCLIterateReport report;
  const FlameHistogram got = runOpenCL(many, {}, {}, &report);
  EXPECT_TRUE(report.grouped);
  const std::vector<double> want = Reference(three, 9).run(got.layout);
  EXPECT_LT(totalVariation(toDoubles(got), want, got.layout, 4), kTvBound);
}

// Opacity 0: xform 2 iterates but never plots, so its sub-triangle (the top
// one) is empty; opacity 0.5 plots with flam3's adjusted weight 0.5^log2(10).
TEST(FlameIterateOpenCL, OpacityWeightsThePlot) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = sierpinski();
  genome.xforms[2].opacity = 0.0;
  const FlameHistogram got = runOpenCL(genome, {});
  const double top[3][2] = {{-0.5, 0}, {0.5, 0}, {0, 1}};
  double hidden = 0, shown = 0;
  forCellsInTriangle(got.layout, top[0], top[1], top[2], 1.5,
                     [&](size_t i) { hidden += got.buckets[i].count; });
  const double left[3][2] = {{-1, -1}, {0, -1}, {-0.5, 0}};
  forCellsInTriangle(got.layout, left[0], left[1], left[2], 1.5,
                     [&](size_t i) { shown += got.buckets[i].count; });
  EXPECT_EQ(hidden, 0.0);
  EXPECT_GT(shown, 0.0);
  // Two thirds of the samples are plotted, each with weight 255.
  double total = 0;
  for (const FlameBucket& b : got.buckets) total += b.count;
  EXPECT_NEAR(total / (255.0 * static_cast<double>(got.samples)), 2.0 / 3.0, 0.01);
  expectMatchesReference(genome);
  genome.xforms[2].opacity = 0.5;
  expectMatchesReference(genome);
}

// Exactly layout.samples points are plotted, also when P does not divide the
// samples (the last step plots a remainder): with the whole attractor in
// view and opacity 1 the count channel holds 255 per sample, exactly. The
// progress callback rises to 1.
TEST(FlameIterateOpenCL, PlotsExactlyTheLayoutSamples) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = sierpinski();
  genome.width = 101;
  genome.height = 77;
  genome.scale = 77 / 2.4;
  genome.quality = 7.3;
  for (bool grouped : {false, true}) {
    OpenCLIterateTuning tuning;
    tuning.grouped = grouped;
    OpenCLIterateReport report;
    FlameRenderOptions options;
    std::vector<double> progress;
    options.progress = [&](double fraction) { progress.push_back(fraction); };
    const FlameHistogram got = runOpenCL(genome, options, tuning, &report);
    SCOPED_TRACE(grouped ? "grouped" : "presorted");
    ASSERT_FALSE(progress.empty());
    EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
    EXPECT_EQ(progress.back(), 1.0);
    ASSERT_EQ(got.layout.samples, static_cast<uint64_t>(7.3 * 101 * 77));
    EXPECT_NE(got.layout.samples % report.points, 0u);
    EXPECT_EQ(got.samples, got.layout.samples);
    double total = 0;
    for (const FlameBucket& b : got.buckets) total += b.count;
    EXPECT_EQ(total, 255.0 * static_cast<double>(got.layout.samples));
    EXPECT_EQ(got.iterations, static_cast<double>(report.points) * static_cast<double>(report.steps));
  }
}

// An xform whose result always overflows (|x| > 1e10) is retried five times
// and the fifth random replacement kept: five bad values per step, exactly,
// and the plotted points are uniform in [-1, 1]².
TEST(FlameIterateOpenCL, BadValuesAreReplacedRetriedAndCounted) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = baseGenome(64, 64, 64 / 2.0, 50);
  genome.xforms.push_back(makeXform(1.0, 0.5, {1e10, 0, 5e10, 0, 1, 0}, {{kLinear, 1.0}}));
  OpenCLIterateReport report;
  const FlameHistogram got = runOpenCL(genome, {}, {}, &report);
  EXPECT_EQ(static_cast<double>(got.bad_values), 5.0 * got.iterations);
  // Uniform: each quadrant of the square holds a quarter of the weight.
  double quadrant[4] = {0, 0, 0, 0}, total = 0;
  for (int y = 0; y < got.layout.height; ++y)
    for (int x = 0; x < got.layout.width; ++x) {
      const double c = got.buckets[static_cast<size_t>(y) * got.layout.width + x].count;
      quadrant[(y * 2 / got.layout.height) * 2 + x * 2 / got.layout.width] += c;
      total += c;
    }
  EXPECT_EQ(total, 255.0 * static_cast<double>(got.samples));
  for (double q : quadrant) EXPECT_NEAR(q / total, 0.25, 0.01);
}

// The same seed on one device gives the same histogram bit for bit, with the
// defaults (on a CPU device: banded float adds in batch order) and with
// direct fixed-point atomics (sums independent of the order of the adds);
// random streams are keyed by point, not by work-item, so the scheduling does
// not matter. Another seed gives another histogram.
TEST(FlameIterateOpenCL, SameSeedSameHistogram) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome xaos = sierpinski();
  xaos.xforms[0].chaos = {1.0, 0.0, 2.0};
  OpenCLIterateTuning direct;
  direct.plotting = flame::OpenCLPlotting::kDirect;
  for (const OpenCLIterateTuning& tuning : {OpenCLIterateTuning{}, direct})
    for (const FlameGenome& genome : {mixedGenome(), xaos}) {
      FlameRenderOptions options;
      options.seed = 77;
      OpenCLIterateReport report;
      const FlameHistogram a = runOpenCL(genome, options, tuning, &report);
      if (!report.deterministic) {
        std::printf("    skipped: no 64-bit atomics, float atomics are order-dependent\n");
        continue;
      }
      for (int again = 0; again < 3; ++again) {  // scheduling races show in some runs only
        const FlameHistogram b = runOpenCL(genome, options, tuning);
        ASSERT_EQ(a.buckets.size(), b.buckets.size());
        EXPECT_EQ(std::memcmp(a.buckets.data(), b.buckets.data(), a.buckets.size() * sizeof(FlameBucket)), 0);
        EXPECT_EQ(a.bad_values, b.bad_values);
      }
      options.seed = 78;
      const FlameHistogram c = runOpenCL(genome, options, tuning);
      EXPECT_NE(std::memcmp(a.buckets.data(), c.buckets.data(), a.buckets.size() * sizeof(FlameBucket)), 0);
    }
}

// The two ways of plotting (each step adding to the histogram with atomics;
// records binned by band and added band by band, with plain adds or with
// atomics) sum the same fixed-point values in different orders: the same
// histogram bit for bit, also with several batches and a band per 2^8 cells.
// Banded float sums are reproducible and agree to float rounding.
TEST(FlameIterateOpenCL, BandedAndDirectPlottingAgreeExactly) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = mixedGenome();
  genome.final_xform =
      makeXform(0, 0.3, {0.9, 0.2, 0.1, -0.2, 0.9, 0.0}, {{kSpherical, 0.5}, {kLinear, 0.5}});
  FlameRenderOptions options;
  options.seed = 5;
  OpenCLIterateTuning direct, banded, banded_atomics;
  direct.accumulation = banded.accumulation = banded_atomics.accumulation = OpenCLAccumulation::kFixedPoint;
  direct.plotting = flame::OpenCLPlotting::kDirect;
  banded.plotting = banded_atomics.plotting = flame::OpenCLPlotting::kBanded;
  banded.band_shift = banded_atomics.band_shift = 8;
  banded.batch_records = banded_atomics.batch_records = 1 << 16;
  banded_atomics.band_work_group = 64;
  OpenCLIterateReport report;
  const FlameHistogram a = runOpenCL(genome, options, direct, &report);
  if (!report.fixed_point) GTEST_SKIP() << "no 64-bit atomics: float accumulation is order-dependent";
  EXPECT_FALSE(report.banded);
  for (const OpenCLIterateTuning& tuning : {banded, banded_atomics}) {
    const FlameHistogram b = runOpenCL(genome, options, tuning, &report);
    EXPECT_TRUE(report.banded);
    ASSERT_EQ(a.buckets.size(), b.buckets.size());
    EXPECT_EQ(std::memcmp(a.buckets.data(), b.buckets.data(), a.buckets.size() * sizeof(FlameBucket)), 0);
    EXPECT_EQ(a.bad_values, b.bad_values);
  }
  // Banded floats (flam3's bucket type, added in batch order) round where the
  // fixed-point sums do not: equal within float rounding, and reproducible.
  OpenCLIterateTuning floats = banded;
  floats.accumulation = OpenCLAccumulation::kFloat;
  const FlameHistogram f = runOpenCL(genome, options, floats, &report);
  EXPECT_TRUE(report.deterministic);
  const FlameHistogram g = runOpenCL(genome, options, floats);
  EXPECT_EQ(std::memcmp(f.buckets.data(), g.buckets.data(), f.buckets.size() * sizeof(FlameBucket)), 0);
  const std::vector<double> fixed_values = toDoubles(a), float_values = toDoubles(f);
  for (int channel : {0, 4}) EXPECT_LT(totalVariation(float_values, fixed_values, a.layout, channel), 1e-6);
}

// The device buffers are asked of the memory budget before anything is
// allocated; a missing device is BackendUnavailableError.
TEST(FlameIterateOpenCL, BudgetAndDeviceErrors) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const FlameGenome genome = sierpinski();
  const flame::ChaosProgram program = flame::compileChaosProgram(genome);
  FlameRenderOptions options;
  const FlameHistogramLayout layout = flameHistogramLayout(genome, options);
  // Enough for the host histogram the layout asks for, not for the device's.
  options.memory_budget = static_cast<uint64_t>(layout.width) * layout.height * sizeof(FlameBucket) + 4096;
  EXPECT_THROW(flame::iterateOpenCL(program, layout, options, kOpenCL), ResourceError);
  options.memory_budget = 0;
  const Execution missing{Backend::kOpenCL, 1, static_cast<int>(openclDevices().size())};
  EXPECT_THROW(flame::iterateOpenCL(program, layout, options, missing), BackendUnavailableError);
  OpenCLIterateTuning tuning;
  tuning.points = 1 << 15;  // not a power of 4
  EXPECT_THROW(flame::iterateOpenCLTuned(program, layout, options, kOpenCL, tuning), Error);
}

}  // namespace
}  // namespace procgen

namespace procgen {
namespace {

// Measurement, not a check (run with --gtest_also_run_disabled_tests): samples/s
// of a 4-xform spherical genome at 1280×720 quality 10 for the accumulation
// variants and launch shapes, each variant run in turn three times (best kept), so
// the ratios come from one window of the machine's load. "no plot" moves the
// camera off the attractor: every point fails the bounds test, which leaves
// the iteration alone. "small" zooms out: the attractor covers a hundredth
// of the image, most records fall in a few bands.
TEST(FlameIterateOpenCL, DISABLED_Throughput) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  FlameGenome genome = baseGenome(1280, 720, 240, 10);
  const double coefs[4][6] = {{0.56, -0.31, 0.12, 0.29, 0.61, -0.22},
                              {-0.42, 0.38, -0.35, 0.47, 0.33, 0.18},
                              {0.25, 0.72, 0.41, -0.66, 0.21, -0.05},
                              {0.81, 0.05, -0.28, -0.12, -0.77, 0.36}};
  for (int k = 0; k < 4; ++k)
    genome.xforms.push_back(makeXform(
        0.25 + 0.1 * k, k / 3.0,
        {coefs[k][0], coefs[k][1], coefs[k][2], coefs[k][3], coefs[k][4], coefs[k][5]}, {{kSpherical, 1.0}}));
  FlameGenome off_camera = genome;
  off_camera.center_x = 1e3;
  // The attractor in a tenth of the width: most points in a few bands.
  FlameGenome small = genome;
  small.scale = 24;
  struct Variant {
    const char* name;
    const FlameGenome* genome;
    OpenCLIterateTuning tuning;
  };
  using Plotting = flame::OpenCLPlotting;
  auto tuned = [](uint32_t points, OpenCLAccumulation acc, Plotting plotting, size_t wg = 64,
                  bool grouped = false, size_t band_wg = 0) {
    OpenCLIterateTuning t;
    t.points = points;
    t.accumulation = acc;
    t.plotting = plotting;
    t.work_group = wg;
    t.grouped = grouped;
    t.band_work_group = band_wg;
    return t;
  };
  const OpenCLAccumulation fixed = OpenCLAccumulation::kFixedPoint, flt = OpenCLAccumulation::kFloat;
  const Plotting direct = Plotting::kDirect, banded = Plotting::kBanded;
  auto band = [&](int shift, uint32_t batch) {
    OpenCLIterateTuning t = tuned(1 << 14, fixed, banded);
    t.band_shift = shift;
    t.batch_records = batch;
    return t;
  };
  const std::vector<Variant> variants = {
      {"default (auto)", &genome, {}},
      {"direct, fixed-point atomics, P 2^14", &genome, tuned(1 << 14, fixed, direct)},
      {"direct, float cmpxchg atomics, P 2^14", &genome, tuned(1 << 14, flt, direct)},
      {"banded fixed, 2^13 cells, 2^20 records", &genome, band(13, 1 << 20)},
      {"banded fixed, 2^12 cells, 2^20 records", &genome, band(12, 1 << 20)},
      {"banded fixed, 2^14 cells, 2^20 records", &genome, band(14, 1 << 20)},
      {"banded fixed, 2^13 cells, 2^22 records", &genome, band(13, 1 << 22)},
      {"banded fixed, 2^13 cells, 2^18 records", &genome, band(13, 1 << 18)},
      {"banded float (the CPU default, explicit)", &genome, tuned(1 << 14, flt, banded)},
      {"banded fixed, atomics, 64 items per band", &genome, tuned(1 << 14, fixed, banded, 64, false, 64)},
      {"banded fixed, P 2^16", &genome, tuned(1 << 16, fixed, banded)},
      {"banded fixed, step work-group 256", &genome, tuned(1 << 14, fixed, banded, 256)},
      {"banded fixed, grouped (the xaos path)", &genome, tuned(1 << 14, fixed, banded, 64, true)},
      {"no plot (camera off)", &off_camera, tuned(1 << 14, fixed, direct)},
      {"small: default (auto)", &small, {}},
      {"small: direct, fixed-point atomics", &small, tuned(1 << 14, fixed, direct)},
      {"small: banded fixed, atomics, 64 per band", &small, tuned(1 << 14, fixed, banded, 64, false, 64)},
  };
  // Wall time and the process's CPU time (PoCL's worker threads included):
  // on a shared machine the CPU time per sample is the steadier figure.
  auto cpuSeconds = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  std::vector<double> best(variants.size(), 0.0), best_cpu(variants.size(), 0.0);
  (void)runOpenCL(genome, {}, variants[1].tuning);  // build and warm up
  for (int round = 0; round < 3; ++round)
    for (size_t v = 0; v < variants.size(); ++v) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpuSeconds();
      const FlameHistogram h = runOpenCL(*variants[v].genome, {}, variants[v].tuning);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double c = cpuSeconds() - c0;
      best[v] = std::max(best[v], static_cast<double>(h.samples) / s);
      best_cpu[v] = std::max(best_cpu[v], static_cast<double>(h.samples) / c);
    }
  std::printf("    %-44s %s\n", "variant", "M samples/s wall, per CPU-second");
  for (size_t v = 0; v < variants.size(); ++v)
    std::printf("    %-44s %7.2f %7.2f\n", variants[v].name, best[v] / 1e6, best_cpu[v] / 1e6);
}

}  // namespace
}  // namespace procgen

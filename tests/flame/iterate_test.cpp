// iterateFlame on the serial backend (the reference): flam3's chaos-game
// semantics checked on genomes whose histograms can be derived by hand
// (a fixed point, the Sierpinski gasket, maps onto thirds of a line), and the
// presorted method against the naive one. Thread parity: tests/flame/cpu/.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <thread>

#include "flame/chaos_game.hpp"
#include "flame/iterate_helpers.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

using test::at;
using test::cellCentre;
using test::cellOf;

const Execution kSerial{Backend::kSerial, 1};

class FlameIterate : public testing::TestWithParam<FlameMethod> {
 protected:
  FlameMethod method() const { return GetParam(); }
  FlameHistogram run(const FlameGenome& g, uint64_t seed = 1) {
    return iterateFlame(g, test::optionsFor(method(), seed), kSerial);
  }
};

// flam3 plots quality × width × height points (rect.c nsamples), whatever
// the method's unit size: sizes below, at and above a presorted unit.
TEST_P(FlameIterate, SamplesAreQualityTimesSize) {
  const struct {
    int w, h;
    double q;
  } cases[] = {{1, 1, 1}, {7, 5, 1}, {64, 48, 10}, {33, 17, 3}, {600, 500, 1}, {1100, 1000, 1}};
  for (const auto& c : cases) {
    FlameGenome g = test::fixedPointGenome();
    g.width = c.w;
    g.height = c.h;
    g.quality = c.q;
    const FlameHistogram h = run(g);
    const uint64_t want = static_cast<uint64_t>(c.q * c.w * c.h);
    EXPECT_EQ(h.samples, want) << c.w << "x" << c.h << " q" << c.q;
    EXPECT_EQ(h.layout.samples, want);
  }
}

// A contraction to (0.5, −0.2): after the 15 fused iterations every orbit is
// within 2^-15 of the fixed point, far inside its cell, so every sample lands
// in that one bucket with weight 255 and the colour of palette entry 128
// (colour → 0.5 + 1/512, step mode: entry floor(c·256)).
TEST_P(FlameIterate, ContractionPlotsEverySampleAtItsFixedPoint) {
  const FlameGenome g = test::fixedPointGenome();
  const FlameHistogram h = run(g);
  const test::Cell c = cellOf(h.layout, 0.5, -0.2);
  const FlameBucket& b = at(h, c.x, c.y);
  const double n = static_cast<double>(h.samples);
  ASSERT_GT(n, 30000);
  EXPECT_EQ(b.count, 255.0 * n);  // exact: integers below 2^24
  EXPECT_EQ(test::totalCount(h), 255.0 * n);
  EXPECT_NEAR(b.red / n, 128.0, 1e-3);
  EXPECT_NEAR(b.green / n, 127.0, 1e-3);
  EXPECT_NEAR(b.alpha / n, 255.0, 1e-3);
  EXPECT_EQ(h.bad_values, 0u);
}

// rect.c's linear palette mode interpolates entries floor(c·256) and the
// next by the fraction: the colour 128.5/256 gives (128 + 129)/2 in red.
TEST_P(FlameIterate, LinearPaletteInterpolatesNeighbouringEntries) {
  FlameGenome g = test::fixedPointGenome(128.5 / 256);
  const FlameHistogram step = run(g);
  g.palette_mode = FlamePaletteMode::kLinear;
  const FlameHistogram linear = run(g);
  const test::Cell c = cellOf(step.layout, 0.5, -0.2);
  const double n = static_cast<double>(step.samples);
  EXPECT_NEAR(at(step, c.x, c.y).red / n, 128.0, 1e-3);
  EXPECT_NEAR(at(linear, c.x, c.y).red / n, 128.5, 0.01);
}

// The rotation is about the centre, as rect.c: (x, y) → centre + R(θ)(p − centre)
// with R = [cos −sin; sin cos]. At 90° the fixed point (0.5, −0.2) about
// (0.05, 0.05) is plotted at (0.3, 0.5).
TEST_P(FlameIterate, RotationTurnsThePlotAboutTheCentre) {
  FlameGenome g = test::fixedPointGenome();
  g.rotate = 90;
  const FlameHistogram h = run(g);
  const test::Cell c = cellOf(h.layout, 0.3, 0.5);
  EXPECT_EQ(at(h, c.x, c.y).count, 255.0 * static_cast<double>(h.samples));
}

// Sierpinski's gasket: f_i(p) = (p + v_i)/2 with v = (−1,−1), (1,−1), (0,1).
// Hits lie inside the triangle, none in the central hole (vertices (0,−1),
// (±0.5, 0)), and the apex (0, 1) is in the bottom rows: flam3's histogram
// row grows with y (+y down in the image; FLAM3_SPEC.md, as flam3-render
// draws it).
TEST_P(FlameIterate, SierpinskiGasketFillsOnlyTheTriangleWithTheApexDown) {
  // Centred on (0.01, 0.01) so that no vertex lies on a cell border.
  FlameGenome g = test::emptyGenome(120, 120, 50, 20, 0.01, 0.01);
  const double v[3][2] = {{-1, -1}, {1, -1}, {0, 1}};
  for (const auto& p : v) g.xforms.push_back(test::affineXform(1, 0.5, 0, p[0] / 2, 0, 0.5, p[1] / 2));
  const FlameHistogram h = run(g);
  const FlameHistogramLayout& l = h.layout;
  const double cell = 1.0 / l.pixels_per_unit;  // world size of a cell
  int top_hit_row = l.height, bottom_hit_row = -1;
  for (int iy = 0; iy < l.height; ++iy)
    for (int ix = 0; ix < l.width; ++ix) {
      double x, y;
      cellCentre(l, ix, iy, &x, &y);
      const bool hit = at(h, ix, iy).count > 0;
      // Inside: y ≥ −1 and y ≤ 1 − 2|x|, with a margin of a cell (×√5 for the slopes).
      const bool near_triangle = y >= -1 - cell && y <= 1 - 2 * std::abs(x) + 3 * cell;
      const bool deep_in_hole = y < -2 * cell && y > -1 + 2 * std::abs(x) + 3 * cell;
      if (hit) {
        EXPECT_TRUE(near_triangle) << "hit outside the triangle at (" << x << ", " << y << ")";
        EXPECT_FALSE(deep_in_hole) << "hit in the hole at (" << x << ", " << y << ")";
        top_hit_row = std::min(top_hit_row, iy);
        bottom_hit_row = std::max(bottom_hit_row, iy);
      }
    }
  // The base (y = −1) is the top hit row, the apex (y = +1) the bottom one.
  EXPECT_EQ(top_hit_row, cellOf(l, 0.5, -1.0 + 1e-9).y);
  EXPECT_EQ(bottom_hit_row, cellOf(l, 0.0, 1.0 - 1e-9).y);
  // The apex row is hit only near x = 0; the base row at both ends.
  bool base_left = false, base_right = false;
  for (int ix = 0; ix < l.width; ++ix) {
    double x, y;
    cellCentre(l, ix, bottom_hit_row, &x, &y);
    if (at(h, ix, bottom_hit_row).count > 0) {
      EXPECT_LT(std::abs(x), 3 * cell);
    }
    cellCentre(l, ix, top_hit_row, &x, &y);
    if (at(h, ix, top_hit_row).count > 0) {
      base_left |= x < -0.9;
      base_right |= x > 0.9;
    }
  }
  EXPECT_TRUE(base_left);
  EXPECT_TRUE(base_right);
}

// Counts per ninth of [−1, 1] (over all rows) of the thirds genome.
std::vector<double> ninthCounts(const FlameHistogram& h, double margin) {
  std::vector<double> ninth(9, 0.0);
  for (int iy = 0; iy < h.layout.height; ++iy)
    for (int ix = 0; ix < h.layout.width; ++ix) {
      double x, y;
      cellCentre(h.layout, ix, iy, &x, &y);
      const double t = (x + 1) * 4.5;  // ninth index, fractional
      const int k = static_cast<int>(std::floor(t));
      if (k < 0 || k > 8 || t - k < margin || k + 1 - t < margin) continue;  // skip the borders
      ninth[static_cast<size_t>(k)] += at(h, ix, iy).count;
    }
  return ninth;
}

// xaos: xform 1's chaos row forbids xform 0 after it. Points in the ninth
// [−7/9, −5/9] come only from xform 1 then xform 0 (f0(f1(p))), so that
// ninth is empty with the xaos and as full as the others without.
TEST_P(FlameIterate, XaosForbiddenTransitionLeavesItsNinthEmpty) {
  FlameGenome g = test::thirdsGenome();
  const std::vector<double> free = ninthCounts(run(g), 0.05);
  for (double c : free) EXPECT_GT(c, 0.0);
  g.xforms[1].chaos = {0.0, 1.0, 1.0};
  const std::vector<double> xaos = ninthCounts(run(g), 0.05);
  for (size_t k = 0; k < 9; ++k) {
    if (k == 1)
      EXPECT_EQ(xaos[k], 0.0) << "ninth f0∘f1 after the transition 1→0 was forbidden";
    else
      EXPECT_GT(xaos[k], 0.0) << "ninth " << k;
  }
}

// solo_xform: only that xform's points are plotted (flam3: the others get
// opacity 0), so only its third has hits.
TEST_P(FlameIterate, SoloXformPlotsOnlyItsThird) {
  FlameGenome g = test::thirdsGenome();
  g.solo_xform = 2;
  const std::vector<double> n = ninthCounts(run(g), 0.05);
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(n[k], 0.0) << "ninth " << k;
  for (size_t k = 6; k < 9; ++k) EXPECT_GT(n[k], 0.0) << "ninth " << k;
}

// The final xform moves the plotted copy only: with F = translation by
// (0.3, 0.4), colour 64.5/256 at colour_speed 1, every sample of the
// contraction is plotted at F(0.5, −0.2) = (0.8, 0.2) with palette entry 64.
// Were F fed back into the orbit, the orbit would converge to (0.8, 0.2) and
// plot at F of it, (1.1, 0.6).
TEST_P(FlameIterate, FinalXformMovesThePlottedPointNotTheOrbit) {
  FlameGenome g = test::fixedPointGenome();
  g.final_xform = test::affineXform(0, 1, 0, 0.3, 0, 1, 0.4, 64.5 / 256, 1.0);
  const FlameHistogram h = run(g);
  const test::Cell c = cellOf(h.layout, 0.8, 0.2);
  const double n = static_cast<double>(h.samples);
  EXPECT_EQ(at(h, c.x, c.y).count, 255.0 * n);
  EXPECT_NEAR(at(h, c.x, c.y).red / n, 64.0, 1e-3);

  // Opacity 0.4: the final xform is applied to 40% of the points (flam3:
  // with probability = its opacity), the others are plotted as iterated; the
  // plotted weight stays the iterated xform's.
  g.final_xform->opacity = 0.4;
  const FlameHistogram half = run(g);
  const double moved = at(half, c.x, c.y).count / (255.0 * n);
  const test::Cell unmoved = cellOf(half.layout, 0.5, -0.2);
  EXPECT_NEAR(moved, 0.4, 0.02);  // binomial, n > 30000: σ < 0.003
  EXPECT_EQ(at(half, unmoved.x, unmoved.y).count + at(half, c.x, c.y).count, 255.0 * n);
}

// Opacity: 0 plots nothing (the samples are still counted); 0.5 plots with
// flam3's weight adjust_percentage(0.5) = 10^log2(0.5) = 0.1.
TEST_P(FlameIterate, OpacityWeightsThePlottedPoints) {
  FlameGenome g = test::fixedPointGenome();
  g.xforms[0].opacity = 0;
  const FlameHistogram none = run(g);
  EXPECT_EQ(test::totalCount(none), 0.0);
  double colour = 0;
  for (const FlameBucket& b : none.buckets) colour += b.red + b.green + b.blue + b.alpha;
  EXPECT_EQ(colour, 0.0);
  EXPECT_EQ(none.samples, none.layout.samples);

  g.xforms[0].opacity = 0.5;
  const FlameHistogram tenth = run(g);
  const test::Cell c = cellOf(tenth.layout, 0.5, -0.2);
  // (float sums of 40960 equal terms: relative error below 2e-3)
  EXPECT_NEAR(at(tenth, c.x, c.y).count / (255.0 * static_cast<double>(tenth.samples)), 0.1, 2e-4);
  EXPECT_NEAR(at(tenth, c.x, c.y).red / static_cast<double>(tenth.samples), 12.8, 0.03);
}

// A map that always leaves the 1e10 box (x' = x + 1e12): flam3 counts every
// bad value and retries 5 times in a row, keeping the 5th replacement — a
// uniform point in [−1, 1]². So bad values = 5 × iterations exactly, and the
// plotted points fill the square uniformly.
TEST_P(FlameIterate, BadValuesAreRetriedFiveTimesAndCounted) {
  FlameGenome g = test::emptyGenome(40, 40, 10, 20);
  g.xforms.push_back(test::affineXform(1, 1, 0, 1e12, 0, 1, 0));
  const FlameHistogram h = run(g);
  EXPECT_EQ(static_cast<double>(h.bad_values), 5.0 * h.iterations);
  EXPECT_GE(h.iterations, static_cast<double>(h.samples));
  // Quadrants of [−1, 1]² get a quarter each (σ ≈ 0.3% at 32000 samples).
  double quadrant[4] = {0, 0, 0, 0}, total = 0;
  for (int iy = 0; iy < h.layout.height; ++iy)
    for (int ix = 0; ix < h.layout.width; ++ix) {
      double x, y;
      cellCentre(h.layout, ix, iy, &x, &y);
      const double count = at(h, ix, iy).count;
      if (count == 0) continue;
      EXPECT_LE(std::abs(x), 1.0 + 0.1);
      EXPECT_LE(std::abs(y), 1.0 + 0.1);
      quadrant[(x > 0) + 2 * (y > 0)] += count;
      total += count;
    }
  for (double q : quadrant) EXPECT_NEAR(q / total, 0.25, 0.02);
  EXPECT_NEAR(total / 255.0, static_cast<double>(h.samples), 0.0);
}

TEST_P(FlameIterate, SameSeedSameHistogramOtherSeedsDiffer) {
  const FlameGenome g = test::everythingGenome(2);
  const FlameHistogram a = run(g, 7);
  const FlameHistogram b = run(g, 7);
  const FlameHistogram c = run(g, 8);
  EXPECT_TRUE(test::sameBits(a, b));
  EXPECT_FALSE(test::sameBits(a, c));
  EXPECT_EQ(a.samples, c.samples);
}

// The histogram may not exceed the budget: a histogram that alone is too big
// is refused by the layout; one that fits while the iteration's buffers do
// not is refused by the stage — both before allocating (ResourceError, exit 2).
TEST_P(FlameIterate, MemoryBudgetRefusesBeforeAllocating) {
  FlameGenome g = test::fixedPointGenome();
  FlameRenderOptions o = test::optionsFor(method());
  o.width = 200000;
  o.height = 100000;  // 2·10^10 cells, 400 GB of buckets
  EXPECT_THROW(iterateFlame(g, o, kSerial), ResourceError);
  o = test::optionsFor(method());
  const FlameHistogramLayout layout = flameHistogramLayout(g, o);
  o.memory_budget = static_cast<uint64_t>(layout.width) * layout.height * sizeof(FlameBucket) + 1;
  try {
    iterateFlame(g, o, kSerial);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("flame iteration"), std::string::npos) << e.what();
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
  }
}

TEST_P(FlameIterate, ProgressReachesOneOnTheCallingThread) {
  FlameRenderOptions o = test::optionsFor(method());
  double last = 0;
  int calls = 0;
  const auto caller = std::this_thread::get_id();
  o.progress = [&](double f) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_GE(f, last);
    last = f;
    ++calls;
  };
  iterateFlame(test::sphericalGenome(5), o, kSerial);
  EXPECT_GT(calls, 0);
  EXPECT_EQ(last, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Methods, FlameIterate, testing::Values(FlameMethod::kPresorted, FlameMethod::kNaive),
                         [](const testing::TestParamInfo<FlameMethod>& info) {
                           return std::string(info.param == FlameMethod::kPresorted ? "presorted" : "naive");
                         });

// --- Presorted against naive --------------------------------------------------

// The two methods sample the same chaos game, so their normalised
// histograms agree up to sampling noise. Measured as the total-variation
// distance ½Σ|p − q| over blocks of 10×10 cells (144 blocks) of 1.44 M
// samples each: for S independent samples E Σ|p̂ − p| ≤ √(blocks/S) = 0.01
// per method, so ≤ 0.01 for the distance between two; orbits make
// neighbouring samples dependent, which we allow a factor 3 for: bound 0.03.
// The same statistic between two genomes whose weights differ (0.25 each
// against 0.4/0.2/0.2/0.2) must exceed the bound, or the test could not fail.
constexpr double kMethodDistanceBound = 0.03;

TEST(FlameIteratePresorted, MatchesNaiveStatistically) {
  const FlameGenome g = test::sphericalGenome(100);
  const FlameHistogram naive = iterateFlame(g, test::optionsFor(FlameMethod::kNaive, 3), kSerial);
  const FlameHistogram presorted = iterateFlame(g, test::optionsFor(FlameMethod::kPresorted, 4), kSerial);
  EXPECT_LT(test::blockDistance(naive, presorted, 10, 0), kMethodDistanceBound);
  EXPECT_LT(test::blockDistance(naive, presorted, 10, 1), kMethodDistanceBound);  // colour (red) too

  FlameGenome other = g;
  other.xforms[0].weight = 0.4;
  other.xforms[1].weight = other.xforms[2].weight = other.xforms[3].weight = 0.2;
  const FlameHistogram changed = iterateFlame(other, test::optionsFor(FlameMethod::kNaive, 3), kSerial);
  EXPECT_GT(test::blockDistance(naive, changed, 10, 0), kMethodDistanceBound);
}

// The presorted units' orbits are about as long as flam3's (10000 samples
// per start point): on a slowly converging flame, orbits of a few hundred
// steps also plot the transient from their random starts — a sprinkle of
// lone hits that mass statistics hardly see but the log-density image shows
// (1024 orbits × 256 steps rendered a flower genome 8% brighter than flam3).
// Measured on log densities against the noise floor of two naive runs with
// different seeds: a sample of the same law lands about as far from naive as
// naive from itself; 1.6× that floor is the bound (orbits of 8192: 1.3×;
// orbits of 256 steps: 2.2×).
TEST(FlameIteratePresorted, MatchesNaiveInLogDensityOnASlowlyConvergingFlame) {
  const FlameGenome g = test::slowGenome(100);
  const FlameHistogram naive = iterateFlame(g, test::optionsFor(FlameMethod::kNaive, 3), kSerial);
  const FlameHistogram naive_again = iterateFlame(g, test::optionsFor(FlameMethod::kNaive, 5), kSerial);
  const FlameHistogram presorted = iterateFlame(g, test::optionsFor(FlameMethod::kPresorted, 4), kSerial);
  const double floor = test::logDensityDistance(naive, naive_again);
  EXPECT_LT(test::logDensityDistance(naive, presorted), 1.6 * floor) << "noise floor " << floor;
  EXPECT_LT(test::blockDistance(naive, presorted, 10, 0), kMethodDistanceBound);
}

// With xaos the presorted method draws each point's xform from its row and
// groups the points by xform: the same statistics as the naive orbits.
TEST(FlameIteratePresorted, MatchesNaiveStatisticallyWithXaosFinalAndOpacity) {
  const FlameGenome g = test::everythingGenome(100);
  const FlameHistogram naive = iterateFlame(g, test::optionsFor(FlameMethod::kNaive, 3), kSerial);
  const FlameHistogram presorted = iterateFlame(g, test::optionsFor(FlameMethod::kPresorted, 4), kSerial);
  EXPECT_LT(test::blockDistance(naive, presorted, 10, 0), kMethodDistanceBound);
  EXPECT_LT(test::blockDistance(naive, presorted, 10, 1), kMethodDistanceBound);

  FlameGenome other = g;
  other.xforms[2].chaos = {1.0, 1.0, 1.0, 1.0};  // allow 2 → 1 again
  const FlameHistogram changed = iterateFlame(other, test::optionsFor(FlameMethod::kNaive, 3), kSerial);
  EXPECT_GT(test::blockDistance(naive, changed, 10, 0), kMethodDistanceBound);
}

// The vectorised batch kernels (xforms of linear and spherical terms) do the
// arithmetic of pgFlameApplyXform: the histogram is the same, bit for bit,
// with them or with every point through pgFlameApplyXform.
TEST(FlameIteratePresorted, BatchKernelsMatchThePerPointXform) {
  const FlameGenome g = test::everythingGenome(5);
  const FlameRenderOptions o = test::optionsFor(FlameMethod::kPresorted, 9);
  const FlameHistogram batched = iterateFlame(g, o, kSerial);
  flame::setFlameBatchKernelsForTesting(false);
  const FlameHistogram per_point = iterateFlame(g, o, kSerial);
  flame::setFlameBatchKernelsForTesting(true);
  EXPECT_TRUE(test::sameBits(batched, per_point));
}

TEST(FlameIterateErrors, UnusableGenomesAreBadInput) {
  FlameGenome g = test::fixedPointGenome();
  g.xforms.clear();
  try {
    iterateFlame(g, {}, kSerial);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
  }
  g = test::fixedPointGenome();
  g.xforms[0].weight = 0;
  EXPECT_THROW(iterateFlame(g, {}, kSerial), Error);
  g = test::fixedPointGenome();
  g.quality = 0;
  EXPECT_THROW(iterateFlame(g, {}, kSerial), Error);
}

}  // namespace
}  // namespace procgen

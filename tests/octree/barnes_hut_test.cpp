// Barnes–Hut (procgen/nbody.hpp) against references that do not share its
// walk: forces derived by hand (two bodies; a symmetric cube whose centre
// feels no force), the direct O(n²) sum with a rounding bound derived below,
// the error's fall as θ falls, and serial ≡ cpu ≡ opencl bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/backends.hpp"
#include "nbody_stats.hpp"
#include "procgen/error.hpp"
#include "procgen/nbody.hpp"
#include "procgen/octree.hpp"

namespace {

using namespace procgen;

Octree bucketed(const std::vector<double>& xyz, uint32_t leaf_size) {
  OctreeOptions o;
  o.leaf_size = leaf_size;
  return buildOctree(OctreePoints::of(xyz), o, Execution{});
}

Octree topDownData(const std::vector<double>& xyz, uint32_t leaf_size) {
  OctreeOptions o;
  o.method = OctreeMethod::kTopDown;
  o.split = OctreeSplit::kData;
  o.leaf_size = leaf_size;
  return buildOctree(OctreePoints::of(xyz), o, Execution{});
}

std::vector<double> plummer(uint64_t n, uint64_t seed) {
  std::vector<double> xyz(3 * n);
  generatePoints(PointDistribution::kPlummer, n, seed, xyz.data(), Execution{});
  return xyz;
}

/// Masses in [0.5, 1.5) from a plain LCG (any positive values will do).
std::vector<double> unevenMasses(uint64_t n) {
  std::vector<double> m(n);
  uint64_t s = 12345;
  for (double& v : m) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = 0.5 + double(s >> 11) * 0x1p-53;
  }
  return m;
}

NbodyOptions withTheta(double theta, double softening = 0) {
  NbodyOptions o;
  o.theta = theta;
  o.softening = softening;
  return o;
}

// ---- hand-derived cases ------------------------------------------------------

// Masses 2 at x = 0 and 3 at x = 2. With leaf size 1 the root splits and at
// θ = 1 each body sees the other's leaf (side 1, distance 2: 1 < 1·2) as a
// monopole: a_0 = G·3/2² = 0.75 toward +x, a_1 = G·2/2² = 0.5 toward −x,
// φ_0 = −3/2, φ_1 = −2/2. With ε = 1: |a_0| = 3·2/(4+1)^{3/2}, φ_0 = −3/√5.
TEST(BarnesHut, TwoBodiesMatchNewton) {
  const std::vector<double> xyz = {0, 0, 0, 2, 0, 0};
  const std::vector<double> m = {2, 3};
  for (const Octree& tree : {bucketed(xyz, 1), bucketed(xyz, 16), topDownData(xyz, 1)}) {
    for (double theta : {0.0, 1.0}) {
      const NbodyResult r = octreeBarnesHut(tree, OctreePoints::of(xyz), m.data(), withTheta(theta), Execution{});
      EXPECT_DOUBLE_EQ(r.acceleration[0], 0.75);
      EXPECT_EQ(r.acceleration[1], 0.0);
      EXPECT_EQ(r.acceleration[2], 0.0);
      EXPECT_DOUBLE_EQ(r.acceleration[3], -0.5);
      EXPECT_DOUBLE_EQ(r.potential[0], -1.5);
      EXPECT_DOUBLE_EQ(r.potential[1], -1.0);
      EXPECT_EQ(r.interactions, 2u);
    }
    NbodyOptions soft = withTheta(0.5, 1.0);
    soft.gravity = 2.0;
    const NbodyResult r = octreeBarnesHut(tree, OctreePoints::of(xyz), m.data(), soft, Execution{});
    EXPECT_DOUBLE_EQ(r.acceleration[0], 2.0 * 3 * 2 / std::pow(5.0, 1.5));
    EXPECT_DOUBLE_EQ(r.acceleration[3], -2.0 * 2 * 2 / std::pow(5.0, 1.5));
    EXPECT_DOUBLE_EQ(r.potential[0], -2.0 * 3 / std::sqrt(5.0));
  }
}

// Equal masses on the 8 corners of [−1, 1]^3 and one at the centre: the corner
// terms at the centre cancel in pairs (±t with identical magnitudes), so the
// force there is 0 for every θ, and φ = −8·(1/9)/√3 (the default equal
// masses are 1/9). A corner feels the pull toward the centre: every component
// has the sign of −corner.
TEST(BarnesHut, SymmetricCubeCentreFeelsNoForce) {
  std::vector<double> xyz;
  for (int c = 0; c < 8; ++c)
    for (int a = 0; a < 3; ++a) xyz.push_back((c >> a) & 1 ? 1.0 : -1.0);
  xyz.insert(xyz.end(), {0, 0, 0});
  const double one_term = (1.0 / 9) / 3.0;  // m / r² at r = √3
  for (const Octree& tree : {bucketed(xyz, 1), bucketed(xyz, 2), topDownData(xyz, 1)}) {
    for (double theta : {0.0, 0.5, 1.0, 2.0}) {
      SCOPED_TRACE(theta);
      const NbodyResult r = octreeBarnesHut(tree, OctreePoints::of(xyz), nullptr, withTheta(theta), Execution{});
      for (int a = 0; a < 3; ++a) EXPECT_LE(std::abs(r.acceleration[3 * 8 + a]), 1e-15 * one_term);
      EXPECT_NEAR(r.potential[8], -8.0 / 9.0 / std::sqrt(3.0), 1e-15);
      for (int c = 0; c < 8; ++c)
        for (int a = 0; a < 3; ++a) EXPECT_LT(r.acceleration[3 * c + a] * xyz[3 * c + a], 0.0);
    }
  }
}

// ---- θ = 0 is the direct sum -----------------------------------------------

// At θ = 0 no cell is ever accepted (s < 0·d is false), so every target sums
// the same n − 1 floating-point terms as the direct sum — gravity.h computes
// each term from the same operands in the same operations — only in another
// order (the tree walk instead of increasing index). Recursive summation of
// k terms has |fl(Σt) − Σt| ≤ γ_{k−1} Σ|t| with γ_k = k·u/(1 − k·u),
// u = 2^−53 (Higham, Accuracy and Stability, §4.2), so the two results differ
// by at most 2·γ_{n−1}·Σ_j |t_j| per component (G = 1 is exact). Σ|t_j| is
// computed here from the definition.
TEST(BarnesHut, ThetaZeroEqualsDirectSumWithinReassociation) {
  const uint64_t n = 1500;
  const std::vector<double> xyz = plummer(n, 7);
  const std::vector<double> m = unevenMasses(n);
  const double u = 0x1p-53, gamma = double(n - 1) * u / (1 - double(n - 1) * u);
  for (double eps : {0.0, 0.05}) {
    const NbodyOptions o = withTheta(0.0, eps);
    const NbodyResult direct = directSum(OctreePoints::of(xyz), m.data(), o, Execution{});
    EXPECT_EQ(direct.interactions, n * (n - 1));
    for (const Octree& tree : {bucketed(xyz, 8), topDownData(xyz, 4)}) {
      const NbodyResult bh = octreeBarnesHut(tree, OctreePoints::of(xyz), m.data(), o, Execution{});
      EXPECT_EQ(bh.interactions, n * (n - 1));
      uint64_t identical = 0;
      for (uint64_t i = 0; i < n; ++i) {
        double abs_sum[4] = {0, 0, 0, 0};
        for (uint64_t j = 0; j < n; ++j) {
          if (j == i) continue;
          double d[3], r2 = eps * eps;
          for (int a = 0; a < 3; ++a) d[a] = xyz[3 * j + a] - xyz[3 * i + a], r2 += d[a] * d[a];
          for (int a = 0; a < 3; ++a) abs_sum[a] += m[j] * std::abs(d[a]) / (r2 * std::sqrt(r2));
          abs_sum[3] += m[j] / std::sqrt(r2);
        }
        for (int a = 0; a < 4; ++a) {
          const double got = a < 3 ? bh.acceleration[3 * i + a] : bh.potential[i];
          const double want = a < 3 ? direct.acceleration[3 * i + a] : direct.potential[i];
          const double bound = 2 * gamma * abs_sum[a] * (1 + 1e-9);  // 1e-9: the bound's own rounding
          ASSERT_LE(std::abs(got - want), bound) << "point " << i << " component " << a;
          identical += got == want;
        }
      }
      // Not all equal bit for bit: the orders really differ (else the test proves little).
      EXPECT_LT(identical, 4 * n);
    }
  }
}

// ---- accuracy falls with θ ---------------------------------------------------

// The mean error must fall strictly with θ (Barnes & Hut's error scales
// roughly as θ²); the maximum is only required not to grow, which holds on
// this fixed input though it is no theorem for every point set.
TEST(BarnesHut, ErrorFallsAsThetaFalls) {
  const uint64_t n = 4000;
  const std::vector<double> xyz = plummer(n, 3);
  const OctreePoints pts = OctreePoints::of(xyz);
  const Octree tree = bucketed(xyz, 8);
  const NbodyResult direct = directSum(pts, nullptr, withTheta(0), Execution{});
  const std::vector<uint32_t> all = nbodySampleTargets(n, n);
  double last_mean = INFINITY, last_max = INFINITY;
  uint64_t last_interactions = 0;
  for (double theta : {1.0, 0.7, 0.5, 0.3}) {
    SCOPED_TRACE(theta);
    const NbodyResult bh = octreeBarnesHut(tree, pts, nullptr, withTheta(theta), Execution{});
    const NbodyError e = nbodyForceError(bh, direct, all.data(), all.size());
    EXPECT_GT(e.mean_relative, 0.0);
    EXPECT_LT(e.mean_relative, last_mean);
    EXPECT_LE(e.max_relative, last_max);
    EXPECT_GT(bh.interactions, last_interactions);  // smaller θ opens more cells
    EXPECT_LT(bh.interactions, n * (n - 1));
    last_mean = e.mean_relative, last_max = e.max_relative, last_interactions = bh.interactions;
    // Barnes & Hut's monopole at θ = 0.5: errors of order 10^-3 (their Fig. 2 range)
    if (theta == 0.5) {
      EXPECT_LT(e.mean_relative, 1e-2);
    }
  }
  // The sample helper: the sample's direct sum equals the full one at those points.
  const std::vector<uint32_t> sample = nbodySampleTargets(n, 100);
  ASSERT_EQ(sample.size(), 100u);
  const NbodyResult at = directSumAt(pts, nullptr, sample.data(), sample.size(), withTheta(0), Execution{});
  for (size_t t = 0; t < sample.size(); ++t)
    for (int a = 0; a < 3; ++a) EXPECT_EQ(at.acceleration[3 * t + a], direct.acceleration[3 * sample[t] + a]);
}

// ---- serial ≡ cpu bit for bit ----------------------------------------------

class BarnesHutParity : public test::BackendTest {};

TEST_P(BarnesHutParity, EqualsSerialBitForBit) {
  const uint64_t n = 3000;
  const std::vector<double> xyz = plummer(n, 11);
  const std::vector<double> m = unevenMasses(n);
  const OctreePoints pts = OctreePoints::of(xyz);
  OctreeOptions sorted;
  sorted.sorted_points = true;
  sorted.leaf_size = 4;
  const Octree trees[] = {bucketed(xyz, 8), topDownData(xyz, 8), buildOctree(pts, sorted, Execution{})};
  const NbodyOptions o = withTheta(0.6, 0.01);
  // opencl too: the same walk and pair term, double + − × ÷ and sqrt
  // correctly rounded, contraction off (gravity.h) — the same bits.
  test::CpuChunkScope chunks(variant().threads > 1 ? 7 : 0);
  for (const Octree& tree : trees) {
    const NbodyResult want = octreeBarnesHut(tree, pts, m.data(), o, Execution{});
    const NbodyResult got = octreeBarnesHut(tree, pts, m.data(), o, execution());
    ASSERT_EQ(got.acceleration.size(), want.acceleration.size());
    EXPECT_EQ(0, std::memcmp(got.acceleration.data(), want.acceleration.data(), want.acceleration.size() * 8));
    EXPECT_EQ(0, std::memcmp(got.potential.data(), want.potential.data(), want.potential.size() * 8));
    EXPECT_EQ(got.interactions, want.interactions);
  }
  const std::vector<uint32_t> sample = nbodySampleTargets(n, 50);
  const NbodyResult want = directSumAt(pts, m.data(), sample.data(), sample.size(), o, Execution{});
  const NbodyResult got = directSumAt(pts, m.data(), sample.data(), sample.size(), o, execution());
  EXPECT_EQ(0, std::memcmp(got.acceleration.data(), want.acceleration.data(), want.acceleration.size() * 8));
}

INSTANTIATE_TEST_SUITE_P(Backends, BarnesHutParity, testing::ValuesIn(test::backendVariants()), test::variantName);

// ---- bad input --------------------------------------------------------------

TEST(BarnesHut, RefusesBadMassesOptionsAndTrees) {
  const std::vector<double> xyz = plummer(50, 1);
  const OctreePoints pts = OctreePoints::of(xyz);
  const Octree tree = bucketed(xyz, 4);
  std::vector<double> m(50, 1.0);
  m[17] = -1;
  try {
    octreeBarnesHut(tree, pts, m.data(), withTheta(0.5), Execution{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("mass 17 is negative"), std::string::npos) << e.what();
  }
  m[17] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(directSum(pts, m.data(), withTheta(0), Execution{}), Error);
  EXPECT_THROW(octreeBarnesHut(tree, pts, nullptr, withTheta(-1), Execution{}), std::invalid_argument);
  EXPECT_THROW(octreeBarnesHut(tree, pts, nullptr, withTheta(INFINITY), Execution{}), std::invalid_argument);
  EXPECT_THROW(octreeBarnesHut(tree, pts, nullptr, withTheta(0.5, -0.1), Execution{}), std::invalid_argument);
  OctreeOptions compressed;
  compressed.compressed = true;
  EXPECT_THROW(octreeBarnesHut(buildOctree(pts, compressed, Execution{}), pts, nullptr, withTheta(0.5), Execution{}),
               std::invalid_argument);
  const std::vector<double> fewer(xyz.begin(), xyz.begin() + 30);
  EXPECT_THROW(octreeBarnesHut(tree, OctreePoints::of(fewer), nullptr, withTheta(0.5), Execution{}),
               std::invalid_argument);
  NbodyOptions tiny = withTheta(0.5);
  tiny.memory_budget = 100;
  EXPECT_THROW(octreeBarnesHut(tree, pts, nullptr, tiny, Execution{}), ResourceError);
}

// All points equal: the one-leaf tree; with ε = 0 coincident pairs add
// nothing, with ε > 0 each other point adds φ = −m/ε and no force.
TEST(BarnesHut, CoincidentPoints) {
  const std::vector<double> xyz(3 * 5, 0.25);
  const Octree tree = bucketed(xyz, 1);
  const NbodyResult hard = octreeBarnesHut(tree, OctreePoints::of(xyz), nullptr, withTheta(0.5), Execution{});
  for (double v : hard.acceleration) EXPECT_EQ(v, 0.0);
  for (double v : hard.potential) EXPECT_EQ(v, 0.0);
  const NbodyResult soft = octreeBarnesHut(tree, OctreePoints::of(xyz), nullptr, withTheta(0.5, 0.5), Execution{});
  for (double v : soft.potential) EXPECT_DOUBLE_EQ(v, -4 * 0.2 / 0.5);
}

// ---- the CLI's --nbody statistics ---------------------------------------------

TEST(NbodyStats, ReportsErrorAgainstTheDirectSample) {
  const std::vector<double> xyz = plummer(1200, 5);
  const OctreePoints pts = OctreePoints::of(xyz);
  const Octree tree = bucketed(xyz, 8);
  const cli::NbodyRunStats exact = cli::runNbodyStats(tree, pts, 0.0, Execution{}, 5000);
  EXPECT_EQ(exact.error_samples, 1200u);
  EXPECT_FALSE(exact.direct_ms_estimated);
  EXPECT_LT(exact.rel_error_max, 1e-12);
  EXPECT_EQ(exact.interactions, 1200u * 1199u);
  const cli::NbodyRunStats s = cli::runNbodyStats(tree, pts, 0.7, Execution{}, 100);
  EXPECT_EQ(s.error_samples, 100u);
  EXPECT_TRUE(s.direct_ms_estimated);
  EXPECT_GT(s.rel_error_mean, 0.0);
  EXPECT_LE(s.rel_error_mean, s.rel_error_max);
  EXPECT_LT(s.rel_error_mean, 0.05);
  const cli::Json j = cli::nbodyStatsJson(s);
  for (const char* key : {"nbody_ms", "theta", "rel_error_max", "rel_error_mean", "speedup", "direct_ms"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["theta"].get<double>(), 0.7);
  try {
    cli::runNbodyStats(tree, pts, -0.5, Execution{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kUsage);
  }
  OctreeOptions compressed;
  compressed.compressed = true;
  try {
    cli::runNbodyStats(buildOctree(pts, compressed, Execution{}), pts, 0.5, Execution{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kUsage);
  }
}

}  // namespace

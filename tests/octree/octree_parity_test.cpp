// Octree parity (issue 18: "serial ≡ cpu ≡ opencl structure bit-exact"): every
// build method × point sets (uniform, Gaussian, Plummer, all points equal,
// one point, duplicates, collinear, float input) × leaf sizes and depth
// limits on every backend variant, each array compared with the serial
// tree's bit for bit; the root cube, keys, generators and the batched locate,
// kNN, radius and box queries compared with serial, outputs poisoned first. The serial twin is
// itself checked against brute-force definitions in octree_test.cpp. The
// opencl row runs on PoCL and skips with the reason where there is no device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "procgen/error.hpp"
#include "procgen/octree.hpp"

namespace {

using namespace procgen;

std::vector<double> generated(PointDistribution d, uint64_t n, uint64_t seed) {
  std::vector<double> xyz(3 * n);
  generatePoints(d, n, seed, xyz.data(), Execution{});
  return xyz;
}

struct PointSet {
  std::string name;
  std::vector<double> xyz;
  std::vector<float> xyz32;  ///< when set, the points are these floats
  OctreePoints points() const {
    return xyz32.empty() ? OctreePoints::of(xyz) : OctreePoints::of(xyz32.data(), xyz32.size() / 3);
  }
};

std::vector<PointSet> pointSets() {
  std::vector<PointSet> sets;
  sets.push_back({"uniform", generated(PointDistribution::kUniform, 3000, 1), {}});
  sets.push_back({"gaussian", generated(PointDistribution::kGaussian, 3000, 2), {}});
  sets.push_back({"plummer", generated(PointDistribution::kPlummer, 3000, 3), {}});
  std::vector<double> equal;
  for (int i = 0; i < 40; ++i) equal.insert(equal.end(), {1.5, -2.0, 3.25});
  sets.push_back({"all_equal", equal, {}});
  sets.push_back({"one_point", {0.25, 7.0, -1.0}, {}});
  // Duplicates: every point four times, on a coarse grid (equal keys, distance ties),
  // plus a tight cluster that forces deep chains; signed zeros on one axis.
  std::vector<double> dup;
  const std::vector<double> base = generated(PointDistribution::kUniform, 500, 4);
  for (int copy = 0; copy < 4; ++copy)
    for (size_t i = 0; i < 500; ++i) {
      const double* p = &base[3 * i];
      if (i % 2) dup.insert(dup.end(), {std::floor(p[0] * 5), copy % 2 ? -0.0 : 0.0, std::floor(p[2] * 5)});
      else dup.insert(dup.end(), {2.5 + p[0] * 1e-9, 2.5 + p[1] * 1e-9, 2.5 + p[2] * 1e-9});
    }
  sets.push_back({"duplicates", dup, {}});
  std::vector<double> line;
  for (int i = 0; i < 700; ++i) line.insert(line.end(), {-3.0, i * 0.37, 2.0});
  sets.push_back({"collinear", line, {}});
  PointSet floats{"float_plummer", {}, {}};
  for (double v : generated(PointDistribution::kPlummer, 2000, 5)) floats.xyz32.push_back(static_cast<float>(v));
  sets.push_back(floats);
  return sets;
}

struct Method {
  const char* name;
  OctreeOptions options;
};

std::vector<Method> methods() {
  std::vector<Method> m(5);
  m[0].name = "bucketed";
  m[1].name = "compressed";
  m[1].options.compressed = true;
  m[2].name = "full";
  m[2].options.compressed = m[2].options.full = true;
  m[3].name = "top_down_cube";
  m[3].options.method = OctreeMethod::kTopDown;
  m[4].name = "top_down_data";
  m[4].options.method = OctreeMethod::kTopDown;
  m[4].options.split = OctreeSplit::kData;
  return m;
}

template <typename T>
bool sameBits(const OctreeArray<T>& a, const OctreeArray<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Every array and count of two trees, bit for bit (NaN split centres included).
void expectIdentical(const Octree& want, const Octree& got) {
  EXPECT_EQ(want.layout, got.layout);
  EXPECT_EQ(want.root, got.root);
  EXPECT_EQ(want.point_count, got.point_count);
  for (int a = 0; a < 3; ++a) EXPECT_TRUE(std::memcmp(&want.cube.min[a], &got.cube.min[a], sizeof(double)) == 0);
  EXPECT_EQ(want.cube.side, got.cube.side);
  EXPECT_EQ(want.stats.nodes, got.stats.nodes);
  EXPECT_EQ(want.stats.internal, got.stats.internal);
  EXPECT_EQ(want.stats.leaves, got.stats.leaves);
  EXPECT_EQ(want.stats.empty_leaves, got.stats.empty_leaves);
  EXPECT_EQ(want.stats.chain_nodes, got.stats.chain_nodes);
  EXPECT_EQ(want.stats.depth, got.stats.depth);
  EXPECT_TRUE(sameBits(want.level, got.level)) << "level";
  EXPECT_TRUE(sameBits(want.prefix, got.prefix)) << "prefix";
  EXPECT_TRUE(sameBits(want.parent, got.parent)) << "parent";
  EXPECT_TRUE(sameBits(want.first_child, got.first_child)) << "first_child";
  EXPECT_TRUE(sameBits(want.child_count, got.child_count)) << "child_count";
  EXPECT_TRUE(sameBits(want.chain, got.chain)) << "chain";
  EXPECT_TRUE(sameBits(want.begin, got.begin)) << "begin";
  EXPECT_TRUE(sameBits(want.end, got.end)) << "end";
  EXPECT_TRUE(sameBits(want.order, got.order)) << "order";
  EXPECT_TRUE(sameBits(want.keys, got.keys)) << "keys";
  EXPECT_TRUE(sameBits(want.xyz, got.xyz)) << "xyz";
  EXPECT_TRUE(sameBits(want.split_center, got.split_center)) << "split_center";
  EXPECT_TRUE(sameBits(want.split_axes, got.split_axes)) << "split_axes";
  EXPECT_EQ(octreeChecksum(want), octreeChecksum(got));
}

class OctreeBackendParity : public test::BackendTest {};

TEST_P(OctreeBackendParity, EveryMethodPointSetAndLeafSizeEqualsSerial) {
  for (const PointSet& set : pointSets()) {
    const OctreePoints pts = set.points();
    for (const Method& method : methods()) {
      for (uint32_t leaf_size : {1u, 3u, 16u}) {
        for (int max_depth : {21, 4, 1}) {
          if (method.options.compressed && leaf_size != 1) continue;  // leaf_size is ignored there
          SCOPED_TRACE(set.name + " " + method.name + " leaf " + std::to_string(leaf_size) + " depth " +
                       std::to_string(max_depth));
          OctreeOptions o = method.options;
          o.leaf_size = leaf_size;
          o.max_depth = max_depth;
          o.sorted_points = leaf_size == 3;
          const Octree want = buildOctree(pts, o, Execution{});
          const Octree got = buildOctree(pts, o, execution());
          expectIdentical(want, got);
          if (HasFailure()) return;  // one failing configuration is enough to read
        }
      }
    }
  }
}

TEST_P(OctreeBackendParity, ManyRunsOfPointsEqualSerial) {
  // Enough points for many runs per kernel and several radix digits.
  const std::vector<double> xyz = generated(PointDistribution::kPlummer, 300000, 8);
  const OctreePoints pts = OctreePoints::of(xyz);
  for (const Method& method : methods()) {
    SCOPED_TRACE(method.name);
    const Octree want = buildOctree(pts, method.options, Execution{});
    expectIdentical(want, buildOctree(pts, method.options, execution()));
  }
}

TEST_P(OctreeBackendParity, RootCubeAndKeysEqualSerial) {
  for (const PointSet& set : pointSets()) {
    SCOPED_TRACE(set.name);
    const OctreePoints pts = set.points();
    const OctreeCube want = octreeRootCube(pts, Execution{});
    const OctreeCube got = octreeRootCube(pts, execution());
    EXPECT_EQ(0, std::memcmp(want.min, got.min, sizeof want.min));  // -0 and +0 alike
    EXPECT_EQ(want.side, got.side);
    std::vector<uint64_t> keys = test::poisoned<uint64_t>(pts.count), expect(pts.count);
    octreeKeys(pts, want, expect.data(), Execution{});
    octreeKeys(pts, want, keys.data(), execution());
    EXPECT_EQ(keys, expect);
  }
}

// Both zeros among the smallest coordinates, in either order and in different
// chunks (the cpu plans cut at 2^16 points): every backend's cube starts at
// +0.0, since the .octree file stores the minimum byte for byte and
// min(-0.0, +0.0) depends on which operand comes first.
TEST_P(OctreeBackendParity, RootCubeOfSignedZerosStartsAtPlusZero) {
  const uint64_t n = (uint64_t{1} << 17) + 5;
  for (const bool negative_first : {true, false}) {
    SCOPED_TRACE(negative_first ? "-0.0 first" : "+0.0 first");
    std::vector<double> xyz(3 * n);
    for (uint64_t i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a) xyz[3 * i + a] = 1.0 + double((i * (a + 3)) % 97);
    const double first = negative_first ? -0.0 : 0.0, last = negative_first ? 0.0 : -0.0;
    for (int a = 0; a < 3; ++a) {
      xyz[a] = first;
      xyz[3 * (n / 2) + a] = last;
      xyz[3 * (n - 1) + a] = first;
    }
    const OctreeCube cube = octreeRootCube(OctreePoints::of(xyz), execution());
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(cube.min[a], 0.0);
      EXPECT_FALSE(std::signbit(cube.min[a])) << "axis " << a;
    }
    EXPECT_EQ(cube.side, 97.0);  // from 0 to 1 + 96
    Octree tree = buildOctree(OctreePoints::of(xyz), OctreeOptions{}, execution());
    for (int a = 0; a < 3; ++a) EXPECT_FALSE(std::signbit(tree.cube.min[a])) << "axis " << a;
    // Every point at the origin: the side is zero too, and +0.0.
    for (uint64_t i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a) xyz[3 * i + a] = (i % 3 == 0) == negative_first ? -0.0 : 0.0;
    const OctreeCube origin = octreeRootCube(OctreePoints::of(xyz), execution());
    EXPECT_EQ(origin.side, 0.0);
    EXPECT_FALSE(std::signbit(origin.side));
    for (int a = 0; a < 3; ++a) EXPECT_FALSE(std::signbit(origin.min[a])) << "axis " << a;
  }
}

TEST_P(OctreeBackendParity, BadPointsAndBudgetFailAsOnSerial) {
  std::vector<double> xyz = generated(PointDistribution::kUniform, 2000, 6);
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    xyz[3 * 1700 + 2] = bad;
    xyz[3 * 1900] = bad;  // a later bad point is not the one named
    std::string want;
    try {
      octreeRootCube(OctreePoints::of(xyz), Execution{});
    } catch (const Error& e) {
      want = e.what();
    }
    ASSERT_NE(want.find("point 1700: coordinate z is"), std::string::npos) << want;
    for (int call = 0; call < 2; ++call) {
      try {
        if (call == 0) octreeRootCube(OctreePoints::of(xyz), execution());
        else buildOctree(OctreePoints::of(xyz), OctreeOptions{}, execution());
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
        EXPECT_EQ(std::string(e.what()), want);
      }
    }
  }
  EXPECT_THROW(buildOctree(OctreePoints{nullptr, xyz.data(), 0}, OctreeOptions{}, execution()), Error);
  const std::vector<double> fine = generated(PointDistribution::kUniform, 2000, 7);
  OctreeOptions o;
  o.memory_budget = 4096;
  try {
    buildOctree(OctreePoints::of(fine), o, execution());
    ADD_FAILURE() << "no error";
  } catch (const ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("octree keys"), std::string::npos) << e.what();
  }
}

TEST_P(OctreeBackendParity, GeneratedPointsEqualSerial) {
  for (auto d : {PointDistribution::kUniform, PointDistribution::kGaussian, PointDistribution::kPlummer}) {
    SCOPED_TRACE(pointDistributionName(d));
    const uint64_t n = 20000;
    std::vector<double> want(3 * n), got = test::poisoned<double>(3 * n);
    generatePoints(d, n, 0x1234567890ull, want.data(), Execution{});
    generatePoints(d, n, 0x1234567890ull, got.data(), execution());
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(double)));
  }
}

TEST_P(OctreeBackendParity, LocateKnnRadiusAndBoxEqualSerial) {
  const std::vector<Method> all = methods();
  for (const PointSet& set : pointSets()) {
    const OctreePoints pts = set.points();
    for (int m_index : {0, 3, 4}) {  // bucketed, top-down cube, top-down data
      const Method& method = all[m_index];
      SCOPED_TRACE(set.name + " " + method.name);
      OctreeOptions o = method.options;
      o.leaf_size = 5;
      o.sorted_points = set.name == "uniform";
      const Octree t = buildOctree(pts, o, Execution{});
      // Queries: random in a box 20% larger than the cube, some exactly on
      // input points (distance 0, ties), one NaN, one on the cube's far face.
      const uint64_t m = 300;
      std::vector<double> q = generated(PointDistribution::kUniform, m, 77);
      const double side = t.cube.side > 0 ? t.cube.side : 1.0;
      for (uint64_t i = 0; i < m; ++i)
        for (int a = 0; a < 3; ++a) q[3 * i + a] = t.cube.min[a] - 0.1 * side + q[3 * i + a] * 1.2 * side;
      for (uint64_t i = 0; i < 40; ++i)
        for (int a = 0; a < 3; ++a) q[3 * i + a] = pts.coord((i * 131) % pts.count, a);
      q[3 * 40] = std::numeric_limits<double>::quiet_NaN();
      q[3 * 41] = t.cube.min[0] + t.cube.side;
      std::vector<uint32_t> want(m), got = test::poisoned<uint32_t>(m);
      octreeLocate(t, q.data(), m, want.data(), Execution{});
      octreeLocate(t, q.data(), m, got.data(), execution());
      EXPECT_EQ(got, want);
      if (method.options.split == OctreeSplit::kData) continue;  // kNN needs a cube tree
      for (uint32_t k : {1u, 8u, 50u}) {
        std::vector<uint32_t> wi(m * k), gi = test::poisoned<uint32_t>(m * k);
        std::vector<double> wd(m * k), gd = test::poisoned<double>(m * k);
        octreeKnn(t, pts, q.data(), m, k, wi.data(), wd.data(), Execution{});
        octreeKnn(t, pts, q.data(), m, k, gi.data(), gd.data(), execution());
        EXPECT_EQ(gi, wi) << "k " << k;
        // The NaN query (40) has no neighbours: only padding (octree.hpp).
        for (uint32_t j = 0; j < k; ++j) EXPECT_EQ(gi[40 * k + j], kOctreeNone) << "k " << k;
        EXPECT_EQ(0, std::memcmp(gd.data(), wd.data(), wd.size() * sizeof(double))) << "k " << k;
      }
      for (double r : {0.0, 0.03 * side, 0.2 * side, -1.0}) {
        const OctreeQueryResult want_r = octreeRadius(t, pts, q.data(), m, r, Execution{});
        const OctreeQueryResult got_r = octreeRadius(t, pts, q.data(), m, r, execution());
        EXPECT_EQ(got_r.offsets, want_r.offsets) << "radius " << r;
        EXPECT_EQ(got_r.indices, want_r.indices) << "radius " << r;
      }
      std::vector<double> boxes(6 * m);
      for (uint64_t i = 0; i < m; ++i)
        for (int a = 0; a < 3; ++a) {
          boxes[6 * i + a] = q[3 * i + a] - 0.05 * side * (a + 1);
          boxes[6 * i + 3 + a] = q[3 * i + a] + (i % 7 == 0 ? -1.0 : 0.04) * side;  // some empty boxes
        }
      const OctreeQueryResult want_b = octreeBox(t, pts, boxes.data(), m, Execution{});
      const OctreeQueryResult got_b = octreeBox(t, pts, boxes.data(), m, execution());
      EXPECT_EQ(got_b.offsets, want_b.offsets);
      EXPECT_EQ(got_b.indices, want_b.indices);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, OctreeBackendParity, testing::ValuesIn(test::backendVariants()),
                         test::variantName);

}  // namespace

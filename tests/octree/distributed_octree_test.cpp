// The distributed octree's rules in one process (src/octree/distributed_build.cpp):
// R ranks simulated by cutting the points into blocks, each rank's samples,
// ancestor counts and slice computed by the same per-rank functions, the
// "collectives" done here by hand (concatenating samples, summing counts).
// The reference is the one-process tree (itself checked against the
// definition in octree_test.cpp): the aligned splitters must be leaf borders
// of it, never inside a run of equal keys, and the ranks' internal cells plus
// the crossing cells must be its internal nodes exactly. Under mpirun the
// whole command is compared byte for byte (tests/mpi/mpi_case.sh, octree*).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "octree/distributed_build.hpp"
#include "procgen/distributed.hpp"
#include "procgen/error.hpp"
#include "procgen/octree.hpp"

namespace {

using namespace procgen;
using octree_impl::InternalCell;

const Execution kSerial{Backend::kSerial, 1, -1};

uint64_t cellBegin(int level, uint64_t prefix) { return prefix << (3 * (21 - level)); }
uint64_t cellEnd(int level, uint64_t prefix) { return (prefix + 1) << (3 * (21 - level)); }

/// Six clusters of widths 10^-3 .. 10^0.5, 500 copies of one point, 200 a
/// hair apart, a uniform background; scrambled so every block holds all kinds.
std::vector<double> clusteredPoints() {
  std::vector<double> u(3 * 20000);  // the 54924 uniform numbers drawn below
  generatePoints(PointDistribution::kUniform, 20000, 99, u.data(), kSerial);
  std::vector<double> p;
  uint64_t at = 0;
  auto next = [&] { return u[at++]; };
  for (int c = 0; c < 6; ++c) {
    const double cx = 100 * next(), cy = 100 * next(), cz = 100 * next(), s = std::pow(10.0, 3.5 * next() - 3);
    for (int i = 0; i < 1400; ++i)
      for (double centre : {cx, cy, cz}) p.push_back(centre + s * (next() + next() - 1));
  }
  for (int i = 0; i < 500; ++i) p.insert(p.end(), {12.5, 40.25, 77.0});
  for (int i = 0; i < 200; ++i) p.insert(p.end(), {12.5, 40.25, 77.000000001});
  for (int i = 0; i < 1500; ++i)
    for (int a = 0; a < 3; ++a) p.push_back(100 * next());
  const uint64_t n = p.size() / 3;
  std::vector<double> scrambled(p.size());
  for (uint64_t j = 0; j < n; ++j)
    for (int a = 0; a < 3; ++a) scrambled[3 * j + a] = p[3 * ((j * 7919) % n) + a];
  return scrambled;
}

std::vector<double> uniformPoints(uint64_t n) {
  std::vector<double> p(3 * n);
  generatePoints(PointDistribution::kUniform, n, 5, p.data(), kSerial);
  return p;
}

struct Simulation {
  std::vector<uint64_t> splitters;  // R + 1 bounds
  std::vector<InternalCell> crossing;
  std::vector<uint64_t> tentative;
};

/// The splitter steps of R ranks holding blocks of `xyz` (buildOctreeDistributed step 2).
Simulation simulateSplitters(const std::vector<double>& xyz, int R, const OctreeOptions& o) {
  const OctreePoints all = OctreePoints::of(xyz);
  const OctreeCube cube = octreeRootCube(all, kSerial);
  const int D = cube.side > 0 ? o.max_depth : 0;
  std::vector<std::vector<uint64_t>> sorted(static_cast<size_t>(R));
  std::vector<uint64_t> samples;
  for (int r = 0; r < R; ++r) {
    const distributed::Block b = distributed::blockOf(all.count, r, R);
    std::vector<uint64_t>& k = sorted[size_t(r)];
    k.resize(b.end - b.begin);
    octreeKeys(OctreePoints::of(xyz.data() + 3 * b.begin, k.size()), cube, k.data(), kSerial);
    std::sort(k.begin(), k.end());
    const std::vector<uint64_t> s = octreeSampleKeys(k.data(), k.size(), 64);
    samples.insert(samples.end(), s.begin(), s.end());
  }
  Simulation sim;
  sim.tentative = octreeSampleSplitters(samples, R);
  sim.splitters = {0};
  for (const uint64_t t : sim.tentative) {
    uint64_t in[22] = {}, below[22] = {};
    for (int r = 0; r < R; ++r) {
      uint64_t rin[22], rbelow[22];
      octree_impl::countAncestorCells(sorted[size_t(r)].data(), sorted[size_t(r)].size(), t, rin, rbelow);
      for (int l = 0; l < 22; ++l) in[l] += rin[l], below[l] += rbelow[l];
    }
    const int leaf_level = octreeSplitterLeafLevel(in, o.leaf_size, D);
    sim.splitters.push_back(octreeAlignSplitter(t, leaf_level));
    octree_impl::crossingCells(t, leaf_level, sim.splitters.back(), below, sim.crossing);
  }
  sim.splitters.push_back(octree_impl::kKeyEnd);
  // Several splitters share their upper ancestors: each cell once (as the build does).
  std::sort(sim.crossing.begin(), sim.crossing.end());
  sim.crossing.erase(std::unique(sim.crossing.begin(), sim.crossing.end()), sim.crossing.end());
  return sim;
}

/// Checks the rules of one simulated job against the one-process tree.
void checkRanks(const std::vector<double>& xyz, int R, const OctreeOptions& o, double max_share) {
  SCOPED_TRACE("R = " + std::to_string(R) + ", leaf_size " + std::to_string(o.leaf_size) + ", max_depth " +
               std::to_string(o.max_depth));
  const Octree tree = buildOctree(OctreePoints::of(xyz), o, kSerial);
  const Simulation sim = simulateSplitters(xyz, R, o);
  const uint64_t n = tree.point_count;
  const std::vector<uint64_t> K(tree.keys.begin(), tree.keys.end());
  ASSERT_EQ(sim.splitters.size(), size_t(R) + 1);
  std::vector<std::pair<uint64_t, uint64_t>> leaves;  // cell begin, end
  for (uint32_t x = 0; x < tree.size(); ++x)
    if (tree.isLeaf(x)) leaves.emplace_back(cellBegin(tree.level[x], tree.prefix[x]), cellEnd(tree.level[x], tree.prefix[x]));
  for (int q = 1; q < R; ++q) {
    const uint64_t s = sim.splitters[size_t(q)];
    EXPECT_LE(sim.splitters[size_t(q) - 1], s) << "splitters not ascending";
    EXPECT_LE(s, sim.tentative[size_t(q) - 1]) << "a splitter moved up";
    bool border = s == 0;
    for (const auto& [b, e] : leaves) {
      EXPECT_FALSE(b < s && s < e) << "splitter " << q << " inside a leaf";
      border |= b == s;
    }
    EXPECT_TRUE(border) << "splitter " << q << " is no leaf's first key";
  }
  // The slices: no run of equal keys cut, and the internal cells found per
  // slice plus the crossing ones are the tree's internal nodes exactly.
  std::vector<InternalCell> cells = sim.crossing;
  uint64_t largest = 0;
  for (int r = 0; r < R; ++r) {
    const uint64_t b = std::lower_bound(K.begin(), K.end(), sim.splitters[size_t(r)]) - K.begin();
    const uint64_t e = std::lower_bound(K.begin(), K.end(), sim.splitters[size_t(r) + 1]) - K.begin();
    if (b > 0 && b < n) {
      EXPECT_NE(K[b - 1], K[b]) << "equal keys split between ranks " << r - 1 << " and " << r;
    }
    largest = std::max(largest, e - b);
    const int D = tree.cube.side > 0 ? o.max_depth : 0;
    const std::vector<InternalCell> own = octree_impl::rangeInternalCells(
        K.data() + b, e - b, o.leaf_size, D, sim.splitters[size_t(r)], sim.splitters[size_t(r) + 1], b);
    cells.insert(cells.end(), own.begin(), own.end());
  }
  EXPECT_LE(double(largest), max_share * double(n) / R) << "a rank holds " << largest << " of " << n;
  std::sort(cells.begin(), cells.end());
  const size_t before = cells.size();
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  EXPECT_EQ(cells.size(), before) << "a cell found by two ranks";
  std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> got, want;
  for (const InternalCell& c : cells) got.emplace_back(c.level, c.prefix, c.first);
  for (uint32_t x = 0; x < tree.size(); ++x)
    if (!tree.isLeaf(x)) want.emplace_back(tree.level[x], tree.prefix[x], tree.begin[x]);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(DistributedOctreeSplitters, SamplesAndSplittersByHand) {
  const std::vector<uint64_t> keys = {10, 20, 30, 40, 50, 60, 70, 80};
  // count 4 of 8: positions (2j + 1)·8/8 = 1, 3, 5, 7.
  EXPECT_EQ(octreeSampleKeys(keys.data(), keys.size(), 4), (std::vector<uint64_t>{20, 40, 60, 80}));
  EXPECT_EQ(octreeSampleKeys(keys.data(), keys.size(), 2), (std::vector<uint64_t>{30, 70}));
  EXPECT_TRUE(octreeSampleKeys(keys.data(), 0, 4).empty());
  // 12 samples, 4 ranks: sorted positions 3, 6, 9.
  EXPECT_EQ(octreeSampleSplitters({11, 5, 0, 9, 3, 7, 1, 10, 2, 8, 4, 6}, 4), (std::vector<uint64_t>{3, 6, 9}));
  EXPECT_EQ(octreeSampleSplitters({}, 3), (std::vector<uint64_t>{0, 0}));
  EXPECT_TRUE(octreeSampleSplitters({1, 2}, 1).empty());
}

TEST(DistributedOctreeSplitters, LeafLevelAndAlignmentByHand) {
  // Counts of the cells holding a splitter, root first: leaf_size 16 makes
  // levels 0..2 internal (100, 40, 17 > 16); the leaf is at level 3.
  uint64_t counts[22] = {100, 40, 17, 16, 3, 1};
  EXPECT_EQ(octreeSplitterLeafLevel(counts, 16, 21), 3);
  EXPECT_EQ(octreeSplitterLeafLevel(counts, 16, 2), 2);  // the depth limit ends the descent
  EXPECT_EQ(octreeSplitterLeafLevel(counts, 100, 21), 0);
  EXPECT_EQ(octreeSplitterLeafLevel(counts, 0, 21), 6);  // the first empty cell (leaf_size 0 is refused by the build)
  uint64_t many[22];
  std::fill(many, many + 22, 1000);
  EXPECT_EQ(octreeSplitterLeafLevel(many, 16, 21), 21);  // equal keys: a level-21 leaf
  // Level 3 of key 0b101'110'011 << 54 ...: its first key keeps the top 9 bits.
  const uint64_t key = (uint64_t{0b101110011} << 54) | 0x123456789abcdull;
  EXPECT_EQ(octreeAlignSplitter(key, 3), uint64_t{0b101110011} << 54);
  EXPECT_EQ(octreeAlignSplitter(key, 0), 0u);
  EXPECT_EQ(octreeAlignSplitter(key, 21), key);
}

TEST(DistributedOctreeSplitters, UniformRangesFollowLeaves) {
  const std::vector<double> xyz = uniformPoints(20000);
  for (const int R : {2, 3, 4, 7}) {
    OctreeOptions o;
    checkRanks(xyz, R, o, 1.5);
    o.leaf_size = 1;
    checkRanks(xyz, R, o, 1.5);
  }
}

TEST(DistributedOctreeSplitters, ClusteredRangesWithDuplicates) {
  const std::vector<double> xyz = clusteredPoints();
  for (const int R : {2, 4, 5}) {
    OctreeOptions o;
    o.leaf_size = 8;
    checkRanks(xyz, R, o, 2.5);
    o.max_depth = 6;  // duplicates and tight clusters in deep leaves of many points
    checkRanks(xyz, R, o, 4.0);
  }
}

TEST(DistributedOctreeSplitters, DegenerateSets) {
  // All points equal (side 0: one leaf), and fewer points than ranks.
  const std::vector<double> same(3 * 50, 2.5);
  checkRanks(same, 4, OctreeOptions{}, 4.0);
  const std::vector<double> three = {0, 0, 0, 1, 0, 0, 0, 1, 1};
  OctreeOptions one;
  one.leaf_size = 1;
  checkRanks(three, 4, one, 4.0);
}

// ---- the collective entry points in one process (R = 1) ----------------------

TEST(DistributedOctreeOneRank, EqualsTheOneProcessBuildAndQueries) {
  const std::vector<double> xyz = clusteredPoints();
  const OctreePoints all = OctreePoints::of(xyz);
  OctreeOptions o;
  o.leaf_size = 6;
  o.sorted_points = true;
  DistributedOctreeOptions wanted;
  wanted.local_tree = true;
  wanted.gather_points = true;
  const DistributedOctree d = buildOctreeDistributed(all, 0, all.count, o, wanted, kSerial);
  const Octree t = buildOctree(all, o, kSerial);
  ASSERT_EQ(d.tree.size(), t.size());
  EXPECT_TRUE(std::equal(t.level.begin(), t.level.end(), d.tree.level.begin()));
  EXPECT_TRUE(std::equal(t.prefix.begin(), t.prefix.end(), d.tree.prefix.begin()));
  EXPECT_TRUE(std::equal(t.parent.begin(), t.parent.end(), d.tree.parent.begin()));
  EXPECT_TRUE(std::equal(t.first_child.begin(), t.first_child.end(), d.tree.first_child.begin()));
  EXPECT_TRUE(std::equal(t.begin.begin(), t.begin.end(), d.tree.begin.begin()));
  EXPECT_TRUE(std::equal(t.end.begin(), t.end.end(), d.tree.end.begin()));
  EXPECT_TRUE(std::equal(t.order.begin(), t.order.end(), d.tree.order.begin()));
  EXPECT_TRUE(std::equal(t.keys.begin(), t.keys.end(), d.tree.keys.begin()));
  ASSERT_EQ(d.tree.xyz.size(), t.xyz.size());
  EXPECT_TRUE(std::equal(t.xyz.begin(), t.xyz.end(), d.tree.xyz.begin()));
  EXPECT_EQ(d.tree.stats.empty_leaves, t.stats.empty_leaves);
  EXPECT_EQ(d.tree.stats.depth, t.stats.depth);
  EXPECT_TRUE(std::equal(xyz.begin(), xyz.end(), d.points.begin(), d.points.end()));
  EXPECT_EQ(octreeChecksum(d.tree), octreeChecksum(t));

  std::vector<double> q(xyz.begin(), xyz.begin() + 3 * 100);
  q.insert(q.end(), {-50, 300, 20, std::nan(""), 1, 1});
  const uint64_t m = q.size() / 3;
  const uint32_t k = 11;
  std::vector<uint32_t> want(m * k), got(m * k, 12345);
  octreeKnn(t, all, q.data(), m, k, want.data(), nullptr, kSerial);
  octreeKnnDistributed(d, q.data(), m, k, got.data(), kSerial);
  EXPECT_EQ(got, want);
  const OctreeQueryResult r1 = octreeRadius(t, all, q.data(), m, 0.7, kSerial);
  const OctreeQueryResult r2 = octreeRadiusDistributed(d, q.data(), m, 0.7, kSerial);
  EXPECT_EQ(r2.offsets, r1.offsets);
  EXPECT_EQ(r2.indices, r1.indices);
  std::vector<double> boxes;
  for (uint64_t i = 0; i < m; ++i)
    for (int c = 0; c < 6; ++c) boxes.push_back(q[3 * i + uint64_t(c % 3)] + (c < 3 ? -1.5 : 1.0));
  const OctreeQueryResult b1 = octreeBox(t, all, boxes.data(), m, kSerial);
  const OctreeQueryResult b2 = octreeBoxDistributed(d, boxes.data(), m, kSerial);
  EXPECT_EQ(b2.offsets, b1.offsets);
  EXPECT_EQ(b2.indices, b1.indices);
}

TEST(DistributedOctreeOneRank, BadPointsAsTheOneProcessBuild) {
  std::vector<double> xyz = uniformPoints(100);
  xyz[3 * 42 + 2] = std::numeric_limits<double>::infinity();
  const OctreePoints all = OctreePoints::of(xyz);
  std::string want, got;
  try {
    buildOctree(all, OctreeOptions{}, kSerial);
  } catch (const Error& e) {
    want = e.what();
  }
  try {
    buildOctreeDistributed(all, 0, all.count, OctreeOptions{}, {}, kSerial);
  } catch (const Error& e) {
    got = e.what();
  }
  EXPECT_EQ(want, "point 42: coordinate z is infinite");
  EXPECT_EQ(got, want);
  OctreeOptions top;
  top.method = OctreeMethod::kTopDown;
  EXPECT_THROW(buildOctreeDistributed(all, 0, all.count, top, {}, kSerial), std::invalid_argument);
}

}  // namespace

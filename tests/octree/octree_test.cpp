// Octrees (seed 004 §3–§5) against brute-force references written plainly
// here: keys bit by bit, the bucketed tree by recursive splitting of explicit
// point lists, the compressed tree from its definition (distinct leaf cells,
// the set of LCAs of adjacent leaves, post-order by sorting with the §4
// total order), queries by scanning every point. Every backend variant must
// equal the serial tree array for array.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "octree/query_impl.hpp"
#include "procgen/error.hpp"
#include "procgen/octree.hpp"

namespace {

using namespace procgen;

// ---- plain references ------------------------------------------------------

uint32_t refQuantize(double p, double lo, double side) {
  if (side == 0) return 0;
  double t = std::floor((p - lo) / side * 2097152.0);
  if (t < 0) t = 0;
  if (t > 2097151) t = 2097151;
  return static_cast<uint32_t>(t);
}

uint64_t refKey(const OctreePoints& pts, uint64_t i, const OctreeCube& c) {
  uint32_t q[3];
  for (int a = 0; a < 3; ++a) q[a] = refQuantize(pts.coord(i, a), c.min[a], c.side);
  uint64_t key = 0;
  for (int bit = 0; bit < 21; ++bit)
    for (int a = 0; a < 3; ++a) key |= static_cast<uint64_t>((q[a] >> bit) & 1) << (3 * bit + a);
  return key;
}

bool inCell(uint64_t key, int level, uint64_t prefix) { return (key >> (3 * (21 - level))) == prefix; }

struct RefNode {
  int level;
  uint64_t prefix;
  uint32_t parent;
  uint32_t first_child;
  std::vector<uint32_t> points;  // sorted indices
};

/// The bucketed tree by its definition, breadth first, children in digit order.
std::vector<RefNode> refBucketed(const std::vector<uint64_t>& keys, uint32_t leaf_size, int max_depth) {
  std::vector<RefNode> nodes;
  RefNode root{0, 0, kOctreeNone, kOctreeNone, {}};
  for (uint32_t i = 0; i < keys.size(); ++i) root.points.push_back(i);
  nodes.push_back(root);
  for (size_t x = 0; x < nodes.size(); ++x) {
    if (nodes[x].points.size() <= leaf_size || nodes[x].level >= max_depth) continue;
    nodes[x].first_child = static_cast<uint32_t>(nodes.size());
    for (uint64_t d = 0; d < 8; ++d) {
      RefNode c{nodes[x].level + 1, nodes[x].prefix * 8 + d, static_cast<uint32_t>(x), kOctreeNone, {}};
      for (uint32_t i : nodes[x].points)
        if (inCell(keys[i], c.level, c.prefix)) c.points.push_back(i);
      nodes.push_back(c);
    }
  }
  return nodes;
}

uint64_t refFnv(const std::vector<std::pair<int, uint64_t>>& leaves_in_morton_order) {
  uint64_t h = 14695981039346656037ull;
  for (auto [level, prefix] : leaves_in_morton_order) {
    h = (h ^ static_cast<uint8_t>(level)) * 1099511628211ull;
    for (int b = 0; b < 8; ++b) h = (h ^ ((prefix >> (8 * b)) & 0xff)) * 1099511628211ull;
  }
  return h;
}

std::vector<uint32_t> pointsOf(const Octree& t, uint32_t node) {
  std::vector<uint32_t> v(t.order.begin() + t.begin[node], t.order.begin() + t.end[node]);
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<double> randomPoints(PointDistribution d, uint64_t n, uint64_t seed) {
  std::vector<double> xyz(3 * n);
  generatePoints(d, n, seed, xyz.data(), Execution{});
  return xyz;
}

/// Clustered points with exact duplicates and ties: an integer grid plus a tight cluster.
std::vector<double> awkwardPoints(uint64_t n, uint64_t seed) {
  std::vector<double> xyz = randomPoints(PointDistribution::kUniform, n, seed);
  for (uint64_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) {
      double& v = xyz[3 * i + a];
      if (i % 3 == 0) v = std::floor(v * 6);               // grid: many equal points and distance ties
      else if (i % 3 == 1) v = 2.5 + v * 1e-7;             // a cluster forcing deep chains
      else v = v * 6;
    }
  return xyz;
}

std::vector<uint64_t> keysOf(const OctreePoints& pts, const OctreeCube& c) {
  std::vector<uint64_t> k(pts.count);
  for (uint64_t i = 0; i < pts.count; ++i) k[i] = refKey(pts, i, c);
  return k;
}

void expectSameTree(const Octree& a, const Octree& b, bool same_order_in_leaves) {
  EXPECT_EQ(a.level, b.level);
  EXPECT_EQ(a.prefix, b.prefix);
  EXPECT_EQ(a.parent, b.parent);
  EXPECT_EQ(a.first_child, b.first_child);
  EXPECT_EQ(a.child_count, b.child_count);
  EXPECT_EQ(a.chain, b.chain);
  EXPECT_EQ(a.begin, b.begin);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.root, b.root);
  EXPECT_EQ(a.stats.nodes, b.stats.nodes);
  EXPECT_EQ(a.stats.internal, b.stats.internal);
  EXPECT_EQ(a.stats.leaves, b.stats.leaves);
  EXPECT_EQ(a.stats.empty_leaves, b.stats.empty_leaves);
  EXPECT_EQ(a.stats.chain_nodes, b.stats.chain_nodes);
  EXPECT_EQ(a.stats.depth, b.stats.depth);
  if (same_order_in_leaves) {
    EXPECT_EQ(a.order, b.order);
    EXPECT_EQ(a.keys, b.keys);
  } else {
    for (uint32_t x = 0; x < a.size() && x < b.size(); ++x)
      if (a.isLeaf(x)) {
        ASSERT_EQ(pointsOf(a, x), pointsOf(b, x)) << "leaf " << x;
      }
  }
}

// ---- keys and cells ----------------------------------------------------------

TEST(OctreeKeys, MatchBitByBitInterleavingOfTheContractQuantization) {
  for (auto d : {PointDistribution::kUniform, PointDistribution::kGaussian, PointDistribution::kPlummer}) {
    std::vector<double> xyz = randomPoints(d, 3000, 7);
    const OctreePoints pts = OctreePoints::of(xyz);
    const OctreeCube cube = octreeRootCube(pts, Execution{});
    // The cube by definition: min corner, largest extent.
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (uint64_t i = 0; i < pts.count; ++i)
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], pts.coord(i, a));
        hi[a] = std::max(hi[a], pts.coord(i, a));
      }
    for (int a = 0; a < 3; ++a) EXPECT_EQ(cube.min[a], lo[a]);
    EXPECT_EQ(cube.side, std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}));
    std::vector<uint64_t> keys(pts.count);
    octreeKeys(pts, cube, keys.data(), Execution{});
    EXPECT_EQ(keys, keysOf(pts, cube));
    // The point on the largest extent's far face gets 2^21 − 1 on that axis.
    EXPECT_NE(*std::max_element(keys.begin(), keys.end()), 0u);
  }
}

TEST(OctreeKeys, FloatPointsWidenExactly) {
  std::vector<float> xyz = {0.f, 0.f, 0.f, 1.f, 0.5f, 0.25f, 0.1f, 0.7f, 0.3f};
  const OctreePoints pts = OctreePoints::of(xyz.data(), 3);
  const OctreeCube cube = octreeRootCube(pts, Execution{});
  std::vector<uint64_t> keys(3);
  octreeKeys(pts, cube, keys.data(), Execution{});
  EXPECT_EQ(keys, keysOf(pts, cube));
  // (1, 0.5, 0.25) in the unit cube: x = 2^21 − 1, y = 2^20, z = 2^19.
  EXPECT_EQ(keys[1] & 0x1249249249249249ull, 0x1249249249249249ull);
}

TEST(OctreeCells, ParentContainmentLcaAndChildByDefinition) {
  // Cells as digit strings: prefix relations by string comparison.
  auto digits = [](OctreeCell c) {
    std::string s;
    for (int l = c.level; l >= 1; --l) s.insert(s.begin(), static_cast<char>('0' + ((c.prefix >> (3 * (c.level - l))) & 7)));
    return s;
  };
  std::vector<OctreeCell> cells;
  const uint64_t seeds[] = {0x123456789abcdefull, 0x7fffffffffffffffull, 0, 0x5555555555555555ull, 0x0123400000000000ull};
  for (uint64_t k : seeds)
    for (int l = 0; l <= 21; l += 3) cells.push_back(octreeCellOfKey(k & 0x7fffffffffffffffull, l));
  for (const OctreeCell& a : cells) {
    if (a.level > 0) {
      EXPECT_EQ(digits(octreeCellParent(a)), digits(a).substr(0, a.level - 1));
    }
    for (const OctreeCell& b : cells) {
      const std::string da = digits(a), db = digits(b);
      EXPECT_EQ(octreeCellContains(a, b), db.compare(0, da.size(), da) == 0 && db.size() >= da.size());
      size_t common = 0;
      while (common < da.size() && common < db.size() && da[common] == db[common]) ++common;
      const OctreeCell lca = octreeCellLca(a, b);
      EXPECT_EQ(lca.level, static_cast<int>(common));
      EXPECT_EQ(digits(lca), da.substr(0, common));
      if (octreeCellContains(a, b) && b.level > a.level) {
        EXPECT_EQ(digits(octreeChildToward(a, b)), db.substr(0, da.size() + 1));
      }
    }
  }
}

// ---- trees against references -----------------------------------------------

struct TreeCase {
  const char* name;
  std::vector<double> xyz;
};

std::vector<TreeCase> treeCases() {
  std::vector<TreeCase> v;
  v.push_back({"uniform", randomPoints(PointDistribution::kUniform, 2500, 1)});
  v.push_back({"plummer", randomPoints(PointDistribution::kPlummer, 2500, 2)});
  v.push_back({"awkward", awkwardPoints(1500, 3)});
  std::vector<double> line;
  for (int i = 0; i < 300; ++i) line.insert(line.end(), {i * 0.37, 2.0, -1.0});
  v.push_back({"collinear", line});
  return v;
}

TEST(OctreeBucketed, EqualsTheRecursiveDefinitionNodeForNode) {
  for (const TreeCase& tc : treeCases()) {
    for (uint32_t leaf_size : {1u, 4u, 16u}) {
      for (int max_depth : {21, 3}) {
        SCOPED_TRACE(std::string(tc.name) + " leaf " + std::to_string(leaf_size) + " depth " + std::to_string(max_depth));
        const OctreePoints pts = OctreePoints::of(tc.xyz);
        OctreeOptions o;
        o.leaf_size = leaf_size;
        o.max_depth = max_depth;
        const Octree t = buildOctree(pts, o, Execution{});
        const std::vector<RefNode> ref = refBucketed(keysOf(pts, t.cube), leaf_size, max_depth);
        ASSERT_EQ(t.size(), ref.size());
        uint64_t internal = 0, empty = 0;
        int depth = 0;
        std::vector<int> leaves_holding(pts.count, 0);
        std::vector<std::pair<uint64_t, std::pair<int, uint64_t>>> morton;
        for (uint32_t x = 0; x < ref.size(); ++x) {
          ASSERT_EQ(t.level[x], ref[x].level);
          ASSERT_EQ(t.prefix[x], ref[x].prefix);
          ASSERT_EQ(t.parent[x], ref[x].parent);
          ASSERT_EQ(t.first_child[x], ref[x].first_child);
          ASSERT_EQ(pointsOf(t, x), ref[x].points);
          depth = std::max(depth, ref[x].level);
          if (ref[x].first_child != kOctreeNone) {
            ++internal;
          } else {
            if (ref[x].points.empty()) ++empty;
            // Capacity: a leaf over capacity only at the depth limit.
            if (ref[x].points.size() > leaf_size) {
              EXPECT_EQ(ref[x].level, max_depth);
            }
            for (uint32_t i : ref[x].points) ++leaves_holding[i];
            morton.push_back({ref[x].prefix << (3 * (21 - ref[x].level)), {ref[x].level, ref[x].prefix}});
          }
        }
        for (int c : leaves_holding) ASSERT_EQ(c, 1);  // every point in exactly one leaf (its cell)
        EXPECT_EQ(t.stats.internal, internal);
        EXPECT_EQ(t.stats.leaves, ref.size() - internal);
        EXPECT_EQ(t.stats.nodes, ref.size());
        EXPECT_EQ(t.stats.empty_leaves, empty);
        EXPECT_EQ(t.stats.depth, depth);
        std::sort(morton.begin(), morton.end());
        std::vector<std::pair<int, uint64_t>> leaves;
        for (auto& m : morton) leaves.push_back(m.second);
        EXPECT_EQ(octreeChecksum(t), refFnv(leaves));
      }
    }
  }
}

TEST(OctreeTopDown, CubeModeEqualsBucketedBottomUp) {
  for (const TreeCase& tc : treeCases()) {
    for (uint32_t leaf_size : {1u, 16u}) {
      SCOPED_TRACE(std::string(tc.name) + " leaf " + std::to_string(leaf_size));
      const OctreePoints pts = OctreePoints::of(tc.xyz);
      OctreeOptions o;
      o.leaf_size = leaf_size;
      const Octree bottom_up = buildOctree(pts, o, Execution{});
      o.method = OctreeMethod::kTopDown;
      const Octree top_down = buildOctree(pts, o, Execution{});
      expectSameTree(bottom_up, top_down, false);
      EXPECT_EQ(octreeChecksum(bottom_up), octreeChecksum(top_down));
    }
  }
}

TEST(OctreeTopDown, DataModeSplitsAtTheCentreOfThePointBounds) {
  for (const TreeCase& tc : treeCases()) {
    SCOPED_TRACE(tc.name);
    const OctreePoints pts = OctreePoints::of(tc.xyz);
    OctreeOptions o;
    o.method = OctreeMethod::kTopDown;
    o.split = OctreeSplit::kData;
    o.leaf_size = 8;
    const Octree t = buildOctree(pts, o, Execution{});
    std::vector<int> holding(pts.count, 0);
    for (uint32_t x = 0; x < t.size(); ++x) {
      const std::vector<uint32_t> mine = pointsOf(t, x);
      if (t.first_child[x] == kOctreeNone) {
        for (uint32_t i : mine) ++holding[i];
        if (mine.size() > o.leaf_size && t.level[x] < o.max_depth) {  // else only when all its points are equal
          for (uint32_t i : mine)
            for (int a = 0; a < 3; ++a) ASSERT_EQ(pts.coord(i, a), pts.coord(mine[0], a));
        }
        continue;
      }
      // Reference split: bounds, centre, axes by extent (ties x < y < z), upper iff > centre.
      double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
      for (uint32_t i : mine)
        for (int a = 0; a < 3; ++a) {
          lo[a] = std::min(lo[a], pts.coord(i, a));
          hi[a] = std::max(hi[a], pts.coord(i, a));
        }
      int axes[3] = {0, 1, 2};
      std::stable_sort(axes, axes + 3, [&](int p, int q) { return hi[p] - lo[p] > hi[q] - lo[q]; });
      std::vector<std::vector<uint32_t>> expect(8);
      for (uint32_t i : mine) {
        int d = 0;
        for (int pass = 0; pass < 3; ++pass)
          d = d * 2 + (pts.coord(i, axes[pass]) > (lo[axes[pass]] + hi[axes[pass]]) * 0.5 ? 1 : 0);
        expect[d].push_back(i);
      }
      for (uint32_t d = 0; d < 8; ++d) {
        ASSERT_EQ(pointsOf(t, t.first_child[x] + d), expect[d]) << "node " << x << " child " << d;
        EXPECT_EQ(t.parent[t.first_child[x] + d], x);
        EXPECT_EQ(t.prefix[t.first_child[x] + d], t.prefix[x] * 8 + d);
      }
    }
    for (int c : holding) ASSERT_EQ(c, 1);
    // locate finds the leaf of every input point.
    for (uint32_t i = 0; i < pts.count; ++i) {
      const uint32_t leaf = octreeLocate(t, pts.coord(i, 0), pts.coord(i, 1), pts.coord(i, 2));
      ASSERT_NE(leaf, kOctreeNone);
      const std::vector<uint32_t> in = pointsOf(t, leaf);
      ASSERT_TRUE(std::binary_search(in.begin(), in.end(), i)) << "point " << i;
    }
  }
}

/// The §3 post-order: a subcell precedes its supercell, disjoint cells in Morton order.
bool postOrderLess(std::pair<int, uint64_t> a, std::pair<int, uint64_t> b) {
  const OctreeCell ca{a.first, a.second}, cb{b.first, b.second};
  if (octreeCellContains(cb, ca)) return !(ca == cb);
  if (octreeCellContains(ca, cb)) return false;
  return (a.second << (3 * (21 - a.first))) < (b.second << (3 * (21 - b.first)));
}

TEST(OctreeCompressed, LeavesLcasPostOrderParentsAndChainsByDefinition) {
  for (const TreeCase& tc : treeCases()) {
    for (int max_depth : {21, 5}) {
      SCOPED_TRACE(std::string(tc.name) + " depth " + std::to_string(max_depth));
      const OctreePoints pts = OctreePoints::of(tc.xyz);
      OctreeOptions o;
      o.compressed = true;
      o.max_depth = max_depth;
      const Octree t = buildOctree(pts, o, Execution{});
      std::vector<uint64_t> keys = keysOf(pts, t.cube);
      std::set<uint64_t> leaf_set;
      for (uint64_t k : keys) leaf_set.insert(k >> (3 * (21 - max_depth)));
      std::vector<uint64_t> leaves(leaf_set.begin(), leaf_set.end());
      std::set<std::pair<int, uint64_t>> cells;
      for (uint64_t p : leaves) cells.insert({max_depth, p});
      for (size_t j = 0; j + 1 < leaves.size(); ++j) {
        const OctreeCell lca = octreeCellLca({max_depth, leaves[j]}, {max_depth, leaves[j + 1]});
        cells.insert({lca.level, lca.prefix});
      }
      std::vector<std::pair<int, uint64_t>> post(cells.begin(), cells.end());
      std::sort(post.begin(), post.end(), postOrderLess);
      ASSERT_EQ(t.size(), post.size());
      EXPECT_EQ(t.stats.leaves, leaves.size());
      EXPECT_EQ(t.stats.internal, post.size() - leaves.size());
      for (uint32_t x = 0; x < post.size(); ++x) {
        ASSERT_EQ(t.level[x], post[x].first) << x;
        ASSERT_EQ(t.prefix[x], post[x].second) << x;
        // Parent: the deepest other cell containing it.
        uint32_t expect_parent = kOctreeNone;
        int best = -1;
        for (uint32_t y = 0; y < post.size(); ++y)
          if (y != x && octreeCellContains({post[y].first, post[y].second}, {post[x].first, post[x].second}) &&
              post[y].first > best) {
            best = post[y].first;
            expect_parent = y;
          }
        ASSERT_EQ(t.parent[x], expect_parent) << x;
        uint32_t kids = 0;
        for (uint32_t y = 0; y < post.size(); ++y) kids += t.parent[y] == x ? 1 : 0;
        EXPECT_EQ(t.child_count[x], kids);
        // Points: exactly those whose key lies in the cell.
        std::vector<uint32_t> expect_points;
        for (uint32_t i = 0; i < keys.size(); ++i)
          if (inCell(keys[i], post[x].first, post[x].second)) expect_points.push_back(i);
        ASSERT_EQ(pointsOf(t, x), expect_points);
      }
      EXPECT_EQ(t.root, post.size() - 1);
      // Full: every cell between a node and its parent (and above the root).
      o.full = true;
      const Octree f = buildOctree(pts, o, Execution{});
      std::set<std::pair<int, uint64_t>> full_cells = cells;
      for (auto [l, p] : cells)
        for (int up = l - 1; up >= 0; --up) full_cells.insert({up, p >> (3 * (l - up))});
      std::vector<std::pair<int, uint64_t>> full_post(full_cells.begin(), full_cells.end());
      std::sort(full_post.begin(), full_post.end(), postOrderLess);
      ASSERT_EQ(f.size(), full_post.size());
      EXPECT_EQ(f.stats.chain_nodes, full_post.size() - post.size());
      for (uint32_t x = 0; x < f.size(); ++x) {
        ASSERT_EQ(f.level[x], full_post[x].first);
        ASSERT_EQ(f.prefix[x], full_post[x].second);
        EXPECT_EQ(f.chain[x], cells.count(full_post[x]) ? 0 : 1);
        if (f.level[x] > 0) {
          ASSERT_NE(f.parent[x], kOctreeNone);
          EXPECT_EQ(f.level[f.parent[x]], f.level[x] - 1);
          EXPECT_TRUE(octreeCellContains({f.level[f.parent[x]], f.prefix[f.parent[x]]}, {f.level[x], f.prefix[x]}));
        } else {
          EXPECT_EQ(f.parent[x], kOctreeNone);
        }
        if (f.chain[x]) {
          EXPECT_EQ(f.child_count[x], 1);
        }
      }
      // Subtree leaves in post-order trees: the leaves inside the node's cell.
      const uint32_t probe = t.parent[0] == kOctreeNone ? 0 : t.parent[0];
      std::vector<uint32_t> expect_leaves;
      for (uint32_t x = 0; x < t.size(); ++x)
        if (t.child_count[x] == 0 && octreeCellContains({t.level[probe], t.prefix[probe]}, {t.level[x], t.prefix[x]}))
          expect_leaves.push_back(x);
      EXPECT_EQ(octreeSubtreeLeaves(t, probe), expect_leaves);
    }
  }
}

// ---- degenerate input ----------------------------------------------------------

TEST(OctreeDegenerate, AllEqualAndSinglePointAreOneLeafTrees) {
  std::vector<double> same;
  for (int i = 0; i < 50; ++i) same.insert(same.end(), {1.5, -2.0, 3.25});
  for (uint64_t n : {uint64_t{1}, uint64_t{50}}) {
    const OctreePoints pts{nullptr, same.data(), n};
    for (int method = 0; method < 4; ++method) {
      OctreeOptions o;
      o.leaf_size = 4;
      if (method == 1) o.method = OctreeMethod::kTopDown;
      if (method == 2) o.compressed = true;
      if (method == 3) o.method = OctreeMethod::kTopDown, o.split = OctreeSplit::kData;
      const Octree t = buildOctree(pts, o, Execution{});
      EXPECT_EQ(t.cube.side, 0.0);
      EXPECT_EQ(t.stats.nodes, 1u);
      EXPECT_EQ(t.stats.leaves, 1u);
      EXPECT_EQ(t.stats.depth, 0);
      EXPECT_EQ(t.end[0] - t.begin[0], n);
    }
  }
}

TEST(OctreeDegenerate, NonFiniteCoordinatesAreBadInputNamingThePoint) {
  std::vector<double> xyz = randomPoints(PointDistribution::kUniform, 100, 4);
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    xyz[3 * 42 + 1] = bad;
    for (const test::Variant& v : test::availableVariants()) {
      try {
        buildOctree(OctreePoints::of(xyz), OctreeOptions{}, v.execution());
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
        EXPECT_NE(std::string(e.what()).find("point 42: coordinate y is"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(std::isnan(bad) ? "NaN" : "infinite"), std::string::npos);
      }
    }
  }
  EXPECT_THROW(buildOctree(OctreePoints{nullptr, xyz.data(), 0}, OctreeOptions{}, Execution{}), Error);
}

TEST(OctreeDegenerate, OverBudgetIsRefusedBeforeAllocating) {
  std::vector<double> xyz = randomPoints(PointDistribution::kUniform, 1000, 5);
  OctreeOptions o;
  o.memory_budget = 4096;  // 1000 points need 24 000 bytes of keys and order
  try {
    buildOctree(OctreePoints::of(xyz), o, Execution{});
    ADD_FAILURE() << "no error";
  } catch (const ResourceError& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("octree keys"), std::string::npos) << e.what();
  }
}

TEST(OctreeOptions, InvalidCombinationsAreRejected) {
  std::vector<double> xyz = randomPoints(PointDistribution::kUniform, 10, 6);
  const OctreePoints pts = OctreePoints::of(xyz);
  OctreeOptions o;
  o.leaf_size = 0;
  EXPECT_THROW(buildOctree(pts, o, Execution{}), std::invalid_argument);
  o = {};
  o.max_depth = 22;
  EXPECT_THROW(buildOctree(pts, o, Execution{}), std::invalid_argument);
  o = {};
  o.split = OctreeSplit::kData;
  EXPECT_THROW(buildOctree(pts, o, Execution{}), std::invalid_argument);
  o = {};
  o.full = true;
  EXPECT_THROW(buildOctree(pts, o, Execution{}), std::invalid_argument);
}

// ---- queries against brute force --------------------------------------------------

std::vector<double> queryPoints(const OctreeCube& c, uint64_t m, uint64_t seed) {
  std::vector<double> q = randomPoints(PointDistribution::kUniform, m, seed);
  for (uint64_t i = 0; i < m; ++i)
    for (int a = 0; a < 3; ++a) q[3 * i + a] = c.min[a] - 0.1 * c.side + q[3 * i + a] * 1.2 * c.side;
  return q;
}

double dist2(const OctreePoints& pts, uint32_t i, const double* q) {
  const double dx = pts.coord(i, 0) - q[0], dy = pts.coord(i, 1) - q[1], dz = pts.coord(i, 2) - q[2];
  return dx * dx + dy * dy + dz * dz;
}

class OctreeParity : public test::BackendTest {};

TEST_P(OctreeParity, EveryMethodEqualsSerialArrayForArray) {
  for (const TreeCase& tc : treeCases()) {
    for (int method = 0; method < 5; ++method) {
      SCOPED_TRACE(std::string(tc.name) + " method " + std::to_string(method));
      OctreeOptions o;
      o.leaf_size = 3;
      if (method == 1) o.method = OctreeMethod::kTopDown;
      if (method == 2) o.compressed = true;
      if (method == 3) o.compressed = o.full = true;
      if (method == 4) o.method = OctreeMethod::kTopDown, o.split = OctreeSplit::kData;
      o.sorted_points = method % 2 == 0;
      const OctreePoints pts = OctreePoints::of(tc.xyz);
      const Octree expect = buildOctree(pts, o, Execution{});
      for (uint64_t chunk : {uint64_t{0}, uint64_t{7}}) {
        test::CpuChunkScope scope(chunk);
        const Octree got = buildOctree(pts, o, execution());
        expectSameTree(expect, got, true);
        ASSERT_EQ(expect.split_center.size(), got.split_center.size());  // NaN for leaves: compare bits
        if (!expect.split_center.empty()) {  // memcmp's pointers must not be null, even for 0 bytes
          EXPECT_EQ(0, std::memcmp(expect.split_center.data(), got.split_center.data(),
                                   expect.split_center.size() * sizeof(double)));
        }
        EXPECT_EQ(expect.split_axes, got.split_axes);
        EXPECT_EQ(expect.xyz, got.xyz);
        if (o.sorted_points) {
          ASSERT_EQ(got.xyz.size(), 3 * pts.count);
          for (uint64_t j = 0; j < pts.count; ++j)
            for (int a = 0; a < 3; ++a) ASSERT_EQ(got.xyz[3 * j + a], pts.coord(got.order[j], a));
        }
      }
    }
  }
}

TEST_P(OctreeParity, GeneratedPointsEqualSerial) {
  for (auto d : {PointDistribution::kUniform, PointDistribution::kGaussian, PointDistribution::kPlummer}) {
    std::vector<double> a(3 * 5000, -1), b(3 * 5000, -2);
    generatePoints(d, 5000, 11, a.data(), Execution{});
    test::CpuChunkScope scope(variant().chunk ? variant().chunk : 13);
    generatePoints(d, 5000, 11, b.data(), execution());
    EXPECT_EQ(a, b);
  }
}

TEST_P(OctreeParity, QueriesEqualBruteForce) {
  for (const TreeCase& tc : treeCases()) {
    for (int method = 0; method < 3; ++method) {
      SCOPED_TRACE(std::string(tc.name) + " method " + std::to_string(method));
      const OctreePoints pts = OctreePoints::of(tc.xyz);
      OctreeOptions o;
      o.leaf_size = 5;
      if (method == 1) o.method = OctreeMethod::kTopDown;
      if (method == 2) o.sorted_points = true;  // queries read the tree's copy
      const Octree t = buildOctree(pts, o, execution());
      const uint64_t m = 150;
      std::vector<double> q = queryPoints(t.cube, m, 99);
      // Some queries exactly on input points (distance 0 and ties).
      for (uint64_t i = 0; i < 20; ++i)
        for (int a = 0; a < 3; ++a) q[3 * i + a] = pts.coord((i * 37) % pts.count, a);
      const std::vector<uint64_t> keys = keysOf(pts, t.cube);

      // locate: the leaf whose cell holds the query's key; none outside the cube.
      std::vector<uint32_t> where(m, 12345);
      octreeLocate(t, q.data(), m, where.data(), execution());
      for (uint64_t i = 0; i < m; ++i) {
        const double* p = &q[3 * i];
        bool inside = true;
        for (int a = 0; a < 3; ++a) inside = inside && p[a] >= t.cube.min[a] && p[a] - t.cube.min[a] < t.cube.side;
        if (!inside) {
          EXPECT_EQ(where[i], kOctreeNone);
          continue;
        }
        const OctreePoints one{nullptr, p, 1};
        const uint64_t key = refKey(one, 0, t.cube);
        ASSERT_NE(where[i], kOctreeNone);
        EXPECT_TRUE(t.isLeaf(where[i]));
        EXPECT_TRUE(inCell(key, t.level[where[i]], t.prefix[where[i]]));
      }

      // kNN, k = 8 and k larger than some clouds.
      for (uint32_t k : {1u, 8u, 40u}) {
        std::vector<uint32_t> got(m * k, 12345);
        std::vector<double> gd(m * k, -1);
        octreeKnn(t, pts, q.data(), m, k, got.data(), gd.data(), execution());
        for (uint64_t i = 0; i < m; ++i) {
          std::vector<std::pair<double, uint32_t>> all;
          for (uint32_t j = 0; j < pts.count; ++j) all.push_back({dist2(pts, j, &q[3 * i]), j});
          std::sort(all.begin(), all.end());
          for (uint32_t j = 0; j < k; ++j) {
            if (j < all.size()) {
              ASSERT_EQ(got[i * k + j], all[j].second) << "query " << i << " rank " << j;
              ASSERT_EQ(gd[i * k + j], all[j].first);
            } else {
              ASSERT_EQ(got[i * k + j], kOctreeNone);
            }
          }
        }
      }

      // radius: by (distance, index); box: by index.
      const double r = 0.07 * t.cube.side;
      const OctreeQueryResult rr = octreeRadius(t, pts, q.data(), m, r, execution());
      std::vector<double> boxes(6 * m);
      for (uint64_t i = 0; i < m; ++i)
        for (int a = 0; a < 3; ++a) {
          boxes[6 * i + a] = q[3 * i + a] - 0.05 * t.cube.side * (a + 1);
          boxes[6 * i + 3 + a] = q[3 * i + a] + 0.04 * t.cube.side;
        }
      const OctreeQueryResult br = octreeBox(t, pts, boxes.data(), m, execution());
      ASSERT_EQ(rr.offsets.size(), m + 1);
      ASSERT_EQ(br.offsets.size(), m + 1);
      for (uint64_t i = 0; i < m; ++i) {
        std::vector<std::pair<double, uint32_t>> within;
        std::vector<uint32_t> inbox;
        for (uint32_t j = 0; j < pts.count; ++j) {
          const double d2 = dist2(pts, j, &q[3 * i]);
          if (d2 <= r * r) within.push_back({d2, j});
          bool in = true;
          for (int a = 0; a < 3; ++a)
            in = in && boxes[6 * i + a] <= pts.coord(j, a) && pts.coord(j, a) <= boxes[6 * i + 3 + a];
          if (in) inbox.push_back(j);
        }
        std::sort(within.begin(), within.end());
        std::vector<uint32_t> expect;
        for (auto& w : within) expect.push_back(w.second);
        EXPECT_EQ(std::vector<uint32_t>(rr.indices.begin() + rr.offsets[i], rr.indices.begin() + rr.offsets[i + 1]),
                  expect);
        EXPECT_EQ(std::vector<uint32_t>(br.indices.begin() + br.offsets[i], br.indices.begin() + br.offsets[i + 1]),
                  inbox);
      }

      // Node LCA and subtree leaves by cells (the bucketed tree holds every ancestor cell).
      const std::vector<uint32_t> leaves = octreeLeavesInOrder(t);
      for (size_t a = 0; a < leaves.size(); a += 17)
        for (size_t b = 0; b < leaves.size(); b += 23) {
          const uint32_t lca = octreeLcaNode(t, leaves[a], leaves[b]);
          const OctreeCell c = octreeCellLca({t.level[leaves[a]], t.prefix[leaves[a]]}, {t.level[leaves[b]], t.prefix[leaves[b]]});
          ASSERT_EQ(t.level[lca], c.level);
          ASSERT_EQ(t.prefix[lca], c.prefix);
        }
      for (uint32_t x = 0; x < t.size(); x += 5) {
        std::vector<uint32_t> expect;
        for (uint32_t leaf : leaves)
          if (octreeCellContains({t.level[x], t.prefix[x]}, {t.level[leaf], t.prefix[leaf]})) expect.push_back(leaf);
        ASSERT_EQ(octreeSubtreeLeaves(t, x), expect);
      }
    }
  }
}

// Batches of 512 queries and more are answered in Morton order of the query
// points (query_impl.hpp mortonOrder): the answers must still land at their
// queries' places, equal to brute force, with duplicates and ties (awkward).
// Float input is read through its own loop (query_impl.hpp forPoints): run
// the batch on a float copy without the sorted copy too.
TEST_P(OctreeParity, LargeBatchesAnsweredInMortonOrderEqualBruteForce) {
  const std::vector<double> xyz64 = awkwardPoints(1200, 5);
  const std::vector<float> xyz32(xyz64.begin(), xyz64.end());
  for (const bool as_float : {false, true}) {
    SCOPED_TRACE(as_float ? "float points, gathered" : "double points, sorted copy");
    const OctreePoints pts =
        as_float ? OctreePoints::of(xyz32.data(), xyz32.size() / 3) : OctreePoints::of(xyz64);
    OctreeOptions o;
    o.leaf_size = 4;
    o.sorted_points = !as_float;
    const Octree t = buildOctree(pts, o, execution());
    const uint64_t m = 1500;
    std::vector<double> q = queryPoints(t.cube, m, 123);
    for (uint64_t i = 0; i < m; i += 5)
      for (int a = 0; a < 3; ++a) q[3 * i + a] = pts.coord((i * 13) % pts.count, a);  // on input points
    const uint32_t k = 5;
    std::vector<uint32_t> got(m * k, 12345);
    octreeKnn(t, pts, q.data(), m, k, got.data(), nullptr, execution());
    const double r = 0.09 * t.cube.side;
    const OctreeQueryResult rr = octreeRadius(t, pts, q.data(), m, r, execution());
    std::vector<double> boxes(6 * m);
    for (uint64_t i = 0; i < m; ++i)
      for (int a = 0; a < 3; ++a) {
        boxes[6 * i + a] = q[3 * i + a] - 0.06 * t.cube.side;
        boxes[6 * i + 3 + a] = q[3 * i + a] + 0.03 * t.cube.side * (a + 1);
      }
    const OctreeQueryResult br = octreeBox(t, pts, boxes.data(), m, execution());
    for (uint64_t i = 0; i < m; ++i) {
      std::vector<std::pair<double, uint32_t>> all;
      std::vector<uint32_t> within, inbox;
      for (uint32_t j = 0; j < pts.count; ++j) all.push_back({dist2(pts, j, &q[3 * i]), j});
      std::sort(all.begin(), all.end());
      for (uint32_t j = 0; j < k; ++j)
        ASSERT_EQ(got[i * k + j], all[j].second) << "query " << i << " rank " << j;
      for (const auto& [d2, j] : all)
        if (d2 <= r * r) within.push_back(j);
      for (uint32_t j = 0; j < pts.count; ++j) {
        bool in = true;
        for (int a = 0; a < 3; ++a)
          in = in && boxes[6 * i + a] <= pts.coord(j, a) && pts.coord(j, a) <= boxes[6 * i + 3 + a];
        if (in) inbox.push_back(j);
      }
      ASSERT_EQ(
          std::vector<uint32_t>(rr.indices.begin() + rr.offsets[i], rr.indices.begin() + rr.offsets[i + 1]),
          within)
          << "radius query " << i;
      ASSERT_EQ(
          std::vector<uint32_t>(br.indices.begin() + br.offsets[i], br.indices.begin() + br.offsets[i + 1]),
          inbox)
          << "box query " << i;
    }
  }
}

// The kNN paths of query_impl.hpp by construction: k <= 8 keeps its best in
// fixed arrays (SmallBest), larger k in growing ones (KBest); the sorted copy
// is read four points at a time (SSE2, or AVX2 where the CPU has it: both
// run), the rest point by point; the descent starts at the deepest cell on
// the path that holds the bound's ball. A lattice 0..16 (the root cube's side
// 16, so cell faces fall on lattice planes), every point twice: distances tie
// by the dozen and queries sit on cell faces, edges and corners, at cell
// centres (8 equidistant corners) and between two lattice points. k runs
// across 8 and above a leaf's and the seed's count, and above the cloud's
// (padding; on the first 30 queries only, every point being offered).
TEST_P(OctreeParity, KnnTiesOnALatticeAndKAcrossEveryBestSizeEqualBruteForce) {
  const bool avx2 = octree_impl::knn_avx2;
  struct Restore {
    bool avx2;
    ~Restore() { octree_impl::knn_avx2 = avx2; }
  } restore{avx2};
  std::vector<double> lattice;
  for (int copy = 0; copy < 2; ++copy)
    for (int x = 0; x <= 16; x += 2)
      for (int y = 0; y <= 16; y += 2)
        for (int z = 0; z <= 16; z += 2)
          if ((x + 2 * y + 3 * z) % 5 != 0) lattice.insert(lattice.end(), {double(x), double(y), double(z)});
  std::vector<double> q;
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      const double a = i * 2.0, b = j * 2.0;
      for (const double c : {0.0, 1.0, 4.0, 7.0, 8.0, 16.0})
        q.insert(q.end(), {a, b, c});          // on faces, edges, corners
      q.insert(q.end(), {a + 1, b + 1, 9.0});  // a cell's centre
      q.insert(q.end(), {a + 0.5, b, 3.0});
    }
  q.insert(q.end(), {-3.0, 5.0, 20.0});  // outside the cube
  const uint64_t m = q.size() / 3;
  const std::vector<float> lattice32(lattice.begin(), lattice.end());
  for (const bool use_avx2 : {false, avx2})
    for (const bool as_float : {false, true})
      for (const bool sorted : {false, true})
        for (const uint32_t leaf_size : {1u, 4u, 16u}) {
          if ((as_float && sorted) || (use_avx2 && !sorted)) continue;
          octree_impl::knn_avx2 = use_avx2;
          SCOPED_TRACE(std::string(as_float ? "float" : "double") + (sorted ? ", sorted copy" : "") +
                       (use_avx2 ? " (AVX2)" : "") + ", leaf size " + std::to_string(leaf_size));
          const OctreePoints pts =
              as_float ? OctreePoints::of(lattice32.data(), lattice32.size() / 3) : OctreePoints::of(lattice);
          OctreeOptions o;
          o.leaf_size = leaf_size;
          o.sorted_points = sorted;
          const Octree t = buildOctree(pts, o, execution());
          std::vector<std::vector<std::pair<double, uint32_t>>> by_distance(m);  // per query, every point
          for (uint64_t i = 0; i < m; ++i) {
            for (uint32_t j = 0; j < pts.count; ++j) by_distance[i].push_back({dist2(pts, j, &q[3 * i]), j});
            std::sort(by_distance[i].begin(), by_distance[i].end());
          }
          for (const uint32_t k : {1u, 2u, 3u, 7u, 8u, 9u, 17u, 64u, 1500u}) {
            const uint64_t mk = k > 64 ? 30 : m;
            std::vector<uint32_t> got(mk * k, 12345);
            std::vector<double> gd(mk * k, -1);
            octreeKnn(t, pts, q.data(), mk, k, got.data(), gd.data(), execution());
            for (uint64_t i = 0; i < mk; ++i) {
              const std::vector<std::pair<double, uint32_t>>& all = by_distance[i];
              for (uint32_t j = 0; j < k; ++j) {
                const bool have = j < all.size();
                ASSERT_EQ(got[i * k + j], have ? all[j].second : kOctreeNone)
                    << "k " << k << " query " << i << " rank " << j;
                ASSERT_EQ(gd[i * k + j], have ? all[j].first : std::numeric_limits<double>::infinity());
              }
            }
          }
        }
}

TEST(OctreeNeighbours, FaceEdgeVertexEqualBruteForceAdjacency) {
  for (const TreeCase& tc : treeCases()) {
    SCOPED_TRACE(tc.name);
    OctreeOptions o;
    o.leaf_size = 6;
    const Octree t = buildOctree(OctreePoints::of(tc.xyz), o, Execution{});
    std::vector<uint32_t> leaves;
    for (uint32_t x = 0; x < t.size(); ++x)
      if (t.isLeaf(x)) leaves.push_back(x);
    // Integer cell boxes by decoding the prefix bit by bit.
    auto box = [&](uint32_t x, int64_t* lo) {
      const int l = t.level[x];
      for (int a = 0; a < 3; ++a) {
        lo[a] = 0;
        for (int bit = 0; bit < l; ++bit) lo[a] |= static_cast<int64_t>((t.prefix[x] >> (3 * bit + a)) & 1) << bit;
        lo[a] <<= (21 - l);
      }
      return int64_t{1} << (21 - l);
    };
    for (size_t i = 0; i < leaves.size(); i += 7) {
      const uint32_t me = leaves[i];
      int64_t mlo[3], olo[3];
      const int64_t ms = box(me, mlo);
      std::map<uint32_t, uint8_t> expect;
      for (uint32_t other : leaves) {
        if (other == me) continue;
        const int64_t os = box(other, olo);
        int dims = 0;
        bool touch = true;
        for (int a = 0; a < 3; ++a) {
          const int64_t lo = std::max(mlo[a], olo[a]), hi = std::min(mlo[a] + ms, olo[a] + os);
          if (lo > hi) touch = false;
          if (hi > lo) ++dims;
        }
        if (touch) expect[other] = dims == 2 ? kOctreeFace : dims == 1 ? kOctreeEdge : kOctreeVertex;
      }
      std::map<uint32_t, uint8_t> got;
      for (const OctreeNeighbour& nb : octreeNeighbours(t, me)) got[nb.node] = nb.kind;
      ASSERT_EQ(got, expect) << "leaf " << me;
      size_t faces = 0;
      for (auto& e : expect) faces += e.second == kOctreeFace ? 1 : 0;
      EXPECT_EQ(octreeNeighbours(t, me, kOctreeFace).size(), faces);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, OctreeParity, testing::ValuesIn(test::backendVariants()), test::variantName);

// ---- generators -------------------------------------------------------------------

TEST(OctreePoints, DistributionsHaveTheirDefiningMoments) {
  const uint64_t n = 200000;
  std::vector<double> u = randomPoints(PointDistribution::kUniform, n, 3);
  std::vector<double> g = randomPoints(PointDistribution::kGaussian, n, 3);
  std::vector<double> p = randomPoints(PointDistribution::kPlummer, n, 3);
  for (int a = 0; a < 3; ++a) {
    double su = 0, sg = 0, sg2 = 0;
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_GE(u[3 * i + a], 0.0);
      ASSERT_LT(u[3 * i + a], 1.0);
      su += u[3 * i + a];
      sg += g[3 * i + a];
      sg2 += g[3 * i + a] * g[3 * i + a];
    }
    EXPECT_NEAR(su / n, 0.5, 0.005);
    EXPECT_NEAR(sg / n, 0.0, 0.01);
    EXPECT_NEAR(sg2 / n, 1.0, 0.02);
  }
  // Plummer: mass fraction inside r is r³/(1 + r²)^(3/2); half of the
  // (0.999-capped) mass inside r_h with r_h³/(1+r_h²)^1.5 = 0.4995.
  std::vector<double> radii(n);
  for (uint64_t i = 0; i < n; ++i)
    radii[i] = std::sqrt(p[3 * i] * p[3 * i] + p[3 * i + 1] * p[3 * i + 1] + p[3 * i + 2] * p[3 * i + 2]);
  std::nth_element(radii.begin(), radii.begin() + n / 2, radii.end());
  const double m = 0.4995, r_half = 1.0 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1.0);
  EXPECT_NEAR(radii[n / 2], r_half, 0.02 * r_half);
  EXPECT_LT(*std::max_element(radii.begin(), radii.end()), 38.7);
}

}  // namespace

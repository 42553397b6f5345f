// Octree outputs (procgen/octree_io.hpp): the .octree file read back equals
// the tree array for array on every layout, and a damaged file is refused;
// node boxes hold their points and the leaves tile the root cube; the line
// set has 12 edges a box, each as long as the box's side along its axis.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/octree.hpp"
#include "procgen/octree_io.hpp"

namespace {

using namespace procgen;

std::vector<double> cloud(uint64_t n, PointDistribution d, uint64_t seed) {
  std::vector<double> xyz(3 * n);
  generatePoints(d, n, seed, xyz.data(), Execution{});
  // Duplicates and a collinear run, so leaves at max depth hold several points.
  for (uint64_t i = 0; i < 20 && 3 * (i + 40) + 2 < xyz.size(); ++i)
    for (int a = 0; a < 3; ++a) xyz[3 * (i + 40) + a] = xyz[3 * 7 + a];
  return xyz;
}

template <typename A>
std::vector<typename A::value_type> plain(const A& a) {
  return std::vector<typename A::value_type>(a.begin(), a.end());
}

void expectSameTree(const Octree& a, const Octree& b) {
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.root, b.root);
  EXPECT_EQ(a.point_count, b.point_count);
  EXPECT_EQ(std::memcmp(&a.cube, &b.cube, sizeof a.cube), 0);
  EXPECT_EQ(a.options.leaf_size, b.options.leaf_size);
  EXPECT_EQ(a.options.max_depth, b.options.max_depth);
  EXPECT_EQ(a.options.method, b.options.method);
  EXPECT_EQ(a.options.split, b.options.split);
  EXPECT_EQ(a.options.compressed, b.options.compressed);
  EXPECT_EQ(a.options.full, b.options.full);
  EXPECT_EQ(plain(a.level), plain(b.level));
  EXPECT_EQ(plain(a.prefix), plain(b.prefix));
  EXPECT_EQ(plain(a.parent), plain(b.parent));
  EXPECT_EQ(plain(a.first_child), plain(b.first_child));
  EXPECT_EQ(plain(a.child_count), plain(b.child_count));
  EXPECT_EQ(plain(a.chain), plain(b.chain));
  EXPECT_EQ(plain(a.begin), plain(b.begin));
  EXPECT_EQ(plain(a.end), plain(b.end));
  EXPECT_EQ(plain(a.order), plain(b.order));
  EXPECT_EQ(plain(a.keys), plain(b.keys));
  EXPECT_EQ(plain(a.xyz), plain(b.xyz));
  ASSERT_EQ(a.split_center.size(), b.split_center.size());
  if (!a.split_center.empty()) {  // memcmp's pointers must not be null, even for 0 bytes (UBSan)
    EXPECT_EQ(std::memcmp(a.split_center.data(), b.split_center.data(), a.split_center.size() * 8), 0);  // NaNs too
  }
  EXPECT_EQ(plain(a.split_axes), plain(b.split_axes));
  EXPECT_EQ(a.stats.nodes, b.stats.nodes);
  EXPECT_EQ(a.stats.internal, b.stats.internal);
  EXPECT_EQ(a.stats.leaves, b.stats.leaves);
  EXPECT_EQ(a.stats.empty_leaves, b.stats.empty_leaves);
  EXPECT_EQ(a.stats.chain_nodes, b.stats.chain_nodes);
  EXPECT_EQ(a.stats.depth, b.stats.depth);
  EXPECT_EQ(octreeChecksum(a), octreeChecksum(b));
}

std::vector<OctreeOptions> layouts() {
  std::vector<OctreeOptions> all(5);
  all[1].method = OctreeMethod::kTopDown;
  all[1].leaf_size = 3;
  all[2].method = OctreeMethod::kTopDown;
  all[2].split = OctreeSplit::kData;
  all[2].leaf_size = 5;
  all[3].compressed = true;
  all[3].max_depth = 9;
  all[4].compressed = all[4].full = true;
  all[4].max_depth = 12;
  all[0].sorted_points = true;
  return all;
}

TEST(OctreeFile, RoundTripOnEveryLayout) {
  const std::vector<double> xyz = cloud(3000, PointDistribution::kPlummer, 5);
  const OctreePoints pts = OctreePoints::of(xyz);
  for (const OctreeOptions& o : layouts()) {
    const Octree tree = buildOctree(pts, o, Execution{});
    const std::vector<uint8_t> bytes = encodeOctree(tree);
    const std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const Octree back = decodeOctree(view, "t.octree");
    expectSameTree(tree, back);
    // The same bytes again, and the same query answers on the read tree.
    EXPECT_EQ(encodeOctree(back), bytes);
    if (tree.layout == OctreeLayout::kLevelOrder) {
      for (uint64_t i = 0; i < 50; ++i) {
        EXPECT_EQ(octreeLocate(back, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]),
                  octreeLocate(tree, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]));
      }
    }
  }
}

TEST(OctreeFile, HeaderLayoutIsTheDocumentedOne) {
  const std::vector<double> xyz{0, 0, 0, 1, 2, 3};
  const Octree tree = buildOctree(OctreePoints::of(xyz), {}, Execution{});
  const std::vector<uint8_t> b = encodeOctree(tree);
  ASSERT_GE(b.size(), 80u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 8), "PGOCTREE");
  auto u32 = [&](size_t at) { uint32_t v; std::memcpy(&v, &b[at], 4); return v; };
  auto u64 = [&](size_t at) { uint64_t v; std::memcpy(&v, &b[at], 8); return v; };
  auto f64 = [&](size_t at) { double v; std::memcpy(&v, &b[at], 8); return v; };
  EXPECT_EQ(u32(8), kOctreeFileVersion);
  EXPECT_EQ(b[12], 0);  // level order
  EXPECT_EQ(b[13], 0);  // bottom-up
  EXPECT_EQ(b[14], 0);  // cube
  EXPECT_EQ(b[15], 0);  // flags
  EXPECT_EQ(u32(16), 16u);
  EXPECT_EQ(u32(20), 21u);
  EXPECT_EQ(f64(24), 0.0);
  EXPECT_EQ(f64(48), 3.0);  // side = the largest extent
  EXPECT_EQ(u64(56), 2u);
  EXPECT_EQ(u64(64), 1u);   // two points, leaf size 16: one leaf
  // One node: level 1 + prefix 8 + parent 4 + first_child 4 + begin 4 + end 4; two points: order 4 + key 8.
  EXPECT_EQ(b.size(), 80u + 25u + 2u * 12u);
}

TEST(OctreeFile, DamagedFilesAreRefused) {
  const std::vector<double> xyz = cloud(500, PointDistribution::kUniform, 9);
  const OctreePoints pts = OctreePoints::of(xyz);
  for (const OctreeOptions& o : layouts()) {
    const Octree tree = buildOctree(pts, o, Execution{});
    const std::vector<uint8_t> good = encodeOctree(tree);
    auto refused = [&](std::vector<uint8_t> bytes, const char* why) {
      const std::string_view v(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      try {
        decodeOctree(v, "bad.octree");
        ADD_FAILURE() << "accepted: " << why;
      } catch (const Error& e) {
        EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
        EXPECT_NE(std::string(e.what()).find("bad.octree"), std::string::npos);
      }
    };
    refused(std::vector<uint8_t>(good.begin(), good.end() - 1), "one byte short");
    refused(std::vector<uint8_t>(good.begin(), good.begin() + 40), "header cut");
    std::vector<uint8_t> bad = good;
    bad[0] = 'X';
    refused(bad, "magic");
    bad = good;
    bad[8] = 2;
    refused(bad, "version");
    const uint64_t n = tree.size();
    bad = good;
    bad[80] = 22;  // level of node 0
    refused(bad, "level 22");
    bad = good;
    const size_t parent0 = 80 + 9 * n;  // level[n], prefix[n], then parent[n]
    const size_t victim = tree.layout == OctreeLayout::kLevelOrder ? 1 : 0;
    const uint32_t self = uint32_t(victim);
    std::memcpy(&bad[parent0 + 4 * victim], &self, 4);
    refused(bad, "a node its own parent");
    bad = good;
    const size_t order0 = good.size() - tree.point_count * (12 + (tree.xyz.empty() ? 0 : 24));
    const uint32_t outside = uint32_t(tree.point_count);
    std::memcpy(&bad[order0], &outside, 4);
    refused(bad, "a point index outside the points");
  }
}

TEST(OctreeBoxes, BoxesHoldTheirPointsAndLeavesTileTheCube) {
  const std::vector<double> xyz = cloud(2000, PointDistribution::kGaussian, 3);
  const OctreePoints pts = OctreePoints::of(xyz);
  for (const OctreeOptions& o : layouts()) {
    const Octree tree = buildOctree(pts, o, Execution{});
    const std::vector<double> box = octreeNodeBoxes(tree);
    ASSERT_EQ(box.size(), 6 * tree.size());
    double leaf_volume = 0;
    for (uint32_t i = 0; i < tree.size(); ++i) {
      const double* b = &box[6 * i];
      for (uint32_t j = tree.begin[i]; j < tree.end[i]; ++j)
        for (int a = 0; a < 3; ++a) {
          const double p = xyz[3 * tree.order[j] + a];
          ASSERT_TRUE(p >= b[a] && p <= b[3 + a]) << "node " << i << " point " << tree.order[j] << " axis " << a;
        }
      if (tree.isLeaf(i)) leaf_volume += (b[3] - b[0]) * (b[4] - b[1]) * (b[5] - b[2]);
    }
    // Compressed trees leave the cells between their nodes out; the others tile the cube.
    if (!o.compressed) {
      EXPECT_NEAR(leaf_volume, std::pow(tree.cube.side, 3), 1e-9 * std::pow(tree.cube.side, 3));
    }
  }
}

TEST(OctreeBoxes, LineSetHasTwelveEdgesABoxAndThePoints) {
  const std::vector<double> xyz = cloud(300, PointDistribution::kUniform, 1);
  const OctreePoints pts = OctreePoints::of(xyz);
  const Octree tree = buildOctree(pts, {}, Execution{});
  const std::vector<double> box = octreeNodeBoxes(tree);
  OctreeGeometryOptions g;
  g.points = &pts;
  g.max_points = 100;  // every 3rd point
  const Geometry geo = octreeGeometry(tree, g);
  ASSERT_EQ(geo.segments.size(), 100 + 12 * tree.stats.leaves);
  for (size_t j = 0; j < 100; ++j) {
    const Segment& s = geo.segments[j];
    EXPECT_EQ(s.start.x, float(xyz[3 * (3 * j)]));
    EXPECT_EQ(s.end.z, float(xyz[3 * (3 * j) + 2]));
  }
  size_t at = 100;
  for (uint32_t i = 0; i < tree.size(); ++i) {
    if (!tree.isLeaf(i)) continue;
    const double* b = &box[6 * i];
    int per_axis[3] = {0, 0, 0};
    for (int e = 0; e < 12; ++e, ++at) {
      const Segment& s = geo.segments[at];
      const float d[3] = {s.end.x - s.start.x, s.end.y - s.start.y, s.end.z - s.start.z};
      int axis = -1;
      for (int a = 0; a < 3; ++a)
        if (d[a] != 0) {
          EXPECT_EQ(axis, -1) << "an edge along one axis only";
          axis = a;
        }
      ASSERT_GE(axis, 0);
      EXPECT_EQ(d[axis], float(b[3 + axis]) - float(b[axis]));
      ++per_axis[axis];
    }
    EXPECT_EQ(per_axis[0], 4);
    EXPECT_EQ(per_axis[1], 4);
    EXPECT_EQ(per_axis[2], 4);
  }
  g.boxes = OctreeBoxSelection::kNonEmptyLeaves;
  g.points = nullptr;
  EXPECT_EQ(octreeGeometry(tree, g).segments.size(), 12 * (tree.stats.leaves - tree.stats.empty_leaves));
  g.boxes = OctreeBoxSelection::kAllNodes;
  EXPECT_EQ(octreeGeometry(tree, g).segments.size(), 12 * tree.stats.nodes);
}

}  // namespace

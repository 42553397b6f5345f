// The octree entry points (include/procgen/octree.hpp): option checks, the
// backend dispatch to the serial and cpu twins (stages.hpp), and the
// tree-walking helpers that are not data-parallel (checksum, leaf order,
// subtree leaves, node LCA) plus the §4 cell relations.
//
// Paper: shared/seeds/004_ce32dc12e32b896e.txt §3–§5 (docs/octree.md).
#include "procgen/octree.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/dispatch.hpp"
#include "procgen/error.hpp"
#include "octree/keys.h"
#include "octree/stages.hpp"

namespace procgen {
namespace {

/// s(), c(threads) or o(device): the generic lambdas keep a branch whose
/// backend is not built from being instantiated.
template <typename S, typename C, typename O>
decltype(auto) run(const Execution& e, const char* what, S&& s, C&& c, O&& o) {
  return detail::dispatch(
      e, what, std::forward<S>(s), [&](auto...) { return c(e.threads); }, [&](auto...) { return o(e.device); });
}

void checkOptions(const OctreeOptions& o) {
  if (o.leaf_size == 0) throw std::invalid_argument("octree: leaf_size must be at least 1");
  if (o.max_depth < 0 || o.max_depth > kOctreeMaxLevel)
    throw std::invalid_argument("octree: max_depth must be in 0..21");
  if (o.method == OctreeMethod::kBottomUp && o.split == OctreeSplit::kData)
    throw std::invalid_argument("octree: the data split exists only top-down");
  if (o.method == OctreeMethod::kTopDown && o.compressed)
    throw std::invalid_argument("octree: the compressed octree is built bottom-up only");
  if (o.full && !o.compressed) throw std::invalid_argument("octree: full needs compressed");
}

}  // namespace

OctreeCube octreeRootCube(const OctreePoints& points, const Execution& execution) {
  return run(
      execution, "octreeRootCube", [&] { return octree_impl::serial::rootCube(points); },
      [&](int threads) { return octree_impl::cpu::rootCube(threads, points); },
      [&](int device) { return octree_impl::opencl::rootCube(device, points); });
}

void octreeKeys(const OctreePoints& points, const OctreeCube& cube, uint64_t* keys, const Execution& execution) {
  run(
      execution, "octreeKeys", [&] { octree_impl::serial::keys(points, cube, keys); },
      [&](int threads) { octree_impl::cpu::keys(threads, points, cube, keys); },
      [&](int device) { octree_impl::opencl::keys(device, points, cube, keys); });
}

Octree buildOctree(const OctreePoints& points, const OctreeOptions& options, const Execution& execution) {
  checkOptions(options);
  return run(
      execution, "buildOctree", [&] { return octree_impl::serial::build(points, options); },
      [&](int threads) { return octree_impl::cpu::build(threads, points, options); },
      [&](int device) { return octree_impl::opencl::build(device, points, options); });
}

std::vector<uint32_t> octreeSubtreeLeaves(const Octree& tree, uint32_t node) {
  std::vector<uint32_t> out;
  if (node >= tree.size()) throw std::out_of_range("octreeSubtreeLeaves: no such node");
  if (tree.layout == OctreeLayout::kPostOrder) {
    // Post-order: the subtree is the contiguous run of nodes ending at `node`
    // whose cells lie inside it; its leaves come in Morton order.
    const OctreeCell outer{tree.level[node], tree.prefix[node]};
    for (uint32_t x = node + 1; x-- > 0;) {
      if (!octreeCellContains(outer, OctreeCell{tree.level[x], tree.prefix[x]})) break;
      if (tree.child_count[x] == 0) out.push_back(x);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  std::vector<uint32_t> stack{node};
  while (!stack.empty()) {
    const uint32_t x = stack.back();
    stack.pop_back();
    const uint32_t fc = tree.first_child[x];
    if (fc == kOctreeNone) {
      out.push_back(x);
      continue;
    }
    for (uint32_t d = 8; d-- > 0;) stack.push_back(fc + d);
  }
  return out;
}

std::vector<uint32_t> octreeLeavesInOrder(const Octree& tree) { return octreeSubtreeLeaves(tree, tree.root); }

uint64_t octreeChecksum(const Octree& tree) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto byte = [&](uint8_t b) {
    h ^= b;
    h *= 0x100000001b3ull;
  };
  for (uint32_t leaf : octreeLeavesInOrder(tree)) {
    byte(tree.level[leaf]);
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(tree.prefix[leaf] >> (8 * i)));
  }
  return h;
}

namespace {
/// A cell's closed box in level-21 integer units: [lo, lo + size] per axis.
struct IntBox {
  int64_t lo[3];
  int64_t size;
};
IntBox intBox(const Octree& t, uint32_t node) {
  const uint64_t start = pgOctreeCellBegin(t.level[node], t.prefix[node]);
  IntBox b;
  for (int a = 0; a < 3; ++a) b.lo[a] = pgOctreeCompact(start >> a);
  b.size = int64_t{1} << (kOctreeMaxLevel - t.level[node]);
  return b;
}
}  // namespace

std::vector<OctreeNeighbour> octreeNeighbours(const Octree& tree, uint32_t node, uint8_t kinds) {
  if (tree.layout != OctreeLayout::kLevelOrder || tree.options.split != OctreeSplit::kCube)
    throw std::invalid_argument("octreeNeighbours: needs a level-order cube tree");
  if (node >= tree.size()) throw std::out_of_range("octreeNeighbours: no such node");
  const IntBox me = intBox(tree, node);
  const OctreeCell mine{tree.level[node], tree.prefix[node]};
  std::vector<OctreeNeighbour> out;
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    const uint32_t x = stack.back();
    stack.pop_back();
    const IntBox b = intBox(tree, x);
    int positive = 0;  // axes on which the intersection has length > 0
    bool touch = true;
    for (int a = 0; a < 3 && touch; ++a) {
      const int64_t lo = std::max(me.lo[a], b.lo[a]);
      const int64_t hi = std::min(me.lo[a] + me.size, b.lo[a] + b.size);
      touch = lo <= hi;
      positive += hi > lo ? 1 : 0;
    }
    if (!touch) continue;
    const OctreeCell cell{tree.level[x], tree.prefix[x]};
    if (octreeCellContains(mine, cell)) continue;  // itself and its descendants
    const uint32_t fc = tree.first_child[x];
    if (fc != kOctreeNone) {
      for (uint32_t d = 8; d-- > 0;) stack.push_back(fc + d);
      continue;
    }
    if (positive == 3) continue;  // cannot happen for disjoint leaves; kept for safety
    const uint8_t kind = positive == 2 ? kOctreeFace : (positive == 1 ? kOctreeEdge : kOctreeVertex);
    if (kind & kinds) out.push_back({x, kind});
  }
  return out;
}

uint32_t octreeLcaNode(const Octree& tree, uint32_t a, uint32_t b) {
  if (a >= tree.size() || b >= tree.size()) throw std::out_of_range("octreeLcaNode: no such node");
  while (tree.level[a] > tree.level[b]) a = tree.parent[a];
  while (tree.level[b] > tree.level[a]) b = tree.parent[b];
  while (a != b) {
    a = tree.parent[a];
    b = tree.parent[b];
  }
  return a;
}

OctreeCell octreeCellParent(OctreeCell cell) { return {cell.level - 1, cell.prefix >> 3}; }

bool octreeCellContains(OctreeCell outer, OctreeCell inner) {
  return pgOctreeCellContains(outer.level, outer.prefix, inner.level, inner.prefix) != 0;
}

OctreeCell octreeCellLca(OctreeCell a, OctreeCell b) {
  const int l = pgOctreeCellLcaLevel(a.level, a.prefix, b.level, b.prefix);
  return {l, a.prefix >> (3 * (a.level - l))};
}

OctreeCell octreeChildToward(OctreeCell ancestor, OctreeCell descendant) {
  return {ancestor.level + 1, descendant.prefix >> (3 * (descendant.level - ancestor.level - 1))};
}

OctreeCell octreeCellOfKey(uint64_t key, int level) { return {level, pgOctreePrefix(key, level)}; }

uint32_t octreeLocate(const Octree& tree, double x, double y, double z) {
  const double q[3] = {x, y, z};
  uint32_t out = kOctreeNone;
  octree_impl::serial::locate(tree, q, 1, &out);
  return out;
}

void octreeLocate(const Octree& tree, const double* xyz, uint64_t m, uint32_t* out, const Execution& execution) {
  run(
      execution, "octreeLocate", [&] { octree_impl::serial::locate(tree, xyz, m, out); },
      [&](int threads) { octree_impl::cpu::locate(threads, tree, xyz, m, out); },
      [&](int device) { octree_impl::opencl::locate(device, tree, xyz, m, out); });
}

void octreeKnn(const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, uint32_t k,
               uint32_t* out, double* dist2, const Execution& execution) {
  run(
      execution, "octreeKnn", [&] { octree_impl::serial::knn(tree, points, xyz, m, k, out, dist2); },
      [&](int threads) { octree_impl::cpu::knn(threads, tree, points, xyz, m, k, out, dist2); },
      [&](int device) { octree_impl::opencl::knn(device, tree, points, xyz, m, k, out, dist2); });
}

OctreeQueryResult octreeRadius(const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m,
                               double radius, const Execution& execution) {
  return run(
      execution, "octreeRadius", [&] { return octree_impl::serial::radius(tree, points, xyz, m, radius); },
      [&](int threads) { return octree_impl::cpu::radius(threads, tree, points, xyz, m, radius); },
      [&](int device) { return octree_impl::opencl::radius(device, tree, points, xyz, m, radius); });
}

OctreeQueryResult octreeBox(const Octree& tree, const OctreePoints& points, const double* boxes, uint64_t m,
                            const Execution& execution) {
  return run(
      execution, "octreeBox", [&] { return octree_impl::serial::box(tree, points, boxes, m); },
      [&](int threads) { return octree_impl::cpu::box(threads, tree, points, boxes, m); },
      [&](int device) { return octree_impl::opencl::box(device, tree, points, boxes, m); });
}

void generatePoints(PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz,
                    const Execution& execution) {
  run(
      execution, "generatePoints", [&] { octree_impl::serial::generate(distribution, n, seed, xyz); },
      [&](int threads) { octree_impl::cpu::generate(threads, distribution, n, seed, xyz); },
      [&](int device) { octree_impl::opencl::generate(device, distribution, n, seed, xyz); });
}

const char* pointDistributionName(PointDistribution distribution) {
  switch (distribution) {
    case PointDistribution::kGaussian: return "gaussian";
    case PointDistribution::kPlummer: return "plummer";
    default: return "uniform";
  }
}

}  // namespace procgen

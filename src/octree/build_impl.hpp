// The octree stages, written once over a parallel policy `Par` so that the
// serial twin (src/octree/serial/) and the cpu twin (src/octree/cpu/) run the
// same per-range loops — the pattern of src/primitives/ranges.hpp. Every stage
// is a loop over chunks of consecutive elements whose outputs land at offsets
// fixed by ordered prefix sums, so the result never depends on the thread
// count or the chunking.
//
// Paper: shared/seeds/004_ce32dc12e32b896e.txt.
//   rootCube, computeKeys     §3 (cell of a point, SFC index);
//   sort                      §4 step 1(c) (primitives radix sort of (key, index));
//   buildBucketed             §4 generalized: internal nodes from key windows
//                             (docs/octree.md "bucketed bottom-up");
//   buildCompressed           §4 steps 2–3 (LCAs of adjacent leaves, post-order,
//                             parent links) and step 4 (chain nodes);
//   buildTopDown              §5 (level-by-level partitioning, 8-way split as three
//                             binary partitions, next-level offsets by a prefix sum).
//
// Par provides
//   Plan plan(uint64_t n, uint64_t grain);                  chunks of ~grain elements
//   void forEach(const Plan&, F f);                          f(c, begin, end) per chunk
//   void forEachItem(uint64_t count, F f);                   f(i) per item (nodes of a level)
//   void sort(uint64_t* keys, uint32_t* values, uint64_t n, primitives::RadixScratch&);
//   void scanExclusive(const uint32_t* in, uint32_t* out, uint64_t n);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "octree/keys.h"
#include "common/chunk_plan.hpp"
#include "octree/points.h"
#include "octree/stages.hpp"
#include "primitives/primitives.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/octree.hpp"

namespace procgen::octree_impl {

using Plan = detail::ChunkPlan;  // the cpu executor's chunking, for both policies

/// f(xyz) with the points' array as const float* or const double*, so that
/// the loops over every point are compiled for their type instead of testing
/// it at every coordinate (OctreePoints::coord).
template <typename F>
decltype(auto) withCoordinates(const OctreePoints& points, F&& f) {
  if (points.xyz64) return f(points.xyz64);
  return f(points.xyz32);
}

// ---------------------------------------------------------------------------
// §3: root cube and keys
// ---------------------------------------------------------------------------

template <typename Par>
OctreeCube rootCube(Par& par, const OctreePoints& points) {
  const uint64_t n = points.count;
  if (n == 0) throw Error("octree: no points");
  if (n > kOctreeMaxPoints)
    throw Error("octree: " + std::to_string(n) + " points, more than the " + std::to_string(kOctreeMaxPoints) +
                " an octree indexes");
  struct Part {
    double lo[3], hi[3];
    uint64_t bad;  // first non-finite point, or n
  };
  const Plan plan = par.plan(n, 1 << 16);
  std::vector<Part> parts(plan.count);
  withCoordinates(points, [&](const auto* xyz) {
    par.forEach(plan, [&](uint64_t c, uint64_t b, uint64_t e) {
      Part p;
      for (int a = 0; a < 3; ++a) {
        p.lo[a] = std::numeric_limits<double>::infinity();
        p.hi[a] = -std::numeric_limits<double>::infinity();
      }
      // min and max skip NaN (std::min(lo, NaN) is lo) and keep infinities,
      // so a NaN flag and the bounds tell whether the chunk holds a
      // non-finite coordinate, without a branch per value.
      bool nan = false;
      for (uint64_t i = b; i < e; ++i) {
        for (int a = 0; a < 3; ++a) {
          const double v = static_cast<double>(xyz[3 * i + a]);
          p.lo[a] = std::min(p.lo[a], v);
          p.hi[a] = std::max(p.hi[a], v);
          nan |= v != v;
        }
      }
      p.bad = n;
      bool finite = !nan;
      for (int a = 0; a < 3; ++a) finite = finite && std::isfinite(p.lo[a]) && std::isfinite(p.hi[a]);
      if (!finite && e > b) {
        for (uint64_t i = b; i < e && p.bad == n; ++i)
          for (int a = 0; a < 3; ++a)
            if (!std::isfinite(static_cast<double>(xyz[3 * i + a]))) p.bad = i;
      }
      parts[c] = p;
    });
  });
  double lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::numeric_limits<double>::infinity();
    hi[a] = -std::numeric_limits<double>::infinity();
  }
  for (const Part& p : parts) {
    if (p.bad != n) {
      const char* axis_names = "xyz";
      for (int a = 0; a < 3; ++a) {
        const double v = points.coord(p.bad, a);
        if (!std::isfinite(v))
          throw Error("point " + std::to_string(p.bad) + ": coordinate " + axis_names[a] + " is " +
                      (std::isnan(v) ? "NaN" : "infinite"));
      }
    }
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], p.lo[a]);
      hi[a] = std::max(hi[a], p.hi[a]);
    }
  }
  const OctreeCube cube = cubeFromBounds(lo, hi);
  if (!std::isfinite(cube.side))
    throw Error("octree: the points' extent overflows a double (coordinates too far apart)");
  return cube;
}

/// pgOctreeSpread of the 11-bit values (bit i to bit 3i), computed at compile time (16 KiB).
inline constexpr auto kSpread11 = [] {
  struct Table {
    uint64_t v[2048];
  } t{};
  for (uint32_t i = 0; i < 2048; ++i)
    for (int bit = 0; bit < 11; ++bit) t.v[i] |= static_cast<uint64_t>((i >> bit) & 1u) << (3 * bit);
  return t;
}();

/// pgOctreeEncode by two table lookups per axis (bits 0–10 and 11–20)
/// instead of five shift-and-mask steps: the same key, in about half the
/// instructions of the key pass.
inline uint64_t encodeByTable(uint32_t qx, uint32_t qy, uint32_t qz) {
  auto spread = [](uint32_t q) { return kSpread11.v[q & 2047u] | kSpread11.v[q >> 11] << 33; };
  return spread(qx) | spread(qy) << 1 | spread(qz) << 2;
}

/// keys[i] = key of point i; order[i] = i (when order is non-null).
template <typename Par>
void computeKeys(Par& par, const OctreePoints& points, const OctreeCube& cube, uint64_t* keys, uint32_t* order) {
  const Plan plan = par.plan(points.count, 1 << 16);
  withCoordinates(points, [&](const auto* xyz) {
    par.forEach(plan, [&](uint64_t, uint64_t b, uint64_t e) {
      const double x0 = cube.min[0], y0 = cube.min[1], z0 = cube.min[2], side = cube.side;
      for (uint64_t i = b; i < e; ++i) {
        keys[i] = encodeByTable(pgOctreeQuantize(static_cast<double>(xyz[3 * i]), x0, side),
                                pgOctreeQuantize(static_cast<double>(xyz[3 * i + 1]), y0, side),
                                pgOctreeQuantize(static_cast<double>(xyz[3 * i + 2]), z0, side));
        if (order) order[i] = static_cast<uint32_t>(i);
      }
    });
  });
}

inline uint64_t firstAtLeast(const uint64_t* keys, uint64_t b, uint64_t e, uint64_t key) {
  return static_cast<uint64_t>(std::lower_bound(keys + b, keys + e, key) - keys);
}

/// firstAtLeast(keys, b, n, key) by galloping from b: O(log of the distance),
/// so finding the end of a small cell right after its begin reads a few
/// neighbouring keys instead of binary-searching the whole array.
inline uint64_t gallopFirstAtLeast(const uint64_t* keys, uint64_t b, uint64_t n, uint64_t key) {
  if (b >= n || keys[b] >= key) return b;
  uint64_t below = b, step = 1;  // keys[below] < key
  while (below + step < n && keys[below + step] < key) {
    below += step;
    step *= 2;
  }
  return firstAtLeast(keys, below + 1, std::min(n, below + step), key);
}

inline void resizeNodes(Octree& t, uint64_t nodes, bool level_order) {
  t.level.resize(nodes);
  t.prefix.resize(nodes);
  t.parent.resize(nodes);
  t.begin.resize(nodes);
  t.end.resize(nodes);
  if (level_order) t.first_child.resize(nodes);
  else t.child_count.resize(nodes);
}

/// Bytes of the node arrays per node (level, prefix, parent, begin, end, first_child / child_count).
inline constexpr uint64_t kNodeBytes = 1 + 8 + 4 + 4 + 4 + 4;

/// The levels lo..hi of the internal cells whose first point is K[i] among
/// the sorted keys K[0..n) (buildBucketed's window rule, below); false when
/// there are none. Also run on one rank's slice of the keys by the
/// distributed build (distributed_build.cpp).
inline bool bucketedOwnedLevels(const uint64_t* K, uint64_t n, uint64_t s, int D, uint64_t i, int& lo, int& hi) {
  if (i + s >= n) return false;
  const uint64_t ahead = K[i] ^ K[i + s];
  lo = 0;
  if (i > 0) {
    const uint64_t behind = K[i - 1] ^ K[i];
    if (behind <= ahead) return false;
    lo = pgOctreeCommonLevel(K[i - 1], K[i]) + 1;
  }
  hi = std::min(pgOctreeCommonLevel(K[i], K[i + s]), D - 1);
  return lo <= hi;
}

template <typename Par>
void writeBucketedNodes(Par& par, Octree& t, int depth_limit, uint32_t leaf_size, const OctreeArray<uint64_t>& ipref,
                        const OctreeArray<uint32_t>& iowner, const std::vector<uint64_t>& level_start,
                        uint64_t budget, uint64_t held);

// ---------------------------------------------------------------------------
// Bucketed bottom-up (§4 generalized to leaves of up to leaf_size points)
// ---------------------------------------------------------------------------
//
// With keys K sorted and s = leaf_size, a cell is internal iff it holds more
// than s points and is above max depth D. A cell holding >= s + 1 points
// holds a window K[i..i+s] (its first s + 1 points), and every cell holding
// both K[i] and K[i+s] holds >= s + 1. So the internal cells are exactly the
// ancestors of K[i] at levels <= min(commonLevel(K[i], K[i+s]), D − 1) over
// all i — the seed's "LCA of adjacent leaves" with adjacency widened to s.
// Point i owns those of them whose first point it is: levels above
// commonLevel(K[i−1], K[i]). Counting per chunk and level, a scan in
// level-major order and a second pass place every internal cell exactly
// once, grouped by level and in Morton order within a level; the level-order
// node index of a cell follows from its parent's rank (binary search).
template <typename Par>
void buildBucketed(Par& par, Octree& t, int depth_limit, uint32_t leaf_size, uint64_t budget, uint64_t held) {
  const uint64_t n = t.point_count;
  const uint64_t* K = t.keys.data();
  const uint64_t s = leaf_size;
  const int D = depth_limit;
  constexpr int kL = kOctreeMaxLevel + 1;
  // Point i owns levels lo..hi; false when it owns none. Most points own
  // none, and a test on the XORs tells most of them without the levels:
  // (K[i−1] ^ K[i]) <= (K[i] ^ K[i+s]) means the highest bit in which K[i]
  // differs from its predecessor is not above the one in which it differs
  // from K[i+s], so commonLevel(K[i−1], K[i]) >= commonLevel(K[i], K[i+s]).
  auto ownedLevels = [&](uint64_t i, int& lo, int& hi) { return bucketedOwnedLevels(K, n, s, D, i, lo, hi); };
  const Plan plan = par.plan(n, 1 << 16);
  std::vector<uint64_t> counts(plan.count * kL, 0);
  std::vector<std::vector<uint32_t>> owners(plan.count);  // per chunk, the points that own cells
  if (D > 0 && n > s) {
    par.forEach(plan, [&](uint64_t c, uint64_t b, uint64_t e) {
      uint64_t local[kL] = {};
      int lo = 0, hi = -1;
      for (uint64_t i = b; i < e; ++i) {
        if (!ownedLevels(i, lo, hi)) continue;
        owners[c].push_back(static_cast<uint32_t>(i));
        for (int l = lo; l <= hi; ++l) ++local[l];
      }
      std::copy(local, local + kL, counts.begin() + c * kL);
    });
  }
  // Level-major exclusive scan: internal ids grouped by level, then chunk.
  std::vector<uint64_t> level_start(kL + 1, 0);
  std::vector<uint64_t> offsets(plan.count * kL);
  uint64_t running = 0;
  for (int l = 0; l < kL; ++l) {
    level_start[l] = running;
    for (uint64_t c = 0; c < plan.count; ++c) {
      offsets[c * kL + l] = running;
      running += counts[c * kL + l];
    }
  }
  level_start[kL] = running;
  const uint64_t internal = running;
  requireMemory("octree nodes", internal * 16 + (1 + 8 * internal) * kNodeBytes, budget, held);
  // Per internal cell: its prefix and its owner, the point whose key is the
  // cell's first (so the cell's points start there: no search for it).
  OctreeArray<uint64_t> ipref(internal);
  OctreeArray<uint32_t> iowner(internal);
  if (internal) {
    par.forEach(plan, [&](uint64_t c, uint64_t, uint64_t) {
      uint64_t at[kL];
      std::copy(offsets.begin() + c * kL, offsets.begin() + (c + 1) * kL, at);
      int lo = 0, hi = -1;
      for (const uint32_t i : owners[c]) {
        ownedLevels(i, lo, hi);
        for (int l = lo; l <= hi; ++l) {
          ipref[at[l]] = pgOctreePrefix(K[i], l);
          iowner[at[l]++] = static_cast<uint32_t>(i);
        }
      }
    });
  }
  writeBucketedNodes(par, t, D, leaf_size, ipref, iowner, level_start, budget, held);
}

/// The nodes of the bucketed tree from its internal cells: ipref / iowner
/// (prefix and first point position of each) grouped by level (level l at
/// level_start[l] .. level_start[l + 1]) and in Morton order within a level;
/// t.keys sorted, t.point_count set. Writes every node array and the stats.
template <typename Par>
void writeBucketedNodes(Par& par, Octree& t, int depth_limit, uint32_t leaf_size, const OctreeArray<uint64_t>& ipref,
                        const OctreeArray<uint32_t>& iowner, const std::vector<uint64_t>& level_start,
                        uint64_t budget, uint64_t held) {
  const uint64_t n = t.point_count;
  const uint64_t* K = t.keys.data();
  const uint64_t s = leaf_size;
  const int D = depth_limit;
  constexpr int kL = kOctreeMaxLevel + 1;
  const uint64_t internal = level_start[kL];
  std::vector<uint64_t> level_count(kL);
  for (int l = 0; l < kL; ++l) level_count[l] = level_start[l + 1] - level_start[l];
  const uint64_t nodes = 1 + 8 * internal;
  requireMemory("octree nodes", internal * 4 + nodes * kNodeBytes, budget, held);
  OctreeArray<uint32_t> inode(internal);
  // Level-order node index of every internal cell: level l has 8 × (internal
  // cells of level l − 1) nodes, the children of the k-th internal cell of
  // level l − 1 at 8k .. 8k + 7 in digit order.
  std::vector<uint64_t> node_base(kL + 1, 0);
  node_base[0] = 0;
  node_base[1] = 1;
  for (int l = 1; l < kL; ++l) node_base[l + 1] = node_base[l] + 8 * level_count[l - 1];
  resizeNodes(t, nodes, true);
  auto levelOf = [&](uint64_t id) {
    return static_cast<int>(std::upper_bound(level_start.begin(), level_start.end(), id) -
                            level_start.begin()) -
           1;
  };
  const Plan iplan = par.plan(internal, 1 << 12);
  // The parent's rank: cells of a level are in Morton order and so are their
  // parents, so within a chunk the rank only grows — one binary search per
  // chunk and level, then a merge.
  par.forEach(iplan, [&](uint64_t, uint64_t b, uint64_t e) {
    int l = levelOf(b);
    uint64_t rank = 0;
    bool positioned = false;
    for (uint64_t id = b; id < e; ++id) {
      while (id >= level_start[l + 1]) {
        ++l;
        positioned = false;
      }
      if (l == 0) {
        inode[id] = 0;
        continue;
      }
      const uint64_t p = ipref[id];
      const uint64_t* parents = ipref.data() + level_start[l - 1];
      if (!positioned) {
        rank = std::lower_bound(parents, parents + level_count[l - 1], p >> 3) - parents;
        positioned = true;
      }
      while (parents[rank] < (p >> 3)) ++rank;  // the parent is internal: it is there
      inode[id] = static_cast<uint32_t>(node_base[l] + 8 * rank + (p & 7));
    }
  });
  // Nodes: the root, then every internal cell writes its own first_child and
  // its 8 children — first_child only for the leaves among them, which it
  // recognizes by the definition (at most leaf_size points, or at the depth
  // limit); an internal child writes its own. So every element has exactly
  // one writer, and the empty leaves are counted on the way.
  t.level[0] = 0;
  t.prefix[0] = 0;
  t.parent[0] = kOctreeNone;
  t.begin[0] = 0;
  t.end[0] = static_cast<uint32_t>(n);
  if (internal == 0) t.first_child[0] = kOctreeNone;
  std::vector<uint64_t> chunk_empty(iplan.count, 0);
  par.forEach(iplan, [&](uint64_t c, uint64_t b, uint64_t e) {
    int l = levelOf(b);
    uint64_t empty = 0;
    for (uint64_t id = b; id < e; ++id) {
      while (id >= level_start[l + 1]) ++l;
      const uint64_t p = ipref[id];
      const uint32_t self = inode[id];
      const uint32_t fc = static_cast<uint32_t>(node_base[l + 1] + 8 * (id - level_start[l]));
      const bool children_may_split = l + 1 < D;
      t.first_child[self] = fc;
      uint64_t bound = iowner[id];
      for (uint32_t d = 0; d < 8; ++d) {
        const uint32_t ch = fc + d;
        const uint64_t cp = p * 8 + d;
        t.level[ch] = static_cast<uint8_t>(l + 1);
        t.prefix[ch] = cp;
        t.parent[ch] = self;
        t.begin[ch] = static_cast<uint32_t>(bound);
        const uint64_t child_begin = bound;
        bound = gallopFirstAtLeast(K, bound, n, pgOctreeCellEnd(l + 1, cp));
        t.end[ch] = static_cast<uint32_t>(bound);
        if (!children_may_split || bound - child_begin <= s) {
          t.first_child[ch] = kOctreeNone;
          empty += bound == child_begin ? 1 : 0;
        }
      }
    }
    chunk_empty[c] = empty;
  });
  t.stats.empty_leaves = 0;
  for (uint64_t v : chunk_empty) t.stats.empty_leaves += v;
  int deepest = 0;
  for (int l = 0; l < kL; ++l)
    if (level_count[l]) deepest = l + 1;
  t.stats.internal = internal;
  t.stats.nodes = nodes;
  t.stats.leaves = nodes - internal;
  t.stats.depth = deepest;
}

// ---------------------------------------------------------------------------
// Top-down (§5)
// ---------------------------------------------------------------------------

/// Stable partition of [b, e) from (sk, si) into (dk, di): points with
/// upper(k, i) false first. Returns the first upper position.
template <typename Upper>
uint64_t stablePartition(const uint64_t* sk, const uint32_t* si, uint64_t* dk, uint32_t* di, uint64_t b, uint64_t e,
                         Upper&& upper) {
  uint64_t lower = 0;
  for (uint64_t j = b; j < e; ++j) lower += upper(sk[j], si[j]) ? 0 : 1;
  uint64_t lo = b, hi = b + lower;
  for (uint64_t j = b; j < e; ++j) {
    if (upper(sk[j], si[j])) {
      dk[hi] = sk[j];
      di[hi++] = si[j];
    } else {
      dk[lo] = sk[j];
      di[lo++] = si[j];
    }
  }
  return b + lower;
}

/// The top-down build's first frontier: the root alone, a leaf holding
/// every point (serial/cpu here and the opencl driver alike).
inline void startTopDown(Octree& t, bool data) {
  resizeNodes(t, 1, true);
  t.level[0] = 0;
  t.prefix[0] = 0;
  t.parent[0] = kOctreeNone;
  t.begin[0] = 0;
  t.end[0] = static_cast<uint32_t>(t.point_count);
  t.first_child[0] = kOctreeNone;
  if (data) {
    t.split_center.assign(3, std::numeric_limits<double>::quiet_NaN());
    t.split_axes.assign(1, 0);
  }
}

/// The top-down build's counts once its last level is written (stats.internal
/// was summed per level; `levels` is the number of levels below the root).
inline void finishTopDown(Octree& t, int levels) {
  t.stats.nodes = t.size();
  t.stats.leaves = t.stats.nodes - t.stats.internal;
  t.stats.depth = levels;
}

/// The seed's §5 loop: the frontier is one level of nodes; a node splits iff
/// it holds more than leaf_size points, is above the depth limit and (data
/// mode) its points are not all equal. A prefix sum of the split flags gives
/// every splitting node the place of its 8 children in the next level
/// (offset = 8 × splitting nodes before it — the seed's "original location −
/// 8 × leaves before", without atomics). Each splitting node is partitioned
/// by three stable binary partitions: cube mode on the key bits z, y, x of
/// the next level (so the children come out in Morton digit order); data
/// mode at the centre of the node's point bounds along its longest, second
/// and third longest axes (ties: x before y before z; a point goes to the
/// upper side iff its coordinate > centre).
template <typename Par>
void buildTopDown(Par& par, Octree& t, const OctreePoints& points, int depth_limit, uint32_t leaf_size, bool data,
                  uint64_t budget, uint64_t held) {
  const uint64_t n = t.point_count;
  OctreeArray<uint64_t> bk(n);
  OctreeArray<uint32_t> bi(n);
  uint64_t* ak = t.keys.data();
  uint32_t* ai = t.order.data();
  startTopDown(t, data);
  uint64_t frontier_begin = 0, frontier_end = 1;
  int l = 0;
  std::vector<uint32_t> flags, ranks;
  // Data mode: per frontier node its bounds (to decide and to split).
  std::vector<double> bounds;
  while (frontier_begin < frontier_end) {
    const uint64_t count = frontier_end - frontier_begin;
    flags.assign(count, 0);
    if (data) bounds.assign(count * 6, 0.0);
    par.forEachItem(count, [&](uint64_t j) {
      const uint64_t node = frontier_begin + j;
      const uint64_t b = t.begin[node], e = t.end[node];
      bool split = e - b > leaf_size && l < depth_limit;
      if (split && data) {
        double lo[3], hi[3];
        for (int a = 0; a < 3; ++a) lo[a] = hi[a] = points.coord(ai[b], a);
        for (uint64_t p = b + 1; p < e; ++p)
          for (int a = 0; a < 3; ++a) {
            const double v = points.coord(ai[p], a);
            lo[a] = std::min(lo[a], v);
            hi[a] = std::max(hi[a], v);
          }
        for (int a = 0; a < 3; ++a) {
          bounds[j * 6 + a] = lo[a];
          bounds[j * 6 + 3 + a] = hi[a];
        }
        split = hi[0] > lo[0] || hi[1] > lo[1] || hi[2] > lo[2];
      }
      flags[j] = split ? 1 : 0;
    });
    ranks.resize(count);
    par.scanExclusive(flags.data(), ranks.data(), count);
    const uint64_t splitting = count ? ranks[count - 1] + flags[count - 1] : 0;
    if (splitting == 0) break;
    const uint64_t next_begin = frontier_end, next_end = frontier_end + 8 * splitting;
    requireMemory("octree nodes", 8 * splitting * kNodeBytes, budget, held + t.size() * kNodeBytes);
    resizeNodes(t, next_end, true);
    if (data) {
      t.split_center.resize(3 * next_end, std::numeric_limits<double>::quiet_NaN());
      t.split_axes.resize(next_end, 0);
    }
    par.forEachItem(count, [&](uint64_t j) {
      if (!flags[j]) return;
      const uint64_t node = frontier_begin + j;
      const uint64_t b = t.begin[node], e = t.end[node];
      const uint32_t fc = static_cast<uint32_t>(next_begin + 8 * ranks[j]);
      int axes[3] = {2, 1, 0};
      double centre[3] = {0, 0, 0};
      if (data) {
        double ext[3];
        for (int a = 0; a < 3; ++a) {
          ext[a] = bounds[j * 6 + 3 + a] - bounds[j * 6 + a];
          centre[a] = (bounds[j * 6 + a] + bounds[j * 6 + 3 + a]) * 0.5;
        }
        axes[0] = 0;
        axes[1] = 1;
        axes[2] = 2;
        std::stable_sort(axes, axes + 3, [&](int x, int y) { return ext[x] > ext[y]; });
        for (int a = 0; a < 3; ++a) t.split_center[3 * node + a] = centre[a];
        t.split_axes[node] = static_cast<uint8_t>(axes[0] | axes[1] << 2 | axes[2] << 4);
      }
      const uint32_t key_shift = pgOctreeShift(l + 1);
      auto upperOn = [&](int pass) {
        const int axis = axes[pass];
        return [&, axis](uint64_t key, uint32_t idx) {
          if (data) return points.coord(idx, axis) > centre[axis];
          return ((key >> (key_shift + axis)) & 1) != 0;
        };
      };
      // Three binary partitions: A → B by axes[0], B → A by axes[1] in each
      // half, A → B by axes[2] in each quarter; then B → A.
      uint64_t cut[9];
      cut[0] = b;
      cut[8] = e;
      cut[4] = stablePartition(ak, ai, bk.data(), bi.data(), b, e, upperOn(0));
      for (int h = 0; h < 2; ++h)
        cut[2 + 4 * h] = stablePartition(bk.data(), bi.data(), ak, ai, cut[4 * h], cut[4 * h + 4], upperOn(1));
      for (int q = 0; q < 4; ++q)
        cut[1 + 2 * q] = stablePartition(ak, ai, bk.data(), bi.data(), cut[2 * q], cut[2 * q + 2], upperOn(2));
      std::memcpy(ak + b, bk.data() + b, (e - b) * sizeof(uint64_t));
      std::memcpy(ai + b, bi.data() + b, (e - b) * sizeof(uint32_t));
      t.first_child[node] = fc;
      for (uint32_t d = 0; d < 8; ++d) {
        const uint32_t ch = fc + d;
        t.level[ch] = static_cast<uint8_t>(l + 1);
        t.prefix[ch] = t.prefix[node] * 8 + d;
        t.parent[ch] = static_cast<uint32_t>(node);
        t.begin[ch] = static_cast<uint32_t>(cut[d]);
        t.end[ch] = static_cast<uint32_t>(cut[d + 1]);
        t.first_child[ch] = kOctreeNone;
      }
    });
    t.stats.internal += splitting;
    frontier_begin = next_begin;
    frontier_end = next_end;
    ++l;
  }
  finishTopDown(t, l);
}

// ---------------------------------------------------------------------------
// Compressed octree (§4 steps 1–3) and chain nodes (§4 step 4)
// ---------------------------------------------------------------------------
//
// Leaves: the distinct level-D cells of the sorted keys (U[j] = first full
// key of leaf j). Internal nodes: the LCAs of adjacent leaves. Instead of
// sorting the n − 1 LCAs with duplicates (steps 2(c)–(f)) every node is
// produced once, by the leaf it ENDS at: the internal nodes whose last leaf
// is j are the ancestors of U[j] strictly below λ_j = commonLevel(U[j],
// U[j+1]) that are LCAs, found by walking back over the leaves before j
// (level g = commonLevel(U[f−1], U[j]), then f = the node's first leaf).
// Emitting leaf j followed by those nodes, deepest first, for j = 0, 1, …
// is exactly the post-order of §3 (subcell before supercell, disjoint cells
// in Morton order); positions come from a prefix sum of 1 + their count. The
// parent of a node is the next node emitted at the same leaf, or for the
// last one the LCA node at level λ_j (step 3's "LCA of adjacent nodes in
// post-order"), located by the leaf it ends at.
template <typename Par>
void buildCompressed(Par& par, Octree& t, int depth_limit, bool full, uint64_t budget, uint64_t held) {
  const uint64_t n = t.point_count;
  const uint64_t* K = t.keys.data();
  const int D = depth_limit;
  const uint32_t shift = pgOctreeShift(D);
  // Distinct leaves (stream compaction by chunk counts and offsets).
  const Plan plan = par.plan(n, 1 << 16);
  std::vector<uint64_t> chunk_heads(plan.count + 1, 0);
  auto isHead = [&](uint64_t i) { return i == 0 || (K[i] >> shift) != (K[i - 1] >> shift); };
  par.forEach(plan, [&](uint64_t c, uint64_t b, uint64_t e) {
    uint64_t h = 0;
    for (uint64_t i = b; i < e; ++i) h += isHead(i) ? 1 : 0;
    chunk_heads[c + 1] = h;
  });
  for (uint64_t c = 0; c < plan.count; ++c) chunk_heads[c + 1] += chunk_heads[c];
  const uint64_t m = chunk_heads[plan.count];
  requireMemory("octree leaves", m * 24, budget, held);
  OctreeArray<uint64_t> U(m);
  OctreeArray<uint32_t> first_point(m + 1);
  first_point[m] = static_cast<uint32_t>(n);
  par.forEach(plan, [&](uint64_t c, uint64_t b, uint64_t e) {
    uint64_t at = chunk_heads[c];
    for (uint64_t i = b; i < e; ++i)
      if (isHead(i)) {
        U[at] = (K[i] >> shift) << shift;
        first_point[at++] = static_cast<uint32_t>(i);
      }
  });
  auto lambda = [&](uint64_t j) { return j + 1 < m ? pgOctreeCommonLevel(U[j], U[j + 1]) : -1; };
  // Walks the internal nodes ending at leaf j, deepest first: visit(level, first leaf).
  auto walk = [&](uint64_t j, auto&& visit) {
    const int stop = lambda(j);
    uint64_t f = j;
    while (f > 0) {
      const int g = pgOctreeCommonLevel(U[f - 1], U[j]);
      if (g <= stop) break;
      f = firstAtLeast(U.data(), 0, f, pgOctreeCellBegin(g, pgOctreePrefix(U[j], g)));
      visit(g, f);
    }
  };
  OctreeArray<uint32_t> emitted(m), position(m);
  const Plan lplan = par.plan(m, 1 << 14);
  par.forEach(lplan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t j = b; j < e; ++j) {
      uint32_t c = 1;
      walk(j, [&](int, uint64_t) { ++c; });
      emitted[j] = c;
    }
  });
  par.scanExclusive(emitted.data(), position.data(), m);
  const uint64_t total = position[m - 1] + emitted[m - 1];
  requireMemory("octree nodes", total * kNodeBytes, budget, held + m * 24);
  resizeNodes(t, total, false);
  par.forEach(lplan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t j = b; j < e; ++j) {
      uint64_t at = position[j];
      t.level[at] = static_cast<uint8_t>(D);
      t.prefix[at] = U[j] >> shift;
      t.begin[at] = first_point[j];
      t.end[at] = first_point[j + 1];
      ++at;
      walk(j, [&](int g, uint64_t f) {
        t.level[at] = static_cast<uint8_t>(g);
        t.prefix[at] = pgOctreePrefix(U[j], g);
        t.begin[at] = first_point[f];
        t.end[at] = first_point[j + 1];
        ++at;
      });
    }
  });
  par.forEach(lplan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t j = b; j < e; ++j) {
      const uint64_t last = position[j] + emitted[j] - 1;
      for (uint64_t at = position[j]; at < last; ++at) t.parent[at] = static_cast<uint32_t>(at + 1);
      const int up = lambda(j);
      if (up < 0) {
        t.parent[last] = kOctreeNone;
        continue;
      }
      const uint64_t end_key = pgOctreeCellEnd(up, pgOctreePrefix(U[j], up));
      const uint64_t k = firstAtLeast(U.data(), j, m, end_key) - 1;
      uint32_t found = kOctreeNone;
      for (uint64_t at = position[k] + 1; at < position[k] + emitted[k]; ++at)
        if (t.level[at] == up) found = static_cast<uint32_t>(at);
      t.parent[last] = found;
    }
  });
  // Child counts: one serial pass (an increment per node).
  std::fill(t.child_count.begin(), t.child_count.end(), 0);
  for (uint64_t x = 0; x < total; ++x)
    if (t.parent[x] != kOctreeNone) ++t.child_count[t.parent[x]];
  t.stats.leaves = m;
  t.stats.internal = total - m;
  t.stats.nodes = total;
  t.stats.depth = D;
  t.root = static_cast<uint32_t>(total - 1);
  if (!full) return;
  // §4 step 4: diff = level − parent level − 1 chain nodes after every node
  // (above the root: up to level 0); positions by a prefix sum of 1 + diff.
  OctreeArray<uint32_t> grow(total), moved(total);
  const Plan nplan = par.plan(total, 1 << 14);
  par.forEach(nplan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t x = b; x < e; ++x) {
      const int up = t.parent[x] == kOctreeNone ? -1 : t.level[t.parent[x]];
      grow[x] = static_cast<uint32_t>(t.level[x] - up);
    }
  });
  par.scanExclusive(grow.data(), moved.data(), total);
  const uint64_t full_total = moved[total - 1] + grow[total - 1];
  requireMemory("octree chain nodes", (full_total + total) * (kNodeBytes + 1), budget, held + m * 24);
  Octree f;
  resizeNodes(f, full_total, false);
  f.chain.assign(full_total, 0);
  par.forEach(nplan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t x = b; x < e; ++x) {
      const uint64_t at = moved[x];
      const uint32_t chains = grow[x] - 1;
      const uint32_t up = t.parent[x] == kOctreeNone ? kOctreeNone : moved[t.parent[x]];
      for (uint32_t c = 0; c <= chains; ++c) {
        f.level[at + c] = static_cast<uint8_t>(t.level[x] - c);
        f.prefix[at + c] = t.prefix[x] >> (3 * c);
        f.begin[at + c] = t.begin[x];
        f.end[at + c] = t.end[x];
        f.child_count[at + c] = c == 0 ? t.child_count[x] : 1;
        f.chain[at + c] = c == 0 ? 0 : 1;
        f.parent[at + c] = c < chains ? static_cast<uint32_t>(at + c + 1) : up;
      }
    }
  });
  t.level.swap(f.level);
  t.prefix.swap(f.prefix);
  t.parent.swap(f.parent);
  t.begin.swap(f.begin);
  t.end.swap(f.end);
  t.child_count.swap(f.child_count);
  t.chain.swap(f.chain);
  t.stats.chain_nodes = full_total - total;
  t.stats.internal += t.stats.chain_nodes;
  t.stats.nodes = full_total;
  t.root = static_cast<uint32_t>(full_total - 1);
}

// ---------------------------------------------------------------------------
// The whole build
// ---------------------------------------------------------------------------

template <typename Par>
Octree build(Par& par, const OctreePoints& points, const OctreeOptions& options) {
  Octree t;
  t.options = options;
  t.cube = rootCube(par, points);
  const uint64_t n = points.count;
  t.point_count = n;
  const int depth_limit = t.cube.side > 0 ? options.max_depth : 0;
  // keys + order, the sort's scratch (keys and values) or the top-down
  // ping-pong buffers: 24 bytes per point.
  requireMemory("octree keys", n * 24, options.memory_budget);
  const uint64_t held = n * 24;
  t.keys.resize(n);
  t.order.resize(n);
  computeKeys(par, points, t.cube, t.keys.data(), t.order.data());
  if (options.method == OctreeMethod::kTopDown) {
    t.layout = OctreeLayout::kLevelOrder;
    buildTopDown(par, t, points, depth_limit, options.leaf_size, options.split == OctreeSplit::kData,
                 options.memory_budget, held);
  } else {
    {
      primitives::RadixScratch scratch;
      par.sort(t.keys.data(), t.order.data(), n, scratch);
    }
    if (options.compressed) {
      t.layout = OctreeLayout::kPostOrder;
      buildCompressed(par, t, depth_limit, options.full, options.memory_budget, held);
    } else {
      t.layout = OctreeLayout::kLevelOrder;
      buildBucketed(par, t, depth_limit, options.leaf_size, options.memory_budget, held);
    }
  }
  if (options.sorted_points) {
    requireMemory("octree sorted points", n * 24, options.memory_budget, held + t.size() * kNodeBytes);
    t.xyz.resize(3 * n);
    par.forEach(par.plan(n, 1 << 15), [&](uint64_t, uint64_t b, uint64_t e) {
      for (uint64_t j = b; j < e; ++j)
        for (int a = 0; a < 3; ++a) t.xyz[3 * j + a] = points.coord(t.order[j], a);
    });
  }
  if (t.layout != OctreeLayout::kLevelOrder || options.method == OctreeMethod::kTopDown) {
    uint64_t empty = 0;  // (the bucketed build counts them as it writes the leaves)
    for (uint64_t x = 0; x < t.size(); ++x)
      if (t.begin[x] == t.end[x] && t.isLeaf(static_cast<uint32_t>(x))) ++empty;
    t.stats.empty_leaves = empty;
  }
  return t;
}

}  // namespace procgen::octree_impl

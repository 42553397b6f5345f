// Octree queries (seed §4 "queries": point location, and the range and
// neighbour queries §4 and §5 name): one function per query answers one
// query point; the batched forms run them over chunks of queries with the
// same Par policy as the build (build_impl.hpp), so every backend and thread
// count gives the same answers. Variable-size answers are gathered per chunk
// and placed at offsets from a prefix sum of the per-query counts.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "octree/build_impl.hpp"

namespace procgen::octree_impl {

inline void requireCubeTree(const Octree& t, const char* what) {
  if (t.layout != OctreeLayout::kLevelOrder || t.options.split != OctreeSplit::kCube)
    throw std::invalid_argument(std::string(what) +
                                ": needs a level-order cube tree (bucketed bottom-up or top-down --split cube)");
}

inline uint32_t locateOne(const Octree& t, double x, double y, double z) {
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) return kOctreeNone;
  uint32_t node = 0;
  if (t.options.split == OctreeSplit::kData) {
    const double p[3] = {x, y, z};
    while (t.first_child[node] != kOctreeNone) {
      const uint8_t axes = t.split_axes[node];
      uint32_t d = 0;
      for (int pass = 0; pass < 3; ++pass) {
        const int axis = (axes >> (2 * pass)) & 3;
        d = d << 1 | (p[axis] > t.split_center[3 * node + axis] ? 1u : 0u);
      }
      node = t.first_child[node] + d;
    }
    return node;
  }
  const double* lo = t.cube.min;
  const double side = t.cube.side;
  const double p[3] = {x, y, z};
  for (int a = 0; a < 3; ++a)
    if (!(p[a] >= lo[a] && (p[a] - lo[a] < side || (side == 0 && p[a] == lo[a])))) return kOctreeNone;
  const uint64_t key = pgOctreeKey(x, y, z, lo[0], lo[1], lo[2], side);
  // Level order: a node's children are one level down, so the depth is a
  // counter rather than a read of t.level.
  int level = 0;
  for (uint32_t fc; (fc = t.first_child[node]) != kOctreeNone;) node = fc + pgOctreeDigit(key, ++level);
  return node;
}

/// f(j, p) for the points at positions b .. e of `order`, p pointing at
/// their x y z (const double* or const float*): the tree's sorted copy when
/// it has one (the same doubles), else the caller's array gathered through
/// `order`. The source is chosen once per call, not per point.
template <typename F>
void forPoints(const Octree& t, const OctreePoints& pts, uint32_t b, uint32_t e, F&& f) {
  const uint32_t* order = t.order.data();
  if (!t.xyz.empty()) {
    for (uint32_t j = b; j < e; ++j) f(j, t.xyz.data() + 3 * static_cast<uint64_t>(j));
  } else if (pts.xyz64) {
    for (uint32_t j = b; j < e; ++j) f(j, pts.xyz64 + 3 * static_cast<uint64_t>(order[j]));
  } else {
    for (uint32_t j = b; j < e; ++j) f(j, pts.xyz32 + 3 * static_cast<uint64_t>(order[j]));
  }
}

/// Squared distance in double of a point (widened to double) to q, computed
/// as the contract says: (px-qx)² + (py-qy)² + (pz-qz)².
template <typename T>
double dist2To(const T* p, const double* q) {
  const double dx = static_cast<double>(p[0]) - q[0];
  const double dy = static_cast<double>(p[1]) - q[1];
  const double dz = static_cast<double>(p[2]) - q[2];
  return dx * dx + dy * dy + dz * dz;
}

struct Candidate {
  double d2;
  uint32_t index;
  bool operator<(const Candidate& o) const { return d2 < o.d2 || (d2 == o.d2 && index < o.index); }
};

/// Cell widths per level and the slack, computed once per batch.
struct Geometry {
  double width[kOctreeMaxLevel + 2];
  double slack;
  explicit Geometry(const Octree& t) {
    for (int l = 0; l <= kOctreeMaxLevel + 1; ++l) width[l] = std::ldexp(t.cube.side, -l);
    slack = std::ldexp(t.cube.side, -40);
  }
};

/// A node to visit: its squared box distance, its level and its cell's lower corner.
struct Visit {
  double md;
  uint32_t node;
  int level;
  double lo[3];
};

/// Children in the order the descent visits them, as XOR masks on the digit
/// of the child nearest the query: that child, then the three that share a
/// face with it, the three that share an edge, the opposite corner. Listed
/// last to first, for a stack.
inline constexpr uint8_t kPushOrder[8] = {7, 6, 5, 3, 4, 2, 1, 0};

/// Depth-first branch and bound over non-empty nodes: leaf(node) for every
/// leaf not pruned by prune(box distance²). The child nearest the query is
/// visited first, then its face, edge and corner neighbours (kPushOrder) —
/// an order that finds close points early without sorting the children by
/// distance; the result never depends on it. Child cells are the parent's
/// corner plus half its width per set digit bit, widened by the slack
/// (side·2^-40) so that rounding in the quantization never prunes a point;
/// their distances come from 2 per axis (lower
/// and upper half), summed in axis order as pgCornerDist2 (keys.h) sums them. Children
/// already pruned are not pushed, and a node is tested again when popped
/// (prune may have tightened meanwhile). The subtree of `skip` is left out
/// (a caller that has already seen its points). The descent starts at `from`
/// (a node, its level, corner and box distance) when given, else at the root.
template <typename Prune, typename Leaf>
void descend(const Octree& t, const Geometry& g, const double* q, Prune&& prune, Leaf&& leaf,
             uint32_t skip = kOctreeNone, uint32_t scan_at_most = 0, const Visit* from = nullptr) {
  // At most 7 pending siblings per level plus one node's 8 children.
  Visit stack[8 * (kOctreeMaxLevel + 1)];
  int top = 0;
  Visit& root = stack[top++];
  if (from) {
    root = *from;
  } else {
    root = Visit{0, 0, 0, {t.cube.min[0], t.cube.min[1], t.cube.min[2]}};
    root.md = pgCornerDist2(root.lo, g.width[0], g.slack, q);
  }
  const uint32_t* first_child = t.first_child.data();
  const uint32_t* begin = t.begin.data();
  const uint32_t* end = t.end.data();
  while (top > 0) {
    // A reference, not a copy: the children are pushed into its slot only
    // after everything is read from it (corner, axis_d2, child_level).
    const Visit& v = stack[--top];
    if (prune(v.md)) continue;
    const uint32_t fc = first_child[v.node];
    if (fc == kOctreeNone || end[v.node] - begin[v.node] <= scan_at_most) {
      leaf(v.node);
      continue;
    }
    const int child_level = v.level + 1;
    const double half = g.width[child_level];
    double axis_d2[3][2];  // [axis][upper half]
    double corner[3][2];
    uint32_t near = 0;
    for (int a = 0; a < 3; ++a) {
      corner[a][0] = v.lo[a] + 0.0;
      corner[a][1] = v.lo[a] + half;
#if defined(__SSE2__)
      // Both halves at once, as max(b0 - q, q - b1, 0): the value of
      // pgCornerDist2's branches (b0 - q > 0 exactly when q < b0) without
      // them — they mispredict about as often as not.
      const __m128d lo = _mm_loadu_pd(corner[a]), qa = _mm_set1_pd(q[a]), slack = _mm_set1_pd(g.slack);
      const __m128d b0 = _mm_sub_pd(lo, slack), b1 = _mm_add_pd(_mm_add_pd(lo, _mm_set1_pd(half)), slack);
      const __m128d d = _mm_max_pd(_mm_max_pd(_mm_sub_pd(b0, qa), _mm_sub_pd(qa, b1)), _mm_setzero_pd());
      _mm_storeu_pd(axis_d2[a], _mm_mul_pd(d, d));
#else
      for (int up = 0; up < 2; ++up) {
        const double b0 = corner[a][up] - g.slack, b1 = corner[a][up] + half + g.slack;
        const double d = q[a] < b0 ? b0 - q[a] : (q[a] > b1 ? q[a] - b1 : 0.0);
        axis_d2[a][up] = d * d;
      }
#endif
      near |= (q[a] >= corner[a][1] ? 1u : 0u) << a;
    }
    // The 8 distances at once, straight-line (12 additions in pgCornerDist2's order: x + y, then + z).
    double xy[4], child_d2[8];
    for (int d = 0; d < 4; ++d) xy[d] = axis_d2[0][d & 1] + axis_d2[1][d >> 1];
    for (int d = 0; d < 8; ++d) child_d2[d] = xy[d & 3] + axis_d2[2][d >> 2];
    for (const uint8_t mask : kPushOrder) {
      const uint32_t d = near ^ mask;
      const uint32_t ch = fc + d;
      if (begin[ch] == end[ch] || ch == skip) continue;
      const double md = child_d2[d];
      if (prune(md)) continue;
      Visit& c = stack[top++];
      c.md = md;
      c.node = ch;
      c.level = child_level;
      for (int a = 0; a < 3; ++a) c.lo[a] = corner[a][(d >> a) & 1];
    }
  }
}

/// The k best candidates so far, ascending by (d2, index), padded with
/// (infinity, kOctreeNone) — which every point precedes, its index being
/// smaller — so that the arrays always hold k (the answer as written, padding
/// included) and `bound`, the k-th distance, is infinity until k points are
/// seen. Insertion from the back; any k.
struct KBest {
  std::vector<double> d2;
  std::vector<uint32_t> index;
  uint32_t k = 0;
  double bound = std::numeric_limits<double>::infinity();
  void reset(uint32_t capacity) {
    k = capacity;
    bound = std::numeric_limits<double>::infinity();
    d2.assign(k, bound);
    index.assign(k, kOctreeNone);
  }
  void offer(double d, uint32_t i) {
    double* dd = d2.data();
    uint32_t* ii = index.data();
    uint32_t at = k - 1;
    if (d > dd[at] || (d == dd[at] && i > ii[at])) return;
    for (; at > 0 && (d < dd[at - 1] || (d == dd[at - 1] && i < ii[at - 1])); --at) {
      dd[at] = dd[at - 1];
      ii[at] = ii[at - 1];
    }
    dd[at] = d;
    ii[at] = i;
    bound = dd[k - 1];
  }
};

/// KBest for k <= 8 in fixed arrays: an offer finds its place by comparing
/// with all 8 distances at once and moves the tail by a fixed-size copy, with
/// no branch on the data but the rare tie in distance — the shifting loop
/// mispredicts its exit at almost every offer. Slots k .. 8 may hold
/// candidates pushed out of the k best (never read); the arrays run on to 16
/// so that the fixed copy may overrun.
struct SmallBest {
  static constexpr uint32_t kCapacity = 8;
  alignas(16) double d2[2 * kCapacity];
  uint32_t index[2 * kCapacity];
  uint32_t k = 0;
  double bound = std::numeric_limits<double>::infinity();
  void reset(uint32_t capacity) {
    k = capacity;
    bound = std::numeric_limits<double>::infinity();
    for (uint32_t s = 0; s < 2 * kCapacity; ++s) d2[s] = bound, index[s] = kOctreeNone;
  }
  void offer(double d, uint32_t i) {
    // The slots at most d: a prefix (the slots are sorted); d goes after
    // them unless the last of them ties with it and has a larger index.
    uint32_t at_most = 0;
#if defined(__SSE2__)
    const __m128d dv = _mm_set1_pd(d);
    for (uint32_t s = 0; s < kCapacity; s += 2)
      at_most |= static_cast<uint32_t>(_mm_movemask_pd(_mm_cmple_pd(_mm_load_pd(d2 + s), dv))) << s;
#else
    for (uint32_t s = 0; s < kCapacity; ++s) at_most |= (d2[s] <= d ? 1u : 0u) << s;
#endif
    uint32_t at = static_cast<uint32_t>(__builtin_ctz(~at_most));
    while (at > 0 && d2[at - 1] == d && index[at - 1] > i) --at;  // (ties: by index)
    if (at >= k) return;
    double d2_tail[kCapacity];
    uint32_t index_tail[kCapacity];
    std::memcpy(d2_tail, d2 + at, sizeof d2_tail);
    std::memcpy(index_tail, index + at, sizeof index_tail);
    std::memcpy(d2 + at + 1, d2_tail, sizeof d2_tail);
    std::memcpy(index + at + 1, index_tail, sizeof index_tail);
    d2[at] = d;
    index[at] = i;
    bound = d2[k - 1];
  }
};

#if defined(__SSE2__)
/// Squared distances of the four points at p (x y z each: the sorted copy)
/// to q into d, and the mask of those at most `bound`. Two points' x y z x y
/// z become their two x, two y and two z by three shuffles; the arithmetic is
/// lane-wise IEEE in dist2To's order, so every distance rounds as dist2To's.
inline uint32_t fourDistancesSse2(const double* p, const double* q, double bound, double* d) {
  const __m128d qx = _mm_set1_pd(q[0]), qy = _mm_set1_pd(q[1]), qz = _mm_set1_pd(q[2]),
                within = _mm_set1_pd(bound);
  uint32_t mask = 0;
  for (int half = 0; half < 2; ++half, p += 6) {
    const __m128d u = _mm_loadu_pd(p), v = _mm_loadu_pd(p + 2),
                  w = _mm_loadu_pd(p + 4);  // x0 y0 | z0 x1 | y1 z1
    const __m128d dx = _mm_sub_pd(_mm_shuffle_pd(u, v, 2), qx);
    const __m128d dy = _mm_sub_pd(_mm_shuffle_pd(u, w, 1), qy);
    const __m128d dz = _mm_sub_pd(_mm_shuffle_pd(v, w, 2), qz);
    const __m128d d2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(dx, dx), _mm_mul_pd(dy, dy)), _mm_mul_pd(dz, dz));
    _mm_storeu_pd(d + 2 * half, d2);
    mask |= static_cast<uint32_t>(_mm_movemask_pd(_mm_cmple_pd(d2, within))) << (2 * half);
  }
  return mask;
}

/// fourDistancesSse2 with the two pairs in the halves of AVX registers (no
/// FMA: the target is avx2 alone, so the products round as above).
[[gnu::target("avx2")]] inline uint32_t fourDistancesAvx2(const double* p, const double* q, double bound,
                                                          double* d) {
  // x0 y0 | z0 x1 | y1 z1 of points 0 and 1 in the low halves, of 2 and 3 in the high ones.
  const __m256d u = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p)), _mm_loadu_pd(p + 6), 1);
  const __m256d v = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p + 2)), _mm_loadu_pd(p + 8), 1);
  const __m256d w =
      _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p + 4)), _mm_loadu_pd(p + 10), 1);
  const __m256d dx = _mm256_sub_pd(_mm256_shuffle_pd(u, v, 0b1010), _mm256_set1_pd(q[0]));
  const __m256d dy = _mm256_sub_pd(_mm256_shuffle_pd(u, w, 0b0101), _mm256_set1_pd(q[1]));
  const __m256d dz = _mm256_sub_pd(_mm256_shuffle_pd(v, w, 0b1010), _mm256_set1_pd(q[2]));
  const __m256d d2 =
      _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)), _mm256_mul_pd(dz, dz));
  _mm256_storeu_pd(d, d2);
  return static_cast<uint32_t>(_mm256_movemask_pd(_mm256_cmp_pd(d2, _mm256_set1_pd(bound), _CMP_LE_OQ)));
}

inline bool cpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
#else
inline bool cpuHasAvx2() {
  return false;
}
#endif

/// Whether kNN batches run their AVX2 variant (knnQueriesAvx2): where the
/// CPU has it. Both variants give the same bits; tests switch it off to run
/// the other.
inline std::atomic<bool> knn_avx2{cpuHasAvx2()};

/// Offers best the points at positions b .. e of the tree's order within
/// its bound: from the sorted copy four at a time (fourDistances*), offering
/// only those within the bound, read again after every offer; otherwise (no
/// sorted copy, or the last 0-3 points) point by point through forPoints.
template <bool kAvx2, typename Best>
void knnScan(const Octree& t, const OctreePoints& pts, const double* q, uint32_t b, uint32_t e, Best& best) {
  const uint32_t* order = t.order.data();
  uint32_t j = b;
#if defined(__SSE2__)
  if (!t.xyz.empty()) {
    const double* xyz = t.xyz.data();
    double bound = best.bound;
    for (; j + 4 <= e; j += 4) {
      const double* p = xyz + 3 * static_cast<uint64_t>(j);
      alignas(32) double d[4];
      uint32_t mask;
      if constexpr (kAvx2)
        mask = fourDistancesAvx2(p, q, bound, d);
      else
        mask = fourDistancesSse2(p, q, bound, d);
      while (mask) {
        const uint32_t i = static_cast<uint32_t>(__builtin_ctz(mask));
        mask &= mask - 1;
        if (d[i] <= bound) {
          best.offer(d[i], order[j + i]);
          bound = best.bound;
        }
      }
    }
  }
#endif
  forPoints(t, pts, j, e, [&](uint32_t jj, const auto* p) {
    const double d2 = dist2To(p, q);
    if (d2 <= best.bound) best.offer(d2, order[jj]);  // (ties are decided by index in offer)
  });
}

/// kNN scans subtrees of at most this many points whole (see knnOne). On
/// 10^6 uniform points with leaves of 16 (level-5 nodes of ~30 points
/// scanned, level-4 ones of ~240 descended), one core: 8-NN 0.98–1.00 M/s
/// with 64 against 0.80–0.82 with 0 (leaves only); 128 gave 0.97–1.01, 256
/// 0.80–0.85. After the vector scan, the small best array and the start below
/// the root (callgrind, instructions / simulated mispredictions per 8-NN
/// query): 64 → 5.4 k / 52, 0 → 6.1 k / 70, 256 → 7.7 k / 45 (7.3 k / 82
/// before them, with 64); with 64 and the prefetch in knnQueries, 8-NN
/// 1.14–1.18 M/s on one core in quiet runs (docs/performance.md, octrees).
inline constexpr uint32_t kKnnScanAtMost = 64;

/// k nearest of query q into best (ascending, padded as KBest says).
template <bool kAvx2, typename Best>
void knnOne(const Octree& t, const Geometry& g, const OctreePoints& pts, const double* q, uint32_t k,
            Best& best) {
  best.reset(k);
  // A query with a NaN or infinite coordinate has no nearest points (all
  // padding), as documented in octree.hpp; every backend says the same.
  if (k == 0 || !(std::isfinite(q[0]) && std::isfinite(q[1]) && std::isfinite(q[2]))) return;
  const uint32_t* first_child = t.first_child.data();
  const uint32_t* begin = t.begin.data();
  const uint32_t* end = t.end.data();
  auto scan = [&](uint32_t b, uint32_t e) { knnScan<kAvx2>(t, pts, q, b, e, best); };
  // Seed the bound before the descent: the deepest node on the query's path
  // (its key, clamped to the cube) that holds at least k points is scanned
  // whole — on the uniform cloud the leaf's parent, ~30 points — so the
  // descent starts with a finite bound and prunes at every level; it then
  // skips that node. The bound is the k-th distance among points seen, so
  // pruning stays exact. The path's cells are kept, corners computed as
  // descend computes them.
  Visit path[kOctreeMaxLevel + 1];
  path[0] = Visit{0, 0, 0, {t.cube.min[0], t.cube.min[1], t.cube.min[2]}};
  const uint64_t key =
      pgOctreeKey(q[0], q[1], q[2], t.cube.min[0], t.cube.min[1], t.cube.min[2], t.cube.side);
  int level = 0;
  for (uint32_t fc; (fc = first_child[path[level].node]) != kOctreeNone;) {
    const uint32_t digit = pgOctreeDigit(key, level + 1);
    const uint32_t child = fc + digit;
    if (end[child] - begin[child] < k) break;
    Visit& c = path[level + 1];
    c.md = 0;
    c.node = child;
    c.level = level + 1;
    for (int a = 0; a < 3; ++a) c.lo[a] = path[level].lo[a] + ((digit >> a & 1) ? g.width[level + 1] : 0.0);
    ++level;
  }
  const uint32_t seed = path[level].node;
  scan(begin[seed], end[seed]);  // (any node: its points are order[begin .. end))
  if (seed == 0) return;         // the root: every point is seen
  // The descent starts at the deepest cell on the path that holds the ball
  // of radius sqrt(bound) around q — every point that can still enter lies
  // in it — rather than at the root: the cell shrunk by twice the slack
  // (once for the quantization, as in descend, once for this test's
  // rounding), the bound widened by 2^-30 (the rounding of the distances).
  // When that cell is the seed, nothing is left to visit.
  const double reach = best.bound * (1 + 0x1p-30);
  int start = level;
  for (; start >= 0; --start) {
    const Visit& c = path[start];
    double inner = std::numeric_limits<double>::infinity();  // q's distance to the shrunk cell's faces
    for (int a = 0; a < 3; ++a)
      inner = std::min(
          inner, std::min(q[a] - (c.lo[a] + 2 * g.slack), (c.lo[a] + g.width[start] - 2 * g.slack) - q[a]));
    if (inner > 0 && inner * inner > reach) break;
  }
  if (start == level) return;
  // Small subtrees are scanned whole rather than descended: their points are
  // contiguous, and a scan of a few dozen points costs less than visiting
  // their leaves one by one. A scanned node that holds the seed leaves the
  // seed's points out (they were offered already).
  const uint32_t seed_begin = begin[seed], seed_end = end[seed];
  auto visitNode = [&](uint32_t node) {
    const uint32_t b = begin[node], e = end[node];
    if (b <= seed_begin && seed_end <= e) {
      scan(b, seed_begin);
      scan(seed_end, e);
    } else {
      scan(b, e);
    }
  };
  descend(
      t, g, q, [&](double md) { return md > best.bound; }, visitNode, seed, kKnnScanAtMost,
      start >= 0 ? &path[start] : nullptr);
}

/// Batches of at least this many queries are answered in Morton order.
inline constexpr uint64_t kMortonOrderFrom = 512;

/// The order in which a batch is answered: its queries sorted by the Morton
/// key of their position (the first 3 doubles of every `stride`), so that
/// consecutive queries descend to the same cells and read the same points
/// while they are in cache — uniform queries over 10^6 points otherwise miss
/// it at almost every leaf. Only the order of the work changes: every answer
/// is written at its query's place. Empty (input order) for small batches.
template <typename Par>
OverwriteVector<uint32_t> mortonOrder(Par& par, const Octree& t, const double* xyz, uint64_t stride,
                                      uint64_t m) {
  OverwriteVector<uint32_t> order;
  if (m < kMortonOrderFrom || m > kOctreeMaxPoints) return order;
  OverwriteVector<uint64_t> keys(m);
  order.resize(m);
  par.forEach(par.plan(m, 1 << 14), [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t q = b; q < e; ++q) {
      const double* p = xyz + stride * q;  // (outside the cube or NaN: clamped, any place will do)
      keys[q] = pgOctreeKey(p[0], p[1], p[2], t.cube.min[0], t.cube.min[1], t.cube.min[2], t.cube.side);
      order[q] = static_cast<uint32_t>(q);
    }
  });
  primitives::RadixScratch scratch;
  par.sort(keys.data(), order.data(), m, scratch);
  return order;
}

/// The query answered at position `pos` of a batch in `order`.
inline uint64_t queryAt(const OverwriteVector<uint32_t>& order, uint64_t pos) {
  return order.empty() ? pos : order[pos];
}

/// The queries at positions b .. e of a batch in `order` (mortonOrder):
/// their k nearest into out and dist2 at their places.
template <bool kAvx2, typename Best>
void knnQueries(const Octree& t, const Geometry& g, const OctreePoints& pts, const double* xyz, uint32_t k,
                const OverwriteVector<uint32_t>& order, uint64_t b, uint64_t e, uint32_t* out,
                double* dist2) {
  Best best;
  for (uint64_t pos = b; pos < e; ++pos) {
    // In Morton order the queries' coordinates and answers lie anywhere in
    // their arrays: fetched two queries ahead, they no longer stall the seed
    // descent and the writes (+15 % on 2·10^5 queries over 10^6 points).
    if (pos + 2 < e) {
      const uint64_t ahead = queryAt(order, pos + 2);
      __builtin_prefetch(xyz + 3 * ahead);
      __builtin_prefetch(out + ahead * k, 1);
      if (dist2) __builtin_prefetch(dist2 + ahead * k, 1);
    }
    const uint64_t q = queryAt(order, pos);
    knnOne<kAvx2>(t, g, pts, xyz + 3 * q, k, best);
    std::copy_n(&best.index[0], k, out + q * k);
    if (dist2) std::copy_n(&best.d2[0], k, dist2 + q * k);
  }
}

/// knnQueries compiled for AVX2 as a whole (flatten: everything it calls is
/// inlined and compiled for the target).
#if defined(__SSE2__)
template <typename Best>
[[gnu::flatten, gnu::target("avx2")]] void knnQueriesAvx2(const Octree& t, const Geometry& g,
                                                          const OctreePoints& pts, const double* xyz,
                                                          uint32_t k, const OverwriteVector<uint32_t>& order,
                                                          uint64_t b, uint64_t e, uint32_t* out,
                                                          double* dist2) {
  knnQueries<true, Best>(t, g, pts, xyz, k, order, b, e, out, dist2);
}
#else
template <typename Best>  // (never chosen: knn_avx2 is false)
void knnQueriesAvx2(const Octree& t, const Geometry& g, const OctreePoints& pts, const double* xyz,
                    uint32_t k, const OverwriteVector<uint32_t>& order, uint64_t b, uint64_t e, uint32_t* out,
                    double* dist2) {
  knnQueries<false, Best>(t, g, pts, xyz, k, order, b, e, out, dist2);
}
#endif

template <typename Par>
void knnBatch(Par& par, const Octree& t, const OctreePoints& pts, const double* xyz, uint64_t m, uint32_t k,
              uint32_t* out, double* dist2) {
  requireCubeTree(t, "octreeKnn");
  if (k == 0) return;
  const Geometry g(t);
  const OverwriteVector<uint32_t> order = mortonOrder(par, t, xyz, 3, m);
  const bool avx2 = knn_avx2.load(std::memory_order_relaxed);
  par.forEach(par.plan(m, 256), [&](uint64_t, uint64_t b, uint64_t e) {
    if (k <= SmallBest::kCapacity) {
      if (avx2)
        knnQueriesAvx2<SmallBest>(t, g, pts, xyz, k, order, b, e, out, dist2);
      else
        knnQueries<false, SmallBest>(t, g, pts, xyz, k, order, b, e, out, dist2);
    } else {
      if (avx2)
        knnQueriesAvx2<KBest>(t, g, pts, xyz, k, order, b, e, out, dist2);
      else
        knnQueries<false, KBest>(t, g, pts, xyz, k, order, b, e, out, dist2);
    }
  });
}

/// Runs one(q, results) for every query, in `order` (mortonOrder); gathers
/// the results in query order.
template <typename Par, typename One>
OctreeQueryResult gather(Par& par, uint64_t m, const OverwriteVector<uint32_t>& order, One&& one) {
  const Plan plan = par.plan(m, 256);
  std::vector<std::vector<uint32_t>> parts(plan.count);
  OverwriteVector<uint64_t> start(m);  // where query q's results begin in its chunk's part
  OctreeQueryResult r;
  r.offsets.assign(m + 1, 0);
  par.forEach(plan, [&](uint64_t c, uint64_t b, uint64_t e) {
    std::vector<uint32_t>& mine = parts[c];
    for (uint64_t pos = b; pos < e; ++pos) {
      const uint64_t q = queryAt(order, pos);
      start[q] = mine.size();
      one(q, mine);
      r.offsets[q + 1] = mine.size() - start[q];
    }
  });
  for (uint64_t q = 0; q < m; ++q) r.offsets[q + 1] += r.offsets[q];
  r.indices.resize(r.offsets[m]);
  par.forEach(plan, [&](uint64_t c, uint64_t b, uint64_t e) {
    for (uint64_t pos = b; pos < e; ++pos) {
      const uint64_t q = queryAt(order, pos);
      std::copy_n(parts[c].begin() + start[q], r.offsets[q + 1] - r.offsets[q],
                  r.indices.begin() + r.offsets[q]);
    }
  });
  return r;
}

template <typename Par>
OctreeQueryResult radiusBatch(Par& par, const Octree& t, const OctreePoints& pts, const double* xyz, uint64_t m,
                              double radius) {
  requireCubeTree(t, "octreeRadius");
  const double r2 = radius * radius;
  const Geometry g(t);
  return gather(par, m, mortonOrder(par, t, xyz, 3, m), [&](uint64_t qi, std::vector<uint32_t>& out) {
    thread_local std::vector<Candidate> found;
    found.clear();
    const double* q = xyz + 3 * qi;
    if (!(radius >= 0)) return;
    descend(
        t, g, q, [&](double md) { return md > r2; },
        [&](uint32_t node) {
          forPoints(t, pts, t.begin[node], t.end[node], [&](uint32_t j, const auto* p) {
            const double d2 = dist2To(p, q);
            if (d2 <= r2) found.push_back({d2, t.order[j]});
          });
        });
    std::sort(found.begin(), found.end());
    for (const Candidate& c : found) out.push_back(c.index);
  });
}

template <typename Par>
OctreeQueryResult boxBatch(Par& par, const Octree& t, const OctreePoints& pts, const double* boxes, uint64_t m) {
  requireCubeTree(t, "octreeBox");
  const Geometry g(t);
  const uint32_t* first_child = t.first_child.data();
  const uint32_t* begin = t.begin.data();
  const uint32_t* end = t.end.data();
  return gather(par, m, mortonOrder(par, t, boxes, 6, m), [&](uint64_t qi, std::vector<uint32_t>& out) {
    const double* lo = boxes + 6 * qi;
    const double* hi = lo + 3;
    const uint64_t first = out.size();
    // Depth first over the non-empty cells whose box, widened by the slack
    // (as in descend), meets the closed query box; child corners are the
    // parent's plus half its width per digit bit, as in descend.
    struct BoxVisit {
      uint32_t node;
      int level;
      double lo[3];
    };
    BoxVisit stack[8 * (kOctreeMaxLevel + 1)];
    int top = 0;
    bool meets_root = true;
    for (int a = 0; a < 3; ++a)
      meets_root =
          meets_root && t.cube.min[a] - g.slack <= hi[a] && lo[a] <= t.cube.min[a] + g.width[0] + g.slack;
    if (meets_root) stack[top++] = BoxVisit{0, 0, {t.cube.min[0], t.cube.min[1], t.cube.min[2]}};
    while (top > 0) {
      const BoxVisit v = stack[--top];
      const uint32_t fc = first_child[v.node];
      if (fc == kOctreeNone) {
        forPoints(t, pts, begin[v.node], end[v.node], [&](uint32_t j, const auto* p) {
          bool inside = true;
          for (int a = 0; a < 3; ++a) {
            const double x = static_cast<double>(p[a]);
            inside = inside && lo[a] <= x && x <= hi[a];
          }
          if (inside) out.push_back(t.order[j]);
        });
        continue;
      }
      const double half = g.width[v.level + 1];
      bool meets[3][2];  // [axis][upper half]
      double corner[3][2];
      for (int a = 0; a < 3; ++a)
        for (int up = 0; up < 2; ++up) {
          corner[a][up] = v.lo[a] + (up ? half : 0.0);
          meets[a][up] = corner[a][up] - g.slack <= hi[a] && lo[a] <= corner[a][up] + half + g.slack;
        }
      for (uint32_t d = 0; d < 8; ++d) {
        const uint32_t ch = fc + d;
        if (!(meets[0][d & 1] && meets[1][(d >> 1) & 1] && meets[2][d >> 2]) || begin[ch] == end[ch])
          continue;
        stack[top++] =
            BoxVisit{ch, v.level + 1, {corner[0][d & 1], corner[1][(d >> 1) & 1], corner[2][d >> 2]}};
      }
    }
    std::sort(out.begin() + first, out.end());
  });
}

template <typename Par>
void locateBatch(Par& par, const Octree& t, const double* xyz, uint64_t m, uint32_t* out) {
  if (t.layout != OctreeLayout::kLevelOrder)
    throw std::invalid_argument("octreeLocate: needs a level-order tree (bucketed bottom-up or top-down)");
  const Plan plan = par.plan(m, 1024);
  par.forEach(plan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t q = b; q < e; ++q) out[q] = locateOne(t, xyz[3 * q], xyz[3 * q + 1], xyz[3 * q + 2]);
  });
}

template <typename Par>
void generate(Par& par, PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz) {
  const Plan plan = par.plan(n, 1 << 15);
  par.forEach(plan, [&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i) pgPointsGenerate(static_cast<pg_i32>(distribution), seed, i, xyz + 3 * i);
  });
}

}  // namespace procgen::octree_impl

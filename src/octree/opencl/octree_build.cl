/* octree_build.cl — the opencl twin of the octree build stages of
 * build_impl.hpp: the same per-element logic (keys.h), the same offsets from
 * ordered prefix sums (scan.cl, run by the host driver octree_stages.cpp),
 * so every array equals the serial tree bit for bit.
 *
 * Paper: Ajmera, Goradia, Chandran, Aluru, "Fast, parallel, GPU-based
 * construction of space filling curves and octrees"
 * (shared/seeds/004_ce32dc12e32b896e.txt).
 *   boundsRuns, computeKeys            §3 (root cube, SFC index of a point);
 *   bucketCount/Write/NodeIds/Children §4 generalized to leaves of leaf_size
 *                                      points (docs/octree.md "bucketed");
 *   leafHeads*, compressed*, chain*    §4 steps 1–4 (distinct leaves, LCAs of
 *                                      adjacent leaves in post-order, parents,
 *                                      chain nodes);
 *   topDownFlags, topDownSplit         §5 (split flags, next-level offsets by a
 *                                      prefix sum, 8-way split as three stable
 *                                      binary partitions).
 * Kernels over "runs" handle `per` consecutive points each, in index order,
 * like one chunk of the cpu twin. Built with -DPG_COORD_T=<float|double>, the
 * type of the caller's points; every coordinate is widened to double.
 */
#include "octree/keys.h"

#ifndef PG_COORD_T
#define PG_COORD_T double
#endif
typedef PG_COORD_T coord_t;

#define PG_NONE 0xffffffffu
#define PG_LEVEL_COUNT 22 /* levels 0..21 */

inline double pgCoord(__global const coord_t* points, ulong i, int axis) { return (double)points[3 * i + axis]; }

/* std::lower_bound over a[b..e). */
inline ulong pgLowerBound(__global const ulong* a, ulong b, ulong e, ulong key) {
  while (b < e) {
    const ulong mid = b + (e - b) / 2;
    if (a[mid] < key) b = mid + 1;
    else e = mid;
  }
  return b;
}

/* ---- §3: root cube and keys ------------------------------------------------ */

/* Per run: the min and max of its finite coordinates (std::min/std::max
 * semantics: ties keep the earlier value, so -0 and +0 resolve as on the
 * host) and its first non-finite point (n when none). */
__kernel void boundsRuns(__global const coord_t* points, ulong n, ulong per, __global double* bounds,
                         __global ulong* bad) {
  const ulong r = get_global_id(0);
  const ulong b = r * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
  double lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = INFINITY;
    hi[a] = -INFINITY;
  }
  ulong first_bad = n;
  for (ulong i = b; i < e; ++i)
    for (int a = 0; a < 3; ++a) {
      const double v = pgCoord(points, i, a);
      if (!isfinite(v)) {
        if (first_bad == n) first_bad = i;
        continue;
      }
      lo[a] = v < lo[a] ? v : lo[a];
      hi[a] = hi[a] < v ? v : hi[a];
    }
  for (int a = 0; a < 3; ++a) {
    bounds[6 * r + a] = lo[a];
    bounds[6 * r + 3 + a] = hi[a];
  }
  bad[r] = first_bad;
}

/* keys[i] = Morton key of point i; order[i] = i when order is not null. */
__kernel void computeKeys(__global const coord_t* points, ulong n, double min_x, double min_y, double min_z,
                          double side, __global ulong* keys, __global uint* order) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  keys[i] = pgOctreeKey(pgCoord(points, i, 0), pgCoord(points, i, 1), pgCoord(points, i, 2), min_x, min_y, min_z,
                        side);
  if (order) order[i] = (uint)i;
}

/* order[j]'s coordinates at 3j (OctreeOptions::sorted_points). */
__kernel void gatherPoints(__global const coord_t* points, __global const uint* order, ulong n,
                           __global double* xyz) {
  const ulong j = get_global_id(0);
  if (j >= n) return;
  const ulong i = order[j];
  for (int a = 0; a < 3; ++a) xyz[3 * j + a] = pgCoord(points, i, a);
}

/* dst[x] = src[x · stride] for x in 0..count (level starts from the scan). */
__kernel void gatherStrided(__global const ulong* src, ulong stride, ulong count, __global ulong* dst) {
  const ulong x = get_global_id(0);
  if (x < count) dst[x] = src[x * stride];
}

/* ---- bucketed bottom-up ------------------------------------------------------ */

/* The internal cells point i owns: levels lo..hi (none when hi < lo). */
inline void pgOwnedLevels(__global const ulong* K, ulong n, ulong i, ulong s, int depth_limit, int* lo, int* hi) {
  *lo = i == 0 ? 0 : pgOctreeCommonLevel(K[i - 1], K[i]) + 1;
  *hi = i + s < n ? min(pgOctreeCommonLevel(K[i], K[i + s]), depth_limit - 1) : -1;
}

/* counts[l · runs + r] = cells of level l owned by run r; counts[22 · runs] = 0,
 * so the exclusive scan's last entry is the total. Level-major: the scan
 * numbers the internal cells by level, then by point, as the serial twin. */
__kernel void bucketCount(__global const ulong* K, ulong n, ulong s, int depth_limit, ulong per, ulong runs,
                          __global ulong* counts) {
  const ulong r = get_global_id(0);
  if (r == 0) counts[PG_LEVEL_COUNT * runs] = 0;
  if (r >= runs) return;
  ulong local_count[PG_LEVEL_COUNT];
  for (int l = 0; l < PG_LEVEL_COUNT; ++l) local_count[l] = 0;
  const ulong e = min(n, (r + 1) * per);
  int lo, hi;
  for (ulong i = r * per; i < e; ++i) {
    pgOwnedLevels(K, n, i, s, depth_limit, &lo, &hi);
    for (int l = lo; l <= hi; ++l) ++local_count[l];
  }
  for (int l = 0; l < PG_LEVEL_COUNT; ++l) counts[l * runs + r] = local_count[l];
}

/* ipref[id] = prefix of every internal cell, at the scanned offsets. */
__kernel void bucketWrite(__global const ulong* K, ulong n, ulong s, int depth_limit, ulong per, ulong runs,
                          __global const ulong* offsets, __global ulong* ipref) {
  const ulong r = get_global_id(0);
  if (r >= runs) return;
  ulong at[PG_LEVEL_COUNT];
  for (int l = 0; l < PG_LEVEL_COUNT; ++l) at[l] = offsets[l * runs + r];
  const ulong e = min(n, (r + 1) * per);
  int lo, hi;
  for (ulong i = r * per; i < e; ++i) {
    pgOwnedLevels(K, n, i, s, depth_limit, &lo, &hi);
    for (int l = lo; l <= hi; ++l) ipref[at[l]++] = pgOctreePrefix(K[i], l);
  }
}

/* Level of internal id: the last l with level_start[l] <= id. */
inline int pgLevelOfId(__global const ulong* level_start, ulong id) {
  int l = 0;
  for (int x = 1; x < PG_LEVEL_COUNT; ++x)
    if (level_start[x] <= id) l = x;
  return l;
}

/* inode[id] = level-order node index of internal cell id: base(l) + 8 ×
 * (its parent's rank among the internal cells of level l − 1) + its digit. */
__kernel void bucketNodeIds(__global const ulong* ipref, ulong internal, __global const ulong* level_start,
                            __global const ulong* node_base, __global uint* inode) {
  const ulong id = get_global_id(0);
  if (id >= internal) return;
  const int l = pgLevelOfId(level_start, id);
  if (l == 0) {
    inode[id] = 0;
    return;
  }
  const ulong p = ipref[id];
  const ulong first = level_start[l - 1];
  const ulong rank = pgLowerBound(ipref, first, level_start[l], p >> 3) - first;
  inode[id] = (uint)(node_base[l] + 8 * rank + (p & 7));
}

/* Every internal cell writes its first_child and its 8 children with their
 * point ranges (binary searches on the sorted keys). */
__kernel void bucketChildren(__global const ulong* K, ulong n, __global const ulong* ipref, ulong internal,
                             __global const ulong* level_start, __global const ulong* node_base,
                             __global const uint* inode, __global uchar* level, __global ulong* prefix,
                             __global uint* parent, __global uint* first_child, __global uint* begin,
                             __global uint* end) {
  const ulong id = get_global_id(0);
  if (id >= internal) return;
  const int l = pgLevelOfId(level_start, id);
  const ulong p = ipref[id];
  const uint self = inode[id];
  const uint fc = (uint)(node_base[l + 1] + 8 * (id - level_start[l]));
  first_child[self] = fc;
  ulong bound = pgLowerBound(K, 0, n, pgOctreeCellBegin(l, p));
  for (uint d = 0; d < 8; ++d) {
    const uint ch = fc + d;
    const ulong cp = p * 8 + d;
    level[ch] = (uchar)(l + 1);
    prefix[ch] = cp;
    parent[ch] = self;
    begin[ch] = (uint)bound;
    bound = pgLowerBound(K, bound, n, pgOctreeCellEnd(l + 1, cp));
    end[ch] = (uint)bound;
  }
}

/* ---- compressed octree (§4 steps 1–3) and chain nodes (step 4) --------------- */

inline int pgIsLeafHead(__global const ulong* K, ulong i, uint shift) {
  return i == 0 || (K[i] >> shift) != (K[i - 1] >> shift);
}

/* counts[r] = distinct level-D cells starting in run r; counts[runs] = 0. */
__kernel void leafHeadCount(__global const ulong* K, ulong n, uint shift, ulong per, ulong runs,
                            __global ulong* counts) {
  const ulong r = get_global_id(0);
  if (r == 0) counts[runs] = 0;
  if (r >= runs) return;
  const ulong e = min(n, (r + 1) * per);
  ulong h = 0;
  for (ulong i = r * per; i < e; ++i) h += pgIsLeafHead(K, i, shift) ? 1 : 0;
  counts[r] = h;
}

/* U[j] = first full key of leaf j, first_point[j] = its first point. */
__kernel void leafHeadScatter(__global const ulong* K, ulong n, uint shift, ulong per, ulong runs,
                              __global const ulong* offsets, __global ulong* U, __global uint* first_point) {
  const ulong r = get_global_id(0);
  if (r >= runs) return;
  const ulong e = min(n, (r + 1) * per);
  ulong at = offsets[r];
  for (ulong i = r * per; i < e; ++i)
    if (pgIsLeafHead(K, i, shift)) {
      U[at] = (K[i] >> shift) << shift;
      first_point[at++] = (uint)i;
    }
}

/* λ_j: the level of the LCA of leaves j and j + 1 (−1 for the last leaf). */
inline int pgLambda(__global const ulong* U, ulong m, ulong j) {
  return j + 1 < m ? pgOctreeCommonLevel(U[j], U[j + 1]) : -1;
}

/* One step of the walk over the internal nodes ending at leaf j, deepest
 * first: from the node whose first leaf is *f to the next one. Returns its
 * level (and moves *f to its first leaf), or −1 when there is none. */
inline int pgWalkStep(__global const ulong* U, ulong j, int stop, ulong* f) {
  if (*f == 0) return -1;
  const int g = pgOctreeCommonLevel(U[*f - 1], U[j]);
  if (g <= stop) return -1;
  *f = pgLowerBound(U, 0, *f, pgOctreeCellBegin(g, pgOctreePrefix(U[j], g)));
  return g;
}

/* emitted[j] = 1 + the internal nodes ending at leaf j; emitted[m] = 0. */
__kernel void compressedCount(__global const ulong* U, ulong m, __global uint* emitted) {
  const ulong j = get_global_id(0);
  if (j == 0) emitted[m] = 0;
  if (j >= m) return;
  const int stop = pgLambda(U, m, j);
  ulong f = j;
  uint c = 1;
  while (pgWalkStep(U, j, stop, &f) >= 0) ++c;
  emitted[j] = c;
}

/* Leaf j then its internal nodes, deepest first, from position[j]. */
__kernel void compressedWrite(__global const ulong* U, ulong m, __global const uint* first_point,
                              __global const uint* position, int depth_limit, __global uchar* level,
                              __global ulong* prefix, __global uint* begin, __global uint* end) {
  const ulong j = get_global_id(0);
  if (j >= m) return;
  const uint shift = pgOctreeShift(depth_limit);
  ulong at = position[j];
  level[at] = (uchar)depth_limit;
  prefix[at] = U[j] >> shift;
  begin[at] = first_point[j];
  end[at] = first_point[j + 1];
  ++at;
  const int stop = pgLambda(U, m, j);
  ulong f = j;
  int g;
  while ((g = pgWalkStep(U, j, stop, &f)) >= 0) {
    level[at] = (uchar)g;
    prefix[at] = pgOctreePrefix(U[j], g);
    begin[at] = first_point[f];
    end[at] = first_point[j + 1];
    ++at;
  }
}

/* Parents: the next node emitted at the same leaf, or for the last one the
 * LCA node at level λ_j, found among the nodes of the leaf it ends at. */
__kernel void compressedParents(__global const ulong* U, ulong m, __global const uint* position,
                                __global const uint* emitted, __global const uchar* level, __global uint* parent) {
  const ulong j = get_global_id(0);
  if (j >= m) return;
  const ulong last = position[j] + emitted[j] - 1;
  for (ulong at = position[j]; at < last; ++at) parent[at] = (uint)(at + 1);
  const int up = pgLambda(U, m, j);
  if (up < 0) {
    parent[last] = PG_NONE;
    return;
  }
  const ulong end_key = pgOctreeCellEnd(up, pgOctreePrefix(U[j], up));
  const ulong k = pgLowerBound(U, j, m, end_key) - 1;
  uint found = PG_NONE;
  for (ulong at = position[k] + 1; at < position[k] + emitted[k]; ++at)
    if (level[at] == up) found = (uint)at;
  parent[last] = found;
}

/* Child counts: one increment per node with a parent (counts are order-free). */
__kernel void countChildren(__global const uint* parent, ulong total, __global uint* counts) {
  const ulong x = get_global_id(0);
  if (x < total && parent[x] != PG_NONE) atomic_inc(&counts[parent[x]]);
}

__kernel void narrowCounts(__global const uint* counts, ulong total, __global uchar* child_count) {
  const ulong x = get_global_id(0);
  if (x < total) child_count[x] = (uchar)counts[x];
}

/* grow[x] = 1 + the chain nodes after node x (up to level 0 above the root); grow[total] = 0. */
__kernel void chainGrow(__global const uchar* level, __global const uint* parent, ulong total, __global uint* grow) {
  const ulong x = get_global_id(0);
  if (x == 0) grow[total] = 0;
  if (x >= total) return;
  const int up = parent[x] == PG_NONE ? -1 : (int)level[parent[x]];
  grow[x] = (uint)((int)level[x] - up);
}

/* Node x and its chain nodes at moved[x] in the full tree. */
__kernel void chainWrite(__global const uchar* level, __global const ulong* prefix, __global const uint* parent,
                         __global const uint* begin, __global const uint* end, __global const uchar* child_count,
                         __global const uint* grow, __global const uint* moved, ulong total, __global uchar* f_level,
                         __global ulong* f_prefix, __global uint* f_parent, __global uint* f_begin,
                         __global uint* f_end, __global uchar* f_child_count, __global uchar* f_chain) {
  const ulong x = get_global_id(0);
  if (x >= total) return;
  const ulong at = moved[x];
  const uint chains = grow[x] - 1;
  const uint up = parent[x] == PG_NONE ? PG_NONE : moved[parent[x]];
  for (uint c = 0; c <= chains; ++c) {
    f_level[at + c] = (uchar)(level[x] - c);
    f_prefix[at + c] = prefix[x] >> (3 * c);
    f_begin[at + c] = begin[x];
    f_end[at + c] = end[x];
    f_child_count[at + c] = c == 0 ? child_count[x] : 1;
    f_chain[at + c] = c == 0 ? 0 : 1;
    f_parent[at + c] = c < chains ? (uint)(at + c + 1) : up;
  }
}

/* ---- top-down (§5) ------------------------------------------------------------ */

/* flags[j] = 1 iff frontier node j splits (more than leaf_size points, above
 * the depth limit, and in data mode not all its points equal); flags[count]
 * = 0. Data mode also writes the node's point bounds (lo x y z, hi x y z). */
__kernel void topDownFlags(__global const coord_t* points, __global const uint* ai, __global const uint* fbegin,
                           __global const uint* fend, ulong count, ulong leaf_size, int l, int depth_limit, int data,
                           __global uint* flags, __global double* bounds) {
  const ulong j = get_global_id(0);
  if (j == 0) flags[count] = 0;
  if (j >= count) return;
  const ulong b = fbegin[j], e = fend[j];
  int split = e - b > leaf_size && l < depth_limit;
  if (split && data) {
    double lo[3], hi[3];
    for (int a = 0; a < 3; ++a) lo[a] = hi[a] = pgCoord(points, ai[b], a);
    for (ulong p = b + 1; p < e; ++p)
      for (int a = 0; a < 3; ++a) {
        const double v = pgCoord(points, ai[p], a);
        lo[a] = v < lo[a] ? v : lo[a];
        hi[a] = hi[a] < v ? v : hi[a];
      }
    for (int a = 0; a < 3; ++a) {
      bounds[6 * j + a] = lo[a];
      bounds[6 * j + 3 + a] = hi[a];
    }
    split = hi[0] > lo[0] || hi[1] > lo[1] || hi[2] > lo[2];
  }
  flags[j] = split ? 1u : 0u;
}

/* Stable partition of [b, e) from (sk, si) into (dk, di), lower side first,
 * by the key bit key_shift + axis (cube) or by coordinate > centre (data);
 * returns the first upper position. One pass: the lower side is written
 * forwards from b, the upper side backwards from e, then reversed in place —
 * one read of each coordinate, and no counting loop for PoCL to turn into
 * vector gathers (the hot spot of the counting loop under PoCL, measured). */
inline ulong pgPartition(__global const coord_t* points, int data, uint key_shift, int axis, double centre,
                         __global const ulong* sk, __global const uint* si, __global ulong* dk, __global uint* di,
                         ulong b, ulong e) {
  const uint bit = key_shift + (uint)axis;
  ulong lo = b, hi = e;
  for (ulong j = b; j < e; ++j) {
    const int upper = data ? pgCoord(points, si[j], axis) > centre : (int)((sk[j] >> bit) & 1);
    const ulong at = upper ? --hi : lo++;
    dk[at] = sk[j];
    di[at] = si[j];
  }
  for (ulong x = lo, y = e; x + 1 < y; ++x) { /* the upper side back in input order */
    --y;
    const ulong k = dk[x];
    const uint i = di[x];
    dk[x] = dk[y];
    di[x] = di[y];
    dk[y] = k;
    di[y] = i;
  }
  return lo;
}

/* Splits frontier node j (frontier ids from frontier_first) into its 8
 * children at next_first + 8 · ranks[j]: three stable binary partitions
 * A → B, B → A, A → B, then B → A. Writes for every frontier node its
 * first_child (PG_NONE when it does not split) and, data mode, its split
 * centre (NaN for leaves) and axes; for every child its point range, prefix
 * and parent. */
__kernel void topDownSplit(__global const coord_t* points, __global ulong* ak, __global uint* ai, __global ulong* bk,
                           __global uint* bi, __global const uint* fbegin, __global const uint* fend,
                           __global const ulong* fprefix, __global const uint* flags, __global const uint* ranks,
                           __global const double* bounds, ulong count, int l, int data, ulong frontier_first,
                           ulong next_first, __global uint* first_child, __global double* centre_out,
                           __global uchar* axes_out, __global uint* cbegin, __global uint* cend,
                           __global ulong* cprefix, __global uint* cparent) {
  const ulong j = get_global_id(0);
  if (j >= count) return;
  if (!flags[j]) {
    first_child[j] = PG_NONE;
    if (data) {
      for (int a = 0; a < 3; ++a) centre_out[3 * j + a] = as_double(0x7ff8000000000000UL); /* quiet NaN */
      axes_out[j] = 0;
    }
    return;
  }
  const ulong b = fbegin[j], e = fend[j];
  const ulong c0 = 8 * (ulong)ranks[j];
  int axes[3] = {2, 1, 0};
  double centre[3] = {0, 0, 0};
  if (data) {
    double ext[3];
    for (int a = 0; a < 3; ++a) {
      ext[a] = bounds[6 * j + 3 + a] - bounds[6 * j + a];
      centre[a] = (bounds[6 * j + a] + bounds[6 * j + 3 + a]) * 0.5;
    }
    axes[0] = 0;
    axes[1] = 1;
    axes[2] = 2;
    for (int x = 1; x < 3; ++x) /* stable insertion sort, longest extent first */
      for (int y = x; y > 0 && ext[axes[y - 1]] < ext[axes[y]]; --y) {
        const int t = axes[y - 1];
        axes[y - 1] = axes[y];
        axes[y] = t;
      }
    for (int a = 0; a < 3; ++a) centre_out[3 * j + a] = centre[a];
    axes_out[j] = (uchar)(axes[0] | axes[1] << 2 | axes[2] << 4);
  }
  const uint key_shift = pgOctreeShift(l + 1);
  ulong cut[9];
  cut[0] = b;
  cut[8] = e;
  cut[4] = pgPartition(points, data, key_shift, axes[0], centre[axes[0]], ak, ai, bk, bi, b, e);
  for (int h = 0; h < 2; ++h)
    cut[2 + 4 * h] =
        pgPartition(points, data, key_shift, axes[1], centre[axes[1]], bk, bi, ak, ai, cut[4 * h], cut[4 * h + 4]);
  for (int q = 0; q < 4; ++q)
    cut[1 + 2 * q] =
        pgPartition(points, data, key_shift, axes[2], centre[axes[2]], ak, ai, bk, bi, cut[2 * q], cut[2 * q + 2]);
  for (ulong p = b; p < e; ++p) {
    ak[p] = bk[p];
    ai[p] = bi[p];
  }
  first_child[j] = (uint)(next_first + c0);
  for (uint d = 0; d < 8; ++d) {
    cbegin[c0 + d] = (uint)cut[d];
    cend[c0 + d] = (uint)cut[d + 1];
    cprefix[c0 + d] = fprefix[j] * 8 + d;
    cparent[c0 + d] = (uint)(frontier_first + j);
  }
}

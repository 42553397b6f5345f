/* octree_queries.cl — the opencl twin of query_impl.hpp (seed 004 §4
 * "queries": point location; the k-nearest-neighbour search the seed's
 * N-body motivation needs) and of the point generators (points.h). One work
 * item answers one query with the serial twin's logic: locate descends by key
 * digits or split planes; kNN is the same depth-first branch and bound,
 * nearest child first, over cell boxes widened by side·2^-40, with the best
 * list kept sorted by (distance², index) in the caller's output rows. Its
 * answer is the unique k smallest (distance², index) pairs, computed in double
 * without contraction, so it equals the serial answer bit for bit.
 * Built with -DPG_COORD_T=<float|double> (the caller's points).
 */
#include "octree/keys.h"
#include "octree/points.h"

#ifndef PG_COORD_T
#define PG_COORD_T double
#endif
typedef PG_COORD_T coord_t;

#define PG_NONE 0xffffffffu
/* Depth-first stack bound: each of at most 21 internal levels pops one node
 * and pushes at most 8. */
#define PG_KNN_STACK 176

__kernel void generatePoints(int distribution, ulong seed, ulong first, ulong count, __global double* xyz) {
  const ulong i = get_global_id(0);
  if (i >= count) return;
  double p[3];
  pgPointsGenerate(distribution, seed, first + i, p);
  for (int a = 0; a < 3; ++a) xyz[3 * i + a] = p[a];
}

/* locateOne of query_impl.hpp for queries q[3·i ..]. */
__kernel void locate(__global const uint* first_child, __global const uchar* level,
                     __global const uchar* split_axes, __global const double* split_center, int data, double min_x,
                     double min_y, double min_z, double side, __global const double* q, ulong m, __global uint* out) {
  const ulong i = get_global_id(0);
  if (i >= m) return;
  const double p[3] = {q[3 * i], q[3 * i + 1], q[3 * i + 2]};
  if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
    out[i] = PG_NONE;
    return;
  }
  uint node = 0;
  if (data) {
    while (first_child[node] != PG_NONE) {
      const uchar axes = split_axes[node];
      uint d = 0;
      for (int pass = 0; pass < 3; ++pass) {
        const int axis = (axes >> (2 * pass)) & 3;
        d = d << 1 | (p[axis] > split_center[3 * node + axis] ? 1u : 0u);
      }
      node = first_child[node] + d;
    }
    out[i] = node;
    return;
  }
  const double lo[3] = {min_x, min_y, min_z};
  for (int a = 0; a < 3; ++a)
    if (!(p[a] >= lo[a] && (p[a] - lo[a] < side || (side == 0 && p[a] == lo[a])))) {
      out[i] = PG_NONE;
      return;
    }
  const ulong key = pgOctreeKey(p[0], p[1], p[2], min_x, min_y, min_z, side);
  while (first_child[node] != PG_NONE) node = first_child[node] + pgOctreeDigit(key, level[node] + 1);
  out[i] = node;
}

typedef struct {
  double md;
  uint node;
  double lo[3];
} PgVisit;

/* (d2, index) < (d2', index'): the order of the answers. */
inline int pgCandidateLess(double d2, uint index, double od2, uint oindex) {
  return d2 < od2 || (d2 == od2 && index < oindex);
}

/* k nearest points of query i into out[i·k ..] and dist2[i·k ..] (padding:
 * PG_NONE and +inf). width[l] = side·2^-l for l = 0..22 (the host's ldexp). */
__kernel void knn(__global const uint* first_child, __global const uchar* level, __global const uint* begin,
                  __global const uint* end, __global const uint* order, __global const coord_t* points,
                  __global const double* width, double slack, double min_x, double min_y, double min_z,
                  __global const double* queries, ulong m, uint k, __global uint* out, __global double* dist2) {
  const ulong i = get_global_id(0);
  if (i >= m) return;
  const double q[3] = {queries[3 * i], queries[3 * i + 1], queries[3 * i + 2]};
  __global uint* best_index = out + i * k;
  __global double* best_d2 = dist2 + i * k;
  uint size = 0;
  PgVisit stack[PG_KNN_STACK];
  int top = 0;
  /* A query with a NaN or infinite coordinate has no nearest points: all padding. */
  const int finite = isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]);
  stack[0].node = 0;
  stack[0].lo[0] = min_x;
  stack[0].lo[1] = min_y;
  stack[0].lo[2] = min_z;
  stack[0].md = pgCornerDist2(stack[0].lo, width[0], slack, q);
  top = finite ? 1 : 0;
  while (top > 0) {
    const PgVisit v = stack[--top];
    if (size == k && v.md > best_d2[k - 1]) continue;
    const uint fc = first_child[v.node];
    if (fc == PG_NONE) {
      for (uint j = begin[v.node]; j < end[v.node]; ++j) {
        const uint idx = order[j];
        const double dx = (double)points[3 * (ulong)idx] - q[0];
        const double dy = (double)points[3 * (ulong)idx + 1] - q[1];
        const double dz = (double)points[3 * (ulong)idx + 2] - q[2];
        const double d2 = dx * dx + dy * dy + dz * dz;
        if (size == k && !pgCandidateLess(d2, idx, best_d2[k - 1], best_index[k - 1])) continue;
        uint at = 0; /* upper bound: the first entry greater than (d2, idx) */
        while (at < size && !pgCandidateLess(d2, idx, best_d2[at], best_index[at])) ++at;
        if (size == k) --size;
        for (uint x = size; x > at; --x) {
          best_d2[x] = best_d2[x - 1];
          best_index[x] = best_index[x - 1];
        }
        best_d2[at] = d2;
        best_index[at] = idx;
        ++size;
      }
      continue;
    }
    const double half_width = width[level[v.node] + 1];
    PgVisit kids[8];
    int count = 0;
    for (uint d = 0; d < 8; ++d) {
      const uint ch = fc + d;
      if (begin[ch] == end[ch]) continue;
      kids[count].node = ch;
      for (int a = 0; a < 3; ++a) kids[count].lo[a] = v.lo[a] + (((d >> a) & 1) ? half_width : 0.0);
      kids[count].md = pgCornerDist2(kids[count].lo, half_width, slack, q);
      ++count;
    }
    for (int x = 1; x < count; ++x) /* farthest first, so the nearest pops first; ties: lower id first */
      for (int y = x; y > 0 && (kids[y - 1].md < kids[y].md ||
                                (kids[y - 1].md == kids[y].md && kids[y - 1].node < kids[y].node));
           --y) {
        const PgVisit t = kids[y - 1];
        kids[y - 1] = kids[y];
        kids[y] = t;
      }
    for (int x = 0; x < count; ++x) stack[top++] = kids[x];
  }
  for (uint j = size; j < k; ++j) {
    best_index[j] = PG_NONE;
    best_d2[j] = as_double(0x7ff0000000000000UL); /* +inf */
  }
}

/* Sorts rows d2[b..e), index[b..e) by (d2, index) in place: heapsort, so a
 * row of any length needs no scratch. The pairs are distinct (one per
 * point), so the order is unique: the serial twin's std::sort gives it too. */
inline void pgSortRow(__global double* d2, __global uint* index, ulong b, ulong e) {
  const ulong n = e - b;
  for (ulong start = n / 2; start-- > 0;) {
    ulong root = start;
    for (ulong child; (child = 2 * root + 1) < n; root = child) {
      if (child + 1 < n && pgCandidateLess(d2[b + child], index[b + child], d2[b + child + 1], index[b + child + 1]))
        ++child;
      if (!pgCandidateLess(d2[b + root], index[b + root], d2[b + child], index[b + child])) break;
      const double td = d2[b + root];
      const uint ti = index[b + root];
      d2[b + root] = d2[b + child];
      index[b + root] = index[b + child];
      d2[b + child] = td;
      index[b + child] = ti;
    }
  }
  for (ulong last = n; last-- > 1;) {
    double td = d2[b];
    uint ti = index[b];
    d2[b] = d2[b + last];
    index[b] = index[b + last];
    d2[b + last] = td;
    index[b + last] = ti;
    ulong root = 0;
    for (ulong child; (child = 2 * root + 1) < last; root = child) {
      if (child + 1 < last && pgCandidateLess(d2[b + child], index[b + child], d2[b + child + 1], index[b + child + 1]))
        ++child;
      if (!pgCandidateLess(d2[b + root], index[b + root], d2[b + child], index[b + child])) break;
      td = d2[b + root];
      ti = index[b + root];
      d2[b + root] = d2[b + child];
      index[b + root] = index[b + child];
      d2[b + child] = td;
      index[b + child] = ti;
    }
  }
}

/* Radius (box = 0: q holds lo x y z, r2 unused) or box (box = 1: q[6i..]
 * holds lo then hi) query i: the depth-first descent of knn pruned by the
 * ball or the closed box against the widened cell boxes. Without offsets it
 * writes the number of points found to counts[i] (counts[m] = 0 for the
 * scan's total); with offsets it writes them at offsets[i] and sorts the row
 * by (distance², index) (radius) or by index (box: distances all 0). */
__kernel void rangeQuery(__global const uint* first_child, __global const uchar* level, __global const uint* begin,
                         __global const uint* end, __global const uint* order, __global const coord_t* points,
                         __global const double* width, double slack, double min_x, double min_y, double min_z,
                         __global const double* queries, ulong m, int box, double r2, __global ulong* counts,
                         __global const ulong* offsets, __global uint* out_index, __global double* out_d2) {
  const ulong i = get_global_id(0);
  if (i == 0 && !offsets) counts[m] = 0;
  if (i >= m) return;
  double q[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    q[a] = queries[(box ? 6 : 3) * i + a];
    hi[a] = box ? queries[6 * i + 3 + a] : 0.0;
  }
  ulong found = 0;
  const ulong at = offsets ? offsets[i] : 0;
  if (box || r2 >= 0) { /* !(radius >= 0) finds nothing; r2 is NaN then */
    PgVisit stack[PG_KNN_STACK];
    stack[0].node = 0;
    stack[0].lo[0] = min_x;
    stack[0].lo[1] = min_y;
    stack[0].lo[2] = min_z;
    int top = 1;
    while (top > 0) {
      const PgVisit v = stack[--top];
      const uint node = v.node;
      if (begin[node] == end[node]) continue;
      const double w = width[level[node]];
      if (box) {
        int overlap = 1;
        for (int a = 0; a < 3; ++a) overlap = overlap && v.lo[a] - slack <= hi[a] && q[a] <= v.lo[a] + w + slack;
        if (!overlap) continue;
      } else if (pgCornerDist2(v.lo, w, slack, q) > r2) {
        continue;
      }
      const uint fc = first_child[node];
      if (fc != PG_NONE) {
        const double half_width = width[level[node] + 1];
        for (uint d = 0; d < 8; ++d) {
          stack[top].node = fc + d;
          for (int a = 0; a < 3; ++a) stack[top].lo[a] = v.lo[a] + (((d >> a) & 1) ? half_width : 0.0);
          ++top;
        }
        continue;
      }
      for (uint j = begin[node]; j < end[node]; ++j) {
        const uint idx = order[j];
        double p[3];
        for (int a = 0; a < 3; ++a) p[a] = (double)points[3 * (ulong)idx + a];
        double d2 = 0;
        int inside;
        if (box) {
          inside = 1;
          for (int a = 0; a < 3; ++a) inside = inside && q[a] <= p[a] && p[a] <= hi[a];
        } else {
          const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
          d2 = dx * dx + dy * dy + dz * dz;
          inside = d2 <= r2;
        }
        if (!inside) continue;
        if (offsets) {
          out_index[at + found] = idx;
          out_d2[at + found] = d2;
        }
        ++found;
      }
    }
  }
  if (offsets) pgSortRow(out_d2, out_index, at, at + found);
  else counts[i] = found;
}

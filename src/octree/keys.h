/* keys.h — Morton keys and octree cells, shared by C++ and OpenCL C (C subset,
 * common/clc.h; STYLE.md practice 2), so the serial, cpu and a later opencl
 * stage compute the same keys bit for bit.
 *
 * Paper: Ajmera, Goradia, Chandran, Aluru, "Fast, parallel, GPU-based
 * construction of space filling curves and octrees"
 * (shared/seeds/004_ce32dc12e32b896e.txt), §3: a point's cell at resolution k
 * is (⌊2^k Px/D⌋, ⌊2^k Py/D⌋, ⌊2^k Pz/D⌋), its SFC index interleaves those
 * bits, the parent drops the lowest 3 bits, containment is a prefix test and
 * the LCA is the longest common prefix of a multiple of 3 bits (§4 queries).
 *
 * procgen's contract (issue 18 point 8):
 *   - the root cube is [min, min + side)^3, side = the bounding box's largest
 *     extent; each axis is quantized in DOUBLE precision to 21 bits:
 *       q = min(⌊(p − min) / side · 2^21⌋, 2^21 − 1)   (q = 0 when side = 0);
 *   - key bit 3i is x bit i, 3i+1 is y bit i, 3i+2 is z bit i (63 bits);
 *   - a cell is (level l, prefix); root level 0; prefix = key >> 3·(21 − l);
 *     child digit d of a cell = x | y << 1 | z << 2 of the next bit.
 * Double precision needs cl_khr_fp64 in OpenCL C (PoCL and every desktop GPU
 * driver of the last decade have it); integer functions need nothing.
 */
#ifndef PROCGEN_OCTREE_KEYS_H
#define PROCGEN_OCTREE_KEYS_H

#include "common/clc.h"

#ifdef __OPENCL_C_VERSION__
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PG_CLZ64(x) ((pg_i32)clz(x))
#else
#define PG_CLZ64(x) ((pg_i32)__builtin_clzll(x))
#endif

#define PG_OCTREE_LEVELS 21
#define PG_OCTREE_AXIS_CELLS 2097152u /* 2^21 */

/* The 21 low bits of v spread to bits 0, 3, 6, …, 60. */
PROCGEN_FN pg_u64 pgOctreeSpread(pg_u32 v) {
  pg_u64 x = (pg_u64)(v & 0x1fffffu);
  x = (x | (x << 32)) & 0x1f00000000ffffULL;
  x = (x | (x << 16)) & 0x1f0000ff0000ffULL;
  x = (x | (x << 8)) & 0x100f00f00f00f00fULL;
  x = (x | (x << 4)) & 0x10c30c30c30c30c3ULL;
  x = (x | (x << 2)) & 0x1249249249249249ULL;
  return x;
}

/* Inverse of pgOctreeSpread: bits 0, 3, 6, … gathered into 21 low bits. */
PROCGEN_FN pg_u32 pgOctreeCompact(pg_u64 x) {
  x &= 0x1249249249249249ULL;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ULL;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00fULL;
  x = (x ^ (x >> 8)) & 0x1f0000ff0000ffULL;
  x = (x ^ (x >> 16)) & 0x1f00000000ffffULL;
  x = (x ^ (x >> 32)) & 0x1fffffULL;
  return (pg_u32)x;
}

PROCGEN_FN pg_u64 pgOctreeEncode(pg_u32 qx, pg_u32 qy, pg_u32 qz) {
  return pgOctreeSpread(qx) | (pgOctreeSpread(qy) << 1) | (pgOctreeSpread(qz) << 2);
}

/* One axis of a point quantized as the contract says. Values below the cube
 * clamp to 0 and above it to 2^21 − 1 (queries outside the cube are screened
 * before this is used); the comparison form also maps NaN to 0. */
PROCGEN_FN pg_u32 pgOctreeQuantize(double p, double lo, double side) {
  if (!(side > 0.0)) return 0u;
  double t = (p - lo) / side * 2097152.0;
  if (!(t >= 0.0)) return 0u;
  if (t >= 2097151.0) return PG_OCTREE_AXIS_CELLS - 1u;
  return (pg_u32)t; /* t >= 0: truncation is the floor */
}

PROCGEN_FN pg_u64 pgOctreeKey(double x, double y, double z, double min_x, double min_y, double min_z,
                              double side) {
  return pgOctreeEncode(pgOctreeQuantize(x, min_x, side), pgOctreeQuantize(y, min_y, side),
                        pgOctreeQuantize(z, min_z, side));
}

/* Bits below a level-l prefix in a full key. */
PROCGEN_FN pg_u32 pgOctreeShift(pg_i32 level) { return (pg_u32)(3 * (PG_OCTREE_LEVELS - level)); }

PROCGEN_FN pg_u64 pgOctreePrefix(pg_u64 key, pg_i32 level) { return key >> pgOctreeShift(level); }

/* First full key of cell (level, prefix) and the first key after it (2^63 for
 * the last cell of its level: keys use 63 bits, so this never wraps). */
PROCGEN_FN pg_u64 pgOctreeCellBegin(pg_i32 level, pg_u64 prefix) { return prefix << pgOctreeShift(level); }
PROCGEN_FN pg_u64 pgOctreeCellEnd(pg_i32 level, pg_u64 prefix) { return (prefix + 1u) << pgOctreeShift(level); }

/* Child digit (0..7) of `key` below its level-(l − 1) ancestor, l >= 1. */
PROCGEN_FN pg_u32 pgOctreeDigit(pg_u64 key, pg_i32 level) {
  return (pg_u32)((key >> pgOctreeShift(level)) & 7u);
}

/* Deepest level whose cell holds both keys: 21 when equal, else
 * 20 − ⌊h/3⌋ for the highest differing bit h (the LCA of §4). */
PROCGEN_FN pg_i32 pgOctreeCommonLevel(pg_u64 a, pg_u64 b) {
  pg_u64 x = a ^ b;
  if (x == 0) return PG_OCTREE_LEVELS;
  return PG_OCTREE_LEVELS - 1 - (63 - PG_CLZ64(x)) / 3;
}

/* Cell relations of §4 "queries" on (level, prefix) pairs. */
PROCGEN_FN pg_i32 pgOctreeCellContains(pg_i32 outer_level, pg_u64 outer_prefix, pg_i32 inner_level,
                                       pg_u64 inner_prefix) {
  if (inner_level < outer_level) return 0;
  return (inner_prefix >> (pg_u32)(3 * (inner_level - outer_level))) == outer_prefix;
}

/* Level of the least common ancestor of two cells. */
PROCGEN_FN pg_i32 pgOctreeCellLcaLevel(pg_i32 level_a, pg_u64 prefix_a, pg_i32 level_b, pg_u64 prefix_b) {
  pg_i32 common = pgOctreeCommonLevel(pgOctreeCellBegin(level_a, prefix_a), pgOctreeCellBegin(level_b, prefix_b));
  pg_i32 lowest = level_a < level_b ? level_a : level_b;
  return common < lowest ? common : lowest;
}

/* Squared distance from the point q to the box [lo − slack, lo + w + slack] per
 * axis (0 inside), summed in axis order: the pruning bound of the kNN, radius
 * and box descents (serial/cpu query_impl.hpp and the opencl kernels alike). */
PROCGEN_FN double pgCornerDist2(const double* lo, double w, double slack, const double* q) {
  double d2 = 0;
  for (int a = 0; a < 3; ++a) {
    const double b0 = lo[a] - slack, b1 = lo[a] + w + slack;
    const double d = q[a] < b0 ? b0 - q[a] : (q[a] > b1 ? q[a] - b1 : 0.0);
    d2 += d * d;
  }
  return d2;
}

#endif /* PROCGEN_OCTREE_KEYS_H */

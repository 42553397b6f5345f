/* monoids.h — the monoids the scan, reduce and segmented-scan primitives are
 * typed with, in the C subset (clc.h) so one definition serves the serial
 * loop, the oneTBB scan and the OpenCL work-group scan (STYLE.md practice 3,
 * after vello's vello_encoding/src/monoid.rs).
 *
 * Convention: a monoid named pgX has a value type and two functions,
 *   pgXIdentity(void)   the identity e: combine(e, x) = combine(x, e) = x;
 *   pgXCombine(a, b)    associative: combine(combine(a, b), c) = combine(a, combine(b, c)).
 * The OpenCL kernels are compiled with -DPG_MONOID=pgX -DPG_MONOID_T=<type>
 * and reach both functions by token pasting, so adding a monoid here (and its
 * C++ descriptor in primitives.hpp) is all a new scan needs. Combine need not
 * be commutative: every backend combines left to right in index order.
 * All monoids here are integer and wrap modulo 2^bits, so every backend gives
 * bit-identical results.
 */
#ifndef PROCGEN_PRIMITIVES_MONOIDS_H
#define PROCGEN_PRIMITIVES_MONOIDS_H

#include "common/clc.h"

/* Sums: (+, 0) over one scalar type. */
#define PG_SUM_MONOID(Name, T)                                  \
  PROCGEN_FN T Name##Identity(void) { return (T)0; }            \
  PROCGEN_FN T Name##Combine(T a, T b) { return (T)(a + b); }

PG_SUM_MONOID(pgSumU32, pg_u32)
PG_SUM_MONOID(pgSumU64, pg_u64)
PG_SUM_MONOID(pgSumI32, pg_i32)
PG_SUM_MONOID(pgSumI64, pg_i64)

/* Four u64 sums at once: the L-system count pass's (modules, parameters,
 * rewritten, spare) offsets. ulong4 in OpenCL C, a struct of the same layout
 * on the host; .x .y .z .w name the lanes in both. */
#ifdef __OPENCL_C_VERSION__
typedef ulong4 PgU64x4;
#else
typedef struct PgU64x4 {
  pg_u64 x, y, z, w;
} PgU64x4;
#endif

PROCGEN_FN PgU64x4 pgSumU64x4Identity(void) {
  PgU64x4 r;
  r.x = 0;
  r.y = 0;
  r.z = 0;
  r.w = 0;
  return r;
}

PROCGEN_FN PgU64x4 pgSumU64x4Combine(PgU64x4 a, PgU64x4 b) {
  PgU64x4 r;
  r.x = a.x + b.x;
  r.y = a.y + b.y;
  r.z = a.z + b.z;
  r.w = a.w + b.w;
  return r;
}

/* Maximum over u32 (identity 0). */
PROCGEN_FN pg_u32 pgMaxU32Identity(void) { return 0; }
PROCGEN_FN pg_u32 pgMaxU32Combine(pg_u32 a, pg_u32 b) { return a > b ? a : b; }

/* Composition of affine maps x -> a*x + b modulo 2^32, first map first: a
 * non-commutative monoid (a linear recurrence as a scan), which is what the
 * parity tests use to catch any backend that combines out of order. */
typedef struct PgAffineU32 {
  pg_u32 a;
  pg_u32 b;
} PgAffineU32;

PROCGEN_FN PgAffineU32 pgAffineU32Identity(void) {
  PgAffineU32 r;
  r.a = 1;
  r.b = 0;
  return r;
}

/* (f then g)(x) = g(f(x)) = ga*(fa*x + fb) + gb */
PROCGEN_FN PgAffineU32 pgAffineU32Combine(PgAffineU32 f, PgAffineU32 g) {
  PgAffineU32 r;
  r.a = g.a * f.a;
  r.b = g.a * f.b + g.b;
  return r;
}

/* Bitwise (and, or) of u64 keys: the bits on which all keys agree are
 * and == or; the radix sort skips every digit made only of such bits. */
typedef struct PgAndOrU64 {
  pg_u64 all; /* and */
  pg_u64 any; /* or */
} PgAndOrU64;

PROCGEN_FN PgAndOrU64 pgAndOrU64Identity(void) {
  PgAndOrU64 r;
  r.all = ~(pg_u64)0;
  r.any = 0;
  return r;
}

PROCGEN_FN PgAndOrU64 pgAndOrU64Combine(PgAndOrU64 x, PgAndOrU64 y) {
  PgAndOrU64 r;
  r.all = x.all & y.all;
  r.any = x.any | y.any;
  return r;
}

#endif /* PROCGEN_PRIMITIVES_MONOIDS_H */

/* monoids.h — the monoids of parentheses matching and tree bounding boxes,
 * shared by the serial, cpu and OpenCL backends (C subset, clc.h; the .cl
 * kernels in treebox/opencl/ include it).
 *
 * Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes"
 * (shared/seeds/002_db3a77793bbf279e.txt):
 *   §3 bicyclic semigroup  (a, b) = (unmatched closes, unmatched opens);
 *   §4 stack monoid        (a, list of unmatched opens); its combine keeps
 *                          max(0, |l0| - a1) entries of the left list;
 *   §6 boxes               intersection flows down clip groups, union up.
 */
#ifndef PROCGEN_TREEBOX_MONOIDS_H
#define PROCGEN_TREEBOX_MONOIDS_H

#include "common/clc.h"

/* ---- bicyclic semigroup ------------------------------------------------- */

typedef struct PgBic {
  pg_u64 a; /* unmatched closes */
  pg_u64 b; /* unmatched opens */
} PgBic;

PROCGEN_FN PgBic pgBicIdentity(void) {
  PgBic r;
  r.a = 0;
  r.b = 0;
  return r;
}

PROCGEN_FN PgBic pgBicOpen(void) {
  PgBic r;
  r.a = 0;
  r.b = 1;
  return r;
}

PROCGEN_FN PgBic pgBicClose(void) {
  PgBic r;
  r.a = 1;
  r.b = 0;
  return r;
}

/* (a,b) ⊕ (c,d) = (a + c - min(b,c), b + d - min(b,c)) */
PROCGEN_FN PgBic pgBicCombine(PgBic x, PgBic y) {
  pg_u64 m = x.b < y.a ? x.b : y.a;
  PgBic r;
  r.a = x.a + y.a - m;
  r.b = x.b + y.b - m;
  return r;
}

/* ---- stack monoid pieces ------------------------------------------------ */

/* How many entries of the left value's open list survive the right value's
 * unmatched closes: the stack monoid keeps l0[.. max(0, |l0| - a1)] ++ l1. */
PROCGEN_FN pg_u64 pgStackKeep(pg_u64 left_opens, pg_u64 right_closes) {
  return left_opens > right_closes ? left_opens - right_closes : 0;
}

/* Stack-depth change of one element: +1 open, -1 close, 0 otherwise. The
 * branch-free loops read it from a 256-entry table built with this. */
PROCGEN_FN pg_i32 pgParenDelta(pg_u8 symbol, pg_u8 open, pg_u8 close) {
  return (pg_i32)(symbol == open) - (pg_i32)(symbol == close);
}

/* ---- boxes -------------------------------------------------------------- */

typedef struct PgBox {
  float min_x, min_y, min_z;
  float max_x, max_y, max_z;
} PgBox;

/* Identity of union: empty (min = +inf, max = -inf). */
PROCGEN_FN PgBox pgBoxEmpty(void) {
  PgBox r;
  r.min_x = r.min_y = r.min_z = INFINITY;
  r.max_x = r.max_y = r.max_z = -INFINITY;
  return r;
}

/* Identity of intersection: the whole space. */
PROCGEN_FN PgBox pgBoxAll(void) {
  PgBox r;
  r.min_x = r.min_y = r.min_z = -INFINITY;
  r.max_x = r.max_y = r.max_z = INFINITY;
  return r;
}

PROCGEN_FN int pgBoxIsEmpty(PgBox b) {
  return b.min_x > b.max_x || b.min_y > b.max_y || b.min_z > b.max_z;
}

/* Any empty box becomes the canonical empty box, so results compare bit-exact
 * whatever order the operations ran in. */
PROCGEN_FN PgBox pgBoxCanonical(PgBox b) { return pgBoxIsEmpty(b) ? pgBoxEmpty() : b; }

PROCGEN_FN PgBox pgBoxIntersect(PgBox x, PgBox y) {
  PgBox r;
  r.min_x = x.min_x > y.min_x ? x.min_x : y.min_x;
  r.min_y = x.min_y > y.min_y ? x.min_y : y.min_y;
  r.min_z = x.min_z > y.min_z ? x.min_z : y.min_z;
  r.max_x = x.max_x < y.max_x ? x.max_x : y.max_x;
  r.max_y = x.max_y < y.max_y ? x.max_y : y.max_y;
  r.max_z = x.max_z < y.max_z ? x.max_z : y.max_z;
  return pgBoxCanonical(r);
}

/* Union of canonical boxes; the canonical empty box is its identity. */
PROCGEN_FN PgBox pgBoxUnion(PgBox x, PgBox y) {
  PgBox r;
  r.min_x = x.min_x < y.min_x ? x.min_x : y.min_x;
  r.min_y = x.min_y < y.min_y ? x.min_y : y.min_y;
  r.min_z = x.min_z < y.min_z ? x.min_z : y.min_z;
  r.max_x = x.max_x > y.max_x ? x.max_x : y.max_x;
  r.max_y = x.max_y > y.max_y ? x.max_y : y.max_y;
  r.max_z = x.max_z > y.max_z ? x.max_z : y.max_z;
  return r;
}

#endif /* PROCGEN_TREEBOX_MONOIDS_H */

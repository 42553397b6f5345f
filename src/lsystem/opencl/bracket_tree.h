/* bracket_tree.h — queries on the bracket depth tree that DeviceBracketPartners
 * builds (bracket_partners.cpp, kernels in bracket_partners.cl): level 0 is
 * e[0..n], e[k] = number of '[' minus ']' before module k, and the levels
 * above it hold block minima (opencl/min_tree.h). level_info holds the
 * `levels` level offsets into the tree, then the `levels` level lengths.
 * Shared by bracket_partners.cl, cut.cl and scene.cl. OpenCL C only.
 */
#ifndef PROCGEN_LSYSTEM_OPENCL_BRACKET_TREE_H
#define PROCGEN_LSYSTEM_OPENCL_BRACKET_TREE_H

#include "common/clc.h"
#include "opencl/min_tree.h"

PROCGEN_FN PgMinTree pgBracketDepthTree(__global const pg_i64* tree, __global const pg_u64* level_info,
                                        pg_i32 levels) {
  PgMinTree t;
  t.tree = tree;
  t.off = level_info;
  t.len = level_info + levels;
  t.levels = levels;
  return t;
}

/* The partner of module i, whose letter is c (match.h's convention): a ']'
 * matches the largest j <= i with e[j] <= e[i] - 1, a '[' matches m - 1 for
 * the smallest m > i with e[m] <= e[i]; -1 when there is none or c is no
 * bracket. */
PROCGEN_FN pg_i64 pgBracketPartner(const PgMinTree* t, pg_u8 c, pg_u64 i) {
  if (c == ']') return pgPrevAtMost(t, i, t->tree[i] - 1);
  if (c == '[') {
    const pg_i64 m = pgNextAtMost(t, i + 1, t->tree[i]);
    return m < 0 ? -1 : m - 1;
  }
  return -1;
}

/* Where the region a '%' at i removes ends: the ']' closing its branch, which
 * is m - 1 for the smallest m > i with e[m] <= e[i] - 1; -1 when the branch
 * is the top level (the region runs to the end of the string). */
PROCGEN_FN pg_i64 pgCutRegionEnd(const PgMinTree* t, pg_u64 i) {
  const pg_i64 m = pgNextAtMost(t, i + 1, t->tree[i] - 1);
  return m < 0 ? -1 : m - 1;
}

#endif /* PROCGEN_LSYSTEM_OPENCL_BRACKET_TREE_H */

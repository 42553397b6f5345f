/* min_tree.h — "nearest index with value <= t" over an array of heights, by
 * walking a tree of block minima (PG_MIN_BLOCK children per node): up from the
 * start until a block qualifies, then down to the exact index. O(B log_B n)
 * per query, no limit on n.
 *
 * Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes"
 * (shared/seeds/002_db3a77793bbf279e.txt) §5, Figure 2 — the same up-then-down
 * search, over minima of the unclamped depth (opens minus closes) instead of
 * bicyclic values: with h(x) that depth before element x, the open a stack
 * entry at height T came from is the last x before the query with h(x) <= T.
 * Used by treebox/opencl/match_parens.cl (to find the partition holding an
 * incoming stack entry) and lsystem/opencl/bracket_partners.cl.
 * OpenCL C only (global pointers).
 */
#ifndef PROCGEN_OPENCL_MIN_TREE_H
#define PROCGEN_OPENCL_MIN_TREE_H

#include "common/clc.h"

#ifndef PG_MIN_BLOCK
#define PG_MIN_BLOCK 32u
#endif

typedef struct PgMinTree {
  __global const pg_i64* tree; /* every level, concatenated */
  __global const pg_u64* off;  /* level offsets into tree */
  __global const pg_u64* len;  /* level lengths */
  pg_i32 levels;
} PgMinTree;

/* Minimum of src[b .. min(src_n, b + PG_MIN_BLOCK)) — one node of the next level. */
PROCGEN_FN pg_i64 pgMinOfBlock(__global const pg_i64* src, pg_u64 src_n, pg_u64 b) {
  const pg_u64 e = min(src_n, b + PG_MIN_BLOCK);
  pg_i64 m = src[b];
  for (pg_u64 i = b + 1; i < e; ++i) m = min(m, src[i]);
  return m;
}

/* From node p of `level` down to level 0, taking at each level the first
 * (forward) or last (!forward) child whose minimum is <= target; node p's
 * minimum is <= target, so one always exists. The way down of both searches. */
PROCGEN_FN pg_u64 pgDescend(const PgMinTree* t, pg_i32 level, pg_u64 p, pg_i64 target, int forward) {
  while (level > 0) {
    --level;
    const pg_u64 b = p * PG_MIN_BLOCK;
    const pg_u64 e = min(t->len[level], b + PG_MIN_BLOCK);
    if (forward) {
      for (p = b; p < e; ++p)
        if (t->tree[t->off[level] + p] <= target) break;
    } else {
      for (p = e; p-- > b;)
        if (t->tree[t->off[level] + p] <= target) break;
    }
  }
  return p;
}

/* Smallest m >= s with e[m] <= target, or -1. */
PROCGEN_FN pg_i64 pgNextAtMost(const PgMinTree* t, pg_u64 s, pg_i64 target) {
  pg_i32 level = 0;
  pg_u64 pos = s;
  pg_i64 found = -1;
  for (;;) {
    const pg_u64 n = t->len[level];
    if (pos >= n) return -1;
    const pg_u64 block_end = min(n, (pos / PG_MIN_BLOCK + 1) * PG_MIN_BLOCK);
    for (pg_u64 p = pos; p < block_end; ++p)
      if (t->tree[t->off[level] + p] <= target) {
        found = (pg_i64)p;
        break;
      }
    if (found >= 0) break;
    if (level + 1 >= t->levels) return -1;
    pos = pos / PG_MIN_BLOCK + 1;
    ++level;
  }
  return (pg_i64)pgDescend(t, level, (pg_u64)found, target, 1);
}

/* Largest j <= s with e[j] <= target, or -1. */
PROCGEN_FN pg_i64 pgPrevAtMost(const PgMinTree* t, pg_u64 s, pg_i64 target) {
  pg_i32 level = 0;
  pg_u64 pos = s;
  pg_i64 found = -1;
  for (;;) {
    const pg_u64 block_begin = pos / PG_MIN_BLOCK * PG_MIN_BLOCK;
    for (pg_u64 p = pos + 1; p-- > block_begin;)
      if (t->tree[t->off[level] + p] <= target) {
        found = (pg_i64)p;
        break;
      }
    if (found >= 0) break;
    if (level + 1 >= t->levels || pos / PG_MIN_BLOCK == 0) return -1;
    pos = pos / PG_MIN_BLOCK - 1;
    ++level;
  }
  return (pg_i64)pgDescend(t, level, (pg_u64)found, target, 0);
}

#endif /* PROCGEN_OPENCL_MIN_TREE_H */

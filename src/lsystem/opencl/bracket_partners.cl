/* bracket_partners.cl — stage "bracket partners": for every '[' the index of
 * its ']' and for every ']' the index of its '[' (-1 when unmatched; match.h's
 * convention), the hierarchy that bracket-aware context search needs before a
 * step (Lipp et al. §4.2 last paragraph, §5.2).
 *
 * A simple correct method with no depth limit (the Levien stack-monoid kernels
 * of the parentheses issue will replace it): with e[k] = number of '[' minus
 * number of ']' before k (bracketDelta + the exclusive scan of scan.cl; this is
 * Levien §3's bicyclic view, where unmatched closes are new prefix minima),
 *   a ']' at i matches the largest j <= i with e[j] <= e[i] - 1, and
 *   a '[' at i matches m - 1 for the smallest m > i with e[m] <= e[i];
 * no such index means unmatched. Both are "nearest index with value <= t"
 * queries, answered by walking a tree of block minima (minLevel): up from i
 * until a block qualifies, then down to the exact index. The answers equal
 * the textbook stack's, unbalanced input included.
 */
#include "common/clc.h"

#define PG_MIN_BLOCK 32u

__kernel void bracketDelta(__global const pg_u8* symbols, pg_u64 n, __global pg_i64* e) {
  const pg_u64 i = get_global_id(0);
  if (i > n) return;
  pg_i64 d = 0;
  if (i < n) {
    const pg_u8 c = symbols[i];
    d = c == '[' ? 1 : c == ']' ? -1 : 0;
  }
  e[i] = d;
}

/* dst[k] = min(src[k*B .. k*B+B)) */
__kernel void minLevel(__global pg_i64* tree, pg_u64 src_off, pg_u64 src_n, pg_u64 dst_off) {
  const pg_u64 k = get_global_id(0);
  const pg_u64 b = k * PG_MIN_BLOCK;
  if (b >= src_n) return;
  const pg_u64 e = min(src_n, b + PG_MIN_BLOCK);
  pg_i64 m = tree[src_off + b];
  for (pg_u64 i = b + 1; i < e; ++i) m = min(m, tree[src_off + i]);
  tree[dst_off + k] = m;
}

typedef struct PgMinTree {
  __global const pg_i64* tree;
  __global const pg_u64* off; /* level offsets into tree */
  __global const pg_u64* len; /* level lengths */
  pg_i32 levels;
} PgMinTree;


/* Smallest m >= s with e[m] <= t, or -1. */
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
  pg_u64 p = (pg_u64)found;
  while (level > 0) {
    --level;
    const pg_u64 n = t->len[level];
    const pg_u64 b = p * PG_MIN_BLOCK;
    const pg_u64 e = min(n, b + PG_MIN_BLOCK);
    for (p = b; p < e; ++p)
      if (t->tree[t->off[level] + p] <= target) break;
  }
  return (pg_i64)p;
}

/* Largest j <= s with e[j] <= t, or -1. */
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
  pg_u64 p = (pg_u64)found;
  while (level > 0) {
    --level;
    const pg_u64 n = t->len[level];
    const pg_u64 b = p * PG_MIN_BLOCK;
    const pg_u64 e = min(n, b + PG_MIN_BLOCK);
    for (p = e; p-- > b;)
      if (t->tree[t->off[level] + p] <= target) break;
  }
  return (pg_i64)p;
}

/* level_info: `levels` level offsets into tree, then the `levels` level lengths. */
__kernel void bracketPartners(__global const pg_u8* symbols, pg_u64 n, __global const pg_i64* tree,
                              __global const pg_u64* level_info, pg_i32 levels, __global pg_i64* partner) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  PgMinTree t;
  t.tree = tree;
  t.off = level_info;
  t.len = level_info + levels;
  t.levels = levels;
  const pg_u8 c = symbols[i];
  pg_i64 r = -1;
  if (c == ']') {
    r = pgPrevAtMost(&t, i, tree[i] - 1);
  } else if (c == '[') {
    const pg_i64 m = pgNextAtMost(&t, i + 1, tree[i]);
    r = m < 0 ? -1 : m - 1;
  }
  partner[i] = r;
}

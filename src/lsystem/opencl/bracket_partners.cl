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
 * until a block qualifies, then down to the exact index (opencl/min_tree.h,
 * the same search treebox/opencl/match_parens.cl uses to find incoming stack
 * entries). The answers equal the textbook stack's, unbalanced input
 * included.
 */
#include "common/clc.h"
#include "lsystem/opencl/bracket_tree.h" /* the queries, over opencl/min_tree.h (shared with treebox) */

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
  tree[dst_off + k] = pgMinOfBlock(tree + src_off, src_n, b);
}

/* level_info: `levels` level offsets into tree, then the `levels` level lengths. */
__kernel void bracketPartners(__global const pg_u8* symbols, pg_u64 n, __global const pg_i64* tree,
                              __global const pg_u64* level_info, pg_i32 levels, __global pg_i64* partner) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  const PgMinTree t = pgBracketDepthTree(tree, level_info, levels);
  partner[i] = pgBracketPartner(&t, symbols[i], i);
}

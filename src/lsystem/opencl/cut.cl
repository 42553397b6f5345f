/* cut.cl — stage "cut" of a derivation step (cpfg's '%', applied after the
 * rewriting and decomposition passes of paper §4.2): every '%' removes itself
 * and the rest of its branch up to, not including, the ']' that closes the
 * branch, or to the end of the string at top level. The OpenCL twin of
 * cutBranches (serial/rewrite.cpp).
 *
 * With e[k] = number of '[' minus ']' before k (bracket_partners.cl's depth
 * scan and tree of block minima), the ']' closing the branch of a '%' at i is
 * m - 1 for the smallest m > i with e[m] <= e[i] - 1 (no such m: the region
 * runs to the end). Regions are nested or disjoint, so a module is removed
 * when it lies in any: cutMark adds +1 at every region start and -1 at its end
 * (atomics: regions may share an end), an exclusive scan of those marks
 * (scan.cl) gives the number of regions covering each module, and
 * cutCount / cutWrite compact the kept modules and their parameters like a
 * rewriting pass's count and rewrite.
 */
#include "common/clc.h"
#include "lsystem/opencl/bracket_tree.h"
#include "lsystem/opencl/chunked_string.h"
#include "lsystem/opencl/kernel_args.h"

__kernel void zeroInts(__global int* a, pg_u64 n) {
  const pg_u64 i = get_global_id(0);
  if (i < n) a[i] = 0;
}

/* marks[0..n] must be zero. */
__kernel void cutMark(__global const pg_u8* symbols, pg_u64 n, __global const pg_i64* tree,
                      __global const pg_u64* level_info, pg_i32 levels, __global int* marks) {
  const pg_u64 i = get_global_id(0);
  if (i >= n || symbols[i] != '%') return;
  const PgMinTree t = pgBracketDepthTree(tree, level_info, levels);
  const pg_i64 region_end = pgCutRegionEnd(&t, i);
  const pg_u64 end = region_end < 0 ? n : (pg_u64)region_end;
  atomic_inc(&marks[i]);
  atomic_dec(&marks[end]);
}

/* After the exclusive scan of marks[0..n], module k is removed when marks[k + 1] > 0. */
__kernel void cutCount(__global const pg_u64* param_offsets, pg_i32 parametric, pg_u64 n,
                       __global const int* covered, pg_u64 chunk, __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = pgChunkCount(n, chunk);
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    const PgStringView in = pgMakeString(0, param_offsets, 0, n, parametric); /* sizes need the offsets only */
    pg_u64 begin, end;
    pgChunkBounds(c, chunk, n, &begin, &end);
    acc = pgKeptSize(&in, covered, begin, end);
  }
  counts[c] = acc;
}

__kernel void cutWrite(__global const pg_u8* symbols, __global const pg_u64* param_offsets,
                       __global const float* params, pg_i32 parametric, pg_u64 n, __global const int* covered,
                       pg_u64 chunk, __global const ulong4* offsets, __global pg_u8* out_symbols,
                       __global pg_u64* out_offsets, __global float* out_params) {
  const pg_u64 c = get_global_id(0);
  if (c >= pgChunkCount(n, chunk)) return;
  const PgStringView in = pgMakeString(symbols, param_offsets, params, n, parametric);
  PgStringWriter out = pgStringWriter(out_symbols, out_offsets, out_params, parametric, offsets[c]);
  pg_u64 begin, end;
  pgChunkBounds(c, chunk, n, &begin, &end);
  pgWriteKept(&out, &in, covered, begin, end);
}

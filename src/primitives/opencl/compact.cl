/* compact.cl — stream compaction on the device: keep the elements whose flag
 * is set, in index order (primitives.hpp documents the contract).
 *
 * Built with -DPG_COMPACT_T=<uint|ulong>. Count-scan-scatter over runs of
 * `per` consecutive elements per work item (Blelloch 1990, "Prefix sums and
 * their applications", §1.3 "split/pack"): countRuns writes each run's
 * number of kept elements (and 0 past the last run), the host scans them
 * (scan.cl, SumU64), scatterRuns copies each run's kept elements in order
 * from its offset. The total is the scanned entry past the last run.
 */
#ifndef PG_COMPACT_T
#define PG_COMPACT_T uint
#endif
typedef PG_COMPACT_T T;

__kernel void countRuns(__global const uchar* flags, ulong n, ulong per, ulong runs, __global ulong* counts) {
  const ulong i = get_global_id(0);
  if (i > runs) return;
  ulong k = 0;
  const ulong b = i * per;
  const ulong e = min(n, b + per);
  for (ulong j = b; j < e; ++j) k += flags[j] != 0;
  counts[i] = k; /* i == runs: b >= n, so 0 */
}

__kernel void scatterRuns(__global const T* in, __global const uchar* flags, ulong n, ulong per,
                          __global const ulong* offsets, __global T* out) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
  ulong at = offsets[i];
  for (ulong j = b; j < e; ++j)
    if (flags[j]) out[at++] = in[j];
}

/* scan.cl — exclusive prefix sum of PG_SCAN_T (set with -DPG_SCAN_T=..., e.g.
 * ulong4 for the count pass's (modules, params, rewritten) triples, or long for
 * bracket depths), for any n.
 *
 * Paper: Lipp, Wonka, Wimmer §4.2 step 2 ("Scan. We perform a sum-scan
 * operation on this array, in order to calculate offset positions"). Work-
 * efficient multi-level form (Blelloch): scanBlocks scans each block of
 * 2 x work-group-size elements in local memory (up-sweep, down-sweep) and
 * writes each block's total; the host scans the block totals with the same
 * kernels (recursively, until one block remains) and addBlockOffsets adds them
 * back. O(n) work, O(log n) levels; the monoid is (+, 0).
 *
 * On CPU devices (PoCL) the barriers of the work-group scan cost more than
 * the arithmetic, so there the first level is reduce-then-scan over runs of
 * `per` consecutive elements per work item instead: chunkReduce sums each run,
 * the run sums are scanned as above, and chunkScan rescans each run from its
 * offset. Same sums; the host picks the form (scan.cpp).
 */
#ifndef PG_SCAN_T
#define PG_SCAN_T ulong4
#endif
typedef PG_SCAN_T ScanT;

__kernel void scanBlocks(__global ScanT* data, ulong n, __global ScanT* block_sums, int write_sums,
                         __local ScanT* tmp) {
  const size_t lid = get_local_id(0);
  const size_t wg = get_local_size(0);
  const size_t block = get_group_id(0);
  const size_t base = block * 2 * wg;
  const ScanT zero = (ScanT)(0);
  const size_t a = base + lid, b = base + lid + wg;
  tmp[lid] = a < n ? data[a] : zero;
  tmp[lid + wg] = b < n ? data[b] : zero;
  /* up-sweep */
  size_t offset = 1;
  for (size_t d = wg; d > 0; d >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      const size_t ai = offset * (2 * lid + 1) - 1;
      const size_t bi = offset * (2 * lid + 2) - 1;
      tmp[bi] += tmp[ai];
    }
    offset <<= 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    if (write_sums) block_sums[block] = tmp[2 * wg - 1];
    tmp[2 * wg - 1] = zero;
  }
  /* down-sweep */
  for (size_t d = 1; d < 2 * wg; d <<= 1) {
    offset >>= 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      const size_t ai = offset * (2 * lid + 1) - 1;
      const size_t bi = offset * (2 * lid + 2) - 1;
      const ScanT t = tmp[ai];
      tmp[ai] = tmp[bi];
      tmp[bi] += t;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (a < n) data[a] = tmp[lid];
  if (b < n) data[b] = tmp[lid + wg];
}

/* data[i] += offsets[i / block_elems]: the scanned block totals. */
__kernel void addBlockOffsets(__global ScanT* data, ulong n, __global const ScanT* offsets, ulong block_elems) {
  const size_t i = get_global_id(0);
  if (i < n) data[i] += offsets[i / block_elems];
}

/* sums[i] = data[i*per .. min(n, (i+1)*per)) summed. */
__kernel void chunkReduce(__global const ScanT* data, ulong n, ulong per, __global ScanT* sums) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
  ScanT acc = (ScanT)(0);
  for (ulong k = b; k < e; ++k) acc += data[k];
  sums[i] = acc;
}

/* Exclusive scan of each run in place, starting from offsets[i]. */
__kernel void chunkScan(__global ScanT* data, ulong n, ulong per, __global const ScanT* offsets) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
  ScanT acc = offsets[i];
  for (ulong k = b; k < e; ++k) {
    const ScanT t = data[k];
    data[k] = acc;
    acc += t;
  }
}

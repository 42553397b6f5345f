/* radix_sort.cl — stable LSD radix sort on the device, 8-bit digits
 * (primitives.hpp documents the contract; radix_sort.cpp drives it).
 *
 * Built with -DPG_KEY_T=<uint|ulong> and -DPG_HAS_VALUES=<0|1>. The same
 * chunked algorithm as the host twins (primitives/radix_sort_impl.hpp; Satish,
 * Harris, Garland, IPDPS 2009, §4), with a run of `per` consecutive keys per
 * work item as the chunk:
 *   keyBits     (and, or) of each run's keys; reduced on the device
 *               (scan.cl, AndOrU64), they show the digits every key shares,
 *               whose passes the host skips;
 *   histogram   counts[d * runs + r] = keys of run r with digit d;
 *   (scan.cl)   exclusive sum scan of counts, digit-major: every (digit, run)
 *               gets its first output position, which is what keeps a pass
 *               stable;
 *   scatter     each run moves its keys (and values) in order to them.
 * On a CPU device each work item's 256 counters live in private memory; a
 * GPU-tuned form (local-memory histograms, ranked scatter) would replace
 * histogram and scatter, not the host driver.
 */
#include "primitives/monoids.h"

#ifndef PG_KEY_T
#define PG_KEY_T ulong
#endif
#ifndef PG_HAS_VALUES
#define PG_HAS_VALUES 1
#endif
typedef PG_KEY_T K;
#define PG_BUCKETS 256

__kernel void keyBits(__global const K* keys, ulong n, ulong per, __global PgAndOrU64* out) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
  PgAndOrU64 acc = pgAndOrU64Identity();
  for (ulong k = b; k < e; ++k) {
    acc.all &= (ulong)keys[k];
    acc.any |= (ulong)keys[k];
  }
  out[i] = acc;
}

__kernel void histogram(__global const K* keys, ulong n, ulong per, ulong runs, uint shift, __global ulong* counts) {
  const ulong r = get_global_id(0);
  if (r >= runs) return;
  ulong c[PG_BUCKETS];
  for (int d = 0; d < PG_BUCKETS; ++d) c[d] = 0;
  const ulong b = r * per;
  const ulong e = min(n, b + per);
  for (ulong k = b; k < e; ++k) ++c[(keys[k] >> shift) & (PG_BUCKETS - 1)];
  for (int d = 0; d < PG_BUCKETS; ++d) counts[(ulong)d * runs + r] = c[d];
}

__kernel void scatter(__global const K* keys_in, __global const uint* values_in, __global K* keys_out,
                      __global uint* values_out, ulong n, ulong per, ulong runs, uint shift,
                      __global const ulong* offsets) {
  const ulong r = get_global_id(0);
  if (r >= runs) return;
  ulong at[PG_BUCKETS];
  for (int d = 0; d < PG_BUCKETS; ++d) at[d] = offsets[(ulong)d * runs + r];
  const ulong b = r * per;
  const ulong e = min(n, b + per);
  for (ulong k = b; k < e; ++k) {
    const K key = keys_in[k];
    const ulong to = at[(key >> shift) & (PG_BUCKETS - 1)]++;
    keys_out[to] = key;
#if PG_HAS_VALUES
    values_out[to] = values_in[k];
#endif
  }
}

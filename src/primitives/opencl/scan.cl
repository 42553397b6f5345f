/* scan.cl — monoid-typed scan and reduce on the device, any n, optionally
 * segmented (primitives.hpp documents the contract; scan.cpp drives it).
 *
 * Built with -DPG_MONOID=pgX -DPG_MONOID_T=<type> naming a monoid of
 * primitives/monoids.h, and -DPG_SEGMENTED=1 for the segmented form.
 *
 * Paper: Lipp, Wonka, Wimmer §4.2 step 2 (the scan that gives every module
 * its output offset); Blelloch, "Prefix sums and their applications" (1990)
 * for the work-efficient tree scan and the segmented scan as a scan of the
 * lifted monoid (value, head). Reduce-then-scan:
 *   reduceRuns   every work item reduces a run of `per` consecutive elements;
 *   scanBlocks   exclusive work-group scan (up-sweep, down-sweep in local
 *                memory) of the run totals, 2 x work-group size per block,
 *                writing each block's total; the host scans the block totals
 *                with the same kernel, recursively, and
 *   addBlockOffsets  combines them back in;
 *   scanRuns     every work item rescans its run from its scanned total.
 * Runs suit CPU devices (PoCL), where a barrier costs more than the
 * arithmetic; combine is applied in index order throughout, so monoids need
 * not commute. O(n) work, O(log n) launches.
 */
#include "primitives/monoids.h"

#ifndef PG_MONOID
#define PG_MONOID pgSumU32
#define PG_MONOID_T uint
#endif
#ifndef PG_SEGMENTED
#define PG_SEGMENTED 0
#endif

#define PG_CAT_(a, b) a##b
#define PG_CAT(a, b) PG_CAT_(a, b)
typedef PG_MONOID_T T;
#define M_IDENTITY() PG_CAT(PG_MONOID, Identity)()
#define M_COMBINE(a, b) PG_CAT(PG_MONOID, Combine)(a, b)

/* The scanned element: the value, lifted with a head flag when segmented. */
#if PG_SEGMENTED
typedef struct {
  T value;
  uint head;
} E;
PROCGEN_FN E eIdentity(void) {
  E r;
  r.value = M_IDENTITY();
  r.head = 0;
  return r;
}
PROCGEN_FN E eCombine(E a, E b) {
  E r;
  r.value = b.head ? b.value : M_COMBINE(a.value, b.value);
  r.head = a.head | b.head;
  return r;
}
#define HEAD(heads, i) (heads[i] != 0)
#else
typedef T E;
#define eIdentity() M_IDENTITY()
#define eCombine(a, b) M_COMBINE(a, b)
#define HEAD(heads, i) 0
#endif

/* The host's sizeof(E), which it cannot know for device types. */
__kernel void elementSize(__global uint* out) { out[0] = (uint)sizeof(E); }

/* sums[i] = lifted reduction of in[i*per .. min(n, (i+1)*per)). */
__kernel void reduceRuns(__global const T* in, __global const uchar* heads, ulong n, ulong per, __global E* sums) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
  T acc = M_IDENTITY();
#if PG_SEGMENTED
  uint head = 0;
  for (ulong k = b; k < e; ++k) {
    if (HEAD(heads, k)) {
      acc = M_IDENTITY();
      head = 1;
    }
    acc = M_COMBINE(acc, in[k]);
  }
  E r;
  r.value = acc;
  r.head = head;
  sums[i] = r;
#else
  for (ulong k = b; k < e; ++k) acc = M_COMBINE(acc, in[k]);
  sums[i] = acc;
#endif
}

/* The same over already lifted values: one level of a multi-level reduce. */
__kernel void reduceLifted(__global const E* in, ulong n, ulong per, __global E* sums) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (i > 0 && b >= n) return; /* item 0 always writes: the identity when n = 0 */
  const ulong e = min(n, b + per);
  E acc = eIdentity();
  for (ulong k = b; k < e; ++k) acc = eCombine(acc, in[k]);
  sums[i] = acc;
}

/* Exclusive scan of each block of 2 * local size elements of data, in place;
 * block totals to block_sums when write_sums. */
__kernel void scanBlocks(__global E* data, ulong n, __global E* block_sums, int write_sums, __local E* tmp) {
  const size_t lid = get_local_id(0);
  const size_t wg = get_local_size(0);
  const size_t block = get_group_id(0);
  const size_t base = block * 2 * wg;
  const size_t a = base + lid, b = base + lid + wg;
  tmp[lid] = a < n ? data[a] : eIdentity();
  tmp[lid + wg] = b < n ? data[b] : eIdentity();
  size_t offset = 1;
  for (size_t d = wg; d > 0; d >>= 1) { /* up-sweep: left subtree ⊕ right subtree */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      const size_t ai = offset * (2 * lid + 1) - 1;
      const size_t bi = offset * (2 * lid + 2) - 1;
      tmp[bi] = eCombine(tmp[ai], tmp[bi]);
    }
    offset <<= 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    if (write_sums) block_sums[block] = tmp[2 * wg - 1];
    tmp[2 * wg - 1] = eIdentity();
  }
  for (size_t d = 1; d < 2 * wg; d <<= 1) { /* down-sweep: prefix ⊕ left subtree goes right */
    offset >>= 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      const size_t ai = offset * (2 * lid + 1) - 1;
      const size_t bi = offset * (2 * lid + 2) - 1;
      const E t = tmp[ai];
      tmp[ai] = tmp[bi];
      tmp[bi] = eCombine(tmp[bi], t);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (a < n) data[a] = tmp[lid];
  if (b < n) data[b] = tmp[lid + wg];
}

/* data[i] = offsets[i / block_elems] ⊕ data[i]: the scanned block totals. */
__kernel void addBlockOffsets(__global E* data, ulong n, __global const E* offsets, ulong block_elems) {
  const size_t i = get_global_id(0);
  if (i < n) data[i] = eCombine(offsets[i / block_elems], data[i]);
}

/* Scan of each run from its scanned total offsets[i]; in may equal out. */
__kernel void scanRuns(__global const T* in, __global const uchar* heads, __global T* out, ulong n, ulong per,
                       __global const E* offsets, int inclusive) {
  const ulong i = get_global_id(0);
  const ulong b = i * per;
  if (b >= n) return;
  const ulong e = min(n, b + per);
#if PG_SEGMENTED
  T acc = offsets[i].value;
#else
  T acc = offsets[i];
#endif
  for (ulong k = b; k < e; ++k) {
    const T x = in[k];
    if (HEAD(heads, k)) acc = M_IDENTITY();
    if (inclusive) {
      acc = M_COMBINE(acc, x);
      out[k] = acc;
    } else {
      out[k] = acc;
      acc = M_COMBINE(acc, x);
    }
  }
}

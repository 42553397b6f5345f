/* iterate.cl — the chaos game on OpenCL, the divergence-free method of
 * Schied et al., "High Performance Iterated Function Systems"
 * (shared/seeds/003_*.txt §2, §3.1 and Fig. 7), with flam3's semantics
 * (flam3.c flam3_iterate, rect.c iter_thread; FLAM3_SPEC.md "Iteration
 * semantics"). Host driver: iterate.cpp.
 *
 * A buffer of P points is advanced one chaos-game step per launch.
 *  - flameIteratePresorted (no xaos, the paper's method): work-item i applies
 *    the fixed xform whose work-item range holds i (a prefix sum of per-xform
 *    counts, binary-searched) to point φ_t(i), where φ_t is a new bijection of
 *    [0, P) every step, and writes it back in place (φ is a bijection: no
 *    races). φ_t is a 4-round Feistel network on log2 P bits keyed by
 *    Philox(seed, t) on the host — a counter-based permutation instead of the
 *    paper's fixed set of precomputed ones: no tables to store or upload, no
 *    cycle, and a fresh permutation every step.
 *  - xaos: the next xform depends on the point's last one, so the assignment
 *    cannot be fixed. Every point draws its next xform from its last xform's
 *    selection row (flameDrawXforms), the points are grouped by that xform
 *    (flameScanCounts, flameGroupPoints: a counting sort) and work-item i
 *    binary-searches the xform's range in the per-step prefix sum as above
 *    (flameIterateGrouped). Work-items of one xform are again contiguous.
 * Random numbers are Philox streams keyed by (seed, step, point), never by
 * work-item, so the result does not depend on which work-item handled a point.
 * Bad values are replaced by a random point and retried with the same xform
 * up to five times in a row, the fifth kept (flam3_iterate); the final xform
 * is applied to the plotted copy only; opacity weights the plot.
 *
 * Accumulation (rect.c): r, g, b, a += visibility · colour, count +=
 * visibility · 255 into the cell's bucket, either
 *  - PG_FLAME_BANDED=0: directly from the step, atomics at random cells; or
 *  - PG_FLAME_BANDED=1: the plotted steps write one record per work-item, the
 *    records are binned by band of the histogram and added band by band with
 *    the band's cells in cache (the kernels at the end of this file).
 * PG_FLAME_FIXED_POINT=1 sums 64-bit fixed-point integers (atom_add,
 * cl_khr_int64_base_atomics): exact and independent of the order of the
 * additions, so a seed gives the same histogram on every run and both ways
 * of plotting give the same bits. PG_FLAME_FIXED_POINT=0 sums floats
 * (flam3's bucket type): in a fixed order when banded with one work-item per
 * band (reproducible), else by atomic_cmpxchg loops (order-dependent).
 */
#include "flame/opencl/iterate.h"
#include "flame/xform.h"

#ifndef PG_FLAME_BANDED
#define PG_FLAME_BANDED 0
#endif
#ifndef PG_FLAME_FIXED_POINT /* the host always says; this default keeps a plain build valid */
#ifdef cl_khr_int64_base_atomics
#define PG_FLAME_FIXED_POINT 1
#else
#define PG_FLAME_FIXED_POINT 0
#endif
#endif

#if PG_FLAME_FIXED_POINT
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef long PgFlameAccum;
#else
typedef uint PgFlameAccum;
#endif

#define PG_FLAME_GRAIN 16384u /* flam3's CHOOSE_XFORM_GRAIN */
#define PG_FLAME_BAD_RETRIES 5u
#define PG_FLAME_LOCAL_COUNTS 256u /* xaos: xform counts kept per work-group up to this many xforms */

/* ---- the permutation ---------------------------------------------------- */

/* A 32-bit mixer (lowbias32, C. Wellons) as the Feistel round function. */
inline uint flameMix(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* φ(i): a balanced 4-round Feistel network on 2·half_bits bits. */
inline uint flamePermute(uint i, uint half_bits, uint4 keys) {
  const uint mask = (1u << half_bits) - 1u;
  uint left = i >> half_bits, right = i & mask;
  uint k[4] = {keys.x, keys.y, keys.z, keys.w};
  for (int r = 0; r < 4; ++r) {
    const uint next = left ^ (flameMix(right ^ k[r]) & mask);
    left = right;
    right = next;
  }
  return (left << half_bits) | right;
}

/* The last j with start[j] <= i (start[0] = 0, start[count] = P): the xform of work-item i. */
inline uint flameXformOf(__global const uint* start, uint count, uint i) {
  uint lo = 0, hi = count; /* start[lo] <= i < start[hi] */
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) >> 1;
    if (start[mid] <= i) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* ---- accumulation ------------------------------------------------------- */

#if PG_FLAME_FIXED_POINT
inline void flameAdd(__global PgFlameAccum* cell, float value, float scale, uint exclusive) {
  const long units = convert_long_rte(value * scale);
  if (exclusive) *cell += units;
  else atom_add(cell, units);
}
#else
inline void flameAdd(__global PgFlameAccum* cell, float value, float scale, uint exclusive) {
  (void)scale;
  if (exclusive) {
    *cell = as_uint(as_float(*cell) + value);
    return;
  }
  volatile __global uint* word = (volatile __global uint*)cell;
  uint seen = *word;
  for (;;) {
    const uint prior = atomic_cmpxchg(word, seen, as_uint(as_float(seen) + value));
    if (prior == seen) return;
    seen = prior;
  }
}
#endif

/* The histogram cell of world point (x, y), or PG_FLAME_NO_CELL when it is
 * out of view (rect.c iter_thread: rotation about the centre, bounds). */
inline uint flameCellOf(const PgFlameCamera cam, float x, float y) {
  if (cam.rotate) {
    const float dx = x - cam.center_x, dy = y - cam.center_y;
    x = dx * cam.cos_rot - dy * cam.sin_rot + cam.center_x;
    y = dx * cam.sin_rot + dy * cam.cos_rot + cam.center_y;
  }
  /* NaN fails these comparisons too. */
  if (!(x >= cam.x0 && y >= cam.y0 && x <= cam.x1 && y <= cam.y1)) return PG_FLAME_NO_CELL;
  const int ix = (int)((x - cam.x0) * cam.cells_per_x);
  const int iy = (int)((y - cam.y0) * cam.cells_per_y);
  /* flam3 lets x == x1 index one past the row; such points are dropped here. */
  if (ix >= cam.width || iy >= cam.height) return PG_FLAME_NO_CELL;
  return (uint)iy * (uint)cam.width + (uint)ix;
}

/* Adds palette colour `color` × visibility to the bucket of `cell` (rect.c:
 * step mode takes entry ⌊256·color⌋, linear mode blends it with the next). */
inline void flameAccumulate(__global PgFlameAccum* histogram, uint cell, __global const float* palette,
                            uint palette_linear, float color, float visibility, float scale, uint exclusive) {
  const float index = color * 256.0f;
  int ci = (int)index;
  float rgba[4];
  if (palette_linear) {
    float frac;
    if (ci < 0) {
      ci = 0;
      frac = 0.0f;
    } else if (ci >= 255) {
      ci = 254;
      frac = 1.0f;
    } else {
      frac = index - (float)ci;
    }
    for (int k = 0; k < 4; ++k) rgba[k] = palette[4 * ci + k] * (1.0f - frac) + palette[4 * ci + 4 + k] * frac;
  } else {
    ci = ci < 0 ? 0 : (ci > 255 ? 255 : ci);
    for (int k = 0; k < 4; ++k) rgba[k] = palette[4 * ci + k];
  }
  __global PgFlameAccum* bucket = histogram + 5 * (size_t)cell;
  for (int k = 0; k < 4; ++k) flameAdd(bucket + k, visibility * rgba[k], scale, exclusive);
  flameAdd(bucket + 4, visibility * 255.0f, scale, exclusive);
}

/* ---- one chaos-game step ------------------------------------------------ */

/* Where a step's plots go: the histogram, or (banded) one record per work-item. */
#if PG_FLAME_BANDED
typedef PgFlameRecord PgFlamePlotTarget;
#else
typedef PgFlameAccum PgFlamePlotTarget;
#endif

/* Everything a step reads besides the point: the xform tables, the plot. */
#define PG_FLAME_STEP_PARAMS                                                                          \
  __global const PgFlameXform *xforms, __global const PgFlameTerm *terms, __global const float *params, \
      __global const float *visibility, uint final_index, ulong seed, ulong step, uint plot_limit,       \
      __global const float *palette, uint palette_linear, const PgFlameCamera cam,                      \
      __global PgFlamePlotTarget *plot_target, uint record_base, __global uint *bad_values
#define PG_FLAME_STEP_ARGS                                                                              \
  xforms, terms, params, visibility, final_index, seed, step, plot_limit, palette, palette_linear, cam, \
      plot_target, record_base, bad_values

/* Applies xform j to point p (flam3_iterate: bad results are replaced by a
 * random point and retried, the fifth in a row kept), writes it back, and
 * plots it (through the final xform) when p < plot_limit. Banded, a plotted
 * step writes record `record_base + p`: by point, not by work-item, so the
 * records' order (and the order of the float adds) does not depend on which
 * work-item the grouping gave the point. */
inline void flameStep(uint j, uint p, __global PgFlamePoint* points, PG_FLAME_STEP_PARAMS) {
  PgFlameRng rng;
  pgFlameRngInit(&rng, seed, pgFlameStepStream(step, p));
  const PgFlameXform xf = xforms[j];
  PgFlamePoint point = points[p];
  uint bad = 0;
  for (;;) {
    PgFlamePoint q = point;
    if (pgFlameApplyXform(&xf, terms, params, &q, &rng)) {
      point = q;
      break;
    }
    q.x = pgFlameRand11(&rng);
    q.y = pgFlameRand11(&rng);
    point = q;
    if (++bad == PG_FLAME_BAD_RETRIES) break;
  }
  points[p] = point;
  if (bad) atomic_add(bad_values, bad);
  if (plot_limit == 0u) return; /* a fuse step */

  const float vis = visibility[j];
  uint cell = PG_FLAME_NO_CELL;
  PgFlamePoint plotted = point;
  if (p < plot_limit && vis != 0.0f) {
    if (final_index != 0xffffffffu) {
      const PgFlameXform fin = xforms[final_index];
      if (fin.opacity == 1.0f || pgFlameRand01(&rng) < fin.opacity) {
        if (!pgFlameApplyXform(&fin, terms, params, &plotted, &rng)) {
          /* apply_xform's replacement; flam3 plots it and does not count it */
          plotted.x = pgFlameRand11(&rng);
          plotted.y = pgFlameRand11(&rng);
        }
      }
    }
    cell = flameCellOf(cam, plotted.x, plotted.y);
  }
#if PG_FLAME_BANDED
  PgFlameRecord record;
  record.cell = cell;
  record.color = plotted.color;
  record.visibility = vis;
  plot_target[record_base + p] = record;
#else
  (void)record_base;
  if (cell != PG_FLAME_NO_CELL)
    flameAccumulate(plot_target, cell, palette, palette_linear, plotted.color, vis, cam.fixed_scale, 0u);
#endif
}

/* ---- kernels ------------------------------------------------------------- */

/* Start points: uniform in [-1, 1]², colour uniform in [0, 1) (flam3's seed
 * of a sub-batch); last xform 0 (= the weights row). */
__kernel void flameInitPoints(uint point_count, ulong seed, __global PgFlamePoint* points,
                              __global uint* last_xform) {
  const uint p = (uint)get_global_id(0);
  if (p >= point_count) return;
  PgFlameRng rng;
  pgFlameRngInit(&rng, seed, pgFlameStepStream(0, p));
  PgFlamePoint point;
  point.x = pgFlameRand11(&rng);
  point.y = pgFlameRand11(&rng);
  point.color = pgFlameRand01(&rng);
  points[p] = point;
  last_xform[p] = 0u;
}

/* The paper's step: fixed xform per work-item, point through φ_step. */
__kernel void flameIteratePresorted(uint point_count, uint half_bits, uint4 keys, __global const uint* xform_start,
                                    uint xform_count, __global PgFlamePoint* points, PG_FLAME_STEP_PARAMS) {
  const uint i = (uint)get_global_id(0);
  if (i >= point_count) return;
  const uint j = flameXformOf(xform_start, xform_count, i);
  const uint p = flamePermute(i, half_bits, keys);
  flameStep(j, p, points, PG_FLAME_STEP_ARGS);
}

/* The work-group's per-xform counters, cleared, when the genome's xforms fit
 * in local memory (returns whether they do; the kernel then counts there and
 * adds the group's totals to the global counters once). Every work-item of
 * the group must call it: it ends with a barrier. */
inline bool flameClearLocalCounts(__local uint* local_counts, uint xform_count) {
  const bool use_local = xform_count <= PG_FLAME_LOCAL_COUNTS;
  if (use_local)
    for (uint k = (uint)get_local_id(0); k < xform_count; k += (uint)get_local_size(0)) local_counts[k] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  return use_local;
}

/* xaos, 1/3: every point draws its next xform from its last xform's row
 * (row 0, the weights, for all when the genome has no xaos: has_xaos = 0). */
__kernel void flameDrawXforms(uint point_count, ulong seed, ulong step, uint xform_count, uint has_xaos,
                              __global const ushort* selection, __global const uint* last_xform,
                              __global uint* next_xform, __global uint* counts) {
  __local uint local_counts[PG_FLAME_LOCAL_COUNTS];
  const bool use_local = flameClearLocalCounts(local_counts, xform_count);
  const uint lid = (uint)get_local_id(0), lsize = (uint)get_local_size(0);
  const uint p = (uint)get_global_id(0);
  if (p < point_count) {
    PgFlameRng rng;
    pgFlameRngInit(&rng, seed, pgFlameStepStream(step, p | PG_FLAME_DRAW_STREAM));
    const uint row = has_xaos ? last_xform[p] : 0u;
    const uint j = selection[row * PG_FLAME_GRAIN + (pgFlameRandU32(&rng) & (PG_FLAME_GRAIN - 1u))];
    next_xform[p] = j;
    if (use_local) atomic_inc(&local_counts[j]);
    else atomic_inc(&counts[j]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (use_local)
    for (uint k = lid; k < xform_count; k += lsize)
      if (local_counts[k]) atomic_add(&counts[k], local_counts[k]);
}

/* xaos, 2/3: start[j] = Σ counts below j, cursor = start; counts cleared for the next step. */
__kernel void flameScanCounts(uint xform_count, __global uint* counts, __global uint* start, __global uint* cursor) {
  if (get_global_id(0) != 0) return;
  uint sum = 0;
  for (uint j = 0; j < xform_count; ++j) {
    start[j] = sum;
    cursor[j] = sum;
    sum += counts[j];
    counts[j] = 0u;
  }
  start[xform_count] = sum;
}

/* xaos, 3/3a: the points grouped by their next xform (order within a group
 * is arbitrary): the work-group ranks its points per xform in local memory
 * and reserves each xform's slots with one global atomic, so the few global
 * cursors are not fought over point by point. */
__kernel void flameGroupPoints(uint point_count, uint xform_count, __global const uint* next_xform,
                               __global uint* cursor, __global uint* order) {
  __local uint local_counts[PG_FLAME_LOCAL_COUNTS];
  __local uint local_base[PG_FLAME_LOCAL_COUNTS];
  const bool use_local = flameClearLocalCounts(local_counts, xform_count);
  const uint lid = (uint)get_local_id(0), lsize = (uint)get_local_size(0);
  const uint p = (uint)get_global_id(0);
  const uint j = p < point_count ? next_xform[p] : 0u;
  uint rank = 0;
  if (p < point_count) {
    if (use_local) rank = atomic_inc(&local_counts[j]);
    else order[atomic_inc(&cursor[j])] = p;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (use_local)
    for (uint k = lid; k < xform_count; k += lsize)
      local_base[k] = local_counts[k] ? atomic_add(&cursor[k], local_counts[k]) : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (use_local && p < point_count) order[local_base[j] + rank] = p;
}

/* xaos, 3/3b: work-item i applies the xform of its range to the i-th grouped point. */
__kernel void flameIterateGrouped(uint point_count, __global const uint* order, __global const uint* xform_start,
                                  uint xform_count, __global uint* last_xform, __global PgFlamePoint* points,
                                  PG_FLAME_STEP_PARAMS) {
  const uint i = (uint)get_global_id(0);
  if (i >= point_count) return;
  const uint j = flameXformOf(xform_start, xform_count, i);
  const uint p = order[i];
  flameStep(j, p, points, PG_FLAME_STEP_ARGS);
  last_xform[p] = j + 1u;
}

/* ---- banded accumulation (PG_FLAME_BANDED) -------------------------------
 * The plotted steps of a batch leave one record per work-item; the records
 * are binned by band (a band: 2^band_shift consecutive cells, a slab of rows
 * that fits in a core's cache) with a stable counting sort — flameBandCount,
 * flameBandScan, flameBandScatter, one work-item per chunk of
 * PG_FLAME_BIN_CHUNK records, so no atomics — and flameBandAccumulate adds
 * each band's records with the band's cells hot in cache: one work-group per
 * band, and plain adds instead of atomics when the group is one work-item
 * (CPU devices; the group owns its band). Stable: a band's records keep
 * their batch order, so one work-item per band adds every cell's values in
 * (step, work-item) order — the same floats on every run. */

/* Record counts of chunk c per band: matrix[band · chunk_count + c]. */
__kernel void flameBandCount(uint record_count, uint chunk_count, __global const PgFlameRecord* records,
                             uint band_shift, uint band_count, __global uint* matrix) {
  const uint c = (uint)get_global_id(0);
  if (c >= chunk_count) return;
  uint counts[PG_FLAME_MAX_BANDS];
  for (uint b = 0; b < band_count; ++b) counts[b] = 0u;
  const uint end = min(record_count, (c + 1u) * PG_FLAME_BIN_CHUNK);
  for (uint r = c * PG_FLAME_BIN_CHUNK; r < end; ++r) {
    const uint cell = records[r].cell;
    if (cell != PG_FLAME_NO_CELL) ++counts[cell >> band_shift];
  }
  for (uint b = 0; b < band_count; ++b) matrix[b * chunk_count + c] = counts[b];
}

/* The matrix becomes each (band, chunk)'s first slot (band-major exclusive
 * scan); start[b] = the first slot of band b, start[band_count] = the total. */
__kernel void flameBandScan(uint band_count, uint chunk_count, __global uint* matrix, __global uint* start) {
  if (get_global_id(0) != 0) return;
  uint sum = 0;
  for (uint b = 0; b < band_count; ++b) {
    start[b] = sum;
    for (uint c = 0; c < chunk_count; ++c) {
      const uint n = matrix[b * chunk_count + c];
      matrix[b * chunk_count + c] = sum;
      sum += n;
    }
  }
  start[band_count] = sum;
}

/* Moves the records of chunk c to their bands' slots, in order. */
__kernel void flameBandScatter(uint record_count, uint chunk_count, __global const PgFlameRecord* records,
                               uint band_shift, uint band_count, __global const uint* matrix,
                               __global PgFlameRecord* binned) {
  const uint c = (uint)get_global_id(0);
  if (c >= chunk_count) return;
  uint cursor[PG_FLAME_MAX_BANDS];
  for (uint b = 0; b < band_count; ++b) cursor[b] = matrix[b * chunk_count + c];
  const uint end = min(record_count, (c + 1u) * PG_FLAME_BIN_CHUNK);
  for (uint r = c * PG_FLAME_BIN_CHUNK; r < end; ++r) {
    const PgFlameRecord record = records[r];
    if (record.cell != PG_FLAME_NO_CELL) binned[cursor[record.cell >> band_shift]++] = record;
  }
}

/* Adds the records of band get_group_id(0) (binned[start[b] .. start[b+1])). */
__kernel void flameBandAccumulate(__global const uint* start, __global const PgFlameRecord* binned,
                                  __global const float* palette, uint palette_linear, float scale,
                                  __global PgFlameAccum* histogram) {
  const uint band = (uint)get_group_id(0);
  const uint lid = (uint)get_local_id(0), lsize = (uint)get_local_size(0);
  const uint end = start[band + 1];
  const uint exclusive = lsize == 1u; /* the only work-item on this band's cells */
  for (uint r = start[band] + lid; r < end; r += lsize) {
    const PgFlameRecord record = binned[r];
    flameAccumulate(histogram, record.cell, palette, palette_linear, record.color, record.visibility, scale,
                    exclusive);
  }
}

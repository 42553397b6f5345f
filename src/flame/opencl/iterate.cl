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
 * visibility · 255 into the bucket. PG_FLAME_FIXED_POINT=1 adds 64-bit
 * fixed-point integers (atom_add, cl_khr_int64_base_atomics): exact and
 * independent of the order of the additions, so a seed gives the same
 * histogram on every run. PG_FLAME_FIXED_POINT=0 adds floats with
 * atomic_cmpxchg loops (core OpenCL; order-dependent rounding).
 */
#include "flame/opencl/iterate.h"
#include "flame/xform.h"

#ifndef PG_FLAME_FIXED_POINT
#define PG_FLAME_FIXED_POINT 1
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
inline void flameAdd(__global PgFlameAccum* cell, float value, float scale) {
  atom_add(cell, convert_long_rte(value * scale));
}
#else
inline void flameAdd(__global PgFlameAccum* cell, float value, float scale) {
  (void)scale;
  volatile __global uint* word = (volatile __global uint*)cell;
  uint seen = *word;
  for (;;) {
    const uint prior = atomic_cmpxchg(word, seen, as_uint(as_float(seen) + value));
    if (prior == seen) return;
    seen = prior;
  }
}
#endif

/* Plots (x, y, colour) with weight `visibility` (rect.c iter_thread). */
inline void flamePlot(const PgFlameCamera cam, __global const float* palette, uint palette_linear,
                      __global PgFlameAccum* histogram, float x, float y, float color, float visibility) {
  if (cam.rotate) {
    const float dx = x - cam.center_x, dy = y - cam.center_y;
    x = dx * cam.cos_rot - dy * cam.sin_rot + cam.center_x;
    y = dx * cam.sin_rot + dy * cam.cos_rot + cam.center_y;
  }
  /* NaN fails these comparisons too. */
  if (!(x >= cam.x0 && y >= cam.y0 && x <= cam.x1 && y <= cam.y1)) return;
  const int ix = (int)((x - cam.x0) * cam.cells_per_x);
  const int iy = (int)((y - cam.y0) * cam.cells_per_y);
  /* flam3 lets x == x1 index one past the row; such points are dropped here. */
  if (ix >= cam.width || iy >= cam.height) return;

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
  __global PgFlameAccum* bucket = histogram + 5 * ((long)iy * cam.width + ix);
  for (int k = 0; k < 4; ++k) flameAdd(bucket + k, visibility * rgba[k], cam.fixed_scale);
  flameAdd(bucket + 4, visibility * 255.0f, cam.fixed_scale);
}

/* ---- one chaos-game step ------------------------------------------------ */

/* Everything a step reads besides the point: the xform tables, the plot. */
#define PG_FLAME_STEP_PARAMS                                                                          \
  __global const PgFlameXform *xforms, __global const PgFlameTerm *terms, __global const float *params, \
      __global const float *visibility, uint final_index, ulong seed, ulong step, uint plot_limit,       \
      __global const float *palette, uint palette_linear, const PgFlameCamera cam,                      \
      __global PgFlameAccum *histogram, __global uint *bad_values
#define PG_FLAME_STEP_ARGS                                                                              \
  xforms, terms, params, visibility, final_index, seed, step, plot_limit, palette, palette_linear, cam, \
      histogram, bad_values

/* Applies xform j to point p (flam3_iterate: bad results are replaced by a
 * random point and retried, the fifth in a row kept), writes it back, and
 * plots it (through the final xform) when p < plot_limit. */
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

  const float vis = visibility[j];
  if (p >= plot_limit || vis == 0.0f) return;
  if (final_index != 0xffffffffu) {
    const PgFlameXform fin = xforms[final_index];
    if (fin.opacity == 1.0f || pgFlameRand01(&rng) < fin.opacity) {
      PgFlamePoint q = point;
      if (!pgFlameApplyXform(&fin, terms, params, &q, &rng)) {
        /* apply_xform's replacement; flam3 plots it and does not count it */
        q.x = pgFlameRand11(&rng);
        q.y = pgFlameRand11(&rng);
      }
      flamePlot(cam, palette, palette_linear, histogram, q.x, q.y, q.color, vis);
      return;
    }
  }
  flamePlot(cam, palette, palette_linear, histogram, point.x, point.y, point.color, vis);
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

/* xaos, 1/3: every point draws its next xform from its last xform's row
 * (row 0, the weights, for all when the genome has no xaos: has_xaos = 0). */
__kernel void flameDrawXforms(uint point_count, ulong seed, ulong step, uint xform_count, uint has_xaos,
                              __global const ushort* selection, __global const uint* last_xform,
                              __global uint* next_xform, __global uint* counts) {
  __local uint local_counts[PG_FLAME_LOCAL_COUNTS];
  const bool use_local = xform_count <= PG_FLAME_LOCAL_COUNTS;
  const uint lid = (uint)get_local_id(0), lsize = (uint)get_local_size(0);
  if (use_local)
    for (uint k = lid; k < xform_count; k += lsize) local_counts[k] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
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

/* xaos, 3/3a: the points grouped by their next xform (order within a group is arbitrary). */
__kernel void flameGroupPoints(uint point_count, __global const uint* next_xform, __global uint* cursor,
                               __global uint* order) {
  const uint p = (uint)get_global_id(0);
  if (p >= point_count) return;
  order[atomic_inc(&cursor[next_xform[p]])] = p;
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

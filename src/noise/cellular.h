/* cellular.h — cellular (Worley) noise in 2D and 3D.
 *
 * The paper's Voronoi noise (shared/seeds/001_191daa7b81372e37.txt §6, 2D and
 * 3D Voronoi): one feature point per lattice cell, at the cell's centre moved
 * by up to ±a per axis (a = 0.45 · jitter, from hash bits of the cell), and
 * per point the distances F1 ≤ F2 to the nearest two feature points among the
 * 3ᴰ cells around the point's cell (as FastNoiseLite and libnoise search).
 * Returns F1, F2, F2 − F1 or the nearest cell's value, over the Euclidean,
 * squared Euclidean, Manhattan or Chebyshev distance.
 *
 * Range: a distance F is mapped to 2F/U − 1 where U bounds it: F1 is at most
 * the distance to the own cell's point, whose components are ≤ 0.5 + a, and
 * F2 at most the farther of that point and the neighbour across the nearer
 * face (components ≤ 1 + a, then 0.5 + a). So every return lies in [−1, 1]
 * (docs/noise.md, "Range"); the cell value is a hash mapped to [−1, 1).
 *
 * The point arrives split (hash.h): cells c (wrapped per axis when tiled),
 * fractions f in [0, 1); all offsets are small floats.
 *
 * C subset (common/clc.h): compiles as C++ and as OpenCL C.
 */
#ifndef PROCGEN_NOISE_CELLULAR_H
#define PROCGEN_NOISE_CELLULAR_H

#include "common/clc.h"
#include "noise/hash.h"

/* These equal the enumerators of include/procgen/noise.hpp. */
#define PG_CELLULAR_EUCLIDEAN 0
#define PG_CELLULAR_EUCLIDEAN_SQ 1
#define PG_CELLULAR_MANHATTAN 2
#define PG_CELLULAR_CHEBYSHEV 3
#define PG_CELLULAR_F1 0
#define PG_CELLULAR_F2 1
#define PG_CELLULAR_F2_MINUS_F1 2
#define PG_CELLULAR_VALUE 3

#define PG_CELLULAR_MAX_SPREAD 0.45f

/* The distance of offset v (dims components) in `metric`. */
PROCGEN_FN float pgCellularDistance(int dims, int metric, const float* v) {
  float sq = 0.0f, man = 0.0f, cheb = 0.0f;
  for (int d = 0; d < dims; ++d) {
    float a = PG_FABS(v[d]);
    sq += v[d] * v[d];
    man += a;
    cheb = a > cheb ? a : cheb;
  }
  return metric == PG_CELLULAR_EUCLIDEAN ? PG_SQRT(sq)
         : metric == PG_CELLULAR_EUCLIDEAN_SQ ? sq
         : metric == PG_CELLULAR_MANHATTAN ? man
                                             : cheb;
}

/* Feature point offset of a cell along axis d: centre ± spread. */
PROCGEN_FN float pgCellularJitter(pg_u32 cell_hash, int d, float spread) {
  float r = pgNoiseHashToUnit(pgNoiseHash(cell_hash + 0x27d4eb2fu * (pg_u32)(d + 1)));
  return 0.5f + (r * 2.0f - 1.0f) * spread;
}

/* The bound U of F1 (which = 0) or F2 (which = 1), see the header comment. */
PROCGEN_FN float pgCellularBound(int dims, int metric, float spread, int which) {
  float v[4];
  for (int d = 0; d < dims; ++d) v[d] = 0.5f + spread;
  if (which) v[0] = 1.0f + spread;
  return pgCellularDistance(dims, metric, v);
}

/* Cellular noise of one split point in `dims` (2 or 3) dimensions, in [−1, 1].
 * period: per axis 0 or the tile period in cells. */
PROCGEN_FN float pgCellular(int dims, pg_u32 key, const pg_u32* c, const pg_i32* period, const float* f,
                            int metric, int ret, float jitter) {
  float spread = PG_CELLULAR_MAX_SPREAD * jitter;
  float f1 = 1e30f, f2 = 1e30f;
  pg_u32 nearest_hash = 0u;
  int n3 = dims == 2 ? 9 : 27;
  for (int n = 0; n < n3; ++n) {
    int off[3];
    off[0] = n % 3 - 1;
    off[1] = (n / 3) % 3 - 1;
    off[2] = n / 9 - 1;
    pg_u32 cell[4];
    for (int d = 0; d < dims; ++d) cell[d] = pgNoiseWrap(c[d] + (pg_u32)off[d], period[d]);
    pg_u32 h = pgNoiseHashN(key, dims, cell);
    float v[4];
    for (int d = 0; d < dims; ++d) v[d] = (float)off[d] + pgCellularJitter(h, d, spread) - f[d];
    float dist = pgCellularDistance(dims, metric, v);
    if (dist < f1) {
      f2 = f1;
      f1 = dist;
      nearest_hash = h;
    } else if (dist < f2) {
      f2 = dist;
    }
  }
  if (ret == PG_CELLULAR_VALUE) return pgNoiseHashToSigned(pgNoiseHash(nearest_hash ^ 0x5bd1e995u));
  float u1 = pgCellularBound(dims, metric, spread, 0);
  float u2 = pgCellularBound(dims, metric, spread, 1);
  float v = ret == PG_CELLULAR_F1 ? f1 / u1 : ret == PG_CELLULAR_F2 ? f2 / u2 : (f2 - f1) / u2;
  v = v * 2.0f - 1.0f;
  return v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v;
}

#endif /* PROCGEN_NOISE_CELLULAR_H */

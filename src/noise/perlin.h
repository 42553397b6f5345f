/* perlin.h — improved Perlin noise in 2D, 3D and 4D, with analytic gradients.
 *
 * Paper (shared/seeds/001_191daa7b81372e37.txt) §2 and §4: a unit lattice,
 * a pseudo-random gradient per node picked by the chained integer hash
 * (hash.h), the dot products dot_i = (pos − node_i) · grad(node_i) (eq. 2),
 * interpolated along x, then y, then z with the quintic fade
 * 6t⁵ − 15t⁴ + 10t³ (Perlin 2002). In 3D the gradients are the paper's 12
 * vectors to the edge midpoints of the unit cube, picked without a table or a
 * branch exactly as the paper's faster variant does: three signs from three
 * hash bits, then one component (hash >> 3) % 3 zeroed. 2D uses 8 gradients of
 * length √2 (the 4 diagonals and the 4 axes), 4D Perlin's 32 edge gradients of
 * the 4-cube (one component 0, three ±1).
 *
 * The lattice-level pieces are separate functions because the optimized grid
 * (src/noise/serial, src/noise/opencl/optimized_grid.cl) computes each of them
 * once per block and reuses it (the paper's optimizations 1 and 2):
 *   pgPerlinGrad2/3/4   the gradient of a corner from its hash
 *   pgNoiseFade/Deriv   the quintic weight of a fraction and its derivative
 *   pgPerlinAxisTerm    one per-axis part of a dot product, (f − corner)·g
 *   pgNoiseLerp         the interpolation step
 * pgPerlin evaluates one point from them; its result is multiplied by
 * kPgPerlinScale[dims] so that it lies in [−1, 1] (docs/noise.md, "Range").
 *
 * A point is given split: per axis a corner cell c0, the next cell c1 (c0 + 1,
 * or 0 at the end of a tileable period) and the fraction f in [0, 1).
 *
 * C subset (common/clc.h): compiles as C++ and as OpenCL C.
 */
#ifndef PROCGEN_NOISE_PERLIN_H
#define PROCGEN_NOISE_PERLIN_H

#include "common/clc.h"
#include "noise/hash.h"

/* 1 / (the largest |value| of the raw interpolant), per dimension; derived by
 * an exhaustive search (docs/noise.md, "Range"). Index by dims. */
#define PG_PERLIN_SCALE_2 1.0f
#define PG_PERLIN_SCALE_3 0.964921f
#define PG_PERLIN_SCALE_4 0.65079f

PROCGEN_FN float pgPerlinScale(int dims) {
  return dims == 2 ? PG_PERLIN_SCALE_2 : dims == 3 ? PG_PERLIN_SCALE_3 : PG_PERLIN_SCALE_4;
}

/* Quintic fade 6t⁵ − 15t⁴ + 10t³ and its derivative 30t²(t − 1)². */
PROCGEN_FN float pgNoiseFade(float t) {
  return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f);
}
PROCGEN_FN float pgNoiseFadeDeriv(float t) {
  float u = t - 1.0f;
  return 30.0f * t * t * u * u;
}
PROCGEN_FN float pgNoiseLerp(float a, float b, float t) {
  return a + t * (b - a);
}

/* ±1 from one hash bit (the paper's 1 − (t & 2)), no branch. */
PROCGEN_FN float pgNoiseSignBit(pg_u32 h, int bit) {
  return 1.0f - (float)((h >> bit) & 1u) * 2.0f;
}

/* 2D: bits 0..1 signs, bits 2..3 pick diagonal (0, 1), x axis (2), y axis (3). */
PROCGEN_FN void pgPerlinGrad2(pg_u32 h, float* g) {
  pg_u32 k = (h >> 2) & 3u;
  float diag = (float)(k < 2u);
  g[0] = pgNoiseSignBit(h, 0) * (diag + (float)(k == 2u) * 1.41421356237f);
  g[1] = pgNoiseSignBit(h, 1) * (diag + (float)(k == 3u) * 1.41421356237f);
}

/* 3D: the paper's branch-free pick of the 12 edge gradients. */
PROCGEN_FN void pgPerlinGrad3(pg_u32 h, float* g) {
  pg_u32 zero = (h >> 3) % 3u;
  g[0] = pgNoiseSignBit(h, 0) * (float)(zero != 0u);
  g[1] = pgNoiseSignBit(h, 1) * (float)(zero != 1u);
  g[2] = pgNoiseSignBit(h, 2) * (float)(zero != 2u);
}

/* 4D: four signs, then one of the four components zeroed: 32 gradients. */
PROCGEN_FN void pgPerlinGrad4(pg_u32 h, float* g) {
  pg_u32 zero = (h >> 4) & 3u;
  g[0] = pgNoiseSignBit(h, 0) * (float)(zero != 0u);
  g[1] = pgNoiseSignBit(h, 1) * (float)(zero != 1u);
  g[2] = pgNoiseSignBit(h, 2) * (float)(zero != 2u);
  g[3] = pgNoiseSignBit(h, 3) * (float)(zero != 3u);
}

PROCGEN_FN void pgPerlinGrad(int dims, pg_u32 h, float* g) {
  if (dims == 2) pgPerlinGrad2(h, g);
  else if (dims == 3) pgPerlinGrad3(h, g);
  else pgPerlinGrad4(h, g);
}

/* One per-axis part of corner i's dot product: (f − corner bit) · g. The
 * paper's optimization 2 computes these once per row / column. */
PROCGEN_FN float pgPerlinAxisTerm(float f, pg_u32 corner_bit, float g) {
  return (f - (float)corner_bit) * g;
}

/* The interpolation of Perlin noise from its corners' gradients g[i] (corner
 * i: bit d set = upper corner on axis d), in [−1, 1]: the dot products, then
 * the fade-weighted lerps along x, then y, z, w (the paper's order). Shared by
 * pgPerlin and the optimized grids, which take g from a cache. grad (may be 0)
 * receives d value / d f per axis (lattice units). */
PROCGEN_FN float pgPerlinInterpolate(int dims, float g[16][4], const float* f, float* grad) {
  float u[4];
  float du[4];
  for (int d = 0; d < dims; ++d) {
    u[d] = pgNoiseFade(f[d]);
    du[d] = pgNoiseFadeDeriv(f[d]);
  }
  float dots[16];
  int corners = 1 << dims;
  for (int i = 0; i < corners; ++i) {
    float dot = 0.0f;
    for (int d = 0; d < dims; ++d) dot += pgPerlinAxisTerm(f[d], (pg_u32)((i >> d) & 1), g[i][d]);
    dots[i] = dot;
  }
  /* each step halves the corners; the gradient carries d/df of every partial value */
  float dd[16][4];
  if (grad)
    for (int i = 0; i < corners; ++i)
      for (int d = 0; d < dims; ++d) dd[i][d] = g[i][d];
  for (int a = 0; a < dims; ++a) {
    int pairs = corners >> (a + 1);
    for (int i = 0; i < pairs; ++i) {
      float lo = dots[2 * i];
      float hi = dots[2 * i + 1];
      if (grad) {
        for (int d = 0; d < dims; ++d)
          dd[i][d] = pgNoiseLerp(dd[2 * i][d], dd[2 * i + 1][d], u[a]) + (d == a ? du[a] * (hi - lo) : 0.0f);
      }
      dots[i] = pgNoiseLerp(lo, hi, u[a]);
    }
  }
  float scale = pgPerlinScale(dims);
  if (grad)
    for (int d = 0; d < dims; ++d) grad[d] = dd[0][d] * scale;
  return dots[0] * scale;
}

/* Perlin noise of one point in `dims` (2..4) dimensions, in [−1, 1].
 * c0, c1: the cell's two corner cells per axis; f: the fractions.
 * grad (may be 0): receives d value / d f per axis (lattice units). */
PROCGEN_FN float pgPerlin(int dims, pg_u32 key, const pg_u32* c0, const pg_u32* c1, const float* f,
                          float* grad) {
  float g[16][4];
  int corners = 1 << dims;
  for (int i = 0; i < corners; ++i) {
    pg_u32 cell[4];
    for (int d = 0; d < dims; ++d) cell[d] = ((i >> d) & 1) ? c1[d] : c0[d];
    pgPerlinGrad(dims, pgNoiseHashN(key, dims, cell), g[i]);
  }
  return pgPerlinInterpolate(dims, g, f, grad);
}

#endif /* PROCGEN_NOISE_PERLIN_H */

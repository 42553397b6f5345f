/* simplex.h — simplex noise in 2D, 3D and 4D, with analytic gradients.
 *
 * The paper (shared/seeds/001_191daa7b81372e37.txt §6) compares against
 * Gustavson's simplex noise; this is that algorithm (Perlin 2001, as
 * explained by Gustavson, "Simplex noise demystified"), written once for any
 * dimension n: skew the point by F = (√(n+1) − 1)/n so the simplices tile the
 * unit cubes, find the cube, rank the fraction's components to find the
 * simplex (corner k adds the unit vectors of the k largest components), and
 * sum the corners' radial kernels max(0, r² − |d|²)⁴ · (g · d). r² = 0.5 in
 * every dimension (0.6, as some versions use in 3D/4D, is not continuous).
 * Gradients are Perlin's sets (perlin.h): 8 in 2D, the paper's 12 in 3D, 32
 * in 4D, picked by the chained corner hash.
 *
 * Precision far from the origin: the point arrives split into cells c and
 * fractions f (hash.h). The skew offset F·Σx = F·Σc + F·Σf; F·Σc is an
 * integer part plus a fraction computed in fixed point (F as a 64-bit binary
 * fraction, the integer part modulo 2³² like the cells), so only
 * small numbers ever reach float arithmetic. The offset of the point from a
 * corner is unskewed from the skewed-space fraction (unskewing is linear), so
 * no large coordinate is formed in float either.
 *
 * The raw sum is multiplied by kPgSimplexScale[n] so that it lies in [−1, 1]
 * (docs/noise.md, "Range").
 *
 * C subset (common/clc.h): compiles as C++ and as OpenCL C.
 */
#ifndef PROCGEN_NOISE_SIMPLEX_H
#define PROCGEN_NOISE_SIMPLEX_H

#include "common/clc.h"
#include "noise/hash.h"
#include "noise/perlin.h"

#define PG_SIMPLEX_R2 0.5f

/* 1 / (the largest raw value), per dimension, from an exhaustive search
 * (docs/noise.md, "Range"), rounded down. */
PROCGEN_FN float pgSimplexScale(int dims) {
  return dims == 2 ? 70.1f : dims == 3 ? 76.8f : 62.7f;
}

/* F = (√(n+1) − 1)/n and G = (1 − 1/√(n+1))/n. */
PROCGEN_FN float pgSimplexF(int dims) {
  return dims == 2 ? 0.36602540378f : dims == 3 ? 0.33333333333f : 0.30901699437f;
}
PROCGEN_FN float pgSimplexG(int dims) {
  return dims == 2 ? 0.21132486540f : dims == 3 ? 0.16666666667f : 0.13819660113f;
}
/* round(F · 2^64): F as a 0.64 fixed-point fraction for the exact skew of
 * the integer cells (error 2^-65 per unit of Σc: 2^-32 at Σc = 2^33). */
PROCGEN_FN pg_u64 pgSimplexFFixed(int dims) {
  return dims == 2 ? 6751976948087739294ul : dims == 3 ? 6148914691236517205ul : 5700357409661599243ul;
}

/* The high 64 bits of a 64 × 64-bit product. */
PROCGEN_FN pg_u64 pgMulHi64(pg_u64 a, pg_u64 b) {
#ifdef __OPENCL_C_VERSION__
  return mul_hi(a, b);
#else
  return (pg_u64)(((unsigned __int128)a * b) >> 64);
#endif
}

/* F · k for a signed integer k (|k| < 2^62) as floor(F·k) modulo 2^32 (*whole)
 * and the fraction F·k − floor(F·k) in [0, 1) (returned), in fixed point. */
PROCGEN_FN float pgSimplexSkewInteger(int dims, pg_i64 k, pg_u32* whole) {
  pg_u64 m = (pg_u64)(k < 0 ? -k : k);
  pg_u64 fq = pgSimplexFFixed(dims);
  pg_u32 ip = (pg_u32)pgMulHi64(fq, m); /* floor(F·|k|) mod 2^32 */
  pg_u64 lo = fq * m;                   /* its fraction · 2^64 */
  if (k < 0 && lo != 0ul) {
    /* F·k = −(ip + φ) = −(ip + 1) + (1 − φ) */
    ip = ~ip;
    lo = (pg_u64)0 - lo;
  } else if (k < 0) {
    ip = (pg_u32)0 - ip;
  }
  *whole = ip;
  return (float)(lo >> 40) * (1.0f / 16777216.0f);
}

/* Simplex noise of one split point (cells c, fractions f in [0, 1)), in
 * [−1, 1]; grad (may be 0) receives d value / d f (lattice units). */
PROCGEN_FN float pgSimplex(int dims, pg_u32 key, const pg_u32* c, const float* f, float* grad) {
  /* skew: y = x + F·Σx, split into the skewed cell and its fraction */
  pg_i64 k = 0;
  float sf = 0.0f;
  for (int d = 0; d < dims; ++d) {
    k += (pg_i64)(pg_i32)c[d];
    sf += f[d];
  }
  pg_u32 skew_cells;
  float skew_frac = pgSimplexSkewInteger(dims, k, &skew_cells);
  float shift = skew_frac + sf * pgSimplexF(dims);
  pg_u32 cell[4] = {0u, 0u, 0u, 0u};
  float fy[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float sy = 0.0f;
  for (int d = 0; d < dims; ++d) {
    float y = f[d] + shift;
    float fl = PG_FLOOR(y);
    cell[d] = c[d] + skew_cells + (pg_u32)(pg_i32)fl;
    fy[d] = y - fl;
    sy += fy[d];
  }
  /* unskew the fraction: the offset from the cell's first corner */
  float g_unskew = pgSimplexG(dims);
  float d0[4];
  for (int d = 0; d < dims; ++d) d0[d] = fy[d] - sy * g_unskew;
  /* rank of each component (ties by axis), which orders the simplex walk */
  int rank[4] = {0, 0, 0, 0};
  for (int a = 0; a < dims; ++a) {
    int r = 0;
    for (int b = 0; b < dims; ++b) r += (fy[b] > fy[a]) || (fy[b] == fy[a] && b < a);
    rank[a] = r;
  }
  float value = 0.0f;
  if (grad)
    for (int d = 0; d < dims; ++d) grad[d] = 0.0f;
  for (int corner = 0; corner <= dims; ++corner) {
    pg_u32 cc[4];
    float dv[4];
    float r2 = 0.0f;
    for (int d = 0; d < dims; ++d) {
      pg_u32 step = (pg_u32)(rank[d] < corner);
      cc[d] = cell[d] + step;
      dv[d] = d0[d] - (float)step + (float)corner * g_unskew;
      r2 += dv[d] * dv[d];
    }
    float t = PG_SIMPLEX_R2 - r2;
    if (t <= 0.0f) continue;
    float g[4];
    pgPerlinGrad(dims, pgNoiseHashN(key, dims, cc), g);
    float dot = 0.0f;
    for (int d = 0; d < dims; ++d) dot += g[d] * dv[d];
    float t2 = t * t;
    float t4 = t2 * t2;
    value += t4 * dot;
    if (grad) {
      /* d/dx [t⁴ (g·d)] = t⁴ g − 8 t³ (g·d) d */
      float k8 = 8.0f * t2 * t * dot;
      for (int d = 0; d < dims; ++d) grad[d] += t4 * g[d] - k8 * dv[d];
    }
  }
  float scale = pgSimplexScale(dims);
  if (grad)
    for (int d = 0; d < dims; ++d) grad[d] *= scale;
  return value * scale;
}

#endif /* PROCGEN_NOISE_SIMPLEX_H */

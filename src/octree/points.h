/* points.h — the point generators of octree tests, benchmarks and
 * `procgen octree --random N`, shared by C++ and OpenCL C (C subset,
 * common/clc.h). Point i is a pure function of (seed, i): one Philox4x32-10
 * block keyed by the seed with counter (i, phase), so every backend, thread
 * count and chunking draws the same points (STYLE.md practice 5).
 * Double precision as keys.h (cl_khr_fp64 in OpenCL C).
 */
#ifndef PROCGEN_OCTREE_POINTS_H
#define PROCGEN_OCTREE_POINTS_H

#include "common/random.h"
#include "octree/keys.h"

#define PG_POINTS_UNIFORM 0
#define PG_POINTS_GAUSSIAN 1
#define PG_POINTS_PLUMMER 2
#define PG_POINTS_PHASE 0x6f637472u /* "octr": keeps these draws apart from other systems' */

/* Word w of the block as a double in (0, 1): (w + 0.5) / 2^32, never 0 or 1. */
PROCGEN_FN double pgPointsOpen01(pg_u32 w) { return ((double)w + 0.5) * (1.0 / 4294967296.0); }

/* Point i of a distribution into out[0..3). Uniform: [0, 1)^3 (w / 2^32).
 * Gaussian: Box–Muller, standard normal per axis. Plummer (Aarseth, Hénon,
 * Wielen 1974): radius r = (u^(-2/3) − 1)^(-1/2) for the mass fraction
 * u = 0.999·(0, 1), direction uniform on the sphere. */
PROCGEN_FN void pgPointsGenerate(pg_i32 distribution, pg_u64 seed, pg_u64 i, double* out) {
  philox4x32_ctr_t ctr = {{(pg_u32)i, (pg_u32)(i >> 32), PG_POINTS_PHASE, 0u}};
  philox4x32_key_t key = {{(pg_u32)seed, (pg_u32)(seed >> 32)}};
  philox4x32_ctr_t r = philox4x32(ctr, key);
  const double two_pi = 6.283185307179586476925286766559;
  if (distribution == PG_POINTS_GAUSSIAN) {
    double m0 = PG_SQRT(-2.0 * PG_LOG(pgPointsOpen01(r.v[0])));
    double a0 = two_pi * pgPointsOpen01(r.v[1]);
    double m1 = PG_SQRT(-2.0 * PG_LOG(pgPointsOpen01(r.v[2])));
    double a1 = two_pi * pgPointsOpen01(r.v[3]);
    out[0] = m0 * PG_COS(a0);
    out[1] = m0 * PG_SIN(a0);
    out[2] = m1 * PG_COS(a1);
  } else if (distribution == PG_POINTS_PLUMMER) {
    double u = 0.999 * pgPointsOpen01(r.v[0]);
    double radius = 1.0 / PG_SQRT(PG_POW(u, -2.0 / 3.0) - 1.0);
    double cz = 2.0 * pgPointsOpen01(r.v[1]) - 1.0;
    double sz = PG_SQRT(1.0 - cz * cz);
    double phi = two_pi * pgPointsOpen01(r.v[2]);
    out[0] = radius * sz * PG_COS(phi);
    out[1] = radius * sz * PG_SIN(phi);
    out[2] = radius * cz;
  } else {
    out[0] = (double)r.v[0] * (1.0 / 4294967296.0);
    out[1] = (double)r.v[1] * (1.0 / 4294967296.0);
    out[2] = (double)r.v[2] * (1.0 / 4294967296.0);
  }
}

#endif /* PROCGEN_OCTREE_POINTS_H */

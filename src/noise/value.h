/* value.h — value noise in 2D, 3D and 4D.
 *
 * The paper's lattice (shared/seeds/001_191daa7b81372e37.txt §2) with a
 * pseudo-random value instead of a gradient at every node: the node's chained
 * hash (hash.h) mapped to [−1, 1), interpolated with the same quintic fade as
 * Perlin noise. A convex combination of values in [−1, 1) stays in [−1, 1):
 * the scale factor is 1.
 *
 * C subset (common/clc.h): compiles as C++ and as OpenCL C.
 */
#ifndef PROCGEN_NOISE_VALUE_H
#define PROCGEN_NOISE_VALUE_H

#include "common/clc.h"
#include "noise/hash.h"
#include "noise/perlin.h"

/* The value of one lattice node. */
PROCGEN_FN float pgValueNode(int dims, pg_u32 key, const pg_u32* cell) {
  return pgNoiseHashToSigned(pgNoiseHashN(key, dims, cell));
}

/* Value noise of one point in `dims` (2..4) dimensions, in [−1, 1); the
 * point split as in pgPerlin. */
PROCGEN_FN float pgValue(int dims, pg_u32 key, const pg_u32* c0, const pg_u32* c1, const float* f) {
  float vals[16];
  int corners = 1 << dims;
  for (int i = 0; i < corners; ++i) {
    pg_u32 cell[4];
    for (int d = 0; d < dims; ++d) cell[d] = ((i >> d) & 1) ? c1[d] : c0[d];
    vals[i] = pgValueNode(dims, key, cell);
  }
  for (int a = 0; a < dims; ++a) {
    float u = pgNoiseFade(f[a]);
    int pairs = corners >> (a + 1);
    for (int i = 0; i < pairs; ++i) vals[i] = pgNoiseLerp(vals[2 * i], vals[2 * i + 1], u);
  }
  return vals[0];
}

#endif /* PROCGEN_NOISE_VALUE_H */

/* random.h — counter-based random numbers (Random123 Philox4x32-10) shared by
 * C++ and OpenCL C. A draw is a pure function of (seed, phase, position, draw),
 * so results never depend on thread count, chunking or backend (STYLE.md 5).
 *   seed      the user's --seed
 *   phase     which pass asked (derivation step, decomposition pass, ...)
 *   position  the module's index in the string the pass reads
 *   draw      the n-th number this module asked for in this phase
 */
#ifndef PROCGEN_COMMON_RANDOM_H
#define PROCGEN_COMMON_RANDOM_H

#include "common/clc.h"
#include <Random123/philox.h>

typedef struct PgRandomStream {
  pg_u64 seed;
  pg_u64 position;
  pg_u32 phase;
  pg_u32 draws; /* next draw index */
} PgRandomStream;

/* Uniform float in [0, 1): the top 24 bits of the first Philox output word. */
PROCGEN_FN float pgUniformAt(pg_u64 seed, pg_u32 phase, pg_u64 position, pg_u32 draw) {
  philox4x32_ctr_t ctr = {{(pg_u32)position, (pg_u32)(position >> 32), phase, draw}};
  philox4x32_key_t key = {{(pg_u32)seed, (pg_u32)(seed >> 32)}};
  philox4x32_ctr_t out = philox4x32(ctr, key);
  return (float)(out.v[0] >> 8) * (1.0f / 16777216.0f);
}

PROCGEN_FN float pgNextUniform(PgRandomStream* rng) {
  float u = pgUniformAt(rng->seed, rng->phase, rng->position, rng->draws);
  rng->draws += 1u;
  return u;
}

#endif /* PROCGEN_COMMON_RANDOM_H */

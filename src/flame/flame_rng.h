/* flame_rng.h — the chaos game's random numbers, shared by C++ and OpenCL C.
 *
 * Counter-based (Random123 Philox4x32-10, as the L-systems use): a stream is
 * keyed by (seed, stream id) and its n-th number is a pure function of those
 * and n, so a render depends on the seed only — never on thread count,
 * chunking or backend. One Philox call gives four 32-bit numbers; they are
 * handed out in order before the counter advances.
 * Paper: shared/seeds/003_*.txt (random numbers on the device).
 */
#ifndef PROCGEN_FLAME_FLAME_RNG_H
#define PROCGEN_FLAME_FLAME_RNG_H

#include "common/clc.h"
#include <Random123/philox.h>

typedef struct PgFlameRng {
  philox4x32_key_t key;
  philox4x32_ctr_t ctr;
  philox4x32_ctr_t out;
  pg_u32 used; /* numbers of `out` already handed out (4 = refill) */
} PgFlameRng;

/* Stream `stream` of `seed`; the counter starts at 0. */
PROCGEN_FN void pgFlameRngInit(PgFlameRng* rng, pg_u64 seed, pg_u64 stream) {
  rng->key.v[0] = (pg_u32)seed;
  rng->key.v[1] = (pg_u32)(seed >> 32);
  rng->ctr.v[0] = 0u;
  rng->ctr.v[1] = 0u;
  rng->ctr.v[2] = (pg_u32)stream;
  rng->ctr.v[3] = (pg_u32)(stream >> 32);
  rng->used = 4u;
}

PROCGEN_FN pg_u32 pgFlameRandU32(PgFlameRng* rng) {
  if (rng->used == 4u) {
    rng->out = philox4x32(rng->ctr, rng->key);
    rng->ctr.v[0] += 1u;
    if (rng->ctr.v[0] == 0u) rng->ctr.v[1] += 1u;
    rng->used = 0u;
  }
  pg_u32 r = rng->out.v[rng->used];
  rng->used += 1u;
  return r;
}

/* Uniform in [0, 1): the top 24 bits. */
PROCGEN_FN float pgFlameRand01(PgFlameRng* rng) {
  return (float)(pgFlameRandU32(rng) >> 8) * (1.0f / 16777216.0f);
}

/* Uniform in [-1, 1). */
PROCGEN_FN float pgFlameRand11(PgFlameRng* rng) { return 2.0f * pgFlameRand01(rng) - 1.0f; }

/* 0 or 1 with equal probability (flam3's flam3_random_isaac_bit). */
PROCGEN_FN pg_u32 pgFlameRandBit(PgFlameRng* rng) { return pgFlameRandU32(rng) >> 31; }

#endif /* PROCGEN_FLAME_FLAME_RNG_H */

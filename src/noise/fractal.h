/* fractal.h — one noise sample: base type, fractal sum and domain warp.
 *
 * Paper (shared/seeds/001_191daa7b81372e37.txt) §3, "moPerlin": a sum of
 * octaves, octave o sampled at pos · scalingᵒ with amplitude persistenceᵒ.
 * procgen calls them lacunarity and gain and adds the sums of FastNoiseLite's
 * family: fBm (the paper's sum), ridged (1 − 2|n|), billow (2|n| − 1) and
 * ping-pong (a triangle wave of (n + 1)·strength); `weighted_strength` scales
 * each octave's amplitude by lerp(1, (term + 1)/2, strength) of the previous
 * term. The sum is divided by Σ gainᵒ, so every sum stays in [−1, 1] when its
 * terms do. Each octave hashes with its own key (pgNoiseSubKey).
 *
 * Domain warp (a "gradient warp"): the point is displaced by
 * amplitude · (n₀, n₁, …), one Perlin noise per axis with its own key —
 * single (one octave) or fractal (progressive: octave o displaces the point
 * the previous octaves already displaced, with amplitude gainᵒ/Σ gainᵒ, so
 * the total displacement never exceeds the amplitude).
 *
 * Points arrive split (hash.h): for every octave o and lattice axis d, the
 * cell cells[o·4 + d] and the fraction fracs[o·4 + d] of the point's lattice
 * coordinate at that octave, computed in double by the host (or looked up in
 * per-axis tables the host computed so). A displacement (field units) is
 * added to the fraction and re-split here, in float, where it is small.
 *
 * C subset (common/clc.h): compiles as C++ and as OpenCL C.
 */
#ifndef PROCGEN_NOISE_FRACTAL_H
#define PROCGEN_NOISE_FRACTAL_H

#include "common/clc.h"
#include "noise/hash.h"
#include "noise/perlin.h"
#include "noise/value.h"
#include "noise/simplex.h"
#include "noise/cellular.h"

#define PG_NOISE_MAX_OCTAVES 16

/* The address space of the config: a __constant buffer in kernels. */
#ifdef __OPENCL_C_VERSION__
#define PG_NOISE_CFG __constant
#else
#define PG_NOISE_CFG
#endif

/* These numbers equal the enumerators of include/procgen/noise.hpp. */
#define PG_NOISE_PERLIN 0
#define PG_NOISE_SIMPLEX 1
#define PG_NOISE_VALUE 2
#define PG_NOISE_CELLULAR 3

#define PG_FRACTAL_NONE 0
#define PG_FRACTAL_FBM 1
#define PG_FRACTAL_RIDGED 2
#define PG_FRACTAL_BILLOW 3
#define PG_FRACTAL_PINGPONG 4

#define PG_WARP_NONE 0
#define PG_WARP_SINGLE 1
#define PG_WARP_FRACTAL 2

/* Everything a sample needs besides the point; built once per call by the host
 * (noise_stages.hpp, makeNoiseSetup) and passed to kernels as a buffer. Only
 * 4-byte members: the host and OpenCL C layouts agree. */
typedef struct PgNoiseConfig {
  pg_u32 key;              /* pgNoiseSeedKey(seed) */
  pg_i32 type;             /* PG_NOISE_* */
  pg_i32 dims;             /* lattice dimensions, time included: 2..4 */
  pg_i32 fractal;          /* PG_FRACTAL_* */
  pg_i32 octaves;          /* 1 for PG_FRACTAL_NONE */
  float gain;
  float weighted_strength;
  float ping_pong_strength;
  float fractal_bound;     /* 1 / Σ gainᵒ over the octaves */
  pg_i32 cellular_distance;
  pg_i32 cellular_return;
  float cellular_jitter;
  pg_i32 warp;             /* PG_WARP_* */
  pg_i32 warp_octaves;     /* 1 for single, octaves for fractal */
  float warp_amplitude;    /* field units */
  float warp_bound;        /* 1 / Σ gainᵒ over the warp octaves */
  /* lattice units per field unit, per octave and axis (frequency · lacunarityᵒ,
   * or rounded to a whole period when tiled) */
  float scale[PG_NOISE_MAX_OCTAVES][4];
  /* 0, or the period in cells of a tileable axis at that octave */
  pg_i32 period[PG_NOISE_MAX_OCTAVES][4];
} PgNoiseConfig;

/* A fraction that rounded up to 1 moves to the next cell, so 0 ≤ f < 1. */
PROCGEN_FN void pgNoiseNormalize(pg_u32* cell, float* frac, pg_i32 period) {
  if (*frac >= 1.0f) {
    *frac -= 1.0f;
    *cell = pgNoiseNext(*cell, period);
  }
}

/* Moves a split coordinate by `delta` lattice units (small: a warp). */
PROCGEN_FN void pgNoiseShift(pg_u32* cell, float* frac, float delta, pg_i32 period) {
  float t = *frac + delta;
  float fl = PG_FLOOR(t);
  *cell = pgNoiseWrap(*cell + (pg_u32)(pg_i32)fl, period);
  *frac = t - fl;
  pgNoiseNormalize(cell, frac, period);
}

/* The base noise of one split point at one octave; grad (may be 0) receives
 * the gradient in lattice units. Types without a gradient leave it 0. */
PROCGEN_FN float pgNoiseBase(PG_NOISE_CFG const PgNoiseConfig* cfg, pg_u32 key, const pg_u32* cell,
                             const float* frac, const pg_i32* period, float* grad) {
  int dims = cfg->dims;
  if (cfg->type == PG_NOISE_SIMPLEX) return pgSimplex(dims, key, cell, frac, grad);
  if (cfg->type == PG_NOISE_CELLULAR || cfg->type == PG_NOISE_VALUE) {
    if (grad)
      for (int d = 0; d < dims; ++d) grad[d] = 0.0f;
    if (cfg->type == PG_NOISE_CELLULAR)
      return pgCellular(dims, key, cell, period, frac, cfg->cellular_distance, cfg->cellular_return,
                        cfg->cellular_jitter);
  }
  pg_u32 c1[4];
  for (int d = 0; d < dims; ++d) c1[d] = pgNoiseNext(cell[d], period[d]);
  if (cfg->type == PG_NOISE_VALUE) return pgValue(dims, key, cell, c1, frac);
  return pgPerlin(dims, key, cell, c1, frac, grad);
}

/* The split coordinate of octave o, displaced by disp (field units, may be 0). */
PROCGEN_FN void pgNoiseOctavePoint(PG_NOISE_CFG const PgNoiseConfig* cfg, int o, const pg_u32* cells,
                                   const float* fracs, const float* disp, pg_u32* c, float* f) {
  for (int d = 0; d < cfg->dims; ++d) {
    c[d] = cells[o * 4 + d];
    f[d] = fracs[o * 4 + d];
    if (disp) pgNoiseShift(&c[d], &f[d], disp[d] * cfg->scale[o][d], cfg->period[o][d]);
  }
}

/* The triangle wave of ping-pong, for t ≥ 0; *slope receives its slope ±1. */
PROCGEN_FN float pgNoisePingPong(float t, float* slope) {
  t -= (float)(int)(t * 0.5f) * 2.0f;
  *slope = t < 1.0f ? 1.0f : -1.0f;
  return t < 1.0f ? t : 2.0f - t;
}

/* The running state of a fractal sum, one octave at a time (the optimized
 * grids feed it octave by octave). */
typedef struct PgFractalSum {
  float sum;
  float amp;
  float gsum[4]; /* d sum / d position */
  float gamp[4]; /* d amp / d position */
} PgFractalSum;

PROCGEN_FN PgFractalSum pgFractalBegin(void) {
  PgFractalSum s;
  s.sum = 0.0f;
  s.amp = 1.0f;
  for (int d = 0; d < 4; ++d) {
    s.gsum[d] = 0.0f;
    s.gamp[d] = 0.0f;
  }
  return s;
}

/* Adds octave o whose base noise is n (gradient g in lattice units, or 0). */
PROCGEN_FN void pgFractalAdd(PG_NOISE_CFG const PgNoiseConfig* cfg, PgFractalSum* s, int o, float n,
                             const float* g) {
  /* the octave's term and d term / d n */
  float term = n;
  float dterm = 1.0f;
  if (cfg->fractal == PG_FRACTAL_RIDGED) {
    term = 1.0f - 2.0f * PG_FABS(n);
    dterm = n < 0.0f ? 2.0f : -2.0f;
  } else if (cfg->fractal == PG_FRACTAL_BILLOW) {
    term = 2.0f * PG_FABS(n) - 1.0f;
    dterm = n < 0.0f ? -2.0f : 2.0f;
  } else if (cfg->fractal == PG_FRACTAL_PINGPONG) {
    float slope;
    term = 2.0f * pgNoisePingPong((n + 1.0f) * cfg->ping_pong_strength, &slope) - 1.0f;
    dterm = 2.0f * slope * cfg->ping_pong_strength;
  }
  s->sum += term * s->amp;
  float weight = pgNoiseLerp(1.0f, (term + 1.0f) * 0.5f, cfg->weighted_strength);
  if (g) {
    for (int d = 0; d < cfg->dims; ++d) {
      float dt = dterm * g[d] * cfg->scale[o][d]; /* d term / d position */
      s->gsum[d] += dt * s->amp + term * s->gamp[d];
      s->gamp[d] = cfg->gain * (s->gamp[d] * weight + s->amp * cfg->weighted_strength * 0.5f * dt);
    }
  }
  s->amp *= weight * cfg->gain;
}

/* The normalised sum, in [−1, 1]; grad (may be 0) receives its gradient. */
PROCGEN_FN float pgFractalEnd(PG_NOISE_CFG const PgNoiseConfig* cfg, const PgFractalSum* s, float* grad) {
  if (grad)
    for (int d = 0; d < cfg->dims; ++d) grad[d] = s->gsum[d] * cfg->fractal_bound;
  return s->sum * cfg->fractal_bound;
}

/* The fractal sum at one point (fractal none: one octave, the raw noise), in
 * [−1, 1]. disp (may be 0): a warp displacement in field units. grad (may be
 * 0): d value / d position in field units, for the first cfg->dims axes. */
PROCGEN_FN float pgNoiseFractalSum(PG_NOISE_CFG const PgNoiseConfig* cfg, const pg_u32* cells,
                                   const float* fracs, const float* disp, float* grad) {
  PgFractalSum s = pgFractalBegin();
  for (int o = 0; o < cfg->octaves; ++o) {
    pg_u32 c[4];
    float f[4];
    pgNoiseOctavePoint(cfg, o, cells, fracs, disp, c, f);
    float g[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    pg_i32 period[4];
    for (int d = 0; d < 4; ++d) period[d] = cfg->period[o][d];
    float n = pgNoiseBase(cfg, pgNoiseSubKey(cfg->key, (pg_u32)o), c, f, period, grad ? g : 0);
    pgFractalAdd(cfg, &s, o, n, grad ? g : 0);
  }
  return pgFractalEnd(cfg, &s, grad);
}

/* The warp displacement (field units) of a point: one Perlin noise per axis. */
PROCGEN_FN void pgNoiseWarpDisplacement(PG_NOISE_CFG const PgNoiseConfig* cfg, const pg_u32* cells,
                                        const float* fracs, float* disp) {
  int dims = cfg->dims;
  float amp = cfg->warp_amplitude * cfg->warp_bound;
  for (int d = 0; d < 4; ++d) disp[d] = 0.0f;
  for (int o = 0; o < cfg->warp_octaves; ++o) {
    pg_u32 c[4];
    float f[4];
    pg_u32 c1[4];
    /* progressive: octave o samples the point the earlier octaves displaced */
    pgNoiseOctavePoint(cfg, o, cells, fracs, disp, c, f);
    for (int d = 0; d < dims; ++d) c1[d] = pgNoiseNext(c[d], cfg->period[o][d]);
    float step[4];
    for (int d = 0; d < dims; ++d)
      step[d] = amp * pgPerlin(dims, pgNoiseSubKey(cfg->key, (pg_u32)(PG_NOISE_MAX_OCTAVES + o * 4 + d)), c, c1,
                               f, 0);
    for (int d = 0; d < dims; ++d) disp[d] += step[d];
    amp *= cfg->gain;
  }
}

/* One sample: warp (when configured), then the fractal sum. */
PROCGEN_FN float pgNoiseSample(PG_NOISE_CFG const PgNoiseConfig* cfg, const pg_u32* cells,
                               const float* fracs, float* grad) {
  if (cfg->warp != PG_WARP_NONE) {
    float disp[4];
    pgNoiseWarpDisplacement(cfg, cells, fracs, disp);
    return pgNoiseFractalSum(cfg, cells, fracs, disp, grad);
  }
  return pgNoiseFractalSum(cfg, cells, fracs, 0, grad);
}

#endif /* PROCGEN_NOISE_FRACTAL_H */

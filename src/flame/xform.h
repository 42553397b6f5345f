/* xform.h — one chaos-game step through one xform, shared by C++ and OpenCL C.
 *
 * The genome (procgen/flame.hpp) is compiled on the host into flat float
 * tables (src/flame/xform_table.*): one PgFlameXform per xform (final xform
 * last), its variation terms in `terms`, its parameters (flam3's, then the
 * derived values flam3 precomputes per xform) in `params`.
 *
 * pgFlameApplyXform follows flam3's apply_xform (variations.c): colour blend
 * by color_speed, pre-affine, pre_blur first, the precalculated r², r,
 * atan2(x, y) / atan2(y, x), sin/cos of the angle, the weighted variation sum,
 * the post-affine. It returns 0 when the result is a bad value (NaN, or |x| or
 * |y| > 1e10), which the caller replaces and counts as flam3 does.
 * Paper: shared/seeds/003_*.txt ("Fractal flames", the function system).
 *
 * Interface fixed for the iteration (serial/cpu/opencl): the struct fields
 * below and the signature of pgFlameApplyXform. The variation bodies live in
 * variations.h.
 */
#ifndef PROCGEN_FLAME_XFORM_H
#define PROCGEN_FLAME_XFORM_H

#include "common/clc.h"
#include "flame/flame_rng.h"

typedef struct PgFlameTerm {
  pg_u32 variation; /* catalogue index (procgen/flame.hpp) */
  float weight;
} PgFlameTerm;

typedef struct PgFlameXform {
  float affine[6]; /* a b c d e f: x' = a x + b y + c, y' = d x + e y + f */
  float post[6];
  float color;       /* palette coordinate 0..1 */
  float color_speed; /* new colour = color_speed·color + (1 − color_speed)·old */
  float opacity;     /* plotted weight of this xform's points */
  pg_u32 has_post;   /* post is not the identity */
  pg_u32 term_begin; /* first term in the terms table */
  pg_u32 term_count;
  pg_u32 param_begin; /* first parameter in the params table */
  pg_u32 flags;       /* PG_FLAME_NEEDS_* : which precalculations the terms use */
} PgFlameXform;

#define PG_FLAME_BAD_VALUE_LIMIT 1e10f

/* The point: position and palette colour. */
typedef struct PgFlamePoint {
  float x, y, color;
} PgFlamePoint;

#include "flame/variations.h"

#endif /* PROCGEN_FLAME_XFORM_H */

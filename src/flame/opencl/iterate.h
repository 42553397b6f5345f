/* iterate.h — what the opencl chaos game's host driver (iterate.cpp) and its
 * kernels (iterate.cl) share: the camera passed by value to the kernels and
 * the numbering of the random streams. C subset (common/clc.h). */
#ifndef PROCGEN_FLAME_OPENCL_ITERATE_H
#define PROCGEN_FLAME_OPENCL_ITERATE_H

#include "common/clc.h"

/* The camera of rect.c in float: the world rectangle the histogram covers,
 * cells per world unit, the rotation about the centre; and the fixed-point
 * scale of the 64-bit accumulators (units per 1.0). Only 4-byte members, so
 * the host and device layouts agree. */
typedef struct PgFlameCamera {
  float x0, y0, x1, y1;
  float cells_per_x, cells_per_y;
  float center_x, center_y;
  float cos_rot, sin_rot;
  pg_i32 width, height;
  pg_u32 rotate;
  float fixed_scale;
} PgFlameCamera;

/* A plotted point waiting for the banded accumulation: its histogram cell
 * (PG_FLAME_NO_CELL: nothing to add), palette coordinate and plotted weight. */
typedef struct PgFlameRecord {
  pg_u32 cell;
  float color;
  float visibility;
} PgFlameRecord;

#define PG_FLAME_NO_CELL 0xffffffffu
/* Banded accumulation: records a work-group bins at once, and the most bands. */
#define PG_FLAME_BIN_CHUNK 4096u
#define PG_FLAME_MAX_BANDS 1024u

/* Points are numbered below 2^23; this bit marks the stream of the xaos draw. */
#define PG_FLAME_DRAW_STREAM 0x800000u
#define PG_FLAME_MAX_POINTS_LOG2 22
/* The stream no point uses: the host's draws of the permutation keys. */
#define PG_FLAME_PERMUTATION_STREAM 0xffffffu

/* The Philox stream of point `point` at step `step` (0 = the start points):
 * keyed by the point, never by the work-item that handles it. */
PROCGEN_FN pg_u64 pgFlameStepStream(pg_u64 step, pg_u32 point) {
  return (step << 24) | (pg_u64)point;
}

#endif /* PROCGEN_FLAME_OPENCL_ITERATE_H */

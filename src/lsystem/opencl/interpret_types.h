/* interpret_types.h — buffer layouts shared by the OpenCL interpretation
 * kernels (interpret.cl) and their host driver (interpret.cpp), in the C
 * subset so both sides see the same structs (the host static_asserts sizes).
 */
#ifndef PROCGEN_LSYSTEM_OPENCL_INTERPRET_TYPES_H
#define PROCGEN_LSYSTEM_OPENCL_INTERPRET_TYPES_H

#include "common/clc.h"
#include "lsystem/turtle.h"

/* procgen::Segment (include/procgen/geometry.hpp), field for field. */
typedef struct PgSegment {
  float start[3];
  float end[3];
  float width;
  pg_i32 color;
  pg_i32 depth;
  pg_i32 instance;
} PgSegment;

/* What every interpretation kernel reads besides the string. */
typedef struct PgInterpretConfig {
  PgTurtleView view; /* computed on the host (the default angle's cos/sin as serial has them) */
  pg_i32 instance;
  PgTurtle initial;
} PgInterpretConfig;

/* Paper §5.2.2 work item: a turtle state and the modules [begin, end) it
 * walks from that state, with the view and instance of configs[config]
 * (§6: one configuration per L-system instance of a scene). */
typedef struct PgWorkItem {
  PgTurtle state;
  pg_u64 begin;
  pg_u64 end;
  pg_u32 config;
  pg_u32 reserved;
} PgWorkItem;

/* Paper §5.1 "matrix accumulation": a chunk's end state relative to its start
 * (walked from the identity frame), and from which output element on the
 * chunk's widths and colours are absolute ('!(w)' and '\'(c)' set them). */
typedef struct PgLocalTransform {
  PgTurtle end;
  pg_u64 width_exact_segment;
  pg_u64 color_exact_segment;
  pg_u64 color_exact_close;
  pg_i32 width_set;
  pg_i32 color_set;
} PgLocalTransform;

/* Modules per count block: the granularity of output offsets (a work item's
 * output cursor is its block's scanned offsets plus a recount of < this many). */
#define PG_INTERPRET_BLOCK 64
/* Count blocks per chunk of the non-branching (matrix) path. */
#define PG_LINEAR_CHUNK_BLOCKS 64
/* Turtle states a work item keeps for branches it walks inline; a branch of at
 * most 2 x this many modules (so nested at most this deep) is walked inline,
 * a longer one is split off as a work item. */
#define PG_WALK_STACK 32

#endif /* PROCGEN_LSYSTEM_OPENCL_INTERPRET_TYPES_H */

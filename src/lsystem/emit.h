/* emit.h — what one turtle action emits, in the C subset (paper §5 "geometry
 * generation"; ABOP §1.5 and cpfg's polygon rules), shared by the host
 * interpreters and the OpenCL kernels (lsystem/opencl/interpret.cl).
 *
 * The one copy of these rules (the host interpreters' applyModule and
 * countAction in interpret_module.hpp switch on pgEmitKind too): F and G draw
 * a segment outside polygons; inside one, F, f and '.' record a vertex (G and
 * g only move); '{' opens a polygon, '}' closes the innermost open one ('}'
 * with none open does nothing). The polygon depth ignores brackets, as in
 * cpfg. What is emitted depends only on the action (turtle.h's
 * PgTurtleAction) and on whether a polygon is open, so output counts per
 * chunk need no turtle.
 */
#ifndef PROCGEN_LSYSTEM_EMIT_H
#define PROCGEN_LSYSTEM_EMIT_H

#include "common/clc.h"
#include "lsystem/turtle.h"

enum PgEmitKind {
  PG_EMIT_NONE = 0,
  PG_EMIT_SEGMENT, /* a segment from the previous position to the new one */
  PG_EMIT_VERTEX,  /* a polygon-vertex record at the new position */
  PG_EMIT_BEGIN,   /* '{': polygon depth + 1 */
  PG_EMIT_END      /* '}' closing an open polygon: depth - 1, close record */
};

PROCGEN_FN int pgEmitKind(int action, int in_polygon) {
  switch (action) {
    case PG_TURTLE_DRAW: return in_polygon ? PG_EMIT_VERTEX : PG_EMIT_SEGMENT;
    case PG_TURTLE_DRAW_SILENT: return in_polygon ? PG_EMIT_NONE : PG_EMIT_SEGMENT;
    case PG_TURTLE_MOVE:
    case PG_TURTLE_POLYGON_VERTEX: return in_polygon ? PG_EMIT_VERTEX : PG_EMIT_NONE;
    case PG_TURTLE_POLYGON_BEGIN: return PG_EMIT_BEGIN;
    case PG_TURTLE_POLYGON_END: return in_polygon ? PG_EMIT_END : PG_EMIT_NONE;
    default: return PG_EMIT_NONE;
  }
}

/* Output position of a walk: next segment, vertex record and polygon close,
 * and the polygon depth. */
typedef struct PgEmitCursor {
  pg_u64 segment;
  pg_u64 record;
  pg_u64 close;
  pg_i64 polygon_depth;
} PgEmitCursor;

/* Advances the cursor over one module's output without drawing it. */
PROCGEN_FN void pgCountEmit(int action, PgEmitCursor* c) {
  switch (pgEmitKind(action, c->polygon_depth > 0)) {
    case PG_EMIT_SEGMENT: c->segment += 1; break;
    case PG_EMIT_VERTEX: c->record += 1; break;
    case PG_EMIT_BEGIN: c->polygon_depth += 1; break;
    case PG_EMIT_END:
      c->close += 1;
      c->polygon_depth -= 1;
      break;
    default: break;
  }
}

#endif /* PROCGEN_LSYSTEM_EMIT_H */

/* interpret.cl — turtle interpretation on the device (Lipp, Wonka, Wimmer
 * §5), the OpenCL twin of cpu/interpret.cpp. The host driver is interpret.cpp.
 *
 * Stages (the drawing string: the input, or its homomorphism expansion made by
 * homomorphism.cl, in either case only turtle-acting modules matter):
 *  1. count — blockSummary: per block of PG_INTERPRET_BLOCK modules the
 *     polygon-depth map d -> max(d + add, floor) of its '{' / '}' and flags
 *     (brackets, '$'); blockStarts (one work item, a sequential max-plus scan
 *     over the blocks) gives every block its starting polygon depth;
 *     blockCount counts segments, vertex records, polygon closes and polygon
 *     events at that depth; an exclusive scan (scan.cl) turns the counts into
 *     output offsets, so geometry is scattered in place and lands in serial
 *     order. polygonEvents lists the '{' / '}' events the host needs to
 *     assemble polygons exactly as the serial polygon stack does.
 *  2a. non-branching strings without tropism or '$' (§5.1): linearLocal is
 *     the *matrix accumulation* — each chunk walks from the identity frame,
 *     writing geometry in chunk-local coordinates, and records its transform;
 *     linearScan (one work item) is the *matrix scan* over chunks; linearMap
 *     is *geometry generation*, mapping each chunk's local geometry with its
 *     start state. Chunk 0 starts from the real state and needs no mapping.
 *  2b. branching strings (§5.2.2, the work queue): a work item is (turtle
 *     state, modules [begin, end)); walkItems walks items in parallel. At a
 *     '[' whose branch is longer than 2 x PG_WALK_STACK modules the item
 *     splits: the branch and the continuation after the matching ']' (bracket
 *     partners from bracket_partners.cl, no depth limit) both start from the
 *     state at the '['; the item continues with the longer part and writes the
 *     shorter to its slots of a global array, so an item spawned in round r
 *     spans at most 1/2^r of the string and the rounds are O(log n) however
 *     deep the nesting. Short branches are walked inline with a small stack.
 *     An item whose slots are full writes its own continuation to the last
 *     one. compactItems packs the spawned items with a scan of their counts
 *     (the paper's compaction between rounds); rounds repeat until none is
 *     spawned. Every item starts from an exact copy of the state the serial
 *     turtle has there, so geometry equals the serial interpreter's up to the
 *     device's sin/cos (OpenCL C does not require them correctly rounded).
 * Per-module turtle logic is turtle.h, what each action emits is emit.h:
 * one copy shared with the host interpreters.
 */
#include "lsystem/emit.h"
#include "lsystem/opencl/interpret_types.h"
#include "lsystem/turtle.h"

#define PG_DRAW_STRING_PARAMS                                                               \
  __global const pg_u8 *symbols, __global const pg_u64 *param_offsets, __global const float *params, \
      pg_i32 parametric, pg_u64 n

/* table[c]: the action pgTurtleApply returns for c; table[256 + c]: 1 when c acts. */
#define PG_ACTION(x) table[(x)]
#define PG_ACTS(x) table[256 + (x)]

/* Strings of several instances (a scene, §6): starts[0..nstarts) are the
 * sorted first modules of the instances; the polygon depth restarts at 0 at
 * each. A single string passes {0}. */
#define PG_STARTS_PARAMS __global const pg_u64 *starts, pg_u64 nstarts

/* Index of the first start >= pos (nstarts when none). */
PROCGEN_FN pg_u64 pgFirstStartFrom(__global const pg_u64* starts, pg_u64 nstarts, pg_u64 pos) {
  pg_u64 lo = 0, hi = nstarts;
  while (lo < hi) {
    const pg_u64 mid = (lo + hi) / 2;
    if (starts[mid] < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

PROCGEN_FN pg_u64 pgStartAt(__global const pg_u64* starts, pg_u64 nstarts, pg_u64 j) {
  return j < nstarts ? starts[j] : (pg_u64)(-1);
}

/* -- 1. count ------------------------------------------------------------- */

__kernel void blockSummary(__global const pg_u8* symbols, pg_u64 n, __global const pg_u8* table, PG_STARTS_PARAMS,
                           __global long4* polygon_maps, __global pg_u32* flags) {
  const pg_u64 b = get_global_id(0);
  const pg_u64 begin = b * PG_INTERPRET_BLOCK;
  if (begin >= n) return;
  const pg_u64 end = min(n, begin + PG_INTERPRET_BLOCK);
  pg_i64 add = 0, floor_ = 0, reset = 0;
  pg_u32 f = 0;
  pg_u64 j = pgFirstStartFrom(starts, nstarts, begin);
  pg_u64 next = pgStartAt(starts, nstarts, j);
  for (pg_u64 i = begin; i < end; ++i) {
    while (i == next) { /* an instance starts: d -> 0 */
      add = 0;
      floor_ = 0;
      reset = 1;
      next = pgStartAt(starts, nstarts, ++j);
    }
    const pg_u8 x = symbols[i];
    const int a = PG_ACTION(x);
    if (x == '[' || x == ']') f |= 1u;
    else if (x == '$') f |= 2u;
    else if (a == PG_TURTLE_POLYGON_BEGIN) {
      add += 1;
      floor_ = max(floor_ + 1, (pg_i64)1);
    } else if (a == PG_TURTLE_POLYGON_END) {
      add -= 1;
      floor_ = max(floor_ - 1, (pg_i64)0);
    }
  }
  polygon_maps[b] = (long4)(add, floor_, reset, 0);
  flags[b] = f;
}

/* One work item: depth[b] = polygon depth at block b's start (depth[blocks]
 * at the end); summary[0] = the union of the block flags. */
__kernel void blockStarts(__global const long4* polygon_maps, __global const pg_u32* flags, pg_u64 blocks,
                          __global pg_i64* depth, __global pg_u32* summary) {
  if (get_global_id(0) != 0) return;
  pg_i64 d = 0;
  pg_u32 f = 0;
  for (pg_u64 b = 0; b < blocks; ++b) {
    depth[b] = d;
    const long4 m = polygon_maps[b];
    d = max((m.z ? 0 : d) + m.x, m.y);
    f |= flags[b];
  }
  depth[blocks] = d;
  summary[0] = f;
}

/* counts[b] = (segments, records, closes, polygon events) of block b; work
 * item `blocks` writes the zero the exclusive scan turns into the totals. */
__kernel void blockCount(__global const pg_u8* symbols, pg_u64 n, __global const pg_u8* table, PG_STARTS_PARAMS,
                         __global const pg_i64* depth, __global ulong4* counts) {
  const pg_u64 b = get_global_id(0);
  const pg_u64 blocks = (n + PG_INTERPRET_BLOCK - 1) / PG_INTERPRET_BLOCK;
  if (b > blocks) return;
  ulong4 r = (ulong4)(0);
  if (b < blocks) {
    PgEmitCursor c;
    c.segment = 0;
    c.record = 0;
    c.close = 0;
    c.polygon_depth = depth[b];
    pg_u64 events = 0;
    const pg_u64 begin = b * PG_INTERPRET_BLOCK;
    const pg_u64 end = min(n, begin + PG_INTERPRET_BLOCK);
    pg_u64 j = pgFirstStartFrom(starts, nstarts, begin);
    pg_u64 next = pgStartAt(starts, nstarts, j);
    for (pg_u64 i = begin; i < end; ++i) {
      while (i == next) { /* an instance starts: no polygon is open */
        c.polygon_depth = 0;
        next = pgStartAt(starts, nstarts, ++j);
      }
      const int a = PG_ACTION(symbols[i]);
      if (a == PG_TURTLE_POLYGON_BEGIN || (a == PG_TURTLE_POLYGON_END && c.polygon_depth > 0)) ++events;
      pgCountEmit(a, &c);
    }
    r = (ulong4)(c.segment, c.record, c.close, events);
  }
  counts[b] = r;
}

/* The output cursor at module `pos`: its block's offsets plus a recount. */
PROCGEN_FN PgEmitCursor pgCursorAt(__global const pg_u8* symbols, __global const pg_u8* table,
                                   __global const ulong4* offsets, __global const pg_i64* depth, PG_STARTS_PARAMS,
                                   pg_u64 pos, pg_u64* events) {
  const pg_u64 b = pos / PG_INTERPRET_BLOCK;
  const ulong4 o = offsets[b];
  PgEmitCursor c;
  c.segment = o.x;
  c.record = o.y;
  c.close = o.z;
  c.polygon_depth = depth[b];
  pg_u64 e = o.w;
  pg_u64 j = pgFirstStartFrom(starts, nstarts, b * PG_INTERPRET_BLOCK);
  pg_u64 next = pgStartAt(starts, nstarts, j);
  for (pg_u64 i = b * PG_INTERPRET_BLOCK; i < pos; ++i) {
    while (i == next) {
      c.polygon_depth = 0;
      next = pgStartAt(starts, nstarts, ++j);
    }
    const int a = PG_ACTION(symbols[i]);
    if (a == PG_TURTLE_POLYGON_BEGIN || (a == PG_TURTLE_POLYGON_END && c.polygon_depth > 0)) ++e;
    pgCountEmit(a, &c);
  }
  if (pos == next) c.polygon_depth = 0; /* pos itself starts an instance */
  *events = e;
  return c;
}

/* out[k] = (segments, records, closes, events) before module positions[k]. */
__kernel void cursorsAt(__global const pg_u8* symbols, __global const pg_u8* table, __global const ulong4* offsets,
                        __global const pg_i64* depth, PG_STARTS_PARAMS, __global const pg_u64* positions,
                        pg_u64 count, __global ulong4* out) {
  const pg_u64 k = get_global_id(0);
  if (k >= count) return;
  pg_u64 events;
  const PgEmitCursor c = pgCursorAt(symbols, table, offsets, depth, starts, nstarts, positions[k], &events);
  out[k] = (ulong4)(c.segment, c.record, c.close, events);
}

/* partner[i] = -1 where the partner lies in another instance's segment. */
__kernel void clampPartners(__global pg_i64* partner, pg_u64 n, PG_STARTS_PARAMS) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  const pg_i64 p = partner[i];
  if (p < 0) return;
  /* the instance of i: the last start <= i */
  const pg_u64 j = pgFirstStartFrom(starts, nstarts, i + 1);
  const pg_u64 lo = j > 0 ? starts[j - 1] : 0;
  const pg_u64 hi = j < nstarts ? starts[j] : n;
  if ((pg_u64)p < lo || (pg_u64)p >= hi) partner[i] = -1;
}

/* events[k] = (record index << 1) | 1 for '{', | 0 for a '}' closing a polygon. */
__kernel void polygonEvents(__global const pg_u8* symbols, pg_u64 n, __global const pg_u8* table,
                            PG_STARTS_PARAMS, __global const pg_i64* depth, __global const ulong4* offsets,
                            __global pg_u64* events) {
  const pg_u64 b = get_global_id(0);
  const pg_u64 begin = b * PG_INTERPRET_BLOCK;
  if (begin >= n || offsets[b].w == offsets[b + 1].w) return;
  const pg_u64 end = min(n, begin + PG_INTERPRET_BLOCK);
  PgEmitCursor c;
  c.segment = offsets[b].x;
  c.record = offsets[b].y;
  c.close = offsets[b].z;
  c.polygon_depth = depth[b];
  pg_u64 e = offsets[b].w;
  pg_u64 j = pgFirstStartFrom(starts, nstarts, begin);
  pg_u64 next = pgStartAt(starts, nstarts, j);
  for (pg_u64 i = begin; i < end; ++i) {
    while (i == next) {
      c.polygon_depth = 0;
      next = pgStartAt(starts, nstarts, ++j);
    }
    const int a = PG_ACTION(symbols[i]);
    if (a == PG_TURTLE_POLYGON_BEGIN) events[e++] = (c.record << 1) | 1u;
    else if (a == PG_TURTLE_POLYGON_END && c.polygon_depth > 0) events[e++] = c.record << 1;
    pgCountEmit(a, &c);
  }
}

/* -- shared: one module ----------------------------------------------------- */

/* Applies module i to the turtle and writes what it emits at the cursor. */
PROCGEN_FN void pgInterpretModule(PgTurtle* t, const PgTurtleView* view, pg_u8 x,
                                  __global const pg_u64* param_offsets, __global const float* params,
                                  pg_i32 parametric, pg_u64 i, PgEmitCursor* c, pg_i32 instance,
                                  __global PgSegment* segments, __global float* records,
                                  __global pg_i32* close_colors) {
  float p[1];
  pg_i32 np = 0;
  if (parametric) {
    np = (pg_i32)(param_offsets[i + 1] - param_offsets[i]);
    if (np > 0) p[0] = params[param_offsets[i]];
  }
  const float prev[3] = {t->pos[0], t->pos[1], t->pos[2]};
  const int action = pgTurtleApply(t, x, p, np, view);
  switch (pgEmitKind(action, c->polygon_depth > 0)) {
    case PG_EMIT_SEGMENT: {
      PgSegment s;
      for (int k = 0; k < 3; ++k) {
        s.start[k] = prev[k];
        s.end[k] = t->pos[k];
      }
      s.width = t->width;
      s.color = t->color;
      s.depth = t->depth;
      s.instance = instance;
      segments[c->segment++] = s;
      break;
    }
    case PG_EMIT_VERTEX:
      for (int k = 0; k < 3; ++k) records[3 * c->record + (pg_u64)k] = t->pos[k];
      c->record += 1;
      break;
    case PG_EMIT_BEGIN: c->polygon_depth += 1; break;
    case PG_EMIT_END:
      close_colors[c->close++] = t->color;
      c->polygon_depth -= 1;
      break;
    default: break;
  }
}

/* -- 2a. non-branching: matrix accumulation, scan, geometry generation ---- */

__kernel void linearLocal(PG_DRAW_STRING_PARAMS, __global const pg_u8* table, __global const pg_i64* depth,
                          __global const ulong4* offsets, __global const PgInterpretConfig* config,
                          __global PgLocalTransform* local_out, __global PgSegment* segments,
                          __global float* records, __global pg_i32* close_colors) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunk = (pg_u64)PG_INTERPRET_BLOCK * PG_LINEAR_CHUNK_BLOCKS;
  const pg_u64 begin = c * chunk;
  if (begin >= n) return;
  const pg_u64 end = min(n, begin + chunk);
  const PgTurtleView view = config->view;
  const pg_i32 instance = config->instance;
  PgTurtle t = config->initial;
  if (c > 0) {
    /* The identity frame in the turtle's own basis: H, L, U = e1, e2, e3. */
    pgTurtleInit(&t, 1.0f);
    t.h[0] = 1.0f; t.h[1] = 0.0f; t.h[2] = 0.0f;
    t.l[0] = 0.0f; t.l[1] = 1.0f; t.l[2] = 0.0f;
    t.u[0] = 0.0f; t.u[1] = 0.0f; t.u[2] = 1.0f;
  }
  PgLocalTransform L;
  L.width_set = 0;
  L.color_set = 0;
  L.width_exact_segment = (pg_u64)(-1);
  L.color_exact_segment = (pg_u64)(-1);
  L.color_exact_close = (pg_u64)(-1);
  const pg_u64 b = begin / PG_INTERPRET_BLOCK;
  PgEmitCursor cur;
  cur.segment = offsets[b].x;
  cur.record = offsets[b].y;
  cur.close = offsets[b].z;
  cur.polygon_depth = depth[b];
  for (pg_u64 i = begin; i < end; ++i) {
    const pg_u8 x = symbols[i];
    if (!PG_ACTS(x)) continue;
    pgInterpretModule(&t, &view, x, param_offsets, params, parametric, i, &cur, instance, segments, records,
                      close_colors);
    /* '!' and '\'' with a parameter set the width / colour (turtle.h): from
     * here on the chunk's values do not depend on its start state. */
    const int has_param = parametric && param_offsets[i + 1] > param_offsets[i];
    if (has_param && x == '!' && !L.width_set) {
      L.width_set = 1;
      L.width_exact_segment = cur.segment;
    } else if (has_param && x == '\'' && !L.color_set) {
      L.color_set = 1;
      L.color_exact_segment = cur.segment;
      L.color_exact_close = cur.close;
    }
  }
  L.end = t;
  local_out[c] = L;
}

/* One work item: start[c] = the world state at chunk c's start. */
__kernel void linearScan(__global const PgLocalTransform* local_in, pg_u64 chunks,
                         __global const PgInterpretConfig* config, __global PgTurtle* start) {
  if (get_global_id(0) != 0 || chunks == 0) return;
  start[0] = config->initial;
  if (chunks > 1) start[1] = local_in[0].end;
  for (pg_u64 c = 2; c < chunks; ++c) {
    const PgTurtle S = start[c - 1];
    const PgLocalTransform L = local_in[c - 1];
    PgTurtle r = S;
    for (int k = 0; k < 3; ++k) {
      r.pos[k] = S.pos[k] + S.h[k] * L.end.pos[0] + S.l[k] * L.end.pos[1] + S.u[k] * L.end.pos[2];
      r.h[k] = S.h[k] * L.end.h[0] + S.l[k] * L.end.h[1] + S.u[k] * L.end.h[2];
      r.l[k] = S.h[k] * L.end.l[0] + S.l[k] * L.end.l[1] + S.u[k] * L.end.l[2];
      r.u[k] = S.h[k] * L.end.u[0] + S.l[k] * L.end.u[1] + S.u[k] * L.end.u[2];
    }
    r.width = L.width_set ? L.end.width : S.width * L.end.width;
    r.color = L.color_set ? L.end.color : S.color + L.end.color;
    r.depth = S.depth;
    start[c] = r;
  }
}

PROCGEN_FN void pgMapPoint(const PgTurtle* S, __global float* p) {
  const float x = p[0], y = p[1], z = p[2];
  for (int k = 0; k < 3; ++k) p[k] = S->pos[k] + S->h[k] * x + S->l[k] * y + S->u[k] * z;
}

/* Geometry generation: chunk c (> 0) maps its local geometry with start[c]. */
__kernel void linearMap(pg_u64 n, __global const ulong4* offsets, __global const PgLocalTransform* local_in,
                        __global const PgTurtle* start, __global PgSegment* segments, __global float* records,
                        __global pg_i32* close_colors) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunk = (pg_u64)PG_INTERPRET_BLOCK * PG_LINEAR_CHUNK_BLOCKS;
  if (c == 0 || c * chunk >= n) return;
  const pg_u64 blocks = (n + PG_INTERPRET_BLOCK - 1) / PG_INTERPRET_BLOCK;
  const pg_u64 b0 = c * PG_LINEAR_CHUNK_BLOCKS;
  const pg_u64 b1 = min(blocks, b0 + PG_LINEAR_CHUNK_BLOCKS);
  const ulong4 first = offsets[b0], last = offsets[b1];
  const PgTurtle S = start[c];
  const PgLocalTransform L = local_in[c];
  for (pg_u64 k = first.x; k < last.x; ++k) {
    __global PgSegment* g = segments + k;
    pgMapPoint(&S, g->start);
    pgMapPoint(&S, g->end);
    if (k < L.width_exact_segment) g->width *= S.width;
    if (k < L.color_exact_segment) g->color += S.color;
    g->depth += S.depth;
  }
  for (pg_u64 k = first.y; k < last.y; ++k) pgMapPoint(&S, records + 3 * k);
  for (pg_u64 k = first.z; k < last.z && k < L.color_exact_close; ++k) close_colors[k] += S.color;
}

/* -- 2b. branching: the work queue ------------------------------------------ */

PROCGEN_FN void pgSpawn(__global PgWorkItem* out, pg_u64 slot, const PgTurtle* state, pg_u64 begin, pg_u64 end,
                        pg_u32 config) {
  PgWorkItem w;
  w.state = *state;
  w.begin = begin;
  w.end = end;
  w.config = config;
  w.reserved = 0;
  out[slot] = w;
}

/* One round: item g walks items[g]; spawned items go to spawned[g * slots ..),
 * their number to spawn_counts[g] (work item `count` writes the scan's zero). */
__kernel void walkItems(PG_DRAW_STRING_PARAMS, __global const pg_u8* table, __global const pg_i64* partner,
                        __global const pg_i64* depth, __global const ulong4* offsets, PG_STARTS_PARAMS,
                        __global const PgInterpretConfig* configs, __global const PgWorkItem* items, pg_u64 count,
                        pg_u64 slots, __global PgWorkItem* spawned, __global pg_i64* spawn_counts,
                        __global PgSegment* segments, __global float* records, __global pg_i32* close_colors) {
  const pg_u64 g = get_global_id(0);
  if (g > count) return;
  if (g == count) {
    spawn_counts[g] = 0;
    return;
  }
  const PgWorkItem item = items[g];
  const PgTurtleView view = configs[item.config].view;
  const pg_i32 instance = configs[item.config].instance;
  PgTurtle t = item.state;
  pg_u64 i = item.begin, end = item.end;
  pg_u64 unused_events;
  PgEmitCursor cur = pgCursorAt(symbols, table, offsets, depth, starts, nstarts, i, &unused_events);
  PgTurtle stack[PG_WALK_STACK];
  int sp = 0;
  const pg_u64 base = g * slots;
  pg_u64 used = 0;
  while (i < end) {
    const pg_u8 x = symbols[i];
    if (!PG_ACTS(x)) {
      ++i;
      continue;
    }
    if (x == '[') {
      const pg_i64 p = partner[i];
      if (p < 0) {
        /* Never closed: nothing pops this state, so it need not be kept. */
        t.depth += 1;
        ++i;
        continue;
      }
      const pg_u64 close = (pg_u64)p;
      if (sp > 0 || close - i + 1 <= 2 * PG_WALK_STACK) {
        if (sp < PG_WALK_STACK) { /* always: a branch this short nests at most PG_WALK_STACK deep */
          stack[sp++] = t;
          t.depth += 1;
        }
        ++i;
        continue;
      }
      if (used + 1 == slots) {
        /* No slot left for a split: this item's rest becomes the last spawned item. */
        pgSpawn(spawned, base + used++, &t, i, end, item.config);
        break;
      }
      const pg_u64 branch = close - i - 1, after = end - close - 1;
      if (branch >= after) {
        if (after > 0) pgSpawn(spawned, base + used++, &t, close + 1, end, item.config);
        t.depth += 1;
        end = close;
        ++i;
      } else {
        PgTurtle b = t;
        b.depth += 1;
        pgSpawn(spawned, base + used++, &b, i + 1, close, item.config);
        i = close + 1;
        cur = pgCursorAt(symbols, table, offsets, depth, starts, nstarts, i, &unused_events);
      }
      continue;
    }
    if (x == ']') {
      /* A matched ']' here closes an inline branch; an unmatched one meets an
       * empty serial stack and is ignored. */
      if (sp > 0 && partner[i] >= 0) t = stack[--sp];
      ++i;
      continue;
    }
    pgInterpretModule(&t, &view, x, param_offsets, params, parametric, i, &cur, instance, segments, records,
                      close_colors);
    ++i;
  }
  spawn_counts[g] = (pg_i64)used;
}

/* Packs the spawned items: offsets[g] is the exclusive scan of spawn_counts. */
__kernel void compactItems(__global const PgWorkItem* spawned, pg_u64 count, pg_u64 slots,
                           __global const pg_i64* offsets, __global PgWorkItem* items) {
  const pg_u64 g = get_global_id(0);
  if (g >= count) return;
  const pg_u64 o = (pg_u64)offsets[g];
  const pg_u64 m = (pg_u64)(offsets[g + 1] - offsets[g]);
  for (pg_u64 k = 0; k < m; ++k) items[o + k] = spawned[g * slots + k];
}

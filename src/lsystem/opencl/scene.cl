/* scene.cl — many L-systems derived together on the device (Lipp, Wonka,
 * Wimmer §6), the OpenCL twin of the batched passes of scene.cpp. Every
 * instance owns a segment of one combined module string; each pass is one
 * count -> scan -> rewrite over the whole string (§4.2), in chunks that never
 * straddle two segments, each chunk reading its own instance's rule tables
 * (§6: the per-system tables, here concatenated, a chunk moving the base
 * pointers) and seed. Positions, context search and bracket partners are
 * relative to the segment, so every instance derives exactly the string it
 * derives alone. An instance that is not rewritten in a pass is copied.
 *  - sceneCount / sceneRewrite: count.cl / rewrite.cl per chunk of a slot;
 *  - scenePartners: bracket partners relative to each segment, from the
 *    depth tree of the whole string (bracket_partners.cl): a partner found
 *    outside the segment means unmatched inside it;
 *  - sceneCutMark / sceneCutCount / sceneCutWrite: cut.cl per segment (a '%'
 *    at an instance's top level cuts to its segment's end, not further);
 *  - gatherSlots: the scanned offsets at every segment's first chunk — the
 *    new segment starts and per-instance rewrite counts, the only values read
 *    back between passes.
 */
#include "lsystem/opencl/bracket_tree.h"
#include "lsystem/opencl/chunked_string.h"
#include "lsystem/opencl/kernel_args.h"
#include "lsystem/opencl/rewrite_steps.h"
#include "lsystem/opencl/scene_types.h"

#define PG_SCENE_TABLES                                                                            \
  __global const pg_i32 *all_first_by_symbol, __global const PgProduction *all_productions,      \
      __global const PgPatternModule *all_patterns, __global const PgSuccessorModule *all_successors, \
      __global const pg_i32 *all_successor_exprs, __global const pg_u32 *all_code,                 \
      __global const float *all_constants, __global const float *all_globals,                      \
      __global const pg_u8 *all_ignored

#define PG_SCENE_RULES(sl)                                                                        \
  pgSceneRules(&(sl), all_first_by_symbol, all_productions, all_patterns, all_successors,        \
               all_successor_exprs, all_code, all_constants, all_globals, all_ignored)

PROCGEN_FN PgRules pgSceneRules(const PgSceneSlot* sl, __global const pg_i32* first_by_symbol,
                                __global const PgProduction* productions, __global const PgPatternModule* patterns,
                                __global const PgSuccessorModule* successors,
                                __global const pg_i32* successor_exprs, __global const pg_u32* code,
                                __global const float* constants, __global const float* globals,
                                __global const pg_u8* ignored) {
  return pgMakeRules(first_by_symbol + sl->first_by_symbol, productions + sl->productions, patterns + sl->patterns,
                     successors + sl->successors, successor_exprs + sl->successor_exprs, code + sl->code,
                     constants + sl->constants, globals + sl->globals, ignored + sl->ignored);
}

/* The last slot whose start is <= x, by first chunk (by_chunk) or by first
 * module: slots are in order of both. */
PROCGEN_FN pg_u32 pgLastSlotStartingAtMost(__global const PgSceneSlot* slots, pg_u32 nslots, pg_i32 by_chunk,
                                           pg_u64 x) {
  pg_u32 lo = 0, hi = nslots - 1;
  while (lo < hi) {
    const pg_u32 mid = (lo + hi + 1) / 2;
    const pg_u64 start = by_chunk ? slots[mid].first_chunk : slots[mid].seg_begin;
    if (start <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The slot owning chunk c (empty segments share their first chunk with the
 * next one, which owns it). */
PROCGEN_FN pg_u32 pgSlotOfChunk(__global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 c) {
  return pgLastSlotStartingAtMost(slots, nslots, 1, c);
}

/* The slot owning module i (non-empty segments only contain modules). */
PROCGEN_FN pg_u32 pgSlotOfModule(__global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 i) {
  return pgLastSlotStartingAtMost(slots, nslots, 0, i);
}

/* Chunk c's slot and its segment-relative range. */
PROCGEN_FN PgSceneSlot pgChunkRange(__global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 c, pg_u64 chunk,
                                    pg_u64* begin, pg_u64* end) {
  const PgSceneSlot sl = slots[pgSlotOfChunk(slots, nslots, c)];
  const pg_u64 len = sl.seg_end - sl.seg_begin;
  *begin = (c - sl.first_chunk) * chunk;
  *end = min(len, *begin + chunk);
  return sl;
}

PROCGEN_FN PgStringView pgSegmentView(const PgSceneSlot* sl, __global const pg_u8* symbols,
                                      __global const pg_u64* param_offsets, __global const float* params,
                                      pg_i32 parametric) {
  PgStringView v;
  v.symbols = symbols + sl->seg_begin;
  v.param_offsets = parametric ? param_offsets + sl->seg_begin : 0;
  v.params = params;
  v.length = sl->seg_end - sl->seg_begin;
  return v;
}

__kernel void sceneCount(PG_SCENE_TABLES, __global const pg_u8* symbols, __global const pg_u64* param_offsets,
                         __global const float* params, pg_i32 parametric, __global const pg_i64* partner,
                         __global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 chunks, pg_u64 chunk,
                         pg_u32 phase, __global pg_i32* choice, __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    pg_u64 begin, end;
    const PgSceneSlot sl = pgChunkRange(slots, nslots, c, chunk, &begin, &end);
    const PgStringView in = pgSegmentView(&sl, symbols, param_offsets, params, parametric);
    if (!sl.rewrite) {
      acc.x = end - begin;
      if (parametric) acc.y = in.param_offsets[end] - in.param_offsets[begin];
    } else {
      const PgRules rules = PG_SCENE_RULES(sl);
      __global const pg_i64* part = sl.has_partner ? partner + sl.seg_begin : 0;
      __global pg_i32* ch = choice + sl.seg_begin;
      float slots_[PG_MAX_FORMALS];
      PgRandomStream rng = pgPassStream(sl.seed, phase);
      for (pg_u64 i = begin; i < end; ++i) {
        const pg_i32 j = pgChooseProduction(&rules, &in, part, i, slots_, &rng);
        ch[i] = j;
        pgAddModuleOutput(&acc, &rules, &in, i, j);
      }
    }
  }
  counts[c] = acc;
}

__kernel void sceneRewrite(PG_SCENE_TABLES, __global const pg_u8* symbols, __global const pg_u64* param_offsets,
                           __global const float* params, pg_i32 parametric, __global const pg_i64* partner,
                           __global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 chunks, pg_u64 chunk,
                           pg_u32 phase, __global const pg_i32* choice, __global const ulong4* offsets,
                           __global pg_u8* out_symbols, __global pg_u64* out_offsets, __global float* out_params) {
  const pg_u64 c = get_global_id(0);
  if (c >= chunks) return;
  pg_u64 begin, end;
  const PgSceneSlot sl = pgChunkRange(slots, nslots, c, chunk, &begin, &end);
  const PgStringView in = pgSegmentView(&sl, symbols, param_offsets, params, parametric);
  PgStringWriter out = pgStringWriter(out_symbols, out_offsets, out_params, parametric, offsets[c]);
  const PgRules rules = PG_SCENE_RULES(sl);
  __global const pg_i64* part = sl.has_partner ? partner + sl.seg_begin : 0;
  __global const pg_i32* ch = choice + sl.seg_begin;
  float slots_[PG_MAX_FORMALS];
  PgRandomStream rng = pgPassStream(sl.seed, phase);
  pgRewriteRange(&out, &rules, &in, part, sl.rewrite ? ch : 0, begin, end, slots_, &rng);
}

/* partner[i] relative to i's segment (-1: unmatched inside it). */
__kernel void scenePartners(__global const pg_u8* symbols, pg_u64 n, __global const pg_i64* tree,
                            __global const pg_u64* level_info, pg_i32 levels, __global const PgSceneSlot* slots,
                            pg_u32 nslots, __global pg_i64* partner) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  const pg_u8 c = symbols[i];
  pg_i64 r = -1;
  if (c == '[' || c == ']') {
    const PgMinTree t = pgBracketDepthTree(tree, level_info, levels);
    r = pgBracketPartner(&t, c, i);
    const PgSceneSlot sl = slots[pgSlotOfModule(slots, nslots, i)];
    r = (r < (pg_i64)sl.seg_begin || r >= (pg_i64)sl.seg_end) ? -1 : r - (pg_i64)sl.seg_begin;
  }
  partner[i] = r;
}

/* marks[0..n] must be zero (cut.cl's zeroInts). */
__kernel void sceneCutMark(__global const pg_u8* symbols, pg_u64 n, __global const pg_i64* tree,
                           __global const pg_u64* level_info, pg_i32 levels, __global const PgSceneSlot* slots,
                           pg_u32 nslots, __global int* marks) {
  const pg_u64 i = get_global_id(0);
  if (i >= n || symbols[i] != '%') return;
  const PgSceneSlot sl = slots[pgSlotOfModule(slots, nslots, i)];
  if (!sl.cut) return;
  const PgMinTree t = pgBracketDepthTree(tree, level_info, levels);
  const pg_i64 region_end = pgCutRegionEnd(&t, i);
  /* a region past the segment's end is a cut at the instance's top level */
  const pg_u64 end = (region_end < 0 || (pg_u64)region_end >= sl.seg_end) ? sl.seg_end : (pg_u64)region_end;
  atomic_inc(&marks[i]);
  atomic_dec(&marks[end]);
}

/* After the exclusive scan of marks, module k is removed when covered[k + 1] > 0. */
__kernel void sceneCutCount(__global const pg_u64* param_offsets, pg_i32 parametric, __global const int* covered,
                            __global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 chunks, pg_u64 chunk,
                            __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    pg_u64 begin, end;
    const PgSceneSlot sl = pgChunkRange(slots, nslots, c, chunk, &begin, &end);
    const PgStringView in = pgMakeString(0, param_offsets, 0, sl.seg_end, parametric); /* sizes need the offsets only */
    acc = pgKeptSize(&in, covered, sl.seg_begin + begin, sl.seg_begin + end);
  }
  counts[c] = acc;
}

__kernel void sceneCutWrite(__global const pg_u8* symbols, __global const pg_u64* param_offsets,
                            __global const float* params, pg_i32 parametric, __global const int* covered,
                            __global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 chunks, pg_u64 chunk,
                            __global const ulong4* offsets, __global pg_u8* out_symbols,
                            __global pg_u64* out_offsets, __global float* out_params) {
  const pg_u64 c = get_global_id(0);
  if (c >= chunks) return;
  pg_u64 begin, end;
  const PgSceneSlot sl = pgChunkRange(slots, nslots, c, chunk, &begin, &end);
  const PgStringView in = pgMakeString(symbols, param_offsets, params, sl.seg_end, parametric);
  PgStringWriter out = pgStringWriter(out_symbols, out_offsets, out_params, parametric, offsets[c]);
  pgWriteKept(&out, &in, covered, sl.seg_begin + begin, sl.seg_begin + end);
}

/* out[k] = offsets[slots[k].first_chunk] for k < nslots, out[nslots] = offsets[chunks]. */
__kernel void gatherSlots(__global const ulong4* offsets, __global const PgSceneSlot* slots, pg_u32 nslots,
                          pg_u64 chunks, __global ulong4* out) {
  const pg_u64 k = get_global_id(0);
  if (k > nslots) return;
  out[k] = offsets[k < nslots ? slots[k].first_chunk : chunks];
}

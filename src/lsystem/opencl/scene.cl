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
#include "lsystem/match.h"
#include "lsystem/opencl/scene_types.h"
#include "opencl/min_tree.h"

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
  PgRules r;
  r.first_by_symbol = first_by_symbol + sl->first_by_symbol;
  r.productions = productions + sl->productions;
  r.patterns = patterns + sl->patterns;
  r.successors = successors + sl->successors;
  r.successor_exprs = successor_exprs + sl->successor_exprs;
  r.code = code + sl->code;
  r.constants = constants + sl->constants;
  r.globals = globals + sl->globals;
  r.ignored = ignored + sl->ignored;
  return r;
}

/* The slot owning chunk c: the last one whose first chunk is <= c (empty
 * segments share their first chunk with the next one). */
PROCGEN_FN pg_u32 pgSlotOfChunk(__global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 c) {
  pg_u32 lo = 0, hi = nslots - 1;
  while (lo < hi) {
    const pg_u32 mid = (lo + hi + 1) / 2;
    if (slots[mid].first_chunk <= c) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The slot owning module i (non-empty segments only contain modules). */
PROCGEN_FN pg_u32 pgSlotOfModule(__global const PgSceneSlot* slots, pg_u32 nslots, pg_u64 i) {
  pg_u32 lo = 0, hi = nslots - 1;
  while (lo < hi) {
    const pg_u32 mid = (lo + hi + 1) / 2;
    if (slots[mid].seg_begin <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
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
      PgRandomStream rng;
      rng.seed = sl.seed;
      rng.position = 0;
      rng.phase = phase;
      rng.draws = 0;
      for (pg_u64 i = begin; i < end; ++i) {
        pg_i32 j = PG_NO_PRODUCTION;
        if (rules.first_by_symbol[in.symbols[i]] != PG_NO_PRODUCTION) {
          rng.position = i;
          j = pgFindProduction(&rules, &in, part, i, slots_, &rng);
        }
        ch[i] = j;
        if (j == PG_NO_PRODUCTION) {
          acc.x += 1;
          acc.y += (pg_u64)pgParamCount(&in, i);
        } else {
          acc.x += (pg_u64)rules.productions[j].succ_count;
          acc.y += (pg_u64)rules.productions[j].succ_params;
          acc.z += 1;
        }
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
  pg_u64 out_module = offsets[c].x;
  pg_u64 out_param = offsets[c].y;
  const PgRules rules = PG_SCENE_RULES(sl);
  __global const pg_i64* part = sl.has_partner ? partner + sl.seg_begin : 0;
  __global const pg_i32* ch = choice + sl.seg_begin;
  float slots_[PG_MAX_FORMALS];
  PgRandomStream rng;
  rng.seed = sl.seed;
  rng.position = 0;
  rng.phase = phase;
  rng.draws = 0;
  for (pg_u64 i = begin; i < end; ++i) {
    const pg_i32 j = sl.rewrite ? ch[i] : PG_NO_PRODUCTION;
    if (j == PG_NO_PRODUCTION) {
      out_symbols[out_module] = in.symbols[i];
      if (parametric) {
        out_offsets[out_module] = out_param;
        for (pg_u64 k = in.param_offsets[i]; k < in.param_offsets[i + 1]; ++k) out_params[out_param++] = in.params[k];
      }
      ++out_module;
      continue;
    }
    const PgProduction p = rules.productions[j];
    if (!parametric) {
      for (pg_i32 m = 0; m < p.succ_count; ++m)
        out_symbols[out_module + m] = (pg_u8)rules.successors[p.succ_begin + m].symbol;
      out_module += (pg_u64)p.succ_count;
      continue;
    }
    if (p.num_formals) pgBindProduction(&rules, j, &in, part, i, slots_);
    rng.position = i;
    rng.draws = PG_DRAW_SUCCESSOR;
    for (pg_i32 m = 0; m < p.succ_count; ++m) {
      const PgSuccessorModule sm = rules.successors[p.succ_begin + m];
      out_symbols[out_module] = (pg_u8)sm.symbol;
      out_offsets[out_module] = out_param;
      for (pg_i32 k = 0; k < sm.num_params; ++k)
        out_params[out_param++] = pgEval(&rules, rules.successor_exprs[sm.first_expr + k], slots_, &rng);
      ++out_module;
    }
  }
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
    PgMinTree t;
    t.tree = tree;
    t.off = level_info;
    t.len = level_info + levels;
    t.levels = levels;
    if (c == ']') {
      r = pgPrevAtMost(&t, i, tree[i] - 1);
    } else {
      const pg_i64 m = pgNextAtMost(&t, i + 1, tree[i]);
      r = m < 0 ? -1 : m - 1;
    }
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
  PgMinTree t;
  t.tree = tree;
  t.off = level_info;
  t.len = level_info + levels;
  t.levels = levels;
  const pg_i64 m = pgNextAtMost(&t, i + 1, tree[i] - 1);
  const pg_u64 end = (m < 0 || (pg_u64)(m - 1) >= sl.seg_end) ? sl.seg_end : (pg_u64)(m - 1);
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
    for (pg_u64 k = sl.seg_begin + begin; k < sl.seg_begin + end; ++k) {
      if (covered[k + 1] > 0) continue;
      acc.x += 1;
      if (parametric) acc.y += param_offsets[k + 1] - param_offsets[k];
    }
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
  pg_u64 w = offsets[c].x, wp = offsets[c].y;
  for (pg_u64 k = sl.seg_begin + begin; k < sl.seg_begin + end; ++k) {
    if (covered[k + 1] > 0) continue;
    out_symbols[w] = symbols[k];
    if (parametric) {
      out_offsets[w] = wp;
      for (pg_u64 q = param_offsets[k]; q < param_offsets[k + 1]; ++q) out_params[wp++] = params[q];
    }
    ++w;
  }
}

/* out[k] = offsets[slots[k].first_chunk] for k < nslots, out[nslots] = offsets[chunks]. */
__kernel void gatherSlots(__global const ulong4* offsets, __global const PgSceneSlot* slots, pg_u32 nslots,
                          pg_u64 chunks, __global ulong4* out) {
  const pg_u64 k = get_global_id(0);
  if (k > nslots) return;
  out[k] = offsets[k < nslots ? slots[k].first_chunk : chunks];
}

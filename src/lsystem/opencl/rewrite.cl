/* rewrite.cl — stage "rewrite" of one rewriting pass (paper §4.2 step 3,
 * Figure 4).
 *
 * One work item per chunk, the same chunks as count.cl: starting at the
 * chunk's scanned output offsets (modules, parameters) it writes, for every
 * module, either the module unchanged (no production) or the chosen
 * production's successor, evaluating each successor parameter with the
 * expression stack machine (expr.h) over the formals re-bound by match.h.
 * Random draws use the same keys as the serial twin rewriteChunk
 * (serial/rewrite.cpp), so outputs are bit-identical. Chunks write disjoint
 * ranges: no atomics. rewriteD0L is the same stage for D0L tables.
 */
#include "lsystem/opencl/kernel_args.h"
#include "lsystem/opencl/rewrite_steps.h"

__kernel void rewrite(PG_RULES_PARAMS, PG_STRING_PARAMS, __global const pg_i64* partner, pg_i32 has_partner,
                      pg_u64 seed, pg_u32 phase, pg_u64 chunk, __global const pg_i32* choice,
                      __global const ulong4* offsets, pg_i32 out_parametric, __global pg_u8* out_symbols,
                      __global pg_u64* out_offsets, __global float* out_params) {
  const pg_u64 c = get_global_id(0);
  if (c >= pgChunkCount(n, chunk)) return;
  const PgRules rules = PG_MAKE_RULES();
  const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
  __global const pg_i64* part = has_partner ? partner : 0;
  float slots[PG_MAX_FORMALS];
  PgRandomStream rng = pgPassStream(seed, phase);
  PgStringWriter out = pgStringWriter(out_symbols, out_offsets, out_params, out_parametric, offsets[c]);
  pg_u64 begin, end;
  pgChunkBounds(c, chunk, n, &begin, &end);
  pgRewriteRange(&out, &rules, &in, part, choice, begin, end, slots, &rng);
}

/* D0L fast path: start[c] < 0 copies the letter, otherwise its successor is
 * bytes[start[c] .. start[c] + length[c]). */
__kernel void rewriteD0L(__global const pg_u8* symbols, pg_u64 n, __global const pg_u32* length,
                         __global const pg_i32* start, __global const pg_u8* bytes, pg_u64 chunk,
                         __global const ulong4* offsets, __global pg_u8* out) {
  const pg_u64 c = get_global_id(0);
  if (c >= pgChunkCount(n, chunk)) return;
  pg_u64 w = offsets[c].x;
  pg_u64 begin, end;
  pgChunkBounds(c, chunk, n, &begin, &end);
  for (pg_u64 i = begin; i < end; ++i) {
    const pg_u8 s = symbols[i];
    const pg_i32 b = start[s];
    if (b < 0) {
      out[w++] = s;
    } else {
      const pg_u32 len = length[s];
      for (pg_u32 k = 0; k < len; ++k) out[w++] = bytes[b + (pg_i32)k];
    }
  }
}

/* count.cl — stage "count" of one rewriting pass (paper §4.2 step 1, Figure 4).
 *
 * One work item per chunk of `chunk` consecutive input modules: it picks the
 * production of every module with the shared per-module logic of match.h
 * (letter and parameter count, bracket-aware context through the partner
 * array, condition, stochastic choice with Philox keyed by (seed, phase,
 * position) exactly as the serial twin countChunk in serial/rewrite.cpp),
 * stores the choice, and writes the chunk's output size as
 * (modules, parameters, rewritten modules, 0). Work item `chunks` writes the
 * zero that becomes the grand total after the exclusive scan (scan.cl).
 * countD0L is the same stage for D0L tables (no choice array needed).
 */
#include "lsystem/opencl/kernel_args.h"
#include "lsystem/opencl/rewrite_steps.h"

__kernel void count(PG_RULES_PARAMS, PG_STRING_PARAMS, __global const pg_i64* partner, pg_i32 has_partner,
                    pg_u64 seed, pg_u32 phase, pg_u64 chunk, __global pg_i32* choice,
                    __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = pgChunkCount(n, chunk);
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    const PgRules rules = PG_MAKE_RULES();
    const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
    __global const pg_i64* part = has_partner ? partner : 0;
    float slots[PG_MAX_FORMALS];
    PgRandomStream rng = pgPassStream(seed, phase);
    pg_u64 begin, end;
    pgChunkBounds(c, chunk, n, &begin, &end);
    for (pg_u64 i = begin; i < end; ++i) {
      const pg_i32 j = pgChooseProduction(&rules, &in, part, i, slots, &rng);
      choice[i] = j;
      pgAddModuleOutput(&acc, &rules, &in, i, j);
    }
  }
  counts[c] = acc;
}

/* D0L fast path: successor length per letter (1 for the identity). */
__kernel void countD0L(__global const pg_u8* symbols, pg_u64 n, __global const pg_u32* length,
                       pg_u64 chunk, __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = pgChunkCount(n, chunk);
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    pg_u64 begin, end;
    pgChunkBounds(c, chunk, n, &begin, &end);
    for (pg_u64 i = begin; i < end; ++i) acc.x += length[symbols[i]];
  }
  counts[c] = acc;
}

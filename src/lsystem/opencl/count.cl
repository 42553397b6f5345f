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
#include "lsystem/match.h"
#include "lsystem/opencl/kernel_args.h"

__kernel void count(PG_RULES_PARAMS, PG_STRING_PARAMS, __global const pg_i64* partner, pg_i32 has_partner,
                    pg_u64 seed, pg_u32 phase, pg_u64 chunk, __global pg_i32* choice,
                    __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = (n + chunk - 1) / chunk;
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    const PgRules rules = PG_MAKE_RULES();
    const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
    __global const pg_i64* part = has_partner ? partner : 0;
    float slots[PG_MAX_FORMALS];
    PgRandomStream rng;
    rng.seed = seed;
    rng.position = 0;
    rng.phase = phase;
    rng.draws = 0;
    const pg_u64 begin = c * chunk;
    const pg_u64 end = min(n, begin + chunk);
    for (pg_u64 i = begin; i < end; ++i) {
      pg_i32 j = PG_NO_PRODUCTION;
      if (rules.first_by_symbol[in.symbols[i]] != PG_NO_PRODUCTION) {
        rng.position = i;
        j = pgFindProduction(&rules, &in, part, i, slots, &rng);
      }
      choice[i] = j;
      if (j == PG_NO_PRODUCTION) {
        acc.x += 1;
        acc.y += (pg_u64)pgParamCount(&in, i);
      } else {
        acc.x += (pg_u64)productions[j].succ_count;
        acc.y += (pg_u64)productions[j].succ_params;
        acc.z += 1;
      }
    }
  }
  counts[c] = acc;
}

/* D0L fast path: successor length per letter (1 for the identity). */
__kernel void countD0L(__global const pg_u8* symbols, pg_u64 n, __global const pg_u32* length,
                       pg_u64 chunk, __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = (n + chunk - 1) / chunk;
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    const pg_u64 begin = c * chunk;
    const pg_u64 end = min(n, begin + chunk);
    for (pg_u64 i = begin; i < end; ++i) acc.x += length[symbols[i]];
  }
  counts[c] = acc;
}

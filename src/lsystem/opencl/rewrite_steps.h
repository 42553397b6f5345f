/* rewrite_steps.h — the per-module steps of a rewriting pass shared by the
 * derivation kernels (OpenCL C only): count.cl / rewrite.cl on one string,
 * scene.cl on each instance's segment and homomorphism.cl on each level pick
 * a production, size its output and write its successor with this code, so
 * the bit-identical match with the serial twins (serial/rewrite.cpp) is kept
 * in one place.
 */
#ifndef PROCGEN_LSYSTEM_OPENCL_REWRITE_STEPS_H
#define PROCGEN_LSYSTEM_OPENCL_REWRITE_STEPS_H

#include "common/clc.h"
#include "common/random.h"
#include "lsystem/match.h"
#include "lsystem/opencl/chunked_string.h"

/* The random stream of a pass, keyed (seed, phase); the caller sets each
 * module's position (and draws) before using it. */
PROCGEN_FN PgRandomStream pgPassStream(pg_u64 seed, pg_u32 phase) {
  PgRandomStream rng;
  rng.seed = seed;
  rng.position = 0;
  rng.phase = phase;
  rng.draws = 0;
  return rng;
}

/* The production that rewrites module i of `in` (its formals bound in
 * slots), or PG_NO_PRODUCTION: the module is copied. */
PROCGEN_FN pg_i32 pgChooseProduction(const PgRules* rules, const PgStringView* in, __global const pg_i64* partner,
                                     pg_u64 i, float* slots, PgRandomStream* rng) {
  if (rules->first_by_symbol[in->symbols[i]] == PG_NO_PRODUCTION) return PG_NO_PRODUCTION;
  rng->position = i;
  return pgFindProduction(rules, in, partner, i, slots, rng);
}

/* Adds the output of module i under choice j to size = (modules, parameters,
 * rewritten modules, 0): the module itself, or production j's successor. */
PROCGEN_FN void pgAddModuleOutput(ulong4* size, const PgRules* rules, const PgStringView* in, pg_u64 i, pg_i32 j) {
  if (j == PG_NO_PRODUCTION) {
    size->x += 1;
    size->y += (pg_u64)pgParamCount(in, i);
  } else {
    size->x += (pg_u64)rules->productions[j].succ_count;
    size->y += (pg_u64)rules->productions[j].succ_params;
    size->z += 1;
  }
}

/* Appends the successor of production j, which rewrites module i of `in`.
 * A non-parametric output gets the letters only; otherwise the formals are
 * re-bound (match.h) and every successor parameter evaluated with `rng`, which
 * the caller has set to this module's position and PG_DRAW_SUCCESSOR. */
PROCGEN_FN void pgWriteSuccessor(PgStringWriter* out, const PgRules* rules, pg_i32 j, const PgStringView* in,
                                 __global const pg_i64* partner, pg_u64 i, float* slots, PgRandomStream* rng) {
  const PgProduction p = rules->productions[j];
  if (!out->parametric) {
    for (pg_i32 m = 0; m < p.succ_count; ++m)
      out->symbols[out->module + m] = (pg_u8)rules->successors[p.succ_begin + m].symbol;
    out->module += (pg_u64)p.succ_count;
    return;
  }
  if (p.num_formals) pgBindProduction(rules, j, in, partner, i, slots);
  for (pg_i32 m = 0; m < p.succ_count; ++m) {
    const PgSuccessorModule sm = rules->successors[p.succ_begin + m];
    out->symbols[out->module] = (pg_u8)sm.symbol;
    out->param_offsets[out->module] = out->param;
    for (pg_i32 k = 0; k < sm.num_params; ++k)
      out->params[out->param++] = pgEval(rules, rules->successor_exprs[sm.first_expr + k], slots, rng);
    ++out->module;
  }
}

/* Rewrites modules [begin, end) of `in` into `out`: each one copied when
 * choice[i] is PG_NO_PRODUCTION (or `choice` is null: a segment that is not
 * rewritten), otherwise replaced by the chosen successor with the draws keyed
 * by its position. The loop of rewrite.cl and scene.cl (paper §4.2 step 3). */
PROCGEN_FN void pgRewriteRange(PgStringWriter* out, const PgRules* rules, const PgStringView* in,
                               __global const pg_i64* partner, __global const pg_i32* choice, pg_u64 begin,
                               pg_u64 end, float* slots, PgRandomStream* rng) {
  for (pg_u64 i = begin; i < end; ++i) {
    const pg_i32 j = choice ? choice[i] : PG_NO_PRODUCTION;
    if (j == PG_NO_PRODUCTION) {
      pgCopyModule(out, in, i);
      continue;
    }
    rng->position = i;
    rng->draws = PG_DRAW_SUCCESSOR;
    pgWriteSuccessor(out, rules, j, in, partner, i, slots, rng);
  }
}

#endif /* PROCGEN_LSYSTEM_OPENCL_REWRITE_STEPS_H */

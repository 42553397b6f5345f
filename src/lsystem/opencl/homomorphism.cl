/* homomorphism.cl — the homomorphism applied on the device before drawing
 * (cpfg; paper §5 draws the derived string, §4.2 gives the rewriting stages
 * reused here). The OpenCL twin of the expansion the host interpreters run
 * on the fly (interpret_module.hpp, HomomorphismExpander).
 *
 * The recursive expansion is done level by level, each level one count ->
 * scan -> write pass like a derivation pass (count.cl / rewrite.cl):
 *  - level 0 is the input string; a module at level d < maximum depth with an
 *    applicable homomorphism production is replaced by its successor, whose
 *    modules form a *group*: at level d + 1 they see only their group as the
 *    string (context search, no bracket partners), as the serial recursion
 *    sees the successor buffer;
 *  - a module with no production (or at the maximum depth) is *final*: it is
 *    kept, in place, when the turtle acts on it and dropped otherwise, and is
 *    copied through later levels;
 *  - random draws are keyed (seed, position at level 0 else 0,
 *    0xffffff00 | level), as serial does.
 * Order is preserved by the scan, so after the last level the string holds
 * exactly the modules the serial turtle visits, in order.
 */
#include "lsystem/match.h"
#include "lsystem/opencl/kernel_args.h"

#define PG_HOM_PHASE(level) (0xffffff00u | (pg_u32)(level))

/* The string module i is searched in: the whole level-0 string, or its group. */
PROCGEN_FN PgStringView pgGroupView(const PgStringView* in, pg_i32 level, __global const pg_u64* group_begin,
                                    __global const pg_u32* group_length, pg_u64 i, pg_u64* at) {
  PgStringView v = *in;
  *at = i;
  if (level > 0) {
    const pg_u64 gb = group_begin[i];
    v.symbols = in->symbols + gb;
    if (v.param_offsets) v.param_offsets = in->param_offsets + gb;
    v.length = group_length[i];
    *at = i - gb;
  }
  return v;
}

/* acts[c]: 1 when the turtle acts on c. */
__kernel void homCount(PG_RULES_PARAMS, PG_STRING_PARAMS, __global const pg_i64* partner, pg_i32 has_partner,
                       __global const pg_u8* final_in, __global const pg_u64* group_begin,
                       __global const pg_u32* group_length, __global const pg_u8* acts, pg_i32 level,
                       pg_i32 expand, pg_u64 seed, pg_u64 chunk, __global pg_i32* choice, __global ulong4* counts) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = (n + chunk - 1) / chunk;
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    const PgRules rules = PG_MAKE_RULES();
    const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
    __global const pg_i64* part = (level == 0 && has_partner) ? partner : 0;
    float slots[PG_MAX_FORMALS];
    const pg_u64 begin = c * chunk;
    const pg_u64 end = min(n, begin + chunk);
    for (pg_u64 i = begin; i < end; ++i) {
      const pg_u8 x = in.symbols[i];
      pg_i32 j = PG_NO_PRODUCTION;
      if ((level == 0 || !final_in[i]) && expand && rules.first_by_symbol[x] != PG_NO_PRODUCTION) {
        pg_u64 at;
        const PgStringView v = pgGroupView(&in, level, group_begin, group_length, i, &at);
        PgRandomStream rng;
        rng.seed = seed;
        rng.position = level == 0 ? i : 0;
        rng.phase = PG_HOM_PHASE(level);
        rng.draws = 0;
        j = pgFindProduction(&rules, &v, part, at, slots, &rng);
      }
      choice[i] = j;
      if (j == PG_NO_PRODUCTION) {
        if (acts[x]) {
          acc.x += 1;
          acc.y += (pg_u64)pgParamCount(&in, i);
        }
      } else {
        acc.x += (pg_u64)productions[j].succ_count;
        acc.y += (pg_u64)productions[j].succ_params;
        acc.z += 1;
      }
    }
  }
  counts[c] = acc;
}

__kernel void homWrite(PG_RULES_PARAMS, PG_STRING_PARAMS, __global const pg_i64* partner, pg_i32 has_partner,
                       __global const pg_u64* group_begin, __global const pg_u32* group_length,
                       __global const pg_u8* acts, pg_i32 level, pg_u64 seed, pg_u64 chunk,
                       __global const pg_i32* choice, __global const ulong4* offsets, __global pg_u8* out_symbols,
                       __global pg_u64* out_offsets, __global float* out_params, __global pg_u8* out_final,
                       __global pg_u64* out_group_begin, __global pg_u32* out_group_length) {
  const pg_u64 c = get_global_id(0);
  const pg_u64 chunks = (n + chunk - 1) / chunk;
  if (c >= chunks) return;
  const PgRules rules = PG_MAKE_RULES();
  const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
  __global const pg_i64* part = (level == 0 && has_partner) ? partner : 0;
  float slots[PG_MAX_FORMALS];
  pg_u64 out_module = offsets[c].x;
  pg_u64 out_param = offsets[c].y;
  const pg_u64 begin = c * chunk;
  const pg_u64 end = min(n, begin + chunk);
  for (pg_u64 i = begin; i < end; ++i) {
    const pg_u8 x = in.symbols[i];
    const pg_i32 j = choice[i];
    if (j == PG_NO_PRODUCTION) {
      if (!acts[x]) continue;
      out_symbols[out_module] = x;
      out_offsets[out_module] = out_param;
      if (in.param_offsets)
        for (pg_u64 k = in.param_offsets[i]; k < in.param_offsets[i + 1]; ++k) out_params[out_param++] = in.params[k];
      out_final[out_module] = 1;
      out_group_begin[out_module] = out_module;
      out_group_length[out_module] = 1;
      ++out_module;
      continue;
    }
    const PgProduction p = productions[j];
    pg_u64 at;
    const PgStringView v = pgGroupView(&in, level, group_begin, group_length, i, &at);
    if (p.num_formals) pgBindProduction(&rules, j, &v, part, at, slots);
    PgRandomStream rng;
    rng.seed = seed;
    rng.position = level == 0 ? i : 0;
    rng.phase = PG_HOM_PHASE(level);
    rng.draws = PG_DRAW_SUCCESSOR;
    const pg_u64 group = out_module;
    for (pg_i32 m = 0; m < p.succ_count; ++m) {
      const PgSuccessorModule sm = successors[p.succ_begin + m];
      out_symbols[out_module] = (pg_u8)sm.symbol;
      out_offsets[out_module] = out_param;
      for (pg_i32 k = 0; k < sm.num_params; ++k)
        out_params[out_param++] = pgEval(&rules, successor_exprs[sm.first_expr + k], slots, &rng);
      out_final[out_module] = 0;
      out_group_begin[out_module] = group;
      out_group_length[out_module] = (pg_u32)p.succ_count;
      ++out_module;
    }
  }
}

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
#include "lsystem/opencl/kernel_args.h"
#include "lsystem/opencl/rewrite_steps.h"

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
  const pg_u64 chunks = pgChunkCount(n, chunk);
  if (c > chunks) return;
  ulong4 acc = (ulong4)(0);
  if (c < chunks) {
    const PgRules rules = PG_MAKE_RULES();
    const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
    __global const pg_i64* part = (level == 0 && has_partner) ? partner : 0;
    float slots[PG_MAX_FORMALS];
    pg_u64 begin, end;
    pgChunkBounds(c, chunk, n, &begin, &end);
    for (pg_u64 i = begin; i < end; ++i) {
      const pg_u8 x = in.symbols[i];
      pg_i32 j = PG_NO_PRODUCTION;
      if ((level == 0 || !final_in[i]) && expand && rules.first_by_symbol[x] != PG_NO_PRODUCTION) {
        pg_u64 at;
        const PgStringView v = pgGroupView(&in, level, group_begin, group_length, i, &at);
        PgRandomStream rng = pgPassStream(seed, PG_HOM_PHASE(level));
        rng.position = level == 0 ? i : 0;
        j = pgFindProduction(&rules, &v, part, at, slots, &rng);
      }
      choice[i] = j;
      /* a final module the turtle ignores is dropped */
      if (j != PG_NO_PRODUCTION || acts[x]) pgAddModuleOutput(&acc, &rules, &in, i, j);
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
  if (c >= pgChunkCount(n, chunk)) return;
  const PgRules rules = PG_MAKE_RULES();
  const PgStringView in = pgMakeString(in_symbols, in_param_offsets, in_params, n, in_parametric);
  __global const pg_i64* part = (level == 0 && has_partner) ? partner : 0;
  float slots[PG_MAX_FORMALS];
  /* The output always carries parameter offsets (the turtle reads them). */
  PgStringWriter out = pgStringWriter(out_symbols, out_offsets, out_params, 1, offsets[c]);
  pg_u64 begin, end;
  pgChunkBounds(c, chunk, n, &begin, &end);
  for (pg_u64 i = begin; i < end; ++i) {
    const pg_u8 x = in.symbols[i];
    const pg_i32 j = choice[i];
    if (j == PG_NO_PRODUCTION) {
      if (!acts[x]) continue;
      out_final[out.module] = 1;
      out_group_begin[out.module] = out.module;
      out_group_length[out.module] = 1;
      pgCopyModule(&out, &in, i);
      continue;
    }
    pg_u64 at;
    const PgStringView v = pgGroupView(&in, level, group_begin, group_length, i, &at);
    PgRandomStream rng = pgPassStream(seed, PG_HOM_PHASE(level));
    rng.position = level == 0 ? i : 0;
    rng.draws = PG_DRAW_SUCCESSOR;
    const pg_u64 group = out.module;
    pgWriteSuccessor(&out, &rules, j, &v, part, at, slots, &rng);
    for (pg_u64 m = group; m < out.module; ++m) {
      out_final[m] = 0;
      out_group_begin[m] = group;
      out_group_length[m] = (pg_u32)(out.module - group);
    }
  }
}

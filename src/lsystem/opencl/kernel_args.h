/* kernel_args.h — kernel parameter lists shared by the L-system derivation
 * kernels (OpenCL C only): one compiled rule table (tables.h) and one module
 * string, passed as separate buffers and reassembled into the PgRules and
 * PgStringView views the shared per-module logic (match.h) reads.
 */
#ifndef PROCGEN_LSYSTEM_OPENCL_KERNEL_ARGS_H
#define PROCGEN_LSYSTEM_OPENCL_KERNEL_ARGS_H

#include "lsystem/tables.h"

#define PG_RULES_PARAMS                                                                          \
  __global const pg_i32 *first_by_symbol, __global const PgProduction *productions,             \
      __global const PgPatternModule *patterns, __global const PgSuccessorModule *successors,    \
      __global const pg_i32 *successor_exprs, __global const pg_u32 *code,                       \
      __global const float *constants, __global const float *globals, __global const pg_u8 *ignored

#define PG_STRING_PARAMS                                                                         \
  __global const pg_u8 *in_symbols, __global const pg_u64 *in_param_offsets,                     \
      __global const float *in_params, pg_u64 n, pg_i32 in_parametric

PROCGEN_FN PgRules pgMakeRules(__global const pg_i32* first_by_symbol,
                               __global const PgProduction* productions,
                               __global const PgPatternModule* patterns,
                               __global const PgSuccessorModule* successors,
                               __global const pg_i32* successor_exprs, __global const pg_u32* code,
                               __global const float* constants, __global const float* globals,
                               __global const pg_u8* ignored) {
  PgRules r;
  r.first_by_symbol = first_by_symbol;
  r.productions = productions;
  r.patterns = patterns;
  r.successors = successors;
  r.successor_exprs = successor_exprs;
  r.code = code;
  r.constants = constants;
  r.globals = globals;
  r.ignored = ignored;
  return r;
}

#define PG_MAKE_RULES()                                                                     \
  pgMakeRules(first_by_symbol, productions, patterns, successors, successor_exprs, code, \
              constants, globals, ignored)

PROCGEN_FN PgStringView pgMakeString(__global const pg_u8* symbols, __global const pg_u64* param_offsets,
                                     __global const float* params, pg_u64 n, pg_i32 parametric) {
  PgStringView s;
  s.symbols = symbols;
  s.param_offsets = parametric ? param_offsets : 0;
  s.params = params;
  s.length = n;
  return s;
}

#endif /* PROCGEN_LSYSTEM_OPENCL_KERNEL_ARGS_H */

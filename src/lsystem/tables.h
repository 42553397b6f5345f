/* tables.h — the flat representation of a compiled L-system and of a module
 * string, shared by the serial engine, the cpu backend and the OpenCL kernels.
 *
 * Paper: Lipp, Wonka, Wimmer, "Parallel Generation of Multiple L-Systems",
 * §4.1 (Figure 2: productions packed in a table indexed by the predecessor's
 * letter, with collision chains and a header holding the successor's module
 * and parameter counts) and Figure 3 (a module string is an array of letters,
 * an index array into the parameters, and the parameters).
 *
 * Module string (n modules):
 *   symbols[n]            one byte per module: the module's character
 *   param_offsets[n + 1]  module i owns params[param_offsets[i] .. param_offsets[i+1])
 *                         (absent, NULL, when the whole L-system has no parameters)
 *   params[...]           float parameter values
 *
 * Rule table (one each for productions, decomposition and homomorphism):
 *   first_by_symbol[256]  index of the first production whose predecessor has that
 *                         character, or -1; PgProduction.next continues the chain.
 *                         Chains keep file order, so the first match wins as in cpfg.
 *   productions[]         PgProduction headers
 *   patterns[]            context modules: left context (in text order), right context
 *                         (in text order, may contain '[' and ']')
 *   successors[]          successor modules; successor_exprs[first_expr + j] is the
 *                         bytecode offset of the j-th parameter expression
 *
 * Formal parameters: a production's formals are numbered in text order over
 * left context, predecessor and right context; bytecode reads them as slots.
 */
#ifndef PROCGEN_LSYSTEM_TABLES_H
#define PROCGEN_LSYSTEM_TABLES_H

#include "common/clc.h"

#define PG_NO_PRODUCTION (-1)
#define PG_NOT_STOCHASTIC (-1.0f)
#define PG_MAX_FORMALS 64       /* formal parameters of one production (all contexts) */
#define PG_MAX_MODULE_PARAMS 32 /* parameters of one module */
#define PG_MAX_EXPR_STACK 32    /* evaluation stack depth of one expression */
#define PG_SYMBOL_COUNT 256

typedef struct PgProduction {
  pg_i32 predecessor;  /* character of the strict predecessor */
  pg_i32 pred_params;  /* number of its formal parameters (must equal the module's) */
  pg_i32 next;         /* next production with the same predecessor character, or -1 */
  pg_i32 lc_begin;     /* left-context pattern modules: patterns[lc_begin .. +lc_count) */
  pg_i32 lc_count;
  pg_i32 rc_begin;     /* right-context pattern modules */
  pg_i32 rc_count;
  pg_i32 condition;    /* bytecode offset of the condition, or -1 (always true) */
  pg_i32 succ_begin;   /* successor modules: successors[succ_begin .. +succ_count) */
  pg_i32 succ_count;
  pg_i32 succ_params;  /* total parameters over the successor (for the count pass) */
  pg_i32 lc_formals;   /* slots used by the left context; predecessor formals follow */
  pg_i32 num_formals;  /* total formal slots (left context + predecessor + right context) */
  float probability;   /* PG_NOT_STOCHASTIC, or the production's weight */
  pg_i32 line;         /* source line, for diagnostics and stats */
  pg_i32 reserved;
} PgProduction;

typedef struct PgPatternModule {
  pg_i32 symbol;
  pg_i32 num_params;
} PgPatternModule;

typedef struct PgSuccessorModule {
  pg_i32 symbol;
  pg_i32 num_params;
  pg_i32 first_expr; /* index into successor_exprs */
} PgSuccessorModule;

/* Pointers to one rule table's arrays plus the pools shared by all three
 * tables. Built on the stack from buffers (host vectors or kernel arguments). */
typedef struct PgRules {
  PROCGEN_GLOBAL const pg_i32* first_by_symbol;
  PROCGEN_GLOBAL const PgProduction* productions;
  PROCGEN_GLOBAL const PgPatternModule* patterns;
  PROCGEN_GLOBAL const PgSuccessorModule* successors;
  PROCGEN_GLOBAL const pg_i32* successor_exprs;
  PROCGEN_GLOBAL const pg_u32* code;     /* expression bytecode (expr.h) */
  PROCGEN_GLOBAL const float* constants; /* literal pool */
  PROCGEN_GLOBAL const float* globals;   /* #define values (per instance in multi-L-system runs) */
  PROCGEN_GLOBAL const pg_u8* ignored;   /* [256]: 1 when the character is skipped in context search */
} PgRules;

/* A read-only view of a module string. param_offsets may be NULL (no parameters). */
typedef struct PgStringView {
  PROCGEN_GLOBAL const pg_u8* symbols;
  PROCGEN_GLOBAL const pg_u64* param_offsets;
  PROCGEN_GLOBAL const float* params;
  pg_u64 length;
} PgStringView;

PROCGEN_FN pg_i32 pgParamCount(const PgStringView* s, pg_u64 i) {
  return s->param_offsets ? (pg_i32)(s->param_offsets[i + 1] - s->param_offsets[i]) : 0;
}

#endif /* PROCGEN_LSYSTEM_TABLES_H */

/* match.h — finding the production that rewrites a module: letter and
 * parameter count, bracket-aware left and right context, condition, and
 * stochastic choice. Pure per-module logic shared by every backend.
 *
 * Paper §2 (a production matches a module when the letter and the number of
 * parameters agree), §4.2 (rewrite pass: context comparison, stochastic
 * choice with a random value indexed by the module position, parameter
 * evaluation) and ABOP §1.8 / cpfg for the context search rules:
 *  - a left context is found walking back, skipping ignored modules and whole
 *    bracketed branches ([...]), and stepping out of a branch through its '[';
 *  - a right context is found walking forward, skipping ignored modules and
 *    lateral branches; nothing is found past the ']' closing the current branch;
 *    a pattern '[' enters the next branch, a pattern ']' skips the rest of the
 *    branch it entered (so `A > B[C]D` works).
 * Brackets are resolved with `partner`: for every '[' the index of its ']' and
 * for every ']' the index of its '[' (-1 when unmatched). It may be NULL only
 * when the string has no brackets.
 *
 * Random draws (common/random.h): the condition of production j uses draws
 * j*64..; successor parameters use draws from PG_DRAW_SUCCESSOR; the
 * stochastic choice uses PG_DRAW_CHOICE. Re-evaluating a condition therefore
 * gives the same value, which lets the rewrite pass re-bind the production
 * chosen by the count pass without storing its formals.
 */
#ifndef PROCGEN_LSYSTEM_MATCH_H
#define PROCGEN_LSYSTEM_MATCH_H

#include "common/clc.h"
#include "common/random.h"
#include "lsystem/expr.h"
#include "lsystem/tables.h"

#define PG_DRAW_CONDITION_STRIDE 64u
#define PG_DRAW_SUCCESSOR 0x40000000u
#define PG_DRAW_CHOICE 0xffffffffu
#define PG_MAX_PATTERN_NESTING 16

PROCGEN_FN void pgCopyParams(const PgStringView* s, pg_u64 i, float* slots, pg_i32 first_slot) {
  if (!s->param_offsets) return;
  pg_u64 b = s->param_offsets[i];
  pg_u64 e = s->param_offsets[i + 1];
  for (pg_u64 k = b; k < e; ++k) slots[first_slot + (pg_i32)(k - b)] = s->params[k];
}

PROCGEN_FN int pgModuleMatches(const PgStringView* s, pg_u64 i, PgPatternModule pattern) {
  return (pg_i32)s->symbols[i] == pattern.symbol && pgParamCount(s, i) == pattern.num_params;
}

/* Left context of module i: patterns[lc_begin .. lc_begin+lc_count) in text
 * order, matched right to left. Binds slots 0 .. lc_formals-1. */
PROCGEN_FN int pgMatchLeftContext(const PgRules* rules, const PgProduction* p, const PgStringView* s,
                                  PROCGEN_GLOBAL const pg_i64* partner, pg_u64 i, float* slots) {
  pg_i64 pos = (pg_i64)i - 1;
  pg_i32 slot_end = p->lc_formals;
  for (pg_i32 k = p->lc_count - 1; k >= 0; --k) {
    PgPatternModule want = rules->patterns[p->lc_begin + k];
    for (;;) {
      if (pos < 0) return 0;
      pg_u8 c = s->symbols[pos];
      if (c == ']') {
        /* skip the whole branch that ends here */
        pg_i64 open = partner ? partner[pos] : -1;
        if (open < 0) return 0;
        pos = open - 1;
      } else if (c == '[') {
        pos -= 1; /* step out of the current branch to its parent */
      } else if (rules->ignored[c]) {
        pos -= 1;
      } else {
        break;
      }
    }
    if (!pgModuleMatches(s, (pg_u64)pos, want)) return 0;
    slot_end -= want.num_params;
    pgCopyParams(s, (pg_u64)pos, slots, slot_end);
    pos -= 1;
  }
  return 1;
}

/* Right context: patterns[rc_begin ..) in text order, matched left to right.
 * Binds the slots after the predecessor's. */
PROCGEN_FN int pgMatchRightContext(const PgRules* rules, const PgProduction* p, const PgStringView* s,
                                   PROCGEN_GLOBAL const pg_i64* partner, pg_u64 i, float* slots) {
  pg_i64 n = (pg_i64)s->length;
  pg_i64 pos = (pg_i64)i + 1;
  pg_i32 slot = p->lc_formals + p->pred_params;
  pg_i64 entered[PG_MAX_PATTERN_NESTING]; /* '[' positions entered by pattern brackets */
  pg_i32 nesting = 0;
  for (pg_i32 k = 0; k < p->rc_count; ++k) {
    PgPatternModule want = rules->patterns[p->rc_begin + k];
    if (want.symbol == ']') {
      /* skip the rest of the branch the pattern entered, and its ']' */
      if (nesting == 0) return 0;
      pg_i64 close = partner ? partner[entered[--nesting]] : -1;
      if (close < 0) return 0;
      pos = close + 1;
      continue;
    }
    for (;;) {
      if (pos >= n) return 0;
      pg_u8 c = s->symbols[pos];
      if (c == '[' && want.symbol != '[') {
        pg_i64 close = partner ? partner[pos] : -1; /* skip a lateral branch */
        if (close < 0) return 0;
        pos = close + 1;
      } else if (c == ']') {
        return 0; /* the current branch ends: no right context beyond it */
      } else if (c != '[' && rules->ignored[c]) {
        pos += 1;
      } else {
        break;
      }
    }
    if (want.symbol == '[') {
      if (s->symbols[pos] != '[' || nesting == PG_MAX_PATTERN_NESTING) return 0;
      entered[nesting++] = pos;
      pos += 1;
      continue;
    }
    if (!pgModuleMatches(s, (pg_u64)pos, want)) return 0;
    pgCopyParams(s, (pg_u64)pos, slots, slot);
    slot += want.num_params;
    pos += 1;
  }
  return 1;
}

/* Does production `index` apply to module i (letter and parameter count,
 * contexts, condition)? On success the formal slots are bound. */
PROCGEN_FN int pgProductionApplies(const PgRules* rules, pg_i32 index, const PgStringView* s,
                                   PROCGEN_GLOBAL const pg_i64* partner, pg_u64 i, float* slots,
                                   PgRandomStream* rng) {
  PROCGEN_GLOBAL const PgProduction* gp = &rules->productions[index];
  PgProduction p = *gp;
  if (p.pred_params != pgParamCount(s, i)) return 0;
  if (p.lc_count && !pgMatchLeftContext(rules, &p, s, partner, i, slots)) return 0;
  if (p.rc_count && !pgMatchRightContext(rules, &p, s, partner, i, slots)) return 0;
  pgCopyParams(s, i, slots, p.lc_formals);
  if (p.condition >= 0) {
    rng->draws = (pg_u32)index * PG_DRAW_CONDITION_STRIDE;
    if (pgEval(rules, p.condition, slots, rng) == 0.0f) return 0;
  }
  return 1;
}

/* The production that rewrites module i, or PG_NO_PRODUCTION (the module is
 * copied unchanged). Productions are tried in file order; when the first that
 * applies is stochastic, one of all applicable stochastic productions for the
 * same letter is chosen with probability proportional to its weight. The
 * returned production's slots are bound. `rng` must carry the seed, phase and
 * position of this module. */
PROCGEN_FN pg_i32 pgFindProduction(const PgRules* rules, const PgStringView* s,
                                   PROCGEN_GLOBAL const pg_i64* partner, pg_u64 i, float* slots,
                                   PgRandomStream* rng) {
  pg_i32 first = rules->first_by_symbol[s->symbols[i]];
  pg_i32 j = first;
  while (j != PG_NO_PRODUCTION && !pgProductionApplies(rules, j, s, partner, i, slots, rng))
    j = rules->productions[j].next;
  if (j == PG_NO_PRODUCTION || rules->productions[j].probability == PG_NOT_STOCHASTIC) return j;

  /* Stochastic: total weight of the applicable stochastic alternatives. */
  float total = 0.0f;
  for (pg_i32 k = j; k != PG_NO_PRODUCTION; k = rules->productions[k].next) {
    float w = rules->productions[k].probability;
    if (w != PG_NOT_STOCHASTIC && pgProductionApplies(rules, k, s, partner, i, slots, rng)) total += w;
  }
  float r = pgUniformAt(rng->seed, rng->phase, rng->position, PG_DRAW_CHOICE) * total;
  pg_i32 chosen = j;
  float acc = 0.0f;
  for (pg_i32 k = j; k != PG_NO_PRODUCTION; k = rules->productions[k].next) {
    float w = rules->productions[k].probability;
    if (w == PG_NOT_STOCHASTIC || w <= 0.0f) continue;
    if (!pgProductionApplies(rules, k, s, partner, i, slots, rng)) continue;
    chosen = k;
    acc += w;
    if (r < acc) break;
  }
  /* re-bind the chosen production's slots (the loop may have gone past it) */
  pgProductionApplies(rules, chosen, s, partner, i, slots, rng);
  return chosen;
}

/* Re-binds the formals of a production already known to apply (rewrite pass). */
PROCGEN_FN void pgBindProduction(const PgRules* rules, pg_i32 index, const PgStringView* s,
                                 PROCGEN_GLOBAL const pg_i64* partner, pg_u64 i, float* slots) {
  PgProduction p = rules->productions[index];
  if (p.lc_count) pgMatchLeftContext(rules, &p, s, partner, i, slots);
  if (p.rc_count) pgMatchRightContext(rules, &p, s, partner, i, slots);
  pgCopyParams(s, i, slots, p.lc_formals);
}

#endif /* PROCGEN_LSYSTEM_MATCH_H */

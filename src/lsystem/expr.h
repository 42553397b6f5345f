/* expr.h — the expression stack machine: bytecode for conditions, successor
 * parameters, probabilities and #define constants.
 *
 * Paper §4.2: "parameter evaluation ... is conducted by a simple mathematical
 * expression parser in the kernel". Here the text is parsed once on the host
 * and compiled to postfix bytecode; the kernel-side evaluator below has a fixed
 * stack, no recursion and no allocation.
 *
 * Encoding: one pg_u32 per instruction, opcode in the low 8 bits, a 24-bit
 * unsigned argument above it. Every expression ends with PG_OP_END, which
 * returns the top of the stack. Booleans are 1.0f / 0.0f; any non-zero value is
 * true. Angles of the trigonometric functions are in degrees, as in cpfg.
 * && and || evaluate both sides (expressions have no side effects beyond ran(),
 * whose draws are counted per module, so eager evaluation stays deterministic);
 * ?: is compiled with jumps and evaluates one branch.
 */
#ifndef PROCGEN_LSYSTEM_EXPR_H
#define PROCGEN_LSYSTEM_EXPR_H

#include "common/clc.h"
#include "common/random.h"
#include "lsystem/tables.h"

enum PgOp {
  PG_OP_END = 0,
  PG_OP_CONST,       /* push constants[arg] */
  PG_OP_FORMAL,      /* push slots[arg] */
  PG_OP_GLOBAL,      /* push globals[arg] */
  PG_OP_JUMP,        /* pc = arg */
  PG_OP_JUMP_IF_ZERO,/* pop c; if c == 0: pc = arg */
  /* unary: replace top */
  PG_OP_NEG, PG_OP_NOT,
  PG_OP_SIN, PG_OP_COS, PG_OP_TAN, PG_OP_ASIN, PG_OP_ACOS, PG_OP_ATAN,
  PG_OP_SQRT, PG_OP_EXP, PG_OP_LOG, PG_OP_FLOOR, PG_OP_CEIL, PG_OP_ABS,
  PG_OP_RAN,         /* x -> uniform in [0, x) */
  PG_OP_TRUNC,       /* x -> trunc(x) (cpfg's trunc) */
  /* binary: pop b, pop a, push a op b */
  PG_OP_ADD, PG_OP_SUB, PG_OP_MUL, PG_OP_DIV, PG_OP_POW, PG_OP_MOD,
  PG_OP_EQ, PG_OP_NE, PG_OP_LT, PG_OP_LE, PG_OP_GT, PG_OP_GE,
  PG_OP_AND, PG_OP_OR,
  PG_OP_ATAN2, PG_OP_MIN, PG_OP_MAX,
  PG_OP_COUNT
};

#define PG_OP_ARG_BITS 24
#define PG_OP_ARG_MAX ((1u << PG_OP_ARG_BITS) - 1u)
#define PG_ENCODE(op, arg) ((pg_u32)(op) | ((pg_u32)(arg) << 8))
#define PG_DEG2RAD 0.017453292519943295f
#define PG_RAD2DEG 57.29577951308232f

/* Evaluates the expression starting at code[pc]. `slots` holds the production's
 * formal parameters; `rng` supplies ran() draws. The compiler guarantees that
 * the stack never exceeds PG_MAX_EXPR_STACK and that every jump is in range. */
PROCGEN_FN float pgEval(const PgRules* rules, pg_i32 pc, const float* slots, PgRandomStream* rng) {
  float stack[PG_MAX_EXPR_STACK];
  pg_i32 top = -1; /* index of the top element */
  for (;;) {
    pg_u32 ins = rules->code[pc++];
    pg_u32 op = ins & 0xffu;
    pg_u32 arg = ins >> 8;
    float a, b;
    switch (op) {
      case PG_OP_END: return top >= 0 ? stack[top] : 0.0f;
      case PG_OP_CONST: stack[++top] = rules->constants[arg]; break;
      case PG_OP_FORMAL: stack[++top] = slots[arg]; break;
      case PG_OP_GLOBAL: stack[++top] = rules->globals[arg]; break;
      case PG_OP_JUMP: pc = (pg_i32)arg; break;
      case PG_OP_JUMP_IF_ZERO:
        if (stack[top--] == 0.0f) pc = (pg_i32)arg;
        break;
      case PG_OP_NEG: stack[top] = -stack[top]; break;
      case PG_OP_NOT: stack[top] = stack[top] == 0.0f ? 1.0f : 0.0f; break;
      case PG_OP_SIN: stack[top] = PG_SIN(stack[top] * PG_DEG2RAD); break;
      case PG_OP_COS: stack[top] = PG_COS(stack[top] * PG_DEG2RAD); break;
      case PG_OP_TAN: stack[top] = PG_TAN(stack[top] * PG_DEG2RAD); break;
      case PG_OP_ASIN: stack[top] = PG_ASIN(stack[top]) * PG_RAD2DEG; break;
      case PG_OP_ACOS: stack[top] = PG_ACOS(stack[top]) * PG_RAD2DEG; break;
      case PG_OP_ATAN: stack[top] = PG_ATAN(stack[top]) * PG_RAD2DEG; break;
      case PG_OP_SQRT: stack[top] = PG_SQRT(stack[top]); break;
      case PG_OP_EXP: stack[top] = PG_EXP(stack[top]); break;
      case PG_OP_LOG: stack[top] = PG_LOG(stack[top]); break;
      case PG_OP_FLOOR: stack[top] = PG_FLOOR(stack[top]); break;
      case PG_OP_CEIL: stack[top] = PG_CEIL(stack[top]); break;
      case PG_OP_ABS: stack[top] = PG_FABS(stack[top]); break;
      case PG_OP_TRUNC: {
        a = stack[top];
        stack[top] = a < 0.0f ? PG_CEIL(a) : PG_FLOOR(a);
        break;
      }
      case PG_OP_RAN: stack[top] = stack[top] * pgNextUniform(rng); break;
      default: {
        b = stack[top--];
        a = stack[top];
        float r = 0.0f;
        switch (op) {
          case PG_OP_ADD: r = a + b; break;
          case PG_OP_SUB: r = a - b; break;
          case PG_OP_MUL: r = a * b; break;
          case PG_OP_DIV: r = a / b; break;
          case PG_OP_POW: r = PG_POW(a, b); break;
          case PG_OP_MOD: r = a - b * PG_FLOOR(a / b); break;
          case PG_OP_EQ: r = a == b ? 1.0f : 0.0f; break;
          case PG_OP_NE: r = a != b ? 1.0f : 0.0f; break;
          case PG_OP_LT: r = a < b ? 1.0f : 0.0f; break;
          case PG_OP_LE: r = a <= b ? 1.0f : 0.0f; break;
          case PG_OP_GT: r = a > b ? 1.0f : 0.0f; break;
          case PG_OP_GE: r = a >= b ? 1.0f : 0.0f; break;
          case PG_OP_AND: r = (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f; break;
          case PG_OP_OR: r = (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f; break;
          case PG_OP_ATAN2: r = PG_ATAN2(a, b) * PG_RAD2DEG; break;
          case PG_OP_MIN: r = PG_FMIN(a, b); break;
          case PG_OP_MAX: r = PG_FMAX(a, b); break;
          default: r = 0.0f; break; /* unreachable for compiler-produced code */
        }
        stack[top] = r;
        break;
      }
    }
  }
}

#endif /* PROCGEN_LSYSTEM_EXPR_H */

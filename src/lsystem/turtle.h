/* turtle.h — the 3D turtle of ABOP §1.5 and §2.2, shared by every backend.
 *
 * Paper §5: interpretation advances a turtle state through the string; the
 * state is a position and a frame (heading H, left L, up U, with H x L = U).
 * The turtle starts at the origin with H = +Y, L = -X, U = +Z. Commands:
 *   F(l) G(l)  move l (default: step) and draw          f(l) g(l)  move without drawing
 *   +(a) -(a)  turn left / right about U                &(a) ^(a)  pitch down / up about L
 *   \(a) /(a)  roll left / right about H                |          turn around (180° about U)
 *   $          roll so that L is horizontal (ABOP p. 57, V = +Y)
 *   [ ]        push / pop the state                     !(w)       set width (no parameter:
 *   '(c)       set colour index (no parameter: +1)                 multiply by width factor)
 *   { . }      start a polygon, record a vertex, end it (inside a polygon F and f record
 *              the point they move to, G and g move without recording or drawing)
 * Angles in degrees; a missing parameter uses the view's default angle or step.
 * After every F and G the heading bends towards the tropism vector T by
 * e·|H x T| radians (ABOP eq. 2.4), when the elasticity e is non-zero.
 * `pgTurtleApply` updates the state and says what the caller must emit, so the
 * serial loop, the cpu work queue and the OpenCL kernel share the geometry.
 */
#ifndef PROCGEN_LSYSTEM_TURTLE_H
#define PROCGEN_LSYSTEM_TURTLE_H

#include "common/clc.h"
#include "lsystem/expr.h"

typedef struct PgTurtle {
  float pos[3];
  float h[3];
  float l[3];
  float u[3];
  float width;
  pg_i32 color;
  pg_i32 depth; /* bracket nesting depth */
  pg_i32 turns; /* frame rotations since the frame was last made orthonormal (pgTurtleTurned) */
} PgTurtle;

typedef struct PgTurtleView {
  float step;
  float angle_deg;
  float cos_angle; /* of the default angle, precomputed */
  float sin_angle;
  float width_factor;
  float width_scale; /* multiplies explicit widths: !(w) sets w * width_scale */
  float elasticity;
  float tropism[3];
} PgTurtleView;

enum PgTurtleAction {
  PG_TURTLE_NONE = 0,
  PG_TURTLE_DRAW,        /* F: segment from the previous position (or polygon vertex) */
  PG_TURTLE_MOVE,        /* f: no segment (polygon vertex inside a polygon) */
  PG_TURTLE_DRAW_SILENT, /* G: segment outside polygons, nothing inside */
  PG_TURTLE_PUSH,
  PG_TURTLE_POP,
  PG_TURTLE_POLYGON_BEGIN,
  PG_TURTLE_POLYGON_VERTEX,
  PG_TURTLE_POLYGON_END
};

PROCGEN_FN void pgTurtleInit(PgTurtle* t, float width) {
  t->pos[0] = 0.0f; t->pos[1] = 0.0f; t->pos[2] = 0.0f;
  t->h[0] = 0.0f; t->h[1] = 1.0f; t->h[2] = 0.0f;
  t->l[0] = -1.0f; t->l[1] = 0.0f; t->l[2] = 0.0f;
  t->u[0] = 0.0f; t->u[1] = 0.0f; t->u[2] = 1.0f;
  t->width = width;
  t->color = 0;
  t->depth = 0;
  t->turns = 0;
}

PROCGEN_FN void pgTurtleViewInit(PgTurtleView* v, float step, float angle_deg, float width_factor,
                                 float width_scale, float tx, float ty, float tz, float elasticity) {
  v->step = step;
  v->angle_deg = angle_deg;
  v->cos_angle = PG_COS(angle_deg * PG_DEG2RAD);
  v->sin_angle = PG_SIN(angle_deg * PG_DEG2RAD);
  v->width_factor = width_factor;
  v->width_scale = width_scale;
  v->elasticity = elasticity;
  v->tropism[0] = tx; v->tropism[1] = ty; v->tropism[2] = tz;
}

/* Rotates the pair (a, b) by the angle with cosine c and sine s:
 * a' = a c + b s, b' = b c - a s (a turns towards b). */
PROCGEN_FN void pgRotatePair(float* a, float* b, float c, float s) {
  for (int k = 0; k < 3; ++k) {
    float ak = a[k], bk = b[k];
    a[k] = ak * c + bk * s;
    b[k] = bk * c - ak * s;
  }
}

PROCGEN_FN void pgCross(const float* a, const float* b, float* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Frame rotations between two re-orthonormalizations (a power of two). */
#define PG_TURTLE_RENORMALIZE_EVERY 16

/* Makes the frame orthonormal again (H unit, L unit and orthogonal to H,
 * U = H x L). Float rotations are not exactly length-preserving, and for a
 * repeated angle the products round the same way turn after turn: without
 * this, the frame of the row of trees (n = 10, 1.6 M turns of 86°) grew by
 * 2.6 %. Near unit length one Newton step, x *= (3 - |x|²) / 2, normalizes to
 * second order without a square root. */
PROCGEN_FN void pgTurtleOrthonormalize(PgTurtle* t) {
  float hh = t->h[0] * t->h[0] + t->h[1] * t->h[1] + t->h[2] * t->h[2];
  float fh = 1.5f - 0.5f * hh;
  for (int k = 0; k < 3; ++k) t->h[k] *= fh;
  float lh = t->l[0] * t->h[0] + t->l[1] * t->h[1] + t->l[2] * t->h[2];
  for (int k = 0; k < 3; ++k) t->l[k] -= lh * t->h[k];
  float ll = t->l[0] * t->l[0] + t->l[1] * t->l[1] + t->l[2] * t->l[2];
  float fl = 1.5f - 0.5f * ll;
  for (int k = 0; k < 3; ++k) t->l[k] *= fl;
  pgCross(t->h, t->l, t->u);
}

/* Counts one frame rotation; every PG_TURTLE_RENORMALIZE_EVERY-th one makes
 * the frame orthonormal. The count travels with the state (pushed and popped
 * with it), so every interpreter renormalizes where the serial one does. */
PROCGEN_FN void pgTurtleTurned(PgTurtle* t) {
  t->turns = (t->turns + 1) & (PG_TURTLE_RENORMALIZE_EVERY - 1);
  if (t->turns == 0) pgTurtleOrthonormalize(t);
}

PROCGEN_FN void pgNormalize(float* v) {
  float len = PG_SQRT(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (len > 0.0f) {
    v[0] /= len; v[1] /= len; v[2] /= len;
  }
}

/* Rotates v about the unit axis k by an angle with cosine c and sine s (Rodrigues). */
PROCGEN_FN void pgRotateAbout(float* v, const float* k, float c, float s) {
  float kxv[3];
  pgCross(k, v, kxv);
  float kdv = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
  for (int i = 0; i < 3; ++i) v[i] = v[i] * c + kxv[i] * s + k[i] * kdv * (1.0f - c);
}

/* ABOP eq. 2.4: bend H towards T by e·|H x T|, rotating the whole frame. */
PROCGEN_FN void pgTurtleTropism(PgTurtle* t, const PgTurtleView* v) {
  float axis[3];
  pgCross(t->h, v->tropism, axis);
  float mag = PG_SQRT(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  if (mag < 1e-12f) return;
  axis[0] /= mag; axis[1] /= mag; axis[2] /= mag;
  float angle = v->elasticity * mag;
  float c = PG_COS(angle), s = PG_SIN(angle);
  pgRotateAbout(t->h, axis, c, s);
  pgRotateAbout(t->l, axis, c, s);
  pgRotateAbout(t->u, axis, c, s);
  pgTurtleTurned(t);
}

/* '$': L = V x H / |V x H| with V = +Y, U = H x L (ABOP p. 57). */
PROCGEN_FN void pgTurtleRollHorizontal(PgTurtle* t) {
  float v[3] = {0.0f, 1.0f, 0.0f};
  float l[3];
  pgCross(v, t->h, l);
  float len = PG_SQRT(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
  if (len < 1e-6f) return; /* heading vertical: L is already as horizontal as it gets */
  l[0] /= len; l[1] /= len; l[2] /= len;
  t->l[0] = l[0]; t->l[1] = l[1]; t->l[2] = l[2];
  pgCross(t->h, t->l, t->u);
}

/* 1 when `symbol` changes the turtle or emits something; other modules (A, X,
 * ...) leave it alone, so interpreters may skip them without calling
 * pgTurtleApply. Keep in sync with the switch below. */
PROCGEN_FN int pgTurtleActs(pg_u8 symbol) {
  switch (symbol) {
    case 'F': case 'f': case 'G': case 'g': case '+': case '-': case '&': case '^': case '\\':
    case '/': case '|': case '$': case '!': case '\'': case '[': case ']': case '{': case '.':
    case '}':
      return 1;
    default: return 0;
  }
}

/* Applies one module to the turtle. `params` holds the module's parameters
 * (count `nparams`). Returns what the caller must emit (PgTurtleAction). */
PROCGEN_FN int pgTurtleApply(PgTurtle* t, pg_u8 symbol, const float* params, pg_i32 nparams,
                             const PgTurtleView* v) {
  float c = v->cos_angle, s = v->sin_angle;
  switch (symbol) {
    case 'F': case 'f': case 'G': case 'g': {
      float len = nparams > 0 ? params[0] : v->step;
      t->pos[0] += t->h[0] * len;
      t->pos[1] += t->h[1] * len;
      t->pos[2] += t->h[2] * len;
      if (symbol == 'F' || symbol == 'G') {
        if (v->elasticity != 0.0f) pgTurtleTropism(t, v);
      }
      return symbol == 'F' ? PG_TURTLE_DRAW
           : symbol == 'f' ? PG_TURTLE_MOVE
           : symbol == 'G' ? PG_TURTLE_DRAW_SILENT
                           : PG_TURTLE_NONE;
    }
    case '+': case '-': case '&': case '^': case '\\': case '/': {
      if (nparams > 0) {
        c = PG_COS(params[0] * PG_DEG2RAD);
        s = PG_SIN(params[0] * PG_DEG2RAD);
      }
      if (symbol == '-' || symbol == '^' || symbol == '/') s = -s;
      if (symbol == '+' || symbol == '-') pgRotatePair(t->h, t->l, c, s);      /* about U */
      else if (symbol == '&' || symbol == '^') pgRotatePair(t->h, t->u, c, -s); /* about L: & turns H down, towards -U */
      else pgRotatePair(t->u, t->l, c, s);                                      /* about H: \ rolls U towards L */
      pgTurtleTurned(t);
      return PG_TURTLE_NONE;
    }
    case '|':
      for (int k = 0; k < 3; ++k) {
        t->h[k] = -t->h[k];
        t->l[k] = -t->l[k];
      }
      return PG_TURTLE_NONE;
    case '$': pgTurtleRollHorizontal(t); return PG_TURTLE_NONE;
    case '!':
      t->width = nparams > 0 ? params[0] * v->width_scale : t->width * v->width_factor;
      return PG_TURTLE_NONE;
    case '\'':
      t->color = nparams > 0 ? (pg_i32)params[0] : t->color + 1;
      return PG_TURTLE_NONE;
    case '[': return PG_TURTLE_PUSH;
    case ']': return PG_TURTLE_POP;
    case '{': return PG_TURTLE_POLYGON_BEGIN;
    case '.': return PG_TURTLE_POLYGON_VERTEX;
    case '}': return PG_TURTLE_POLYGON_END;
    default: return PG_TURTLE_NONE;
  }
}

#endif /* PROCGEN_LSYSTEM_TURTLE_H */

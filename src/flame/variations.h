/* variations.h — flam3's 99 variations and one chaos-game step, shared by
 * C++ and OpenCL C. Included by xform.h.
 *
 * Follows flam3 3.1.1 variations.c (apply_xform, var0_linear … var98_mobius,
 * the *_precalc functions, prepare_precalc_flags) and Draves & Reckase, "The
 * Fractal Flame Algorithm", appendix: the same formulas, the same quirks
 * (flam3's "angle" is atan2(x, y), so its sin/cos are x/r and y/r; fisheye
 * swaps x and y; pre_blur moves the affine output before anything else reads
 * it; the "non-standard weight" variations use the weight inside the
 * formula), the same random draws in the same order — in float.
 *
 * Layout (src/flame/xform_table.hpp): an xform's parameters start at
 * params[xf->param_begin]: flam3's 109 per-xform parameters in catalogue order
 * (PG_FLAME_P_*), then the values flam3 precomputes per xform (PG_FLAME_D_*).
 * xf->flags (PG_FLAME_NEEDS_*, set on the host from pgFlameVariationNeeds)
 * says which precalculations the xform's terms read; the others are skipped.
 */
#ifndef PROCGEN_FLAME_VARIATIONS_H
#define PROCGEN_FLAME_VARIATIONS_H
/* Part of xform.h, which includes it at its end after the types: include
 * xform.h. Included on its own this file is empty (the kernel-source
 * embedder expands #include lines without include guards, so it cannot
 * include xform.h back). */
#ifdef PROCGEN_FLAME_XFORM_H

#define PG_FLAME_PI 3.14159265358979323846f
#define PG_FLAME_EPS 1e-10f /* flam3's EPS (private.h) */

/* The elementary functions of the variations: OpenCL C's built-ins on a
 * device; on the host sin, cos, atan2 and the hyperbolic functions come from
 * src/flame/flame_math.hpp — branch-free, so that the presorted chaos game's
 * term loops vectorise them (chaos_game.cpp), and faster than glibc's
 * fdlibm expm1f/atanf/tanhf even scalar — the others from libm (glibc's
 * expf/logf/powf are faster than a double-evaluated replacement, measured). */
#ifdef __OPENCL_C_VERSION__
#define PG_FLAME_SIN PG_SIN
#define PG_FLAME_COS PG_COS
#define PG_FLAME_ATAN2 PG_ATAN2
#define PG_FLAME_SINH PG_SINH
#define PG_FLAME_EXPM1 PG_EXPM1
#else
#include "flame/flame_math.hpp"
#define PG_FLAME_SIN procgen::flame::math::sinf
#define PG_FLAME_COS procgen::flame::math::cosf
#define PG_FLAME_ATAN2 procgen::flame::math::atan2f
#define PG_FLAME_SINH procgen::flame::math::sinhf
#define PG_FLAME_EXPM1 procgen::flame::math::expm1f
#endif

/* flam3's per-xform parameters, in the catalogue's order (src/flame/catalogue.cpp
 * kParams; a test checks every name against flameParamIndex). */
#define PG_FLAME_PARAM_LIST(X)                                                                   \
  X(BLOB_LOW, blob_low) X(BLOB_HIGH, blob_high) X(BLOB_WAVES, blob_waves)                        \
  X(PDJ_A, pdj_a) X(PDJ_B, pdj_b) X(PDJ_C, pdj_c) X(PDJ_D, pdj_d)                                \
  X(FAN2_X, fan2_x) X(FAN2_Y, fan2_y) X(RINGS2_VAL, rings2_val)                                  \
  X(PERSPECTIVE_ANGLE, perspective_angle) X(PERSPECTIVE_DIST, perspective_dist)                  \
  X(JULIAN_POWER, julian_power) X(JULIAN_DIST, julian_dist)                                      \
  X(JULIASCOPE_POWER, juliascope_power) X(JULIASCOPE_DIST, juliascope_dist)                      \
  X(RADIAL_BLUR_ANGLE, radial_blur_angle)                                                        \
  X(PIE_SLICES, pie_slices) X(PIE_ROTATION, pie_rotation) X(PIE_THICKNESS, pie_thickness)        \
  X(NGON_SIDES, ngon_sides) X(NGON_POWER, ngon_power) X(NGON_CIRCLE, ngon_circle)                \
  X(NGON_CORNERS, ngon_corners)                                                                  \
  X(CURL_C1, curl_c1) X(CURL_C2, curl_c2)                                                        \
  X(RECTANGLES_X, rectangles_x) X(RECTANGLES_Y, rectangles_y)                                    \
  X(DISC2_ROT, disc2_rot) X(DISC2_TWIST, disc2_twist)                                            \
  X(SUPER_SHAPE_RND, super_shape_rnd) X(SUPER_SHAPE_M, super_shape_m)                            \
  X(SUPER_SHAPE_N1, super_shape_n1) X(SUPER_SHAPE_N2, super_shape_n2)                            \
  X(SUPER_SHAPE_N3, super_shape_n3) X(SUPER_SHAPE_HOLES, super_shape_holes)                      \
  X(FLOWER_PETALS, flower_petals) X(FLOWER_HOLES, flower_holes)                                  \
  X(CONIC_ECCENTRICITY, conic_eccentricity) X(CONIC_HOLES, conic_holes)                          \
  X(PARABOLA_HEIGHT, parabola_height) X(PARABOLA_WIDTH, parabola_width)                          \
  X(BENT2_X, bent2_x) X(BENT2_Y, bent2_y) X(BIPOLAR_SHIFT, bipolar_shift)                        \
  X(CELL_SIZE, cell_size) X(CPOW_R, cpow_r) X(CPOW_I, cpow_i) X(CPOW_POWER, cpow_power)          \
  X(CURVE_XAMP, curve_xamp) X(CURVE_YAMP, curve_yamp)                                            \
  X(CURVE_XLENGTH, curve_xlength) X(CURVE_YLENGTH, curve_ylength)                                \
  X(ESCHER_BETA, escher_beta)                                                                    \
  X(LAZYSUSAN_SPIN, lazysusan_spin) X(LAZYSUSAN_SPACE, lazysusan_space)                          \
  X(LAZYSUSAN_TWIST, lazysusan_twist) X(LAZYSUSAN_X, lazysusan_x) X(LAZYSUSAN_Y, lazysusan_y)    \
  X(MODULUS_X, modulus_x) X(MODULUS_Y, modulus_y)                                                \
  X(OSCOPE_SEPARATION, oscilloscope_separation) X(OSCOPE_FREQUENCY, oscilloscope_frequency)      \
  X(OSCOPE_AMPLITUDE, oscilloscope_amplitude) X(OSCOPE_DAMPING, oscilloscope_damping)            \
  X(POPCORN2_X, popcorn2_x) X(POPCORN2_Y, popcorn2_y) X(POPCORN2_C, popcorn2_c)                  \
  X(SEPARATION_X, separation_x) X(SEPARATION_XINSIDE, separation_xinside)                        \
  X(SEPARATION_Y, separation_y) X(SEPARATION_YINSIDE, separation_yinside)                        \
  X(SPLIT_XSIZE, split_xsize) X(SPLIT_YSIZE, split_ysize)                                        \
  X(SPLITS_X, splits_x) X(SPLITS_Y, splits_y)                                                    \
  X(STRIPES_SPACE, stripes_space) X(STRIPES_WARP, stripes_warp)                                  \
  X(WEDGE_ANGLE, wedge_angle) X(WEDGE_HOLE, wedge_hole) X(WEDGE_COUNT, wedge_count)              \
  X(WEDGE_SWIRL, wedge_swirl)                                                                    \
  X(WEDGE_JULIA_ANGLE, wedge_julia_angle) X(WEDGE_JULIA_COUNT, wedge_julia_count)                \
  X(WEDGE_JULIA_POWER, wedge_julia_power) X(WEDGE_JULIA_DIST, wedge_julia_dist)                  \
  X(WEDGE_SPH_ANGLE, wedge_sph_angle) X(WEDGE_SPH_COUNT, wedge_sph_count)                        \
  X(WEDGE_SPH_HOLE, wedge_sph_hole) X(WEDGE_SPH_SWIRL, wedge_sph_swirl)                          \
  X(WHORL_INSIDE, whorl_inside) X(WHORL_OUTSIDE, whorl_outside)                                  \
  X(WAVES2_FREQX, waves2_freqx) X(WAVES2_SCALEX, waves2_scalex)                                  \
  X(WAVES2_FREQY, waves2_freqy) X(WAVES2_SCALEY, waves2_scaley)                                  \
  X(AUGER_SYM, auger_sym) X(AUGER_WEIGHT, auger_weight) X(AUGER_FREQ, auger_freq)                \
  X(AUGER_SCALE, auger_scale) X(FLUX_SPREAD, flux_spread)                                        \
  X(MOBIUS_RE_A, mobius_re_a) X(MOBIUS_IM_A, mobius_im_a) X(MOBIUS_RE_B, mobius_re_b)            \
  X(MOBIUS_IM_B, mobius_im_b) X(MOBIUS_RE_C, mobius_re_c) X(MOBIUS_IM_C, mobius_im_c)            \
  X(MOBIUS_RE_D, mobius_re_d) X(MOBIUS_IM_D, mobius_im_d)

#define PG_FLAME_PARAM_ENUM_ENTRY(id, name) PG_FLAME_P_##id,
enum PgFlameParamIndex { PG_FLAME_PARAM_LIST(PG_FLAME_PARAM_ENUM_ENTRY) PG_FLAME_P_COUNT };
#undef PG_FLAME_PARAM_ENUM_ENTRY

/* The values flam3 precomputes per xform (variations.c *_precalc,
 * prepare_precalc_flags), and a few more constant subexpressions, computed on
 * the host in double (xform_table.cpp) and stored after the flam3 parameters. */
enum PgFlameDerivedIndex {
  PG_FLAME_D_PRE_BLUR_WEIGHT = PG_FLAME_P_COUNT, /* flam3's has_preblur: the pre_blur term's weight */
  PG_FLAME_D_WAVES_DX2,        /* 1 / (c² + EPS), from the affine */
  PG_FLAME_D_WAVES_DY2,        /* 1 / (f² + EPS) */
  PG_FLAME_D_RINGS_DX,         /* c² + EPS (rings) */
  PG_FLAME_D_FAN_DX,           /* π (c² + EPS) (fan) */
  PG_FLAME_D_FAN2_DX,          /* π (fan2_x² + EPS) */
  PG_FLAME_D_RINGS2_DX,        /* rings2_val² + EPS */
  PG_FLAME_D_PERSP_VSIN,       /* sin(perspective_angle π/2) */
  PG_FLAME_D_PERSP_VFCOS,      /* perspective_dist cos(perspective_angle π/2) */
  PG_FLAME_D_JULIAN_RN,        /* |julian_power| */
  PG_FLAME_D_JULIAN_CN,        /* julian_dist / julian_power / 2 */
  PG_FLAME_D_JULIASCOPE_RN,    /* |juliascope_power| */
  PG_FLAME_D_JULIASCOPE_CN,    /* juliascope_dist / juliascope_power / 2 */
  PG_FLAME_D_RADIAL_BLUR_SPIN, /* sin(radial_blur_angle π/2) */
  PG_FLAME_D_RADIAL_BLUR_ZOOM, /* cos(radial_blur_angle π/2) */
  PG_FLAME_D_NGON_B,           /* 2π / ngon_sides */
  PG_FLAME_D_DISC2_TIMESPI,    /* disc2_rot π */
  PG_FLAME_D_DISC2_SINADD,     /* disc2_precalc */
  PG_FLAME_D_DISC2_COSADD,
  PG_FLAME_D_SUPER_SHAPE_PM_4,     /* super_shape_m / 4 */
  PG_FLAME_D_SUPER_SHAPE_PNEG1_N1, /* −1 / super_shape_n1 */
  PG_FLAME_D_CPOW_VA,          /* 2π / cpow_power */
  PG_FLAME_D_CPOW_VC,          /* cpow_r / cpow_power */
  PG_FLAME_D_CPOW_VD,          /* cpow_i / cpow_power */
  PG_FLAME_D_CURVE_XLEN2,      /* max(curve_xlength², 1e-20) */
  PG_FLAME_D_CURVE_YLEN2,      /* max(curve_ylength², 1e-20) */
  PG_FLAME_D_ESCHER_VC,        /* (1 + cos escher_beta) / 2 */
  PG_FLAME_D_ESCHER_VD,        /* sin(escher_beta) / 2 */
  PG_FLAME_D_OSCOPE_TPF,       /* 2π oscilloscope_frequency */
  PG_FLAME_D_WEDGE_COMP,       /* 1 − wedge_angle wedge_count / 2π */
  PG_FLAME_D_WEDGE_JULIA_CF,   /* 1 − wedge_julia_angle wedge_julia_count / 2π */
  PG_FLAME_D_WEDGE_JULIA_RN,   /* |wedge_julia_power| */
  PG_FLAME_D_WEDGE_JULIA_CN,   /* wedge_julia_dist / wedge_julia_power / 2 */
  PG_FLAME_D_WEDGE_SPH_COMP,   /* 1 − wedge_sph_angle wedge_sph_count / 2π */
  PG_FLAME_XFORM_PARAM_COUNT   /* floats per xform in the params table */
};

/* Precalculations (PgFlameXform.flags). r² is always computed (flam3 too). */
#define PG_FLAME_NEEDS_R 1u        /* r = sqrt(x² + y²) */
#define PG_FLAME_NEEDS_ATAN_XY 2u  /* flam3's precalc_atan = atan2(x, y) */
#define PG_FLAME_NEEDS_ANGLES 4u   /* flam3's precalc_sina = x / r, precalc_cosa = y / r (with R) */
#define PG_FLAME_NEEDS_ATAN_YX 8u  /* flam3's precalc_atanyx = atan2(y, x) */
#define PG_FLAME_HAS_PRE_BLUR 16u  /* a pre_blur term: move the affine output first */

/* The precalculations variation `v` reads (the xform's flags are the union
 * over its terms). Indices outside the catalogue need nothing. */
PROCGEN_FN pg_u32 pgFlameVariationNeeds(pg_u32 v) {
  switch (v) {
    case 5: case 6: case 7: case 8: case 12: case 13: case 22: case 25:
      return PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ATAN_XY;
    case 49: case 70:
      return PG_FLAME_NEEDS_ATAN_XY;
    case 23:
      return PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ATAN_XY | PG_FLAME_NEEDS_ANGLES;
    case 9: case 10: case 11: case 19: case 21: case 26:
      return PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ANGLES;
    case 36: case 50: case 51: case 77: case 79: case 80:
      return PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ATAN_YX;
    case 32: case 33: case 38: case 59: case 63: case 78: case 83:
      return PG_FLAME_NEEDS_ATAN_YX;
    case 4: case 16: case 27: case 45: case 46: case 47: case 52: case 53: case 72:
      return PG_FLAME_NEEDS_R;
    case 67:
      return PG_FLAME_HAS_PRE_BLUR;
    default:
      return 0u;
  }
}

/* Whether variation `v` draws random numbers (then a batch applying one term
 * to many points would draw in another order than point by point). */
PROCGEN_FN int pgFlameVariationDraws(pg_u32 v) {
  switch (v) {
    case 13: case 31: case 32: case 33: case 34: case 35: case 36: case 37: case 41: case 43:
    case 44: case 45: case 47: case 50: case 51: case 52: case 53: case 56: case 59: case 67: case 78:
      return 1;
    default:
      return 0;
  }
}

/* What every variation reads: the affine output and flam3's precalculations
 * (those not asked for by the xform's flags are 0). */
typedef struct PgFlameVarInput {
  float tx, ty;
  float r2;      /* tx² + ty² */
  float r;       /* sqrt(r2) */
  float atan_xy; /* atan2(tx, ty) */
  float sina;    /* tx / r */
  float cosa;    /* ty / r */
  float atan_yx; /* atan2(ty, tx) */
} PgFlameVarInput;

/* Four uniforms minus 2 (flam3's pseudo-Gaussian in gaussian_blur,
 * radial_blur, pre_blur), drawn in order: the same four numbers
 * pgFlameRand01 would give, summed exactly as 24-bit integers so that the
 * cancellation near 0 loses nothing. */
PROCGEN_FN float pgFlameRandGauss4(PgFlameRng* rng) {
  pg_i32 s = (pg_i32)(pgFlameRandU32(rng) >> 8);
  s += (pg_i32)(pgFlameRandU32(rng) >> 8);
  s += (pg_i32)(pgFlameRandU32(rng) >> 8);
  s += (pg_i32)(pgFlameRandU32(rng) >> 8);
  return (float)(s - 33554432) * (1.0f / 16777216.0f); /* (s − 2·2^24) / 2^24 */
}

/* sinh x and cosh x from one expm1 of |x|: with m = e^|x| − 1 ≥ 0,
 * sinh |x| = (m + m/(m + 1)) / 2 keeps its digits near 0 and
 * cosh x = (e^|x| + e^-|x|) / 2. */
PROCGEN_FN void pgFlameSinhCosh(float x, float* sh, float* ch) {
  float m = PG_FLAME_EXPM1(PG_FABS(x)), e = m + 1.0f, inv = 1.0f / e;
  float s = 0.5f * (m + m * inv);
  *sh = x < 0.0f ? -s : s;
  *ch = 0.5f * (e + inv);
}

/* For the complex tan … coth family with hyperbolic argument h and circular
 * argument c: tanh h, sech h = 1 / cosh h (both finite for every h), sin c, cos c. */
PROCGEN_FN void pgFlameComplexTrigParts(float h, float c, float* th, float* se, float* sc, float* cc) {
#ifdef __OPENCL_C_VERSION__
  *th = PG_TANH(h);
  *se = 1.0f / PG_COSH(h);
#else
  procgen::flame::math::tanhSech(h, *th, *se); /* one exponential for both */
#endif
  *sc = PG_FLAME_SIN(c);
  *cc = PG_FLAME_COS(c);
}

/* (|z + 1| + |z − 1|) / 2 − 1 for z = x + iy (edisc, elliptic), without the
 * cancellation of subtracting 1 in float: |z ± 1| − 1 = (r² ± 2x) / (|z ± 1| + 1). */
PROCGEN_FN float pgFlameEllipticXmaxMinus1(float x, float r2, float* xmax) {
  float a = PG_SQRT(r2 + 1.0f + 2.0f * x), b = PG_SQRT(r2 + 1.0f - 2.0f * x);
  *xmax = 0.5f * (a + b);
  return 0.5f * ((r2 + 2.0f * x) / (a + 1.0f) + (r2 - 2.0f * x) / (b + 1.0f));
}

typedef struct PgFlameVec2 {
  float x, y;
} PgFlameVec2;

/* weight × variation `v` at `in`. `prm` is the xform's parameter block,
 * `affine` its pre-affine (waves, popcorn, rings and fan read it). Unknown
 * indices and pre_blur (applied before, in pgFlameApplyXform) give (0, 0).
 * Random numbers come from `rng` in flam3's order. Returned by value: the
 * sum stays in registers (≈15% faster per call than accumulating through
 * pointers, measured on linear, spherical and a trig mix). */
PROCGEN_FN PgFlameVec2 pgFlameVariation(pg_u32 v, float w, const PgFlameVarInput* in, PROCGEN_GLOBAL const float* prm,
                                        const float* affine, PgFlameRng* rng) {
  const float tx = in->tx, ty = in->ty, r2 = in->r2, r = in->r;
  const float pi = PG_FLAME_PI;
  float ox = 0.0f, oy = 0.0f;
  switch (v) {
    case 0: /* linear */
      ox = w * tx;
      oy = w * ty;
      break;
    case 1: /* sinusoidal */
      ox = w * PG_FLAME_SIN(tx);
      oy = w * PG_FLAME_SIN(ty);
      break;
    case 2: { /* spherical */
      float s = w / (r2 + PG_FLAME_EPS);
      ox = s * tx;
      oy = s * ty;
    } break;
    case 3: { /* swirl */
      float c1 = PG_FLAME_SIN(r2), c2 = PG_FLAME_COS(r2);
      ox = w * (c1 * tx - c2 * ty);
      oy = w * (c2 * tx + c1 * ty);
    } break;
    case 4: { /* horseshoe */
      float s = w / (r + PG_FLAME_EPS);
      ox = (tx - ty) * (tx + ty) * s;
      oy = 2.0f * tx * ty * s;
    } break;
    case 5: /* polar */
      ox = w * in->atan_xy * (1.0f / pi);
      oy = w * (r - 1.0f);
      break;
    case 6: { /* handkerchief */
      float a = in->atan_xy;
      ox = w * r * PG_FLAME_SIN(a + r);
      oy = w * r * PG_FLAME_COS(a - r);
    } break;
    case 7: { /* heart */
      float a = r * in->atan_xy, s = w * r;
      ox = s * PG_FLAME_SIN(a);
      oy = -s * PG_FLAME_COS(a);
    } break;
    case 8: { /* disc */
      float a = in->atan_xy * (1.0f / pi), pr = pi * r;
      ox = w * PG_FLAME_SIN(pr) * a;
      oy = w * PG_FLAME_COS(pr) * a;
    } break;
    case 9: { /* spiral */
      float re = r + PG_FLAME_EPS, s = w / re;
      ox = s * (in->cosa + PG_FLAME_SIN(re));
      oy = s * (in->sina - PG_FLAME_COS(re));
    } break;
    case 10: { /* hyperbolic */
      float re = r + PG_FLAME_EPS;
      ox = w * in->sina / re;
      oy = w * in->cosa * re;
    } break;
    case 11: /* diamond */
      ox = w * in->sina * PG_FLAME_COS(r);
      oy = w * in->cosa * PG_FLAME_SIN(r);
      break;
    case 12: { /* ex */
      float n0 = PG_FLAME_SIN(in->atan_xy + r), n1 = PG_FLAME_COS(in->atan_xy - r);
      float m0 = n0 * n0 * n0 * r, m1 = n1 * n1 * n1 * r;
      ox = w * (m0 + m1);
      oy = w * (m0 - m1);
    } break;
    case 13: { /* julia: one of the two square roots at random */
      float a = 0.5f * in->atan_xy;
      if (pgFlameRandBit(rng)) a += pi;
      float s = w * PG_SQRT(r);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 14: /* bent */
      ox = w * (tx < 0.0f ? 2.0f * tx : tx);
      oy = w * (ty < 0.0f ? 0.5f * ty : ty);
      break;
    case 15: /* waves: amplitudes b, e and frequencies from c, f of the affine */
      ox = w * (tx + affine[1] * PG_FLAME_SIN(ty * prm[PG_FLAME_D_WAVES_DX2]));
      oy = w * (ty + affine[4] * PG_FLAME_SIN(tx * prm[PG_FLAME_D_WAVES_DY2]));
      break;
    case 16: { /* fisheye (x and y swapped, as flam3) */
      float s = 2.0f * w / (r + 1.0f);
      ox = s * ty;
      oy = s * tx;
    } break;
    case 17: /* popcorn */
      ox = w * (tx + affine[2] * PG_FLAME_SIN(PG_TAN(3.0f * ty)));
      oy = w * (ty + affine[5] * PG_FLAME_SIN(PG_TAN(3.0f * tx)));
      break;
    case 18: { /* exponential */
      float e = w * PG_EXP(tx - 1.0f), a = pi * ty;
      ox = e * PG_FLAME_COS(a);
      oy = e * PG_FLAME_SIN(a);
    } break;
    case 19: { /* power */
      float s = w * PG_POW(r, in->sina);
      ox = s * in->cosa;
      oy = s * in->sina;
    } break;
    case 20: { /* cosine */
      float a = pi * tx, sh, ch;
      pgFlameSinhCosh(ty, &sh, &ch);
      ox = w * PG_FLAME_COS(a) * ch;
      oy = -w * PG_FLAME_SIN(a) * sh;
    } break;
    case 21: { /* rings */
      float dx = prm[PG_FLAME_D_RINGS_DX];
      float s = w * (PG_FMOD(r + dx, 2.0f * dx) - dx + r * (1.0f - dx));
      ox = s * in->cosa;
      oy = s * in->sina;
    } break;
    case 22: { /* fan */
      float dx = prm[PG_FLAME_D_FAN_DX], half_dx = 0.5f * dx, a = in->atan_xy, s = w * r;
      a += PG_FMOD(a + affine[5], dx) > half_dx ? -half_dx : half_dx;
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 23: { /* blob */
      float lo = prm[PG_FLAME_P_BLOB_LOW], hi = prm[PG_FLAME_P_BLOB_HIGH];
      float s = r * (lo + (hi - lo) * (0.5f + 0.5f * PG_FLAME_SIN(prm[PG_FLAME_P_BLOB_WAVES] * in->atan_xy)));
      ox = w * in->sina * s;
      oy = w * in->cosa * s;
    } break;
    case 24: /* pdj */
      ox = w * (PG_FLAME_SIN(prm[PG_FLAME_P_PDJ_A] * ty) - PG_FLAME_COS(prm[PG_FLAME_P_PDJ_B] * tx));
      oy = w * (PG_FLAME_SIN(prm[PG_FLAME_P_PDJ_C] * tx) - PG_FLAME_COS(prm[PG_FLAME_P_PDJ_D] * ty));
      break;
    case 25: { /* fan2 */
      float dx = prm[PG_FLAME_D_FAN2_DX], half_dx = 0.5f * dx, a = in->atan_xy, s = w * r;
      float ady = a + prm[PG_FLAME_P_FAN2_Y];
      float t = ady - dx * PG_TRUNC(ady / dx);
      a += t > half_dx ? -half_dx : half_dx;
      ox = s * PG_FLAME_SIN(a);
      oy = s * PG_FLAME_COS(a);
    } break;
    case 26: { /* rings2 */
      float dx = prm[PG_FLAME_D_RINGS2_DX];
      float s = r - 2.0f * dx * PG_TRUNC((r + dx) / (2.0f * dx)) + r * (1.0f - dx);
      ox = w * in->sina * s;
      oy = w * in->cosa * s;
    } break;
    case 27: { /* eyefish */
      float s = 2.0f * w / (r + 1.0f);
      ox = s * tx;
      oy = s * ty;
    } break;
    case 28: { /* bubble */
      float s = w / (0.25f * r2 + 1.0f);
      ox = s * tx;
      oy = s * ty;
    } break;
    case 29: /* cylinder */
      ox = w * PG_FLAME_SIN(tx);
      oy = w * ty;
      break;
    case 30: { /* perspective */
      float dist = prm[PG_FLAME_P_PERSPECTIVE_DIST];
      float t = 1.0f / (dist - ty * prm[PG_FLAME_D_PERSP_VSIN]);
      ox = w * dist * tx * t;
      oy = w * prm[PG_FLAME_D_PERSP_VFCOS] * ty * t;
    } break;
    case 31: { /* noise */
      float a = pgFlameRand01(rng) * 2.0f * pi;
      float s = w * pgFlameRand01(rng);
      ox = tx * s * PG_FLAME_COS(a);
      oy = ty * s * PG_FLAME_SIN(a);
    } break;
    case 32: { /* julian: a random one of |power| roots */
      float k = PG_TRUNC(prm[PG_FLAME_D_JULIAN_RN] * pgFlameRand01(rng));
      float a = (in->atan_yx + 2.0f * pi * k) / prm[PG_FLAME_P_JULIAN_POWER];
      float s = w * PG_POW(r2, prm[PG_FLAME_D_JULIAN_CN]);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 33: { /* juliascope: odd roots mirrored */
      float k = PG_TRUNC(prm[PG_FLAME_D_JULIASCOPE_RN] * pgFlameRand01(rng));
      float ang = PG_FMOD(k, 2.0f) == 0.0f ? in->atan_yx : -in->atan_yx;
      float a = (2.0f * pi * k + ang) / prm[PG_FLAME_P_JULIASCOPE_POWER];
      float s = w * PG_POW(r2, prm[PG_FLAME_D_JULIASCOPE_CN]);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 34: { /* blur */
      float a = pgFlameRand01(rng) * 2.0f * pi;
      float s = w * pgFlameRand01(rng);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 35: { /* gaussian_blur */
      float a = pgFlameRand01(rng) * 2.0f * pi;
      float s = w * pgFlameRandGauss4(rng);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 36: { /* radial_blur */
      float g = w * pgFlameRandGauss4(rng);
      float a = in->atan_yx + prm[PG_FLAME_D_RADIAL_BLUR_SPIN] * g;
      float rz = prm[PG_FLAME_D_RADIAL_BLUR_ZOOM] * g - 1.0f;
      ox = r * PG_FLAME_COS(a) + rz * tx;
      oy = r * PG_FLAME_SIN(a) + rz * ty;
    } break;
    case 37: { /* pie */
      float slices = prm[PG_FLAME_P_PIE_SLICES];
      float slice = PG_TRUNC(pgFlameRand01(rng) * slices + 0.5f);
      float a = prm[PG_FLAME_P_PIE_ROTATION] +
                2.0f * pi * (slice + pgFlameRand01(rng) * prm[PG_FLAME_P_PIE_THICKNESS]) / slices;
      float s = w * pgFlameRand01(rng);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 38: { /* ngon */
      float rf = PG_POW(r2, 0.5f * prm[PG_FLAME_P_NGON_POWER]);
      float b = prm[PG_FLAME_D_NGON_B];
      float phi = in->atan_yx - b * PG_FLOOR(in->atan_yx / b);
      if (phi > 0.5f * b) phi -= b;
      float amp = prm[PG_FLAME_P_NGON_CORNERS] * (1.0f / (PG_FLAME_COS(phi) + PG_FLAME_EPS) - 1.0f) +
                  prm[PG_FLAME_P_NGON_CIRCLE];
      amp /= rf + PG_FLAME_EPS;
      ox = w * tx * amp;
      oy = w * ty * amp;
    } break;
    case 39: { /* curl */
      float c1 = prm[PG_FLAME_P_CURL_C1], c2 = prm[PG_FLAME_P_CURL_C2];
      float re = 1.0f + c1 * tx + c2 * (tx * tx - ty * ty);
      float im = c1 * ty + 2.0f * c2 * tx * ty;
      float s = w / (re * re + im * im);
      ox = (tx * re + ty * im) * s;
      oy = (ty * re - tx * im) * s;
    } break;
    case 40: { /* rectangles */
      float rx = prm[PG_FLAME_P_RECTANGLES_X], ry = prm[PG_FLAME_P_RECTANGLES_Y];
      ox = w * (rx == 0.0f ? tx : (2.0f * PG_FLOOR(tx / rx) + 1.0f) * rx - tx);
      oy = w * (ry == 0.0f ? ty : (2.0f * PG_FLOOR(ty / ry) + 1.0f) * ry - ty);
    } break;
    case 41: { /* arch */
      float a = pgFlameRand01(rng) * w * pi;
      float sa = PG_FLAME_SIN(a);
      ox = w * sa;
      oy = w * (sa * sa) / PG_FLAME_COS(a);
    } break;
    case 42: /* tangent */
      ox = w * PG_FLAME_SIN(tx) / PG_FLAME_COS(ty);
      oy = w * PG_TAN(ty);
      break;
    case 43: /* square */
      ox = w * (pgFlameRand01(rng) - 0.5f);
      oy = w * (pgFlameRand01(rng) - 0.5f);
      break;
    case 44: { /* rays */
      float a = w * pgFlameRand01(rng) * pi;
      float s = w * PG_TAN(a) * (w / (r2 + PG_FLAME_EPS));
      ox = s * PG_FLAME_COS(tx);
      oy = s * PG_FLAME_SIN(ty);
    } break;
    case 45: { /* blade */
      float a = pgFlameRand01(rng) * w * r;
      float sa = PG_FLAME_SIN(a), ca = PG_FLAME_COS(a);
      ox = w * tx * (ca + sa);
      oy = w * tx * (ca - sa);
    } break;
    case 46: { /* secant2 */
      float c = PG_FLAME_COS(w * r);
      ox = w * tx;
      oy = w * (1.0f / c + (c < 0.0f ? 1.0f : -1.0f));
    } break;
    case 47: { /* twintrian */
      float a = pgFlameRand01(rng) * w * r;
      float sa = PG_FLAME_SIN(a);
      float diff = PG_LOG10(sa * sa) + PG_FLAME_COS(a);
      if (!(PG_FABS(diff) <= 1e10f)) diff = -30.0f; /* flam3's badvalue(diff), log10(0) */
      ox = w * tx * diff;
      oy = w * tx * (diff - sa * pi);
    } break;
    case 48: { /* cross */
      float d = tx * tx - ty * ty;
      float s = w * PG_SQRT(1.0f / (d * d + PG_FLAME_EPS));
      ox = tx * s;
      oy = ty * s;
    } break;
    case 49: { /* disc2 */
      float t = prm[PG_FLAME_D_DISC2_TIMESPI] * (tx + ty);
      float s = w * in->atan_xy * (1.0f / pi);
      ox = (PG_FLAME_SIN(t) + prm[PG_FLAME_D_DISC2_COSADD]) * s;
      oy = (PG_FLAME_COS(t) + prm[PG_FLAME_D_DISC2_SINADD]) * s;
    } break;
    case 50: { /* super_shape */
      float th = prm[PG_FLAME_D_SUPER_SHAPE_PM_4] * in->atan_yx + 0.25f * pi;
      float t1 = PG_POW(PG_FABS(PG_FLAME_COS(th)), prm[PG_FLAME_P_SUPER_SHAPE_N2]);
      float t2 = PG_POW(PG_FABS(PG_FLAME_SIN(th)), prm[PG_FLAME_P_SUPER_SHAPE_N3]);
      float rnd = prm[PG_FLAME_P_SUPER_SHAPE_RND];
      float rr = rnd * pgFlameRand01(rng) + (1.0f - rnd) * r;
      float s = w * (rr - prm[PG_FLAME_P_SUPER_SHAPE_HOLES]) *
                PG_POW(t1 + t2, prm[PG_FLAME_D_SUPER_SHAPE_PNEG1_N1]) / r;
      ox = s * tx;
      oy = s * ty;
    } break;
    case 51: { /* flower */
      float s = w * (pgFlameRand01(rng) - prm[PG_FLAME_P_FLOWER_HOLES]) *
                PG_FLAME_COS(prm[PG_FLAME_P_FLOWER_PETALS] * in->atan_yx) / r;
      ox = s * tx;
      oy = s * ty;
    } break;
    case 52: { /* conic */
      float e = prm[PG_FLAME_P_CONIC_ECCENTRICITY];
      float s = w * (pgFlameRand01(rng) - prm[PG_FLAME_P_CONIC_HOLES]) * e / (1.0f + e * (tx / r)) / r;
      ox = s * tx;
      oy = s * ty;
    } break;
    case 53: { /* parabola */
      float sr = PG_FLAME_SIN(r), cr = PG_FLAME_COS(r);
      ox = prm[PG_FLAME_P_PARABOLA_HEIGHT] * w * sr * sr * pgFlameRand01(rng);
      oy = prm[PG_FLAME_P_PARABOLA_WIDTH] * w * cr * pgFlameRand01(rng);
    } break;
    case 54: /* bent2 */
      ox = w * (tx < 0.0f ? tx * prm[PG_FLAME_P_BENT2_X] : tx);
      oy = w * (ty < 0.0f ? ty * prm[PG_FLAME_P_BENT2_Y] : ty);
      break;
    case 55: { /* bipolar */
      const float half_pi = 0.5f * pi;
      float t = r2 + 1.0f, x2 = 2.0f * tx;
      float y = 0.5f * PG_FLAME_ATAN2(2.0f * ty, r2 - 1.0f) - half_pi * prm[PG_FLAME_P_BIPOLAR_SHIFT];
      if (y > half_pi)
        y = -half_pi + PG_FMOD(y + half_pi, pi);
      else if (y < -half_pi)
        y = half_pi - PG_FMOD(half_pi - y, pi);
      ox = w * (0.5f / pi) * PG_LOG((t + x2) / (t - x2));
      oy = w * (2.0f / pi) * y;
    } break;
    case 56: { /* boarders */
      float rx = PG_RINT(tx), ry = PG_RINT(ty);
      float fx = tx - rx, fy = ty - ry;
      float bx = 0.5f * fx + rx, by = 0.5f * fy + ry;
      if (pgFlameRand01(rng) < 0.75f) {
        if (PG_FABS(fx) >= PG_FABS(fy)) {
          float side = fx >= 0.0f ? 0.25f : -0.25f;
          bx += side;
          by += side * fy / fx;
        } else {
          float side = fy >= 0.0f ? 0.25f : -0.25f;
          by += side;
          bx += fx / fy * side;
        }
      }
      ox = w * bx;
      oy = w * by;
    } break;
    case 57: { /* butterfly: weight · 4 / sqrt(3π) */
      float y2 = 2.0f * ty;
      float s = w * 1.3029400317411197908970256609023f *
                PG_SQRT(PG_FABS(ty * tx) / (PG_FLAME_EPS + tx * tx + y2 * y2));
      ox = s * tx;
      oy = s * y2;
    } break;
    case 58: { /* cell: cells interleaved so that negative ones map to odd */
      float size = prm[PG_FLAME_P_CELL_SIZE], inv = 1.0f / size;
      float cx = PG_FLOOR(tx * inv), cy = PG_FLOOR(ty * inv);
      float dx = tx - cx * size, dy = ty - cy * size;
      cx = cx >= 0.0f ? 2.0f * cx : -(2.0f * cx + 1.0f);
      cy = cy >= 0.0f ? 2.0f * cy : -(2.0f * cy + 1.0f);
      ox = w * (dx + cx * size);
      oy = -w * (dy + cy * size);
    } break;
    case 59: { /* cpow */
      float a = in->atan_yx, lnr = 0.5f * PG_LOG(r2);
      float vc = prm[PG_FLAME_D_CPOW_VC], vd = prm[PG_FLAME_D_CPOW_VD];
      float ang = vc * a + vd * lnr +
                  prm[PG_FLAME_D_CPOW_VA] * PG_FLOOR(prm[PG_FLAME_P_CPOW_POWER] * pgFlameRand01(rng));
      float m = w * PG_EXP(vc * lnr - vd * a);
      ox = m * PG_FLAME_COS(ang);
      oy = m * PG_FLAME_SIN(ang);
    } break;
    case 60: /* curve */
      ox = w * (tx + prm[PG_FLAME_P_CURVE_XAMP] * PG_EXP(-ty * ty / prm[PG_FLAME_D_CURVE_XLEN2]));
      oy = w * (ty + prm[PG_FLAME_P_CURVE_YAMP] * PG_EXP(-tx * tx / prm[PG_FLAME_D_CURVE_YLEN2]));
      break;
    case 61: { /* edisc (flam3 takes sqrt(xmax − 1), not acosh's sqrt(xmax² − 1)) */
      float xmax;
      float xm1 = pgFlameEllipticXmaxMinus1(tx, r2, &xmax);
      float a1 = PG_LOG1P(xm1 + PG_SQRT(xm1)); /* log(xmax + sqrt(xmax − 1)) */
      float a2 = -PG_ACOS(tx / xmax);
      float s = w / 11.57034632f;
      float snv = PG_FLAME_SIN(a1), sh, ch;
      if (ty > 0.0f) snv = -snv;
      pgFlameSinhCosh(a2, &sh, &ch);
      ox = s * ch * PG_FLAME_COS(a1);
      oy = s * sh * snv;
    } break;
    case 62: { /* elliptic */
      float xmax;
      float xm1 = pgFlameEllipticXmaxMinus1(tx, r2, &xmax);
      float a = tx / xmax, b = (1.0f - a) * (1.0f + a), ssx = xm1;
      float s = w / (0.5f * pi);
      b = b < 0.0f ? 0.0f : PG_SQRT(b);
      ssx = ssx < 0.0f ? 0.0f : PG_SQRT(ssx);
      float l = PG_LOG1P(xm1 + ssx); /* log(xmax + ssx) */
      ox = s * PG_FLAME_ATAN2(a, b);
      oy = ty > 0.0f ? s * l : -(s * l);
    } break;
    case 63: { /* escher */
      float a = in->atan_yx, lnr = 0.5f * PG_LOG(r2);
      float vc = prm[PG_FLAME_D_ESCHER_VC], vd = prm[PG_FLAME_D_ESCHER_VD];
      float m = w * PG_EXP(vc * lnr - vd * a), n = vc * a + vd * lnr;
      ox = m * PG_FLAME_COS(n);
      oy = m * PG_FLAME_SIN(n);
    } break;
    case 64: { /* foci: (sinh x, sin y) / (cosh x − cos y), the denominator as
                  2 (sinh²(x/2) + sin²(y/2)) so that it keeps its digits near 0 */
      float hx = PG_FLAME_SINH(0.5f * tx), hy = PG_FLAME_SIN(0.5f * ty);
      float s = w / (2.0f * (hx * hx + hy * hy));
      ox = s * PG_FLAME_SINH(tx);
      oy = s * PG_FLAME_SIN(ty);
    } break;
    case 65: { /* lazysusan */
      float lx = prm[PG_FLAME_P_LAZYSUSAN_X], ly = prm[PG_FLAME_P_LAZYSUSAN_Y];
      float x = tx - lx, y = ty + ly, d = PG_SQRT(x * x + y * y);
      if (d < w) {
        float a = PG_FLAME_ATAN2(y, x) + prm[PG_FLAME_P_LAZYSUSAN_SPIN] + prm[PG_FLAME_P_LAZYSUSAN_TWIST] * (w - d);
        ox = w * d * PG_FLAME_COS(a) + lx;
        oy = w * d * PG_FLAME_SIN(a) - ly;
      } else {
        float s = w * (1.0f + prm[PG_FLAME_P_LAZYSUSAN_SPACE] / d);
        ox = s * x + lx;
        oy = s * y - ly;
      }
    } break;
    case 66: { /* loonie */
      float w2 = w * w;
      float s = r2 < w2 ? w * PG_SQRT(w2 / r2 - 1.0f) : w;
      ox = s * tx;
      oy = s * ty;
    } break;
    case 68: { /* modulus */
      float mx = prm[PG_FLAME_P_MODULUS_X], my = prm[PG_FLAME_P_MODULUS_Y];
      float x = tx > mx ? -mx + PG_FMOD(tx + mx, 2.0f * mx) : tx < -mx ? mx - PG_FMOD(mx - tx, 2.0f * mx) : tx;
      float y = ty > my ? -my + PG_FMOD(ty + my, 2.0f * my) : ty < -my ? my - PG_FMOD(my - ty, 2.0f * my) : ty;
      ox = w * x;
      oy = w * y;
    } break;
    case 69: { /* oscilloscope */
      float damping = prm[PG_FLAME_P_OSCOPE_DAMPING];
      float wave = prm[PG_FLAME_P_OSCOPE_AMPLITUDE] * PG_FLAME_COS(prm[PG_FLAME_D_OSCOPE_TPF] * tx);
      if (damping != 0.0f) wave *= PG_EXP(-PG_FABS(tx) * damping);
      float t = wave + prm[PG_FLAME_P_OSCOPE_SEPARATION];
      ox = w * tx;
      oy = PG_FABS(ty) <= t ? -(w * ty) : w * ty;
    } break;
    case 70: { /* polar2 */
      float s = w * (1.0f / pi);
      ox = s * in->atan_xy;
      oy = 0.5f * s * PG_LOG(r2);
    } break;
    case 71: { /* popcorn2 */
      float c = prm[PG_FLAME_P_POPCORN2_C];
      ox = w * (tx + prm[PG_FLAME_P_POPCORN2_X] * PG_FLAME_SIN(PG_TAN(ty * c)));
      oy = w * (ty + prm[PG_FLAME_P_POPCORN2_Y] * PG_FLAME_SIN(PG_TAN(tx * c)));
    } break;
    case 72: { /* scry */
      float s = 1.0f / (r * (r2 + 1.0f / (w + PG_FLAME_EPS)));
      ox = tx * s;
      oy = ty * s;
    } break;
    case 73: { /* separation */
      float sx2 = prm[PG_FLAME_P_SEPARATION_X] * prm[PG_FLAME_P_SEPARATION_X];
      float sy2 = prm[PG_FLAME_P_SEPARATION_Y] * prm[PG_FLAME_P_SEPARATION_Y];
      float xin = prm[PG_FLAME_P_SEPARATION_XINSIDE], yin = prm[PG_FLAME_P_SEPARATION_YINSIDE];
      float hx = PG_SQRT(tx * tx + sx2), hy = PG_SQRT(ty * ty + sy2);
      ox = tx > 0.0f ? w * (hx - tx * xin) : -(w * (hx + tx * xin));
      oy = ty > 0.0f ? w * (hy - ty * yin) : -(w * (hy + ty * yin));
    } break;
    case 74: /* split */
      oy = PG_FLAME_COS(tx * prm[PG_FLAME_P_SPLIT_XSIZE] * pi) >= 0.0f ? w * ty : -(w * ty);
      ox = PG_FLAME_COS(ty * prm[PG_FLAME_P_SPLIT_YSIZE] * pi) >= 0.0f ? w * tx : -(w * tx);
      break;
    case 75: /* splits */
      ox = w * (tx >= 0.0f ? tx + prm[PG_FLAME_P_SPLITS_X] : tx - prm[PG_FLAME_P_SPLITS_X]);
      oy = w * (ty >= 0.0f ? ty + prm[PG_FLAME_P_SPLITS_Y] : ty - prm[PG_FLAME_P_SPLITS_Y]);
      break;
    case 76: { /* stripes */
      float rx = PG_FLOOR(tx + 0.5f), fx = tx - rx;
      ox = w * (fx * (1.0f - prm[PG_FLAME_P_STRIPES_SPACE]) + rx);
      oy = w * (ty + fx * fx * prm[PG_FLAME_P_STRIPES_WARP]);
    } break;
    case 77: { /* wedge */
      float a = in->atan_yx + prm[PG_FLAME_P_WEDGE_SWIRL] * r;
      float c = PG_FLOOR((prm[PG_FLAME_P_WEDGE_COUNT] * a + pi) * (0.5f / pi));
      a = a * prm[PG_FLAME_D_WEDGE_COMP] + c * prm[PG_FLAME_P_WEDGE_ANGLE];
      float s = w * (r + prm[PG_FLAME_P_WEDGE_HOLE]);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 78: { /* wedge_julia */
      float s = w * PG_POW(r2, prm[PG_FLAME_D_WEDGE_JULIA_CN]);
      float k = PG_TRUNC(prm[PG_FLAME_D_WEDGE_JULIA_RN] * pgFlameRand01(rng));
      float a = (in->atan_yx + 2.0f * pi * k) / prm[PG_FLAME_P_WEDGE_JULIA_POWER];
      float c = PG_FLOOR((prm[PG_FLAME_P_WEDGE_JULIA_COUNT] * a + pi) * (0.5f / pi));
      a = a * prm[PG_FLAME_D_WEDGE_JULIA_CF] + c * prm[PG_FLAME_P_WEDGE_JULIA_ANGLE];
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 79: { /* wedge_sph */
      float ir = 1.0f / (r + PG_FLAME_EPS);
      float a = in->atan_yx + prm[PG_FLAME_P_WEDGE_SPH_SWIRL] * ir;
      float c = PG_FLOOR((prm[PG_FLAME_P_WEDGE_SPH_COUNT] * a + pi) * (0.5f / pi));
      a = a * prm[PG_FLAME_D_WEDGE_SPH_COMP] + c * prm[PG_FLAME_P_WEDGE_SPH_ANGLE];
      float s = w * (ir + prm[PG_FLAME_P_WEDGE_SPH_HOLE]);
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 80: { /* whorl */
      float a = in->atan_yx + (r < w ? prm[PG_FLAME_P_WHORL_INSIDE] : prm[PG_FLAME_P_WHORL_OUTSIDE]) / (w - r);
      ox = w * r * PG_FLAME_COS(a);
      oy = w * r * PG_FLAME_SIN(a);
    } break;
    case 81: /* waves2 */
      ox = w * (tx + prm[PG_FLAME_P_WAVES2_SCALEX] * PG_FLAME_SIN(ty * prm[PG_FLAME_P_WAVES2_FREQX]));
      oy = w * (ty + prm[PG_FLAME_P_WAVES2_SCALEY] * PG_FLAME_SIN(tx * prm[PG_FLAME_P_WAVES2_FREQY]));
      break;
    /* 82–95: complex functions of z = tx + i·ty */
    case 82: { /* exp */
      float e = w * PG_EXP(tx);
      ox = e * PG_FLAME_COS(ty);
      oy = e * PG_FLAME_SIN(ty);
    } break;
    case 83: /* log */
      ox = w * 0.5f * PG_LOG(r2);
      oy = w * in->atan_yx;
      break;
    case 84: { /* sin */
      float sh, ch;
      pgFlameSinhCosh(ty, &sh, &ch);
      ox = w * PG_FLAME_SIN(tx) * ch;
      oy = w * PG_FLAME_COS(tx) * sh;
    } break;
    case 85: { /* cos */
      float sh, ch;
      pgFlameSinhCosh(ty, &sh, &ch);
      ox = w * PG_FLAME_COS(tx) * ch;
      oy = -(w * PG_FLAME_SIN(tx) * sh);
    } break;
    /* tan, sec, csc, cot and their hyperbolic twins through
     * pgFlameComplexTrigParts: flam3's denominators cos 2x + cosh 2y and
     * cosh 2y − cos 2x are 2 (cos² x + sinh² y) and 2 (sin² x + sinh² y);
     * numerator and denominator are divided by cosh² y so that nothing
     * cancels near the poles and nothing overflows for large |y|. */
    case 86: { /* tan */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(ty, tx, &th, &se, &sc, &cc);
      float d = w / (cc * cc * se * se + th * th);
      ox = d * sc * cc * se * se;
      oy = d * th;
    } break;
    case 87: { /* sec */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(ty, tx, &th, &se, &sc, &cc);
      float d = w / (cc * cc * se * se + th * th);
      ox = d * cc * se;
      oy = d * sc * th * se;
    } break;
    case 88: { /* csc */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(ty, tx, &th, &se, &sc, &cc);
      float d = w / (sc * sc * se * se + th * th);
      ox = d * sc * se;
      oy = -(d * cc * th * se);
    } break;
    case 89: { /* cot */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(ty, tx, &th, &se, &sc, &cc);
      float d = w / (sc * sc * se * se + th * th);
      ox = d * sc * cc * se * se;
      oy = -(d * th);
    } break;
    case 90: { /* sinh */
      float sh, ch;
      pgFlameSinhCosh(tx, &sh, &ch);
      ox = w * sh * PG_FLAME_COS(ty);
      oy = w * ch * PG_FLAME_SIN(ty);
    } break;
    case 91: { /* cosh */
      float sh, ch;
      pgFlameSinhCosh(tx, &sh, &ch);
      ox = w * ch * PG_FLAME_COS(ty);
      oy = w * sh * PG_FLAME_SIN(ty);
    } break;
    case 92: { /* tanh */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(tx, ty, &th, &se, &sc, &cc);
      float d = w / (cc * cc * se * se + th * th);
      ox = d * th;
      oy = d * sc * cc * se * se;
    } break;
    case 93: { /* sech */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(tx, ty, &th, &se, &sc, &cc);
      float d = w / (cc * cc * se * se + th * th);
      ox = d * cc * se;
      oy = -(d * sc * th * se);
    } break;
    case 94: { /* csch */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(tx, ty, &th, &se, &sc, &cc);
      float d = w / (sc * sc * se * se + th * th);
      ox = d * th * se * cc;
      oy = -(d * se * sc);
    } break;
    case 95: { /* coth (flam3's imaginary part has the opposite sign of coth z) */
      float th, se, sc, cc;
      pgFlameComplexTrigParts(tx, ty, &th, &se, &sc, &cc);
      float d = w / (sc * sc * se * se + th * th);
      ox = d * th;
      oy = d * sc * cc * se * se;
    } break;
    case 96: { /* auger */
      float freq = prm[PG_FLAME_P_AUGER_FREQ], aw = prm[PG_FLAME_P_AUGER_WEIGHT];
      float scale = prm[PG_FLAME_P_AUGER_SCALE];
      float s = PG_FLAME_SIN(freq * tx), t = PG_FLAME_SIN(freq * ty);
      float dy = ty + aw * (0.5f * scale * s + PG_FABS(ty) * s);
      float dx = tx + aw * (0.5f * scale * t + PG_FABS(tx) * t);
      ox = w * (tx + prm[PG_FLAME_P_AUGER_SYM] * (dx - tx));
      oy = w * dy;
    } break;
    case 97: { /* flux */
      float xpw = tx + w, xmw = tx - w;
      float s = w * (2.0f + prm[PG_FLAME_P_FLUX_SPREAD]) *
                PG_SQRT(PG_SQRT(ty * ty + xpw * xpw) / PG_SQRT(ty * ty + xmw * xmw));
      float a = 0.5f * (PG_FLAME_ATAN2(ty, xmw) - PG_FLAME_ATAN2(ty, xpw));
      ox = s * PG_FLAME_COS(a);
      oy = s * PG_FLAME_SIN(a);
    } break;
    case 98: { /* mobius: (A z + B) / (C z + D) */
      float ra = prm[PG_FLAME_P_MOBIUS_RE_A], ia = prm[PG_FLAME_P_MOBIUS_IM_A];
      float rc = prm[PG_FLAME_P_MOBIUS_RE_C], ic = prm[PG_FLAME_P_MOBIUS_IM_C];
      float ru = ra * tx - ia * ty + prm[PG_FLAME_P_MOBIUS_RE_B];
      float iu = ra * ty + ia * tx + prm[PG_FLAME_P_MOBIUS_IM_B];
      float rv = rc * tx - ic * ty + prm[PG_FLAME_P_MOBIUS_RE_D];
      float iv = rc * ty + ic * tx + prm[PG_FLAME_P_MOBIUS_IM_D];
      float s = w / (rv * rv + iv * iv);
      ox = s * (ru * rv + iu * iv);
      oy = s * (iu * rv - ru * iv);
    } break;
    default: /* 67 pre_blur: applied before the sum; outside the catalogue: nothing */
      break;
  }
  PgFlameVec2 out;
  out.x = ox;
  out.y = oy;
  return out;
}

/* pre_blur: moves the affine output by a pseudo-Gaussian step of length
 * weight·(Σ4 uniforms − 2) in a uniform direction, before anything reads it. */
PROCGEN_FN void pgFlamePreBlur(float w, float* tx, float* ty, PgFlameRng* rng) {
  float g = w * pgFlameRandGauss4(rng);
  float a = pgFlameRand01(rng) * 2.0f * PG_FLAME_PI;
  *tx += g * PG_FLAME_COS(a);
  *ty += g * PG_FLAME_SIN(a);
}

/* One chaos-game step through xform `xf` (see xform.h). `params` is the whole
 * params table (the xform's block starts at xf->param_begin), `terms` the
 * whole terms table. Returns 0 when the new point is a bad value. */
PROCGEN_FN int pgFlameApplyXform(const PgFlameXform* xf, PROCGEN_GLOBAL const PgFlameTerm* terms,
                                 PROCGEN_GLOBAL const float* params, PgFlamePoint* p, PgFlameRng* rng) {
  PROCGEN_GLOBAL const float* prm = params + xf->param_begin;
  const pg_u32 flags = xf->flags;
  p->color = xf->color_speed * xf->color + (1.0f - xf->color_speed) * p->color;

  PgFlameVarInput in;
  in.tx = xf->affine[0] * p->x + xf->affine[1] * p->y + xf->affine[2];
  in.ty = xf->affine[3] * p->x + xf->affine[4] * p->y + xf->affine[5];
  if (flags & PG_FLAME_HAS_PRE_BLUR) pgFlamePreBlur(prm[PG_FLAME_D_PRE_BLUR_WEIGHT], &in.tx, &in.ty, rng);
  in.r2 = in.tx * in.tx + in.ty * in.ty;
  in.r = (flags & (PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ANGLES)) ? PG_SQRT(in.r2) : 0.0f;
  in.atan_xy = (flags & PG_FLAME_NEEDS_ATAN_XY) ? PG_FLAME_ATAN2(in.tx, in.ty) : 0.0f;
  in.sina = 0.0f;
  in.cosa = 0.0f;
  if (flags & PG_FLAME_NEEDS_ANGLES) {
    in.sina = in.tx / in.r;
    in.cosa = in.ty / in.r;
  }
  in.atan_yx = (flags & PG_FLAME_NEEDS_ATAN_YX) ? PG_FLAME_ATAN2(in.ty, in.tx) : 0.0f;

  float sx = 0.0f, sy = 0.0f;
  for (pg_u32 i = 0; i < xf->term_count; ++i) {
    PgFlameTerm t = terms[xf->term_begin + i];
    PgFlameVec2 d = pgFlameVariation(t.variation, t.weight, &in, prm, xf->affine, rng);
    sx += d.x;
    sy += d.y;
  }

  if (xf->has_post) {
    float px = xf->post[0] * sx + xf->post[1] * sy + xf->post[2];
    float py = xf->post[3] * sx + xf->post[4] * sy + xf->post[5];
    sx = px;
    sy = py;
  }
  p->x = sx;
  p->y = sy;
  /* flam3's badvalue: NaN, or beyond ±1e10 (infinities included). */
  return PG_FABS(sx) <= PG_FLAME_BAD_VALUE_LIMIT && PG_FABS(sy) <= PG_FLAME_BAD_VALUE_LIMIT;
}

#endif /* PROCGEN_FLAME_XFORM_H */
#endif /* PROCGEN_FLAME_VARIATIONS_H */

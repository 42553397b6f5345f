// Compiles a genome's xforms to flat tables (flame/xform_table.hpp).
// The derived values follow flam3 3.1.1 variations.c: xform_precalc (the
// perspective, juliaN, juliaScope, radial_blur, waves, disc2, supershape and
// wedgeJulia *_precalc functions) and prepare_precalc_flags (which
// precalculations apply_xform makes, has_preblur, has_post). They are computed
// here in double, as flam3 does, and rounded once to float.
#include "flame/xform_table.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace procgen::flame {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kEps = 1e-10;  // flam3's EPS

void setAffine(float out[6], const FlameAffine& m) {
  out[0] = static_cast<float>(m.a);
  out[1] = static_cast<float>(m.b);
  out[2] = static_cast<float>(m.c);
  out[3] = static_cast<float>(m.d);
  out[4] = static_cast<float>(m.e);
  out[5] = static_cast<float>(m.f);
}

// The PG_FLAME_D_* block of one xform (variations.h), from its flam3 parameters.
void appendDerived(const FlameXform& xf, double pre_blur_weight, float* d) {
  auto p = [&](int index) { return xf.params[static_cast<size_t>(index)]; };
  auto set = [&](int index, double value) { d[index - PG_FLAME_P_COUNT] = static_cast<float>(value); };

  set(PG_FLAME_D_PRE_BLUR_WEIGHT, pre_blur_weight);
  set(PG_FLAME_D_WAVES_DX2, 1.0 / (xf.affine.c * xf.affine.c + kEps));
  set(PG_FLAME_D_WAVES_DY2, 1.0 / (xf.affine.f * xf.affine.f + kEps));
  set(PG_FLAME_D_RINGS_DX, xf.affine.c * xf.affine.c + kEps);
  set(PG_FLAME_D_FAN_DX, kPi * (xf.affine.c * xf.affine.c + kEps));
  set(PG_FLAME_D_FAN2_DX, kPi * (p(PG_FLAME_P_FAN2_X) * p(PG_FLAME_P_FAN2_X) + kEps));
  set(PG_FLAME_D_RINGS2_DX, p(PG_FLAME_P_RINGS2_VAL) * p(PG_FLAME_P_RINGS2_VAL) + kEps);

  const double persp_angle = p(PG_FLAME_P_PERSPECTIVE_ANGLE) * kPi / 2.0;
  set(PG_FLAME_D_PERSP_VSIN, std::sin(persp_angle));
  set(PG_FLAME_D_PERSP_VFCOS, p(PG_FLAME_P_PERSPECTIVE_DIST) * std::cos(persp_angle));

  set(PG_FLAME_D_JULIAN_RN, std::fabs(p(PG_FLAME_P_JULIAN_POWER)));
  set(PG_FLAME_D_JULIAN_CN, p(PG_FLAME_P_JULIAN_DIST) / p(PG_FLAME_P_JULIAN_POWER) / 2.0);
  set(PG_FLAME_D_JULIASCOPE_RN, std::fabs(p(PG_FLAME_P_JULIASCOPE_POWER)));
  set(PG_FLAME_D_JULIASCOPE_CN, p(PG_FLAME_P_JULIASCOPE_DIST) / p(PG_FLAME_P_JULIASCOPE_POWER) / 2.0);

  const double blur_angle = p(PG_FLAME_P_RADIAL_BLUR_ANGLE) * kPi / 2.0;
  set(PG_FLAME_D_RADIAL_BLUR_SPIN, std::sin(blur_angle));
  set(PG_FLAME_D_RADIAL_BLUR_ZOOM, std::cos(blur_angle));

  set(PG_FLAME_D_NGON_B, 2.0 * kPi / p(PG_FLAME_P_NGON_SIDES));

  // disc2_precalc: the twist adds a constant offset, scaled up past ±2π.
  const double twist = p(PG_FLAME_P_DISC2_TWIST);
  double sinadd = std::sin(twist), cosadd = std::cos(twist) - 1.0;
  if (twist > 2.0 * kPi) {
    sinadd *= 1.0 + twist - 2.0 * kPi;
    cosadd *= 1.0 + twist - 2.0 * kPi;
  }
  if (twist < -2.0 * kPi) {
    sinadd *= 1.0 + twist + 2.0 * kPi;
    cosadd *= 1.0 + twist + 2.0 * kPi;
  }
  set(PG_FLAME_D_DISC2_TIMESPI, p(PG_FLAME_P_DISC2_ROT) * kPi);
  set(PG_FLAME_D_DISC2_SINADD, sinadd);
  set(PG_FLAME_D_DISC2_COSADD, cosadd);

  set(PG_FLAME_D_SUPER_SHAPE_PM_4, p(PG_FLAME_P_SUPER_SHAPE_M) / 4.0);
  set(PG_FLAME_D_SUPER_SHAPE_PNEG1_N1, -1.0 / p(PG_FLAME_P_SUPER_SHAPE_N1));

  const double cpow_power = p(PG_FLAME_P_CPOW_POWER);
  set(PG_FLAME_D_CPOW_VA, 2.0 * kPi / cpow_power);
  set(PG_FLAME_D_CPOW_VC, p(PG_FLAME_P_CPOW_R) / cpow_power);
  set(PG_FLAME_D_CPOW_VD, p(PG_FLAME_P_CPOW_I) / cpow_power);

  set(PG_FLAME_D_CURVE_XLEN2, std::max(p(PG_FLAME_P_CURVE_XLENGTH) * p(PG_FLAME_P_CURVE_XLENGTH), 1e-20));
  set(PG_FLAME_D_CURVE_YLEN2, std::max(p(PG_FLAME_P_CURVE_YLENGTH) * p(PG_FLAME_P_CURVE_YLENGTH), 1e-20));

  set(PG_FLAME_D_ESCHER_VC, 0.5 * (1.0 + std::cos(p(PG_FLAME_P_ESCHER_BETA))));
  set(PG_FLAME_D_ESCHER_VD, 0.5 * std::sin(p(PG_FLAME_P_ESCHER_BETA)));

  set(PG_FLAME_D_OSCOPE_TPF, 2.0 * kPi * p(PG_FLAME_P_OSCOPE_FREQUENCY));

  set(PG_FLAME_D_WEDGE_COMP, 1.0 - p(PG_FLAME_P_WEDGE_ANGLE) * p(PG_FLAME_P_WEDGE_COUNT) / (2.0 * kPi));
  set(PG_FLAME_D_WEDGE_JULIA_CF,
      1.0 - p(PG_FLAME_P_WEDGE_JULIA_ANGLE) * p(PG_FLAME_P_WEDGE_JULIA_COUNT) / (2.0 * kPi));
  set(PG_FLAME_D_WEDGE_JULIA_RN, std::fabs(p(PG_FLAME_P_WEDGE_JULIA_POWER)));
  set(PG_FLAME_D_WEDGE_JULIA_CN, p(PG_FLAME_P_WEDGE_JULIA_DIST) / p(PG_FLAME_P_WEDGE_JULIA_POWER) / 2.0);
  set(PG_FLAME_D_WEDGE_SPH_COMP,
      1.0 - p(PG_FLAME_P_WEDGE_SPH_ANGLE) * p(PG_FLAME_P_WEDGE_SPH_COUNT) / (2.0 * kPi));
}

void append(XformTable& table, const FlameXform& xf, double opacity) {
  PgFlameXform out{};
  setAffine(out.affine, xf.affine);
  setAffine(out.post, xf.post);
  out.has_post = xf.post.isIdentity() ? 0u : 1u;
  out.color = static_cast<float>(xf.color);
  out.color_speed = static_cast<float>(xf.color_speed);
  out.opacity = static_cast<float>(opacity);
  out.term_begin = static_cast<pg_u32>(table.terms.size());
  double pre_blur_weight = 0.0;
  for (const FlameVariationTerm& term : xf.variations) {
    table.terms.push_back({static_cast<pg_u32>(term.index), static_cast<float>(term.weight)});
    out.flags |= pgFlameVariationNeeds(static_cast<pg_u32>(term.index));
    if (term.index == 67) pre_blur_weight = term.weight;  // flam3's has_preblur
  }
  out.term_count = static_cast<pg_u32>(table.terms.size()) - out.term_begin;
  out.param_begin = static_cast<pg_u32>(table.params.size());
  table.params.resize(table.params.size() + PG_FLAME_XFORM_PARAM_COUNT);
  float* block = table.params.data() + out.param_begin;
  for (size_t i = 0; i < xf.params.size(); ++i) block[i] = static_cast<float>(xf.params[i]);
  appendDerived(xf, pre_blur_weight, block + PG_FLAME_P_COUNT);
  table.xforms.push_back(out);
}

static_assert(PG_FLAME_P_COUNT == kFlameParamCount,
              "variations.h lists flam3's parameters in catalogue order");

}  // namespace

XformTable compileXforms(const FlameGenome& genome) {
  XformTable table;
  for (size_t i = 0; i < genome.xforms.size(); ++i) {
    const bool solo_off = genome.solo_xform >= 0 && static_cast<size_t>(genome.solo_xform) != i;
    append(table, genome.xforms[i], solo_off ? 0.0 : genome.xforms[i].opacity);
  }
  table.iterated_count = static_cast<int>(genome.xforms.size());
  if (genome.final_xform) {
    append(table, *genome.final_xform, genome.final_xform->opacity);
    table.has_final = true;
  }
  return table;
}

}  // namespace procgen::flame

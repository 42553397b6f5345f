// The genome's xforms compiled to the flat float tables the kernels read
// (flame/xform.h): one PgFlameXform per xform, the final xform (if any) last;
// the variation terms; the parameters.
//
// params layout: one block of PG_FLAME_XFORM_PARAM_COUNT floats per xform,
// starting at PgFlameXform::param_begin, in xform order:
//   [0, PG_FLAME_P_COUNT)   flam3's 109 per-xform parameters, by flameParams()
//                           index (= PG_FLAME_P_* in flame/variations.h),
//                           defaults filled in;
//   [PG_FLAME_P_COUNT, PG_FLAME_XFORM_PARAM_COUNT)
//                           the values flam3 precomputes per xform
//                           (variations.c xform_precalc and
//                           prepare_precalc_flags: perspective vsin/vfcos,
//                           julian/juliascope/wedge_julia rN/cn, radial_blur
//                           spin/zoom, waves dx2/dy2 from the affine, disc2,
//                           super_shape, the pre_blur weight, …), PG_FLAME_D_*.
// PgFlameXform::flags is the union of pgFlameVariationNeeds over the terms.
#pragma once

#include <vector>

#include "flame/xform.h"
#include "procgen/flame.hpp"

namespace procgen::flame {

struct XformTable {
  std::vector<PgFlameXform> xforms;  ///< genome.xforms in order, then the final xform
  std::vector<PgFlameTerm> terms;
  std::vector<float> params;
  int iterated_count = 0;            ///< xforms chosen by the chaos game (the final is not)
  bool has_final = false;
};

/// Compiles every xform of `genome` (solo_xform applied: the others get
/// opacity 0, as flam3).
XformTable compileXforms(const FlameGenome& genome);

}  // namespace procgen::flame

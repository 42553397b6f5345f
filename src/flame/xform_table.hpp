// The genome's xforms compiled to the flat float tables the kernels read
// (flame/xform.h): one PgFlameXform per xform, the final xform (if any) last;
// the variation terms; the parameters — flam3's by flameParams() index, then
// the values flam3 precomputes per xform (variations.c prepare_xform_fn_ptrs
// and the *_precalc functions).
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

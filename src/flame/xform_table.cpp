// Compiles a genome's xforms to flat tables (flame/xform_table.hpp).
// PLACEHOLDER: parameters are copied; the derived values come with the full
// variation set.
#include "flame/xform_table.hpp"

namespace procgen::flame {
namespace {

void setAffine(float out[6], const FlameAffine& m) {
  out[0] = static_cast<float>(m.a);
  out[1] = static_cast<float>(m.b);
  out[2] = static_cast<float>(m.c);
  out[3] = static_cast<float>(m.d);
  out[4] = static_cast<float>(m.e);
  out[5] = static_cast<float>(m.f);
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
  for (const FlameVariationTerm& term : xf.variations)
    table.terms.push_back({static_cast<pg_u32>(term.index), static_cast<float>(term.weight)});
  out.term_count = static_cast<pg_u32>(table.terms.size()) - out.term_begin;
  out.param_begin = static_cast<pg_u32>(table.params.size());
  for (double p : xf.params) table.params.push_back(static_cast<float>(p));
  table.xforms.push_back(out);
}

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

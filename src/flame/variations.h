/* variations.h — flam3's 99 variations (variations.c), shared by C++ and
 * OpenCL C. Included by xform.h. PLACEHOLDER: linear and spherical only, so
 * the iteration can be written against the interface; the full set replaces
 * this file. */
#ifndef PROCGEN_FLAME_VARIATIONS_H
#define PROCGEN_FLAME_VARIATIONS_H

PROCGEN_FN int pgFlameApplyXform(const PgFlameXform* xf, PROCGEN_GLOBAL const PgFlameTerm* terms,
                                 PROCGEN_GLOBAL const float* params, PgFlamePoint* p, PgFlameRng* rng) {
  p->color = xf->color_speed * xf->color + (1.0f - xf->color_speed) * p->color;
  float tx = xf->affine[0] * p->x + xf->affine[1] * p->y + xf->affine[2];
  float ty = xf->affine[3] * p->x + xf->affine[4] * p->y + xf->affine[5];
  float sx = 0.0f, sy = 0.0f;
  float r2 = tx * tx + ty * ty;
  for (pg_u32 i = 0; i < xf->term_count; ++i) {
    PgFlameTerm t = terms[xf->term_begin + i];
    if (t.variation == 0u) {
      sx += t.weight * tx;
      sy += t.weight * ty;
    } else if (t.variation == 2u) {
      float s = t.weight / (r2 + 1e-10f);
      sx += s * tx;
      sy += s * ty;
    }
  }
  if (xf->has_post) {
    float px = xf->post[0] * sx + xf->post[1] * sy + xf->post[2];
    float py = xf->post[3] * sx + xf->post[4] * sy + xf->post[5];
    sx = px;
    sy = py;
  }
  p->x = sx;
  p->y = sy;
  return !(sx != sx || sy != sy || PG_FABS(sx) > PG_FLAME_BAD_VALUE_LIMIT || PG_FABS(sy) > PG_FLAME_BAD_VALUE_LIMIT);
}

#endif /* PROCGEN_FLAME_VARIATIONS_H */

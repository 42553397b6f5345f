/* gravity.h — the one pair term of Barnes–Hut and the direct sum, shared by
 * C++ and OpenCL C (C subset, common/clc.h; STYLE.md practice 2), so the tree
 * walk and the direct sum evaluate every point–point term with the same
 * operations in the same order and a later opencl stage can include it.
 *
 * Paper: Barnes and Hut, Nature 324 (1986), with Plummer softening:
 *   a += m (x_j − x_i) / (r² + ε²)^{3/2},   φ −= m / (r² + ε²)^{1/2}.
 * G is applied once at the end of each sum (nbody.hpp). A pair at softened
 * distance 0 (coincident points, ε = 0) adds nothing: its force is undefined.
 */
#ifndef PROCGEN_OCTREE_GRAVITY_H
#define PROCGEN_OCTREE_GRAVITY_H

#include "common/clc.h"

#ifdef __OPENCL_C_VERSION__
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* OpenCL C may contract a*b + c into fma by default; the host (x86-64 without
 * -mfma) never does: off, so the opencl twin computes the same bits on
 * devices that would contract (PoCL here matches with or without it). */
#pragma OPENCL FP_CONTRACT OFF
#endif

/* Running sums of one target: acceleration and potential, G not applied. */
typedef struct {
  double ax, ay, az, phi;
} PgGravitySum;

/* Adds the term of mass m at offset (dx, dy, dz) = source − target;
 * eps2 = ε². */
PROCGEN_FN void pgGravityAdd(PgGravitySum* s, double dx, double dy, double dz, double m, double eps2) {
  const double r2 = dx * dx + dy * dy + dz * dz + eps2;
  if (r2 == 0.0) return;
  const double inv_r = 1.0 / PG_SQRT(r2);
  const double m_inv_r3 = m * inv_r * inv_r * inv_r;
  s->ax += m_inv_r3 * dx;
  s->ay += m_inv_r3 * dy;
  s->az += m_inv_r3 * dz;
  s->phi -= m * inv_r;
}

#endif /* PROCGEN_OCTREE_GRAVITY_H */

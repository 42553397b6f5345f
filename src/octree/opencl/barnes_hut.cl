/* barnes_hut.cl — Barnes–Hut and the direct sum, opencl backend (serial twin:
 * octree/barnes_hut_impl.hpp via serial/barnes_hut.cpp; the same bits: the
 * walk, its order and the pair term gravity.h are the same, double + − × ÷ and
 * sqrt are correctly rounded in OpenCL C and gravity.h turns contraction off).
 *
 * Paper: Barnes and Hut, Nature 324 (1986). One work-item per target, taken
 * in sorted (`order`) position: an explicit stack from the root, children
 * pushed so that digit 0 is popped first; a node not containing the target
 * with s² < θ²·d² is one mass at its centre, an opened leaf is summed point by
 * point, a node containing the target is always opened. The monopoles (mass,
 * centre, s² per node) come from the host (the serial twin's stage 1).
 */
#include "octree/gravity.h"

#define PG_NBODY_NONE 0xffffffffu
#define PG_NBODY_STACK (8 * 22 + 1)

__kernel void barnesHut(pg_u64 n, pg_u32 root, __global const pg_u32* first_child, __global const pg_u32* begin,
                        __global const pg_u32* end, __global const double* node_mass,
                        __global const double* center, __global const double* size2,
                        __global const double* xyz, __global const double* pmass, __global const pg_u32* order,
                        double theta2, double eps2, double g, __global double* acc, __global double* pot,
                        __global pg_u64* counts) {
  const pg_u64 t = get_global_id(0);
  if (t >= n) return;
  const double x0 = xyz[3 * t], x1 = xyz[3 * t + 1], x2 = xyz[3 * t + 2];
  PgGravitySum s = {0, 0, 0, 0};
  pg_u32 stack[PG_NBODY_STACK];
  int top = 0;
  pg_u64 count = 0;
  stack[top++] = root;
  while (top > 0) {
    const pg_u32 node = stack[--top];
    if (node_mass[node] == 0) continue;
    const int contains = begin[node] <= t && t < end[node];
    if (!contains) {
      const double dx = center[3 * node] - x0, dy = center[3 * node + 1] - x1, dz = center[3 * node + 2] - x2;
      if (size2[node] < theta2 * (dx * dx + dy * dy + dz * dz)) {
        pgGravityAdd(&s, dx, dy, dz, node_mass[node], eps2);
        ++count;
        continue;
      }
    }
    const pg_u32 fc = first_child[node];
    if (fc == PG_NBODY_NONE) {
      for (pg_u64 j = begin[node]; j < end[node]; ++j) {
        if (j == t) continue;
        pgGravityAdd(&s, xyz[3 * j] - x0, xyz[3 * j + 1] - x1, xyz[3 * j + 2] - x2, pmass[j], eps2);
        ++count;
      }
    } else {
      for (int c = 7; c >= 0; --c) stack[top++] = fc + (pg_u32)c;
    }
  }
  const pg_u64 i = order[t];
  acc[3 * i] = g * s.ax;
  acc[3 * i + 1] = g * s.ay;
  acc[3 * i + 2] = g * s.az;
  pot[i] = g * s.phi;
  counts[t] = count;
}

/* Entry t: the direct sum at point targets[t] over j = 0 .. n−1 in order. */
__kernel void directSum(pg_u64 n, pg_u64 count, __global const pg_u32* targets, __global const double* xyz,
                        __global const double* pmass, double eps2, double g, __global double* acc,
                        __global double* pot) {
  const pg_u64 t = get_global_id(0);
  if (t >= count) return;
  const pg_u64 i = targets[t];
  const double x0 = xyz[3 * i], x1 = xyz[3 * i + 1], x2 = xyz[3 * i + 2];
  PgGravitySum s = {0, 0, 0, 0};
  for (pg_u64 j = 0; j < n; ++j) {
    if (j == i) continue;
    pgGravityAdd(&s, xyz[3 * j] - x0, xyz[3 * j + 1] - x1, xyz[3 * j + 2] - x2, pmass[j], eps2);
  }
  acc[3 * t] = g * s.ax;
  acc[3 * t + 1] = g * s.ay;
  acc[3 * t + 2] = g * s.az;
  pot[t] = g * s.phi;
}

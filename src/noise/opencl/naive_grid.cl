/* naive_grid.cl — stage naive_grid, opencl backend (serial twin:
 * noise/serial/naive_grid.cpp; agrees within kNoiseOpenCLTolerance).
 *
 * Paper: shared/seeds/001_191daa7b81372e37.txt §5, the unoptimized baseline:
 * one work-item per grid point, every point on its own. OpenCL C has no
 * double, so the host splits the coordinates into cell and fraction per
 * axis and octave (the same double arithmetic the serial stage does per
 * point) and the kernel gathers its point's entries from those tables:
 * entry o·total + base[d] + i. Each work-group also reduces the min/max of
 * its values into group_range[2·group], [2·group + 1].
 */
#include "noise/fractal.h"

__kernel void naiveGrid(__constant PgNoiseConfig* cfg, __global const pg_u32* cells, __global const float* fracs,
                        pg_u64 sx, pg_u64 sy, pg_u64 sz, pg_u32 base0, pg_u32 base1, pg_u32 base2,
                        pg_u32 base3, pg_u32 total, pg_i32 octaves, pg_u64 first, pg_u64 count,
                        __global float* out, __global float* group_range, __local float* lmin,
                        __local float* lmax) {
  pg_u64 gid = get_global_id(0);
  size_t lid = get_local_id(0);
  float vmin = INFINITY;
  float vmax = -INFINITY;
  if (gid < count) {
    pg_u64 p = first + gid;
    pg_u32 idx[4];
    idx[0] = base0 + (pg_u32)(p % sx);
    p /= sx;
    idx[1] = base1 + (pg_u32)(p % sy);
    p /= sy;
    idx[2] = base2 + (pg_u32)(p % sz);
    p /= sz;
    idx[3] = base3 + (pg_u32)p;
    pg_u32 c[PG_NOISE_MAX_OCTAVES * 4];
    float f[PG_NOISE_MAX_OCTAVES * 4];
    for (int o = 0; o < octaves; ++o)
      for (int d = 0; d < cfg->dims; ++d) {
        pg_u64 at = (pg_u64)o * total + idx[d];
        c[o * 4 + d] = cells[at];
        f[o * 4 + d] = fracs[at];
      }
    float v = pgNoiseSample(cfg, c, f, 0);
    out[gid] = v;
    vmin = v;
    vmax = v;
  }
  lmin[lid] = vmin;
  lmax[lid] = vmax;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) {
      lmin[lid] = lmin[lid + s] < lmin[lid] ? lmin[lid + s] : lmin[lid];
      lmax[lid] = lmax[lid + s] > lmax[lid] ? lmax[lid + s] : lmax[lid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    group_range[2 * get_group_id(0)] = lmin[0];
    group_range[2 * get_group_id(0) + 1] = lmax[0];
  }
}

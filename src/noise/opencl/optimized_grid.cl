/* optimized_grid.cl — stage optimized_grid, opencl backend (serial twin:
 * noise/serial/optimized_grid.cpp; agrees with the serial grid within
 * kNoiseOpenCLTolerance).
 *
 * Paper: shared/seeds/001_191daa7b81372e37.txt §4.2 "Optimalizace 1": the
 * work-items of a work-group need the gradients of the same few lattice
 * nodes, so they compute them once, cooperatively, into local memory, and
 * each item then reads its cell's corners from there. The paper restricts the
 * octave size to a multiple of the group size so that a group lies inside one
 * cell (8 gradients). Here the frequency is arbitrary, so a group covers a
 * footprint of span_x × span_y × span_z nodes per octave (span = the cells its
 * points cross + 1, at most PG_OPT_MAX_NODES in all); every item fills
 * nodes lid, lid + group size, … of it. An octave whose footprint is larger
 * (a very high frequency: points more than a cell apart) is evaluated per
 * point from the hash, the same values. The per-axis inputs (cells and
 * fractions of the group's rows and columns) come from the host's per-axis
 * tables, computed once per axis (the paper's separability), and the
 * interpolation is pgPerlinInterpolate, the per-point code. One NDRange
 * dimension per lattice axis (2D or 3D; 16×16 or 8×8×8 groups); octave by
 * octave, with a barrier before the footprint is overwritten.
 */
#include "noise/fractal.h"

#define PG_OPT_MAX_NODES 729 /* 9 × 9 × 9: an 8³ group whose points each cross a cell */

__kernel void optimizedGrid(__constant PgNoiseConfig* cfg, __global const pg_u32* cells,
                            __global const float* fracs, pg_u32 sx, pg_u32 sy, pg_u32 sz, pg_u32 base0,
                            pg_u32 base1, pg_u32 base2, pg_u32 total, pg_u32 batch_axis, pg_u32 batch_first, pg_u32 batch_end,
                            __global float* out, __global float* group_range, __local float* grads,
                            __local float* lmin, __local float* lmax) {
  const int dims = cfg->dims;
  pg_u32 size[3];
  size[0] = sx;
  size[1] = sy;
  size[2] = sz;
  pg_u32 base[3];
  base[0] = base0;
  base[1] = base1;
  base[2] = base2;
  pg_u32 idx[3];   /* this item's grid index, clamped into the grid */
  pg_u32 first[3]; /* the group's first and last grid index per axis */
  pg_u32 last[3];
  int valid = 1;
  for (int d = 0; d < 3; ++d) {
    const pg_u32 offset = (pg_u32)d == batch_axis ? batch_first : 0u;
    const pg_u32 limit = (pg_u32)d == batch_axis ? batch_end : size[d];
    const pg_u32 i = offset + (pg_u32)get_global_id(d);
    valid = valid && i < limit;
    idx[d] = i < limit ? i : limit - 1u;
    first[d] = offset + (pg_u32)(get_group_id(d) * get_local_size(d));
    const pg_u32 end = first[d] + (pg_u32)get_local_size(d);
    last[d] = (end < limit ? end : limit) - 1u;
  }
  const size_t lid = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
  const size_t lsize = get_local_size(0) * get_local_size(1) * get_local_size(2);

  PgFractalSum acc = pgFractalBegin();
  for (int o = 0; o < cfg->octaves; ++o) {
    const pg_u32 key = pgNoiseSubKey(cfg->key, (pg_u32)o);
    pg_u32 c[4];
    float f[4];
    pg_u32 c_first[3];
    pg_u32 rel[3];
    pg_u32 span[3];
    pg_u32 nodes = 1u;
    for (int d = 0; d < dims; ++d) {
      const pg_u64 at = (pg_u64)o * total + base[d];
      const pg_i32 period = cfg->period[o][d];
      c[d] = cells[at + idx[d]];
      f[d] = fracs[at + idx[d]];
      c_first[d] = cells[at + first[d]];
      /* cells crossed from the group's first point: its footprint along d */
      rel[d] = pgNoiseWrap(c[d] - c_first[d], period);
      span[d] = pgNoiseWrap(cells[at + last[d]] - c_first[d], period) + 2u;
      nodes = span[d] <= PG_OPT_MAX_NODES ? nodes * span[d] : PG_OPT_MAX_NODES + 1u;
    }
    /* uniform over the group: every item read the same first/last entries */
    const int cached = nodes <= PG_OPT_MAX_NODES;
    if (cached) {
      for (pg_u32 k = (pg_u32)lid; k < nodes; k += (pg_u32)lsize) {
        pg_u32 node[4];
        pg_u32 rest = k;
        for (int d = 0; d < dims; ++d) {
          node[d] = pgNoiseWrap(c_first[d] + rest % span[d], cfg->period[o][d]);
          rest /= span[d];
        }
        float g[4];
        pgPerlinGrad(dims, pgNoiseHashN(key, dims, node), g);
        for (int d = 0; d < dims; ++d) grads[k * 3u + (pg_u32)d] = g[d];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float g[16][4];
    const int corners = 1 << dims;
    for (int i = 0; i < corners; ++i) {
      if (cached) {
        pg_u32 at = 0u;
        pg_u32 stride = 1u;
        for (int d = 0; d < dims; ++d) {
          at += (rel[d] + (pg_u32)((i >> d) & 1)) * stride;
          stride *= span[d];
        }
        for (int d = 0; d < dims; ++d) g[i][d] = grads[at * 3u + (pg_u32)d];
      } else {
        pg_u32 node[4];
        for (int d = 0; d < dims; ++d)
          node[d] = ((i >> d) & 1) ? pgNoiseNext(c[d], cfg->period[o][d]) : c[d];
        pgPerlinGrad(dims, pgNoiseHashN(key, dims, node), g[i]);
      }
    }
    pgFractalAdd(cfg, &acc, o, pgPerlinInterpolate(dims, g, f, 0), 0);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float v = pgFractalEnd(cfg, &acc, 0);
  float vmin = INFINITY;
  float vmax = -INFINITY;
  if (valid) {
    /* the output holds the batch: its first index along batch_axis is 0 */
    pg_u32 j[3];
    for (int d = 0; d < 3; ++d) j[d] = idx[d] - ((pg_u32)d == batch_axis ? batch_first : 0u);
    out[(pg_u64)j[0] + (pg_u64)sx * ((pg_u64)j[1] + (pg_u64)sy * j[2])] = v;
    vmin = v;
    vmax = v;
  }
  lmin[lid] = vmin;
  lmax[lid] = vmax;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = lsize / 2; s > 0; s >>= 1) {
    if (lid < s) {
      lmin[lid] = lmin[lid + s] < lmin[lid] ? lmin[lid + s] : lmin[lid];
      lmax[lid] = lmax[lid + s] > lmax[lid] ? lmax[lid + s] : lmax[lid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    const size_t group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    group_range[2 * group] = lmin[0];
    group_range[2 * group + 1] = lmax[0];
  }
}

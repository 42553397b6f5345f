/* chunked_string.h — how the derivation kernels (count.cl / rewrite.cl,
 * cut.cl, scene.cl, homomorphism.cl) walk and write a module string (OpenCL C
 * only). A pass splits the string into chunks of `chunk` modules, one work
 * item each; its counting stage writes every chunk's output size and runs one
 * work item more than there are chunks, whose zero the exclusive scan
 * (scan.cl) turns into the grand total; its writing stage appends each chunk's
 * output from the chunk's scanned offsets through a PgStringWriter.
 */
#ifndef PROCGEN_LSYSTEM_OPENCL_CHUNKED_STRING_H
#define PROCGEN_LSYSTEM_OPENCL_CHUNKED_STRING_H

#include "common/clc.h"
#include "lsystem/tables.h"

/* Number of chunks of `chunk` modules in a string of n modules. */
PROCGEN_FN pg_u64 pgChunkCount(pg_u64 n, pg_u64 chunk) { return (n + chunk - 1) / chunk; }

/* Modules [*begin, *end) of chunk c (c < pgChunkCount(n, chunk)). */
PROCGEN_FN void pgChunkBounds(pg_u64 c, pg_u64 chunk, pg_u64 n, pg_u64* begin, pg_u64* end) {
  *begin = c * chunk;
  *end = min(n, *begin + chunk);
}

/* The output of a writing stage and the next module and parameter positions
 * in it. Without parameters (parametric == 0) only the letters are written. */
typedef struct PgStringWriter {
  __global pg_u8* symbols;
  __global pg_u64* param_offsets;
  __global float* params;
  pg_i32 parametric;
  pg_u64 module;
  pg_u64 param;
} PgStringWriter;

/* A writer starting at at = (module, parameter, ...): a chunk's scanned offsets. */
PROCGEN_FN PgStringWriter pgStringWriter(__global pg_u8* symbols, __global pg_u64* param_offsets,
                                         __global float* params, pg_i32 parametric, ulong4 at) {
  PgStringWriter w;
  w.symbols = symbols;
  w.param_offsets = param_offsets;
  w.params = params;
  w.parametric = parametric;
  w.module = at.x;
  w.param = at.y;
  return w;
}

/* Appends module i of `in` unchanged (and its parameters, when `in` has them
 * and the output is parametric). */
PROCGEN_FN void pgCopyModule(PgStringWriter* out, const PgStringView* in, pg_u64 i) {
  out->symbols[out->module] = in->symbols[i];
  if (out->parametric) {
    out->param_offsets[out->module] = out->param;
    if (in->param_offsets)
      for (pg_u64 k = in->param_offsets[i]; k < in->param_offsets[i + 1]; ++k) out->params[out->param++] = in->params[k];
  }
  ++out->module;
}

/* The cut's compaction (cut.cl, scene.cl): after the exclusive scan of the cut
 * marks, module k is removed when covered[k + 1] > 0. */

/* Output size (modules, parameters, 0, 0) of the kept modules of [begin, end). */
PROCGEN_FN ulong4 pgKeptSize(const PgStringView* in, __global const int* covered, pg_u64 begin, pg_u64 end) {
  ulong4 size = (ulong4)(0);
  for (pg_u64 k = begin; k < end; ++k) {
    if (covered[k + 1] > 0) continue;
    size.x += 1;
    if (in->param_offsets) size.y += in->param_offsets[k + 1] - in->param_offsets[k];
  }
  return size;
}

/* Appends the kept modules of [begin, end). */
PROCGEN_FN void pgWriteKept(PgStringWriter* out, const PgStringView* in, __global const int* covered, pg_u64 begin,
                            pg_u64 end) {
  for (pg_u64 k = begin; k < end; ++k)
    if (covered[k + 1] <= 0) pgCopyModule(out, in, k);
}

#endif /* PROCGEN_LSYSTEM_OPENCL_CHUNKED_STRING_H */

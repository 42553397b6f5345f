/* hash.h — the integer hash that keys every lattice of procgen's noise.
 *
 * Paper (shared/seeds/001_191daa7b81372e37.txt) §4.2 "Optimalizace 1": a
 * lattice node's gradient is picked by an integer hash chained over the node's
 * coordinates, t = hash(x); t = hash(t ^ y); t = hash(t ^ z), with the
 * two-round multiply-xorshift hash below (constant 0x45d9f3b). procgen keys
 * the chain with the seed: the first link hashes key ^ x, where the key is a
 * hash of the 64-bit seed (and of the octave), so a new seed costs nothing —
 * there is no per-seed permutation table to rebuild.
 *
 * Lattice coordinates are 32-bit cells. The caller splits every coordinate
 * into a cell and a fraction (in double on the host) before any float
 * arithmetic, so the fraction keeps its full float precision however far the
 * point is from the origin (docs/noise.md, "Precision"). A tileable field
 * wraps cells into [0, period) (pgNoiseWrap) before they are hashed.
 *
 * C subset (common/clc.h): compiles as C++ and as OpenCL C.
 */
#ifndef PROCGEN_NOISE_HASH_H
#define PROCGEN_NOISE_HASH_H

#include "common/clc.h"

/* The seed paper's hash (§4.2, listing "hash"). */
PROCGEN_FN pg_u32 pgNoiseHash(pg_u32 x) {
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  x = (x >> 16) ^ x;
  return x;
}

/* The key of a seed: both halves of the 64-bit seed reach every bit. */
PROCGEN_FN pg_u32 pgNoiseSeedKey(pg_u64 seed) {
  return pgNoiseHash((pg_u32)seed ^ pgNoiseHash((pg_u32)(seed >> 32) + 0x9e3779b9u));
}

/* A different, independent key per octave (and per warp axis): octave o of a
 * fractal sum must not repeat octave 0 at a scaled position. */
PROCGEN_FN pg_u32 pgNoiseSubKey(pg_u32 key, pg_u32 index) {
  return pgNoiseHash(key + 0x9e3779b9u * (index + 1u));
}

/* The chained corner hash of the paper, one link per axis. */
PROCGEN_FN pg_u32 pgNoiseHash2(pg_u32 key, pg_u32 x, pg_u32 y) {
  return pgNoiseHash(pgNoiseHash(key ^ x) ^ y);
}
PROCGEN_FN pg_u32 pgNoiseHash3(pg_u32 key, pg_u32 x, pg_u32 y, pg_u32 z) {
  return pgNoiseHash(pgNoiseHash2(key, x, y) ^ z);
}
PROCGEN_FN pg_u32 pgNoiseHash4(pg_u32 key, pg_u32 x, pg_u32 y, pg_u32 z, pg_u32 w) {
  return pgNoiseHash(pgNoiseHash3(key, x, y, z) ^ w);
}
/* The same chain over `dims` cells (2..4); equals pgNoiseHash2/3/4. */
PROCGEN_FN pg_u32 pgNoiseHashN(pg_u32 key, int dims, const pg_u32* cell) {
  pg_u32 h = key;
  for (int d = 0; d < dims; ++d) h = pgNoiseHash(h ^ cell[d]);
  return h;
}

/* A hash as a float in [-1, 1): the top 24 bits, exact in float. */
PROCGEN_FN float pgNoiseHashToSigned(pg_u32 h) {
  return (float)(h >> 8) * (1.0f / 8388608.0f) - 1.0f;
}
/* A hash as a float in [0, 1). */
PROCGEN_FN float pgNoiseHashToUnit(pg_u32 h) {
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* Cell c wrapped into [0, period) for a tileable axis; period 0: not tiled.
 * Cells are the two's-complement bit patterns of signed cells. */
PROCGEN_FN pg_u32 pgNoiseWrap(pg_u32 c, pg_i32 period) {
  if (period <= 0) return c;
  pg_i32 r = (pg_i32)c % period;
  return (pg_u32)(r < 0 ? r + period : r);
}

/* The next cell along an axis (the far corner of a lattice cell). */
PROCGEN_FN pg_u32 pgNoiseNext(pg_u32 c, pg_i32 period) {
  return pgNoiseWrap(c + 1u, period);
}

#endif /* PROCGEN_NOISE_HASH_H */

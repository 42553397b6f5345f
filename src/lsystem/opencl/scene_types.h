/* scene_types.h — per-instance descriptors of the batched scene derivation on
 * the device (scene.cl, host driver scene.cpp), in the C subset so both sides
 * share the layout.
 */
#ifndef PROCGEN_LSYSTEM_OPENCL_SCENE_TYPES_H
#define PROCGEN_LSYSTEM_OPENCL_SCENE_TYPES_H

#include "common/clc.h"

/* One instance (slot) of the combined string for one pass. Its segment is
 * modules [seg_begin, seg_end); its chunks are first_chunk ... (chunks never
 * straddle two segments). The table fields are element offsets of this
 * instance's rule table (productions or decomposition, whichever the pass
 * uses) in the concatenated table buffers, so every index inside the table
 * stays valid with the base pointers moved. */
typedef struct PgSceneSlot {
  pg_u64 seg_begin;
  pg_u64 seg_end;
  pg_u64 first_chunk;
  pg_u64 seed;
  pg_i32 first_by_symbol;
  pg_i32 productions;
  pg_i32 patterns;
  pg_i32 successors;
  pg_i32 successor_exprs;
  pg_i32 code;
  pg_i32 constants;
  pg_i32 globals;
  pg_i32 ignored;
  pg_i32 rewrite;     /* 1: rewrite with the table; 0: copy the segment */
  pg_i32 has_partner; /* bracket partners are needed (context productions) */
  pg_i32 cut;         /* the cut pass applies to this segment */
} PgSceneSlot;

#endif /* PROCGEN_LSYSTEM_OPENCL_SCENE_TYPES_H */

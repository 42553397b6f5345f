/* tree_bbox.cl — stage tree_bbox, opencl backend (serial twin:
 * treebox/serial/tree_bbox.cpp; bit-identical output).
 *
 * Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes"
 * (shared/seeds/002_db3a77793bbf279e.txt), §6 and §9, on top of the parentheses
 * matching of match_parens.cl (clip and blend open, end closes, leaves are
 * plain), whose output gives every element its enclosing group and every end
 * its open:
 *   clipInit/clipJump  §6.1 clips, intersections flowing down: every group
 *                      starts with its own clip box (blends: the whole space)
 *                      and a link to its parent group; each round intersects
 *                      with the box of the linked group and doubles the link
 *                      (pointer jumping), ceil(log2(max depth)) rounds. Leaves
 *                      then intersect their box with their group's result
 *                      (clipLeaves).
 *   unionLevel         §6.2 blends, unions flowing up: a tree of box unions
 *                      over the clipped leaves (every other element empty),
 *                      PG_UNION_BLOCK children per node, built level by level;
 *   closeGroups        each end takes the union over the slice between its
 *                      open and itself (left to right through the tree, at
 *                      most 2·B per level) for a blend, the clip result for a
 *                      clip, and writes it to both the open and the end.
 * Exactness: min/max selection written as in monoids.h ("x > y ? x : y")
 * keeps, among equal values, the right operand, and that rule is associative,
 * so any grouping of the same left-to-right sequence of operands (own box,
 * then ancestors; leaves in document order) gives the bits serial gives; empty
 * results are canonical in both.
 */
#include "common/clc.h"
#include "treebox/monoids.h"

#define PG_UNION_BLOCK 32u

#define PG_LEAF 0
#define PG_CLIP 1
#define PG_BLEND 2
#define PG_END 3

/* Groups: val = own clip box (blend: everything), link = enclosing group. */
__kernel void clipInit(__global const pg_u8* kinds, __global const PgBox* boxes, pg_u64 n,
                       __global const pg_i64* parent, __global PgBox* val, __global pg_i64* link) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  const pg_u8 k = kinds[i];
  val[i] = k == PG_CLIP ? boxes[i] : pgBoxAll();
  link[i] = (k == PG_CLIP || k == PG_BLEND) ? parent[i] : -1;
}

/* One pointer-jumping round (§6.1): own chain of 2^r groups ∩ the linked
 * group's chain of 2^r, into the other buffers. */
__kernel void clipJump(pg_u64 n, __global const PgBox* val, __global const pg_i64* link,
                       __global PgBox* val_out, __global pg_i64* link_out) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  const pg_i64 l = link[i];
  if (l >= 0) {
    val_out[i] = pgBoxIntersect(val[i], val[l]);
    link_out[i] = link[l];
  } else {
    val_out[i] = val[i];
    link_out[i] = -1;
  }
}

/* Leaves: own box ∩ the clip region of their group; groups: their clip
 * result. Level 0 of the union tree gets the clipped leaves, empty elsewhere. */
__kernel void clipLeaves(__global const pg_u8* kinds, __global const PgBox* boxes, pg_u64 n,
                         __global const pg_i64* parent, __global const PgBox* val,
                         __global PgBox* out, __global PgBox* leaves) {
  const pg_u64 i = get_global_id(0);
  if (i >= n) return;
  const pg_u8 k = kinds[i];
  if (k == PG_LEAF) {
    const pg_i64 p = parent[i];
    const PgBox r = pgBoxIntersect(boxes[i], p >= 0 ? val[p] : pgBoxAll());
    out[i] = r;
    leaves[i] = r;
  } else {
    if (k == PG_CLIP) out[i] = val[i];
    leaves[i] = pgBoxEmpty();
  }
}

/* dst[k] = union of src[k·B .. k·B+B), in order. */
__kernel void unionLevel(__global PgBox* tree, pg_u64 src_off, pg_u64 src_n, pg_u64 dst_off) {
  const pg_u64 k = get_global_id(0);
  const pg_u64 b = k * PG_UNION_BLOCK;
  if (b >= src_n) return;
  const pg_u64 e = min(src_n, b + PG_UNION_BLOCK);
  PgBox u = tree[src_off + b];
  for (pg_u64 i = b + 1; i < e; ++i) u = pgBoxUnion(u, tree[src_off + i]);
  tree[dst_off + k] = u;
}

/* Union of level-0 elements [lo, hi), left to right. */
PROCGEN_FN PgBox pgRangeUnion(__global const PgBox* tree, __global const pg_u64* off, pg_i32 levels,
                              pg_u64 lo, pg_u64 hi) {
  PgBox left = pgBoxEmpty(), right = pgBoxEmpty();
  for (pg_i32 level = 0; lo < hi; ++level) {
    __global const PgBox* t = tree + off[level];
    if (level + 1 == levels || hi - lo <= 2 * PG_UNION_BLOCK) {
      for (pg_u64 p = lo; p < hi; ++p) left = pgBoxUnion(left, t[p]);
      break;
    }
    while (lo % PG_UNION_BLOCK != 0) left = pgBoxUnion(left, t[lo++]);
    while (hi % PG_UNION_BLOCK != 0) right = pgBoxUnion(t[--hi], right);
    lo /= PG_UNION_BLOCK;
    hi /= PG_UNION_BLOCK;
  }
  return pgBoxUnion(left, right);
}

__kernel void closeGroups(__global const pg_u8* kinds, pg_u64 n, __global const pg_i64* parent,
                          __global const PgBox* tree, __global const pg_u64* level_off,
                          pg_i32 levels, __global PgBox* out) {
  const pg_u64 i = get_global_id(0);
  if (i >= n || kinds[i] != PG_END) return;
  const pg_i64 o = parent[i];
  if (kinds[o] == PG_BLEND) {
    const PgBox u = pgRangeUnion(tree, level_off, levels, (pg_u64)o + 1, i);
    out[o] = u;
    out[i] = u;
  } else {
    out[i] = out[o];
  }
}

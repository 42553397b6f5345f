/* match_parens.cl — stage match_parens, opencl backend (serial twin:
 * treebox/serial/match_parens.cpp; same output, same statistics).
 *
 * Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes"
 * (shared/seeds/002_db3a77793bbf279e.txt), §7–§8, extended past the paper's
 * limits (n <= w², depth <= w) by one more level:
 *
 *   stackSlice      §7.1/§8.1 dispatch 1. One work-group per partition of
 *                   B = wg·k elements, k per work item: each item reduces its k
 *                   elements to a bicyclic value (§3), a reverse Hillis–Steele
 *                   scan over the items gives every item the value of what
 *                   follows it, and a reverse walk writes the partition's
 *                   unmatched opens — its stack-monoid value (§4) — into
 *                   slices[j·B ..], bottom first, and its Bic into part_bic[j].
 *   scanPartitions  the extra level: one work-group scans the m = n/B partition
 *                   values in tiles (any m), giving part_prefix[j] =
 *                   Bic(s[..j·B)) (the incoming stack's depth .b) and, at [m],
 *                   the total (unmatched closes .a, unmatched opens .b); it
 *                   writes every partition's minimum unclamped height, level 0
 *                   of a tree of block minima (opencl/min_tree.h, built by
 *                   minLevel). That tree replaces the paper's bound "depth <=
 *                   w": an incoming stack entry at height T lives in the last
 *                   partition before j whose minimum is <= T (§5 Figure 2's
 *                   search), at slice index T - min, whatever the depth.
 *   matchLeaf       §7.2/§8.2 dispatch 2. Per partition: items reduce their k
 *                   elements again, keeping their own unmatched opens (item
 *                   slices) in local memory; a Hillis–Steele scan of the item
 *                   values gives each item its incoming depth; a binary tree of
 *                   item minima (§8.2 step 2) is built in local memory. Each
 *                   item then walks its k elements with a private stack (§8.2
 *                   step 4): out[x] is the private top, or else the entry of
 *                   the stack below the item at the current depth offset,
 *                   found by searching the local tree (earlier items of the
 *                   partition) and then the global tree (earlier partitions),
 *                   and then walked down one slot per unmatched close, so a
 *                   search is needed only when a slice runs out (amortized
 *                   O(1) per element). Per-partition maximum depth is written
 *                   for the statistics.
 *
 * Heights: with h(x) = (#opens - #closes) before element x, the open at stack
 * height T (counted from the bottom as a height level) below position y is the
 * last x < y with h(x) <= T; a stretch whose minimum height is `mn` and which
 * keeps its unmatched opens bottom first stores that open at index T - mn.
 *
 * Build options: -DPG_INDEX_T=int|long (output and slice element type),
 * -DPG_K=<elements per work item>.
 */
#include "common/clc.h"
#include "opencl/min_tree.h"
#include "treebox/monoids.h"

#ifndef PG_INDEX_T
#define PG_INDEX_T long
#endif
#ifndef PG_K
#define PG_K 8
#endif
typedef PG_INDEX_T IndexT;

PROCGEN_FN int pgIsOpen(pg_u8 c, pg_u8 open_a, pg_u8 open_b) { return c == open_a || c == open_b; }

/* Inclusive Hillis–Steele scan of v[0..wg) in local memory, forward (each
 * v[i] becomes v[0] ⊕ … ⊕ v[i]) or reverse (v[i] ⊕ … ⊕ v[wg-1]). */
PROCGEN_FN void pgBicScanLocal(__local PgBic* v, pg_u32 lid, pg_u32 wg, int reverse) {
  for (pg_u32 off = 1; off < wg; off <<= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    PgBic mine = v[lid];
    PgBic other = mine;
    int take = 0;
    if (!reverse && lid >= off) {
      other = v[lid - off];
      take = 1;
    } else if (reverse && lid + off < wg) {
      other = v[lid + off];
      take = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (take) v[lid] = reverse ? pgBicCombine(mine, other) : pgBicCombine(other, mine);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* ---- dispatch 1: stack slices (§7.1, §8.1) ------------------------------ */

/* Where a work item sits: its partition (one work-group) holds wg·PG_K
 * elements from part_base; the item reads [base, end). Both passes over the
 * symbols (stackSlice, matchLeaf) cut them the same way. */
typedef struct PgItem {
  pg_u32 lid, wg;
  pg_u64 part, part_base, base, end;
} PgItem;

PROCGEN_FN PgItem pgItem(pg_u64 n) {
  PgItem it;
  it.lid = (pg_u32)get_local_id(0);
  it.wg = (pg_u32)get_local_size(0);
  it.part = get_group_id(0);
  it.part_base = it.part * (pg_u64)it.wg * PG_K;
  it.base = it.part_base + (pg_u64)it.lid * PG_K;
  it.end = min(n, it.base + PG_K);
  return it;
}

__kernel void stackSlice(__global const pg_u8* symbols, pg_u64 n, pg_u8 open_a, pg_u8 open_b,
                         pg_u8 close, __global IndexT* slices, __global PgBic* part_bic,
                         __local PgBic* suffix) {
  const PgItem it = pgItem(n);
  const pg_u32 lid = it.lid, wg = it.wg;
  const pg_u64 part = it.part, part_base = it.part_base, base = it.base, end = it.end;

  PgBic v = pgBicIdentity();
  for (pg_u64 x = base; x < end; ++x) {
    const pg_u8 c = symbols[x];
    if (pgIsOpen(c, open_a, open_b)) v = pgBicCombine(v, pgBicOpen());
    else if (c == close) v = pgBicCombine(v, pgBicClose());
  }
  suffix[lid] = v;
  pgBicScanLocal(suffix, lid, wg, 1);
  const PgBic total = suffix[0];
  PgBic s = lid + 1 < wg ? suffix[lid + 1] : pgBicIdentity();
  /* Reverse walk: an open whose suffix has no unmatched close survives, at
   * slot total.b - s.b - 1 counted from the bottom. */
  for (pg_u64 x = end; x-- > base;) {
    const pg_u8 c = symbols[x];
    if (pgIsOpen(c, open_a, open_b)) {
      if (s.a == 0) slices[part_base + (total.b - s.b - 1)] = (IndexT)x;
      s = pgBicCombine(pgBicOpen(), s);
    } else if (c == close) {
      s = pgBicCombine(pgBicClose(), s);
    }
  }
  if (lid == 0) part_bic[part] = total;
}

/* ---- the extra level: scan of partition values, one work-group ---------- */

/* part_prefix[j] = Bic of partitions 0..j-1, part_prefix[m] = total;
 * part_min[j] = minimum unclamped height inside partition j. */
__kernel void scanPartitions(__global const PgBic* part_bic, pg_u64 m, __global PgBic* part_prefix,
                             __global pg_i64* part_min, __local PgBic* tmp) {
  const pg_u32 lid = (pg_u32)get_local_id(0);
  const pg_u32 wg = (pg_u32)get_local_size(0);
  const pg_u64 per = (m + wg - 1) / wg;
  const pg_u64 b = min(m, (pg_u64)lid * per);
  const pg_u64 e = min(m, b + per);
  PgBic v = pgBicIdentity();
  for (pg_u64 j = b; j < e; ++j) v = pgBicCombine(v, part_bic[j]);
  tmp[lid] = v;
  pgBicScanLocal(tmp, lid, wg, 0);
  PgBic p = lid > 0 ? tmp[lid - 1] : pgBicIdentity();
  for (pg_u64 j = b; j < e; ++j) {
    const PgBic here = part_bic[j];
    part_prefix[j] = p;
    part_min[j] = ((pg_i64)p.b - (pg_i64)p.a) - (pg_i64)here.a;
    p = pgBicCombine(p, here);
  }
  if (lid == wg - 1) part_prefix[m] = tmp[wg - 1];
}

/* dst[k] = min(src[k·B .. k·B+B)): one level of the tree of block minima. */
__kernel void minLevel(__global pg_i64* tree, pg_u64 src_off, pg_u64 src_n, pg_u64 dst_off) {
  const pg_u64 k = get_global_id(0);
  const pg_u64 b = k * PG_MIN_BLOCK;
  if (b >= src_n) return;
  tree[dst_off + k] = pgMinOfBlock(tree + src_off, src_n, b);
}

/* ---- dispatch 2: leaf resolution (§7.2, §8.2) --------------------------- */

/* Largest i <= s with lmin[level 0][i] <= target in the local binary tree
 * (level l at offset 2·wg - 2·(wg >> l)), or -1: Figure 2's up-then-down walk. */
PROCGEN_FN pg_i32 pgLocalPrevAtMost(__local const pg_i64* lmin, pg_u32 wg, pg_i32 s, pg_i64 target) {
  if (s < 0) return -1;
  pg_u32 level = 0, off = 0, size = wg;
  pg_u32 pos = (pg_u32)s;
  for (;;) {
    if (lmin[off + pos] <= target) break;
    if (pos & 1u) {
      --pos;
    } else {
      if (pos == 0) return -1;
      pos = pos / 2 - 1;
      off += size;
      size >>= 1;
      ++level;
    }
  }
  while (level > 0) {
    --level;
    size <<= 1;
    off -= size;
    pos = 2 * pos + 1;
    if (lmin[off + pos] > target) --pos;
  }
  return (pg_i32)pos;
}

/* Where the next entry of the stack below a work item comes from. */
typedef struct PgCursor {
  int outer;    /* 0: an earlier item of this partition, 1: an earlier partition */
  pg_i64 unit;  /* item or partition index */
  pg_i64 slot;  /* index into that unit's slice */
} PgCursor;

__kernel void matchLeaf(__global const pg_u8* symbols, pg_u64 n, pg_u8 open_a, pg_u8 open_b,
                        pg_u8 close, __global const IndexT* slices, __global const PgBic* part_prefix,
                        __global const pg_i64* tree, __global const pg_u64* level_info,
                        pg_i32 levels, __global IndexT* out, __global pg_u64* part_max_depth,
                        __local PgBic* item_bic, __local pg_i64* lmin, __local pg_u32* lslice,
                        __local pg_u64* lmax) {
  const PgItem it = pgItem(n);
  const pg_u32 lid = it.lid, wg = it.wg;
  const pg_u64 part = it.part, part_base = it.part_base, base = it.base, end = it.end;

  /* Item value and item slice (its own unmatched opens, bottom first). */
  PgBic v = pgBicIdentity();
  for (pg_u64 x = base; x < end; ++x) {
    const pg_u8 c = symbols[x];
    if (pgIsOpen(c, open_a, open_b)) {
      lslice[lid * PG_K + v.b] = (pg_u32)(x - part_base);
      v.b++;
    } else if (c == close) {
      if (v.b > 0) v.b--;
      else v.a++;
    }
  }
  item_bic[lid] = v;
  pgBicScanLocal(item_bic, lid, wg, 0);
  const PgBic local_prefix = lid > 0 ? item_bic[lid - 1] : pgBicIdentity();
  const pg_i64 item_height = (pg_i64)local_prefix.b - (pg_i64)local_prefix.a;
  lmin[lid] = item_height - (pg_i64)v.a;
  {
    pg_u32 src = 0, size = wg;
    while (size > 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      const pg_u32 half_size = size >> 1;
      if (lid < half_size) lmin[src + size + lid] = min(lmin[src + 2 * lid], lmin[src + 2 * lid + 1]);
      src += size;
      size = half_size;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  const PgBic in_part = part_prefix[part];
  const pg_i64 part_height = (pg_i64)in_part.b - (pg_i64)in_part.a;
  const pg_u64 depth_in = pgBicCombine(in_part, local_prefix).b; /* stack below this item */
  PgMinTree gtree;
  gtree.tree = tree;
  gtree.off = level_info;
  gtree.len = level_info + levels;
  gtree.levels = levels;

  IndexT stack[PG_K];
  pg_u32 sp = 0;
  pg_u64 popped = 0;       /* entries of the stack below taken by unmatched closes */
  pg_u64 resolved = 0;     /* `below` holds the entry at offset resolved-1 */
  IndexT below = -1;
  PgCursor cur;
  cur.outer = 0;
  cur.unit = 0;
  cur.slot = 0;
  pg_u64 max_depth = 0;

  for (pg_u64 x = base; x < end; ++x) {
    IndexT top;
    if (sp > 0) {
      top = stack[sp - 1];
    } else if (popped >= depth_in) {
      top = -1;
    } else if (resolved == popped + 1) {
      top = below;
    } else {
      /* The entry `popped` slots below this item's incoming top, at local
       * height item_height - popped - 1. Every offset is resolved before an
       * unmatched close moves past it, so this is the first (resolved == 0)
       * or one slot below the last: walk down the slice, or search below the
       * unit it ran out in (earlier items first, then earlier partitions). */
      const pg_i64 target = item_height - (pg_i64)popped - 1;
      if (resolved > 0 && cur.slot > 0) {
        cur.slot--;
      } else {
        int found = 0;
        if (resolved == 0 || !cur.outer) {
          const pg_i32 from = resolved == 0 ? (pg_i32)lid - 1 : (pg_i32)cur.unit - 1;
          const pg_i32 i = pgLocalPrevAtMost(lmin, wg, from, target);
          if (i >= 0) {
            cur.outer = 0;
            cur.unit = i;
            cur.slot = target - lmin[i];
            found = 1;
          }
        }
        if (!found) {
          const pg_i64 from = resolved > 0 && cur.outer ? cur.unit - 1 : (pg_i64)part - 1;
          const pg_i64 gt = part_height + target;
          const pg_i64 i = from >= 0 ? pgPrevAtMost(&gtree, (pg_u64)from, gt) : -1;
          cur.outer = 1;
          cur.unit = i;
          cur.slot = i >= 0 ? gt - tree[i] : 0;
        }
      }
      if (cur.outer) {
        below = cur.unit >= 0 ? slices[(pg_u64)cur.unit * wg * PG_K + (pg_u64)cur.slot] : -1;
      } else {
        below = (IndexT)(part_base + lslice[(pg_u64)cur.unit * PG_K + (pg_u64)cur.slot]);
      }
      resolved = popped + 1;
      top = below;
    }
    out[x] = top;
    const pg_u8 c = symbols[x];
    if (pgIsOpen(c, open_a, open_b)) {
      stack[sp++] = (IndexT)x;
    } else if (c == close) {
      if (sp > 0) sp--;
      else if (popped < depth_in) popped++;
    }
    const pg_u64 depth = depth_in - popped + sp;
    max_depth = depth > max_depth ? depth : max_depth;
  }

  lmax[lid] = max_depth;
  for (pg_u32 half_size = wg >> 1; half_size > 0; half_size >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < half_size) lmax[lid] = max(lmax[lid], lmax[lid + half_size]);
  }
  if (lid == 0) part_max_depth[part] = lmax[0];
}

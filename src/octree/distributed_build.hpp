// The per-rank steps of the distributed octree build (distributed_build.cpp),
// pure functions of one rank's sorted keys, so that tests can simulate R
// ranks in one process (tests/octree/distributed_octree_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "procgen/octree.hpp"

namespace procgen::octree_impl {

/// An internal cell of the bucketed tree and the global position (in the
/// sorted keys) of its first point; 16 bytes, sent between ranks as they are.
struct InternalCell {
  uint64_t prefix = 0;
  uint32_t first = 0;
  uint32_t level = 0;
  bool operator<(const InternalCell& o) const { return level != o.level ? level < o.level : prefix < o.prefix; }
  bool operator==(const InternalCell& o) const { return level == o.level && prefix == o.prefix; }
};

inline constexpr int kCellLevels = kOctreeMaxLevel + 1;
/// One past the largest key: the end of the last rank's range.
inline constexpr uint64_t kKeyEnd = uint64_t{1} << 63;

/// Local point counts of the 22 cells containing `key`: in[l] in the level-l
/// cell, below[l] before its first key, over the sorted keys[0..n).
void countAncestorCells(const uint64_t* sorted_keys, uint64_t n, uint64_t key, uint64_t* in, uint64_t* below);

/// The internal cells lying wholly inside [range_begin, range_end) found
/// from one rank's sorted keys K[0..n) of that range (buildBucketed's window
/// rule on the slice; a cell crossing the range is left to the shared top),
/// with first = first_position + its first point's local position.
std::vector<InternalCell> rangeInternalCells(const uint64_t* K, uint64_t n, uint32_t leaf_size, int depth_limit,
                                             uint64_t range_begin, uint64_t range_end, uint64_t first_position);

/// The internal cells crossing an aligned splitter (its ancestors above the
/// leaf level whose first key is before it), from the global counts of the
/// tentative splitter's ancestor cells (countAncestorCells summed over the ranks).
void crossingCells(uint64_t tentative, int leaf_level, uint64_t aligned, const uint64_t* below,
                   std::vector<InternalCell>& out);

}  // namespace procgen::octree_impl

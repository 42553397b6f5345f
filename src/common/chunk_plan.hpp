// The chunking of [0, n) that every cpu stage uses (src/cpu/executor.hpp
// makes them), in a header without oneTBB so serial code that shares loops
// with its cpu twin (e.g. src/octree/build_impl.hpp) can name it too.
#pragma once

#include <algorithm>
#include <cstdint>

namespace procgen::detail {

/// A contiguous partition of [0, n) into `count` chunks of `size` elements
/// (the last one shorter).
struct ChunkPlan {
  uint64_t n = 0;
  uint64_t size = 1;
  uint64_t count = 0;
  uint64_t begin(uint64_t c) const { return c * size; }
  uint64_t end(uint64_t c) const { return std::min(n, (c + 1) * size); }
};

}  // namespace procgen::detail

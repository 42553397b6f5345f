// Stage entry points behind procgen/treebox.hpp, one per backend, with the
// knobs tests need (chunk size, statistics on/off). Not part of the public API.
#pragma once

#include <cstdint>

#include "procgen/treebox.hpp"

namespace procgen::treebox_detail {

/// Default elements per cpu chunk: 256 KiB of int32 output stays in L2 while
/// the chunk is resolved and then patched.
inline constexpr uint64_t kDefaultChunk = uint64_t{1} << 16;

/// serial/match_parens.cpp. With stats = false, max_depth is left 0. `chunk`
/// >= 1 elements per chunk (tests force tiny chunks).
MatchStats matchParensSerial(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int32_t* out, bool stats, uint64_t chunk = kDefaultChunk);
MatchStats matchParensSerial(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int64_t* out, bool stats, uint64_t chunk = kDefaultChunk);

#if PROCGEN_HAVE_TBB
/// cpu/match_parens.cpp. `threads` > 0; `chunk` >= 1 elements per chunk (tests
/// force tiny chunks to exercise the incoming-stack logic).
MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int32_t* out, int threads, uint64_t chunk, bool stats);
MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int64_t* out, int threads, uint64_t chunk, bool stats);
#endif

/// serial/tree_bbox.cpp.
void treeBBoxSerial(const Scene& scene, Box3* out);

#if PROCGEN_HAVE_TBB
/// cpu/tree_bbox.cpp. `threads` > 0; `chunk` >= 1 elements per chunk.
void treeBBoxCpu(const Scene& scene, Box3* out, int threads, uint64_t chunk);
/// Default elements per chunk of the tree bbox passes.
inline constexpr uint64_t kDefaultBBoxChunk = uint64_t{1} << 14;
#endif

}  // namespace procgen::treebox_detail

// Stage entry points behind procgen/treebox.hpp, one per backend, with the
// knobs tests need (chunk size, statistics on/off). Not part of the public API.
#pragma once

#include <algorithm>
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

/// Elements per cpu chunk for n elements on `threads` workers: 16 chunks per
/// worker for balance, within [2^16, 2^19]. Longer chunks leave fewer blocks
/// to patch: a chunk whose predecessor is not yet published when it starts
/// (with two workers nearly every chunk) resolves the blocks that dip below
/// its base against placeholders, and on random input those are a falling
/// share of a longer chunk. Measured at n = 2^26 with 2 threads, G elements/s,
/// chunk 2^16 / 2^18 / 2^19: random 3.71 / 4.16 / 4.31, deep 3.97 / 4.19 /
/// 4.36, flat 3.95 / 4.10 / 4.06.
inline uint64_t cpuMatchChunk(uint64_t n, int threads) {
  const uint64_t per_worker = n / (16 * static_cast<uint64_t>(threads > 0 ? threads : 1));
  return std::clamp<uint64_t>(per_worker, kDefaultChunk, uint64_t{1} << 19);
}

/// cpu/match_parens.cpp (built with the cpu backend only). `threads` > 0; `chunk` >= 1 elements per chunk (tests
/// force tiny chunks to exercise the incoming-stack logic).
MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int32_t* out, int threads, uint64_t chunk, bool stats);
MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int64_t* out, int threads, uint64_t chunk, bool stats);

/// serial/tree_bbox.cpp.
void treeBBoxSerial(const BoxTree& scene, Box3* out);

/// cpu/tree_bbox.cpp. `threads` > 0; `chunk` >= 1 elements per chunk.
void treeBBoxCpu(const BoxTree& scene, Box3* out, int threads, uint64_t chunk);
/// Default elements per chunk of the tree bbox passes.
inline constexpr uint64_t kDefaultBBoxChunk = uint64_t{1} << 14;

}  // namespace procgen::treebox_detail

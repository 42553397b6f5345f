// Stage match_parens, serial backend.
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §2,
// Figure 1: one pass with an explicit stack, top of stack written for every
// element before it is processed. The loop (treebox/match_kernel.hpp) is
// branch-free. It runs chunk by chunk through the same engine as the cpu
// backend (treebox/match_chunked.hpp) with a single worker, so every chunk
// reads its incoming stack directly and nothing is patched; the chunking
// keeps the live stack in L2 and stores a chunk's unmatched opens as a run
// when they are consecutive, so (((…))) needs no stack as long as the input.
#include "treebox/match_chunked.hpp"
#include "treebox/match_internal.hpp"

namespace procgen::treebox_detail {
namespace {

struct NoWorkers {
  template <typename Worker>
  void operator()(Worker& worker, int) const { worker(); }
};

template <typename Index>
MatchStats matchSerialImpl(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                           Index* out, bool stats, uint64_t chunk) {
  return stats ? matchChunked<Index, true>(symbols, n, open, close, out, 1, chunk, NoWorkers{})
               : matchChunked<Index, false>(symbols, n, open, close, out, 1, chunk, NoWorkers{});
}

}  // namespace

MatchStats matchParensSerial(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int32_t* out, bool stats, uint64_t chunk) {
  return matchSerialImpl(symbols, n, open, close, out, stats, chunk);
}

MatchStats matchParensSerial(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int64_t* out, bool stats, uint64_t chunk) {
  return matchSerialImpl(symbols, n, open, close, out, stats, chunk);
}

}  // namespace procgen::treebox_detail

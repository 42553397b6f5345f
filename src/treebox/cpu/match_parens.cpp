// Stage match_parens, cpu backend (oneTBB).
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §4 and
// §7. The chunked single-pass engine (treebox/match_chunked.hpp: resolve each
// chunk with the branch-free loop, scan the chunks' stack-monoid values in
// chunk order with look-back, patch placeholders) run by the `threads`
// workers of the cpu executor's arena, which take chunks in order from a
// shared counter.
#include "cpu/executor.hpp"
#include "treebox/match_chunked.hpp"
#include "treebox/match_internal.hpp"

namespace procgen::treebox_detail {
namespace {

template <typename Index, bool kStats>
MatchStats matchCpuImpl(const uint8_t* in, uint64_t n, uint8_t open, uint8_t close, Index* out,
                        int threads, uint64_t chunk) {
  auto run_workers = [](auto& worker, int workers) {
    detail::CpuExecutor(workers).forEachWorker([&](int) { worker(); });
  };
  return matchChunked<Index, kStats>(in, n, open, close, out, threads, chunk, run_workers);
}

}  // namespace

MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int32_t* out, int threads, uint64_t chunk, bool stats) {
  return stats ? matchCpuImpl<int32_t, true>(symbols, n, open, close, out, threads, chunk)
               : matchCpuImpl<int32_t, false>(symbols, n, open, close, out, threads, chunk);
}

MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int64_t* out, int threads, uint64_t chunk, bool stats) {
  return stats ? matchCpuImpl<int64_t, true>(symbols, n, open, close, out, threads, chunk)
               : matchCpuImpl<int64_t, false>(symbols, n, open, close, out, threads, chunk);
}

}  // namespace procgen::treebox_detail

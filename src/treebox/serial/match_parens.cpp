// Stage match_parens, serial backend.
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §2,
// Figure 1: one pass with an explicit stack, top of stack written for every
// element before it is processed. The loop (treebox/match_kernel.hpp) is
// branch-free; the stack is a growable array whose slots below the base read
// -1, which is exactly the answer for top-level elements and unmatched closes.
#include "treebox/match_internal.hpp"
#include "treebox/match_kernel.hpp"

namespace procgen::treebox_detail {
namespace {

template <typename Index>
MatchStats matchSerialImpl(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                           Index* out, bool stats) {
  const DeltaTable table = makeDeltaTable(open, close);
  LocalStack<Index> stack;
  stack.reset(/*placeholders=*/false, 0);
  RangeSummary r = stats ? resolveRange<Index, true>(symbols, 0, n, table, out, stack, nullptr)
                         : resolveRange<Index, false>(symbols, 0, n, table, out, stack, nullptr);
  MatchStats s;
  s.elements = n;
  s.unmatched_close = r.unmatchedCloses();
  s.unmatched_open = r.unmatchedOpens();
  s.max_depth = static_cast<uint64_t>(r.max_local);
  return s;
}

}  // namespace

MatchStats matchParensSerial(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int32_t* out, bool stats) {
  return matchSerialImpl(symbols, n, open, close, out, stats);
}

MatchStats matchParensSerial(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int64_t* out, bool stats) {
  return matchSerialImpl(symbols, n, open, close, out, stats);
}

}  // namespace procgen::treebox_detail

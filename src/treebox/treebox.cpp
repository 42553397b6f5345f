// Public entry points of procgen/treebox.hpp: argument checks and backend
// dispatch; the stages live in serial/, cpu/ and opencl/ (STYLE.md practice 4).
#include <stdexcept>
#include <string>

#include "common/dispatch.hpp"
#include "common/random.h"
#include "procgen/error.hpp"
#include "treebox/match_internal.hpp"
#include "treebox/monoids.h"
#include "treebox/opencl/device_match.hpp"

namespace procgen {
namespace {

template <typename Index>
MatchStats dispatchMatch(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                         Index* out, const Execution& execution, bool stats) {
  if (open == close) throw std::invalid_argument("matchSymbols: open and close must differ");
  if (sizeof(Index) == 4 && n > kMaxInt32Elements)
    throw std::length_error("matchSymbols: n = " + std::to_string(n) +
                            " does not fit int32_t indices; use the int64_t overload");
  return detail::dispatch(
      execution, "matchSymbols",
      [&] { return treebox_detail::matchParensSerial(symbols, n, open, close, out, stats); },
      [&] {
        const int threads = effectiveThreads(execution);
        return treebox_detail::matchParensCpu(symbols, n, open, close, out, threads,
                                              treebox_detail::cpuMatchChunk(n, threads), stats);
      },
      [&] { return treebox_detail::matchParensOpenCL(symbols, n, open, close, out, execution.device, stats); });
}

template <typename Index>
uint64_t checksumImpl(const Index* out, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(out[i]));
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (v >> (8 * byte)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

}  // namespace

MatchStats matchSymbols(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                        int32_t* out, const Execution& execution) {
  return dispatchMatch(symbols, n, open, close, out, execution, true);
}

MatchStats matchSymbols(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                        int64_t* out, const Execution& execution) {
  return dispatchMatch(symbols, n, open, close, out, execution, true);
}

MatchStats matchParentheses(const ParenKind* kinds, uint64_t n, int32_t* out,
                            const Execution& execution) {
  return dispatchMatch(reinterpret_cast<const uint8_t*>(kinds), n,
                       static_cast<uint8_t>(ParenKind::kOpen), static_cast<uint8_t>(ParenKind::kClose),
                       out, execution, true);
}

MatchStats matchParentheses(const ParenKind* kinds, uint64_t n, int64_t* out,
                            const Execution& execution) {
  return dispatchMatch(reinterpret_cast<const uint8_t*>(kinds), n,
                       static_cast<uint8_t>(ParenKind::kOpen), static_cast<uint8_t>(ParenKind::kClose),
                       out, execution, true);
}

void matchBrackets(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close, int64_t* out,
                   const Execution& execution) {
  dispatchMatch(symbols, n, open, close, out, execution, false);
}

void randomParentheses(uint64_t n, uint64_t seed, double push_probability, uint8_t* out) {
  // One Philox call yields four 32-bit draws; comparing the raw word with a
  // 32-bit threshold keeps the choice exact and platform independent.
  double p = push_probability < 0 ? 0 : (push_probability > 1 ? 1 : push_probability);
  const uint64_t threshold = static_cast<uint64_t>(p * 4294967296.0);
  philox4x32_key_t key = {{static_cast<pg_u32>(seed), static_cast<pg_u32>(seed >> 32)}};
  uint64_t depth = 0;
  for (uint64_t base = 0; base < n; base += 4) {
    philox4x32_ctr_t ctr = {{static_cast<pg_u32>(base >> 2), static_cast<pg_u32>(base >> 34),
                             0x7472u /* phase "tr" */, 0u}};
    philox4x32_ctr_t r = philox4x32(ctr, key);
    for (uint64_t j = 0; j < 4 && base + j < n; ++j) {
      bool push = depth == 0 || static_cast<uint64_t>(r.v[j]) < threshold;
      out[base + j] = push ? '(' : ')';
      depth = push ? depth + 1 : depth - 1;
    }
  }
}

uint64_t matchChecksum(const int32_t* out, uint64_t n) { return checksumImpl(out, n); }
uint64_t matchChecksum(const int64_t* out, uint64_t n) { return checksumImpl(out, n); }

Box3 emptyBox() {
  PgBox e = pgBoxEmpty();
  return Box3{{e.min_x, e.min_y, e.min_z}, {e.max_x, e.max_y, e.max_z}};
}

void treeBoundingBoxes(const BoxTree& scene, Box3* out, const Execution& execution) {
  if (scene.boxes.size() != scene.kinds.size())
    throw std::invalid_argument("treeBoundingBoxes: kinds and boxes differ in length");
  detail::dispatch(
      execution, "treeBoundingBoxes", [&] { treebox_detail::treeBBoxSerial(scene, out); },
      [&] {
        treebox_detail::treeBBoxCpu(scene, out, effectiveThreads(execution), treebox_detail::kDefaultBBoxChunk);
      },
      [&] { treebox_detail::treeBBoxOpenCL(scene, out, execution.device); });
}

}  // namespace procgen

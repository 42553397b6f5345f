// The stack-monoid value of one block of a module string (Levien, "Fast GPU
// bounding boxes on tree-structured scenes", §4): the ']' that close a '[' of
// an earlier block and the '[' still open at the block end. The cpu
// interpreter's count pass (paper §5.2.2 with the treebox primitive in place of
// depth buckets) needs it per block to find the long branches.
//
// Why it looks like this: the obvious walk — a byte loop that tests every
// module and pushes or pops on each bracket — takes a mispredicted branch per
// bracket and per special symbol, and was about a sixth of the cpu backend's
// interpretation time on bracketed plants. Here 64 modules at a time become
// bit masks of '[' and ']' (SSE2 compares), only the set bits are visited,
// and each visit is branch-free, as in treebox/match_kernel.hpp: store the
// position one slot above the top, move the top by ±1, and record a ']' that
// sets a new minimum (an unmatched close) through a conditional index.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace procgen::detail {

/// What blockBrackets saw besides the brackets.
struct BlockSymbols {
  bool brackets = false;
  bool dollar = false;    ///< '$'
  bool polygons = false;  ///< '{' or '}': the caller must walk the block in order
};

namespace block_brackets_detail {

/// Bit k set when p[k] == c, for k < 64 (p must have 64 readable bytes).
struct Masks64 {
  uint64_t open = 0, close = 0, other = 0, polygon = 0;
};

inline Masks64 masks64(const uint8_t* p) {
  Masks64 m;
#if defined(__SSE2__)
  const __m128i vo = _mm_set1_epi8('['), vc = _mm_set1_epi8(']'), vd = _mm_set1_epi8('$');
  const __m128i vb = _mm_set1_epi8('{'), ve = _mm_set1_epi8('}');
  for (int q = 0; q < 4; ++q) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * q));
    const int shift = 16 * q;
    m.open |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, vo)))) << shift;
    m.close |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, vc)))) << shift;
    m.other |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, vd)))) << shift;
    m.polygon |= static_cast<uint64_t>(static_cast<uint32_t>(
                     _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, vb), _mm_cmpeq_epi8(v, ve)))))
                 << shift;
  }
#else
  for (int k = 0; k < 64; ++k) {
    const uint64_t bit = uint64_t{1} << k;
    m.open |= p[k] == '[' ? bit : 0;
    m.close |= p[k] == ']' ? bit : 0;
    m.other |= p[k] == '$' ? bit : 0;
    m.polygon |= (p[k] == '{' || p[k] == '}') ? bit : 0;
  }
#endif
  return m;
}

}  // namespace block_brackets_detail

/// Scans modules [base, base + n) of `symbols`. Appends to `closes` the
/// positions of the ']' not matched inside the range (in order) and to `opens`
/// the '[' left open at its end (bottom first). `scratch` is reused storage.
inline BlockSymbols blockBrackets(const uint8_t* symbols, uint64_t base, uint64_t n,
                                  std::vector<uint64_t>& opens, std::vector<uint64_t>& closes,
                                  std::vector<uint32_t>& scratch) {
  using block_brackets_detail::Masks64;
  BlockSymbols seen;
  // stack level L (−n <= L <= n) lives at stack[L]; unmatched close number k
  // (1-based) at unmatched[k], unmatched[0] takes the stores of the others.
  scratch.resize(3 * n + 3);
  uint32_t* stack = scratch.data() + n + 1;
  uint32_t* unmatched = scratch.data() + 2 * n + 2;
  int64_t sp = 0, low = 0;
  const uint8_t* p = symbols + base;
  for (uint64_t g = 0; g < n; g += 64) {
    Masks64 m;
    if (g + 64 <= n) {
      m = block_brackets_detail::masks64(p + g);
    } else {
      uint8_t tail[64] = {};
      std::memcpy(tail, p + g, n - g);
      m = block_brackets_detail::masks64(tail);
    }
    seen.dollar |= m.other != 0;
    seen.polygons |= m.polygon != 0;
    for (uint64_t bits = m.open | m.close; bits != 0; bits &= bits - 1) {
      const int k = __builtin_ctzll(bits);
      const uint32_t pos = static_cast<uint32_t>(g + static_cast<uint64_t>(k));
      const int64_t is_open = static_cast<int64_t>((m.open >> k) & 1);
      stack[sp + 1] = pos;
      sp += 2 * is_open - 1;
      const bool new_low = sp < low;
      unmatched[new_low ? -sp : 0] = pos;
      low = new_low ? sp : low;
    }
    seen.brackets |= (m.open | m.close) != 0;
  }
  for (int64_t k = 1; k <= -low; ++k) closes.push_back(base + unmatched[k]);
  for (int64_t level = low + 1; level <= sp; ++level) opens.push_back(base + stack[level]);
  return seen;
}

}  // namespace procgen::detail

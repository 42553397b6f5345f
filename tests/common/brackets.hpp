// Independent references and generators for bracket matching, shared by the
// treebox and L-system tests: the textbook stack of Levien §2 (Figure 1) in
// both of its output forms, and random bracket strings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "procgen/lsystem.hpp"
#include "procgen/treebox.hpp"

namespace procgen::test {

/// What matchSymbols must return: per element the index of the innermost
/// enclosing open (a close: its own open), -1 at top level, and statistics.
struct MatchReference {
  std::vector<int64_t> out;
  MatchStats stats;
};

/// Figure 1 of the paper: the textbook stack, with branches and std::vector.
/// An unmatched close gets -1 and leaves the stack alone.
inline MatchReference textbookMatch(const std::vector<uint8_t>& s, uint8_t open, uint8_t close) {
  MatchReference r;
  r.out.resize(s.size());
  std::vector<int64_t> stack;
  for (size_t i = 0; i < s.size(); ++i) {
    r.out[i] = stack.empty() ? -1 : stack.back();
    if (s[i] == open) {
      stack.push_back(static_cast<int64_t>(i));
    } else if (s[i] == close) {
      if (stack.empty()) ++r.stats.unmatched_close;
      else stack.pop_back();
    }
    r.stats.max_depth = std::max<uint64_t>(r.stats.max_depth, stack.size());
  }
  r.stats.elements = s.size();
  r.stats.unmatched_open = stack.size();
  return r;
}

/// The pair form (bracketPartnersSerial's contract): a matched open gets its
/// close, a matched close its open; everything else -1.
inline std::vector<int64_t> textbookPartners(const uint8_t* s, uint64_t n, uint8_t open = '[',
                                             uint8_t close = ']') {
  std::vector<int64_t> p(n, -1), stack;
  for (uint64_t i = 0; i < n; ++i) {
    if (s[i] == open) {
      stack.push_back(static_cast<int64_t>(i));
    } else if (s[i] == close && !stack.empty()) {
      p[i] = stack.back();
      p[static_cast<uint64_t>(stack.back())] = static_cast<int64_t>(i);
      stack.pop_back();
    }
  }
  return p;
}

/// The alphabet and weights of randomBrackets.
struct BracketMix {
  int open_pct = 25;       ///< percent of opens
  int close_pct = 25;      ///< percent of closes
  bool balanced = false;   ///< never close below depth 0 (unclosed opens stay possible)
  uint8_t open = '[';
  uint8_t close = ']';
  uint8_t other = 'A';     ///< every other element
};

/// A random string of opens, closes and one plain symbol.
inline std::vector<uint8_t> randomBrackets(std::mt19937& rng, uint64_t n, const BracketMix& mix = {}) {
  std::vector<uint8_t> s(n);
  int64_t depth = 0;
  std::uniform_int_distribution<int> pct(0, 99);
  for (uint64_t i = 0; i < n; ++i) {
    const int r = pct(rng);
    uint8_t c = r < mix.open_pct ? mix.open : r < mix.open_pct + mix.close_pct ? mix.close : mix.other;
    if (mix.balanced && c == mix.close && depth == 0) c = mix.other;
    depth += c == mix.open ? 1 : c == mix.close ? -1 : 0;
    s[i] = c;
  }
  return s;
}

/// randomBrackets with its own generator seeded with `seed`.
inline std::vector<uint8_t> randomBrackets(uint32_t seed, uint64_t n, const BracketMix& mix = {}) {
  std::mt19937 rng(seed);
  return randomBrackets(rng, n, mix);
}

/// A random module string over "AB[]%" for the cut and bracket passes:
/// `open_pct` percent '[', ']' up to 40 %, 5 % '%', the rest A (two
/// parameters when parametric) and B (one); sometimes unbalanced unless
/// `balanced`.
inline ModuleString randomCutString(std::mt19937& rng, uint64_t n, bool parametric, int open_pct = 20,
                                    bool balanced = false) {
  ModuleString s;
  s.clear(parametric);
  int64_t depth = 0;
  std::uniform_int_distribution<int> d(0, 99);
  for (uint64_t i = 0; i < n; ++i) {
    const int r = d(rng);
    uint8_t c = r < open_pct ? '[' : r < 40 ? ']' : r < 45 ? '%' : r < 75 ? 'A' : 'B';
    if (balanced && c == ']' && depth == 0) c = 'A';
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    s.symbols.push_back(c);
    if (parametric) {
      for (int k = 0; k < (c == 'A' ? 2 : c == 'B' ? 1 : 0); ++k)
        s.params.push_back(static_cast<float>(i) + 0.25f * static_cast<float>(k));
      s.param_offsets.push_back(s.params.size());
    }
  }
  return s;
}

}  // namespace procgen::test

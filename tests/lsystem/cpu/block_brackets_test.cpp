// blockBrackets (the cpu interpreter's per-block bracket summary) against the
// textbook stack walk written here: random strings over '[', ']', '$', '{',
// 'F' and other bytes, lengths around the 64-module mask width, offsets into a
// larger string, and strings with no brackets at all.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "lsystem/cpu/block_brackets.hpp"

namespace procgen::detail {
namespace {

struct Expected {
  std::vector<uint64_t> opens, closes;
  bool brackets = false, dollar = false, polygons = false;
};

Expected textbook(const std::vector<uint8_t>& s, uint64_t base, uint64_t n) {
  Expected e;
  for (uint64_t i = base; i < base + n; ++i) {
    const uint8_t x = s[i];
    e.brackets |= x == '[' || x == ']';
    e.dollar |= x == '$';
    e.polygons |= x == '{' || x == '}';
    if (x == '[') {
      e.opens.push_back(i);
    } else if (x == ']') {
      if (e.opens.empty()) e.closes.push_back(i);
      else e.opens.pop_back();
    }
  }
  return e;
}

void expectSame(const std::vector<uint8_t>& s, uint64_t base, uint64_t n, std::vector<uint32_t>& scratch) {
  std::vector<uint64_t> opens{7}, closes{9};  // callers append: keep what was there
  const BlockSymbols got = blockBrackets(s.data(), base, n, opens, closes, scratch);
  const Expected want = textbook(s, base, n);
  std::vector<uint64_t> want_opens{7}, want_closes{9};
  want_opens.insert(want_opens.end(), want.opens.begin(), want.opens.end());
  want_closes.insert(want_closes.end(), want.closes.begin(), want.closes.end());
  EXPECT_EQ(opens, want_opens) << "base " << base << " n " << n;
  EXPECT_EQ(closes, want_closes) << "base " << base << " n " << n;
  EXPECT_EQ(got.brackets, want.brackets);
  EXPECT_EQ(got.dollar, want.dollar);
  EXPECT_EQ(got.polygons, want.polygons);
}

TEST(BlockBrackets, MatchesTextbookStackOnRandomStrings) {
  std::mt19937_64 rng(20261125);
  const char alphabet[] = {'[', ']', '[', ']', 'F', '+', '$', '{', '}', 'A'};
  std::vector<uint32_t> scratch;
  for (uint64_t n : {0u, 1u, 2u, 63u, 64u, 65u, 127u, 128u, 129u, 200u, 1000u, 4097u}) {
    for (int round = 0; round < 20; ++round) {
      // Bias towards opens or closes in some rounds so deep and unmatched runs occur.
      const int bias = round % 3;
      std::vector<uint8_t> s(n + 37);
      for (uint8_t& x : s) {
        const uint64_t r = rng() % 14;
        x = r < 10 ? static_cast<uint8_t>(alphabet[r]) : static_cast<uint8_t>(bias == 1 ? '[' : bias == 2 ? ']' : 'F');
      }
      expectSame(s, round % 37, n, scratch);
    }
  }
}

TEST(BlockBrackets, AllOpensAllClosesAndNone) {
  std::vector<uint32_t> scratch;
  for (uint64_t n : {1u, 64u, 65u, 300u}) {
    expectSame(std::vector<uint8_t>(n, '['), 0, n, scratch);
    expectSame(std::vector<uint8_t>(n, ']'), 0, n, scratch);
    expectSame(std::vector<uint8_t>(n, 'F'), 0, n, scratch);
  }
}

}  // namespace
}  // namespace procgen::detail

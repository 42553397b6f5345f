// countChunkD0L (the D0L count stage) against the definition: the sum of the
// successor lengths of the modules, on random D0L grammars with 1 to 9
// rewritten symbols (the vectorised per-symbol count covers up to
// D0LTable::kCountedSymbols of them, the lookup sum the rest), erasing
// productions, and ranges long enough to flush the byte counters.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

TEST(D0LCount, MatchesSumOfSuccessorLengths) {
  std::mt19937_64 rng(7);
  const std::string alphabet = "ABCDEFGHIJ+-[]";
  for (int grammar = 0; grammar < 60; ++grammar) {
    const int rewritten = 1 + grammar % 9;
    std::string text = "Lsystem: 1\nderivation length: 1\nAxiom: A\n";
    std::vector<size_t> length(256, 1);
    for (int k = 0; k < rewritten; ++k) {
      const char pred = static_cast<char>('A' + k);
      const size_t len = rng() % 5 == 0 ? 0 : 1 + rng() % 12;  // 0: erasing
      std::string succ;
      for (size_t m = 0; m < len; ++m) succ += "FG+-ABCD"[rng() % 8];
      text += std::string(1, pred) + " --> " + (len == 0 ? std::string("*") : succ) + "\n";
      length[static_cast<uint8_t>(pred)] = len;
    }
    text += "endlsystem\n";
    const LSystem l = LSystem::fromText(text);
    const detail::D0LTable t = detail::makeD0LTable(l.data(), l.data().productions);
    ASSERT_TRUE(t.usable) << text;
    for (uint64_t n : {0u, 1u, 15u, 16u, 17u, 4079u, 4080u, 4081u, 9000u}) {
      std::vector<uint8_t> s(n + 5);
      for (uint8_t& x : s) x = static_cast<uint8_t>(alphabet[rng() % alphabet.size()]);
      const uint64_t begin = rng() % 5;
      uint64_t want = 0;
      for (uint64_t i = begin; i < begin + n; ++i) want += length[s[i]];
      EXPECT_EQ(detail::countChunkD0L(t, s.data(), begin, begin + n), want) << text << " n " << n;
    }
  }
}

}  // namespace
}  // namespace procgen

// countChunkD0L (the D0L count stage) against the definition: the sum of the
// successor lengths of the modules, on random D0L grammars with 1 to 9
// rewritten symbols (the vectorised per-symbol count covers up to
// D0LTable::kCountedSymbols of them, the lookup sum the rest), erasing
// productions, and ranges long enough to flush the byte counters.
// composeD0L (the k-step tables of the deriver's jumps) against k steps of a
// std::map rewriting loop, and its row limits.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/lsystem_helpers.hpp"
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

using test::randomD0L;
using test::rewriteTextbook;

std::string rewriteWith(const detail::D0LTable& t, const std::string& in) {
  std::vector<uint8_t> out(detail::countChunkD0L(t, reinterpret_cast<const uint8_t*>(in.data()), 0, in.size()));
  detail::rewriteChunkD0L(t, reinterpret_cast<const uint8_t*>(in.data()), 0, in.size(), out.data());
  return std::string(out.begin(), out.end());
}

TEST(D0LCompose, KStepTableEqualsKSteps) {
  std::mt19937_64 rng(11);
  for (int grammar = 0; grammar < 80; ++grammar) {
    std::map<char, std::string> rules;
    const std::string text = randomD0L(rng, rules);
    const LSystem l = LSystem::fromText(text);
    const detail::D0LTable one = detail::makeD0LTable(l.data(), l.data().productions);
    ASSERT_TRUE(one.usable) << text;
    std::string axiom;
    for (int i = 0; i < 40; ++i) axiom += "ABCDEFG+-"[rng() % 9];
    detail::D0LTable k_steps = one;
    std::string want = axiom;
    for (int k = 1; k <= 5; ++k) {
      want = rewriteTextbook(rules, want);
      if (k > 1) k_steps = detail::composeD0L(k_steps, one);
      ASSERT_TRUE(k_steps.usable);
      EXPECT_EQ(rewriteWith(k_steps, axiom), want) << text << " k " << k;
    }
  }
}

// Tables of two different grammars: symbols one keeps and the other rewrites.
TEST(D0LCompose, FirstThenSecondGrammar) {
  std::mt19937_64 rng(12);
  for (int pair = 0; pair < 80; ++pair) {
    std::map<char, std::string> rules1, rules2;
    const LSystem l1 = LSystem::fromText(randomD0L(rng, rules1));
    const LSystem l2 = LSystem::fromText(randomD0L(rng, rules2));
    const detail::D0LTable t1 = detail::makeD0LTable(l1.data(), l1.data().productions);
    const detail::D0LTable t2 = detail::makeD0LTable(l2.data(), l2.data().productions);
    std::string axiom;
    for (int i = 0; i < 40; ++i) axiom += "ABCDEFG+-"[rng() % 9];
    const std::string want = rewriteTextbook(rules2, rewriteTextbook(rules1, axiom));
    EXPECT_EQ(rewriteWith(detail::composeD0L(t1, t2), axiom), want) << pair;
  }
}

TEST(D0LCompose, RowLimitsMakeTheTableUnusable) {
  const LSystem l = LSystem::fromText("Lsystem: 1\nderivation length: 1\nAxiom: A\nA --> AAB\nB --> *\nendlsystem\n");
  const detail::D0LTable one = detail::makeD0LTable(l.data(), l.data().productions);
  // Two steps: A → AAB → AAB AAB (B erased): rows A = 6 modules, B = 0; 6 bytes in all.
  EXPECT_TRUE(detail::composeD0L(one, one, 6, 6).usable);
  EXPECT_EQ(detail::composeD0L(one, one, 6, 6).max_length, 6u);
  EXPECT_FALSE(detail::composeD0L(one, one, 5, 6).usable);
  EXPECT_FALSE(detail::composeD0L(one, one, 6, 5).usable);
}

}  // namespace
}  // namespace procgen

// Parentheses matching against the textbook stack algorithm (Levien §2,
// Figure 1, written here with branches and std::vector), on every backend,
// thread count and forced chunk size.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/brackets.hpp"
#include "common/sanitizer.hpp"
#include "procgen/error.hpp"
#include "procgen/opencl.hpp"
#include "procgen/treebox.hpp"
#include "treebox/match_internal.hpp"
#include "treebox/match_kernel.hpp"

namespace procgen {
namespace {

using test::BracketMix;
using test::MatchReference;
using test::Variant;

/// serial and cpu×1/2/7 through the public entry point, then the chunked
/// stages with forced chunk sizes (serial too: it matches chunk by chunk).
/// opencl has its own suite (tests/opencl/treebox_opencl_test.cpp).
std::vector<Variant> configs() {
  std::vector<Variant> c;
  for (const Variant& v : test::availableVariants())
    if (v.backend != Backend::kOpenCL) c.push_back(v);
  for (uint64_t chunk : {1, 3, 1024, 1025}) c.push_back(test::makeVariant(Backend::kSerial, 1, chunk));
  if (backendAvailable(Backend::kCpu))
    for (uint64_t chunk : {1, 2, 3, 7, 64, 1023, 1024, 1025, 5000})
      for (int t : {1, 2, 7}) c.push_back(test::makeVariant(Backend::kCpu, t, chunk));
  return c;
}

template <typename Index>
MatchStats run(const Variant& cfg, const std::vector<uint8_t>& s, uint8_t open, uint8_t close,
               std::vector<Index>& out) {
  out = test::poisoned<Index>(s.size());  // unwritten elements fail
  if (cfg.backend == Backend::kSerial && cfg.chunk != 0)
    return treebox_detail::matchParensSerial(s.data(), s.size(), open, close, out.data(), true,
                                             cfg.chunk);
#if PROCGEN_HAVE_TBB
  if (cfg.backend == Backend::kCpu && cfg.chunk != 0)
    return treebox_detail::matchParensCpu(s.data(), s.size(), open, close, out.data(),
                                          cfg.threads, cfg.chunk, true);
#endif
  return matchSymbols(s.data(), s.size(), open, close, out.data(),
                      Execution{cfg.backend, cfg.threads});
}

// Under a sanitizer the forced chunk sizes (1 to 5000 elements) get inputs up
// to this length — each still crosses chunk and 1024-element block borders —
// while the default chunking keeps every length, its 2^16 borders included.
// With every forced chunk on every length the two largest tests below took
// 100 s of CPU under ThreadSanitizer; this way 3.4 s.
constexpr size_t kForcedChunkLengthLimit = test::sizeUnlessSanitized(SIZE_MAX, 8192);

void expectMatches(const std::vector<uint8_t>& s, uint8_t open = '(', uint8_t close = ')') {
  MatchReference ref = test::textbookMatch(s, open, close);
  for (const Variant& cfg : configs()) {
    if (cfg.chunk != 0 && s.size() > kForcedChunkLengthLimit) continue;
    SCOPED_TRACE(cfg.name + " n=" + std::to_string(s.size()));
    std::vector<int32_t> out32;
    MatchStats st = run(cfg, s, open, close, out32);
    std::vector<int64_t> out64;
    MatchStats st64 = run(cfg, s, open, close, out64);
    for (size_t i = 0; i < s.size(); ++i) {
      ASSERT_EQ(out32[i], ref.out[i]) << "int32 element " << i;
      ASSERT_EQ(out64[i], ref.out[i]) << "int64 element " << i;
    }
    for (const MatchStats& x : {st, st64}) {
      EXPECT_EQ(x.elements, ref.stats.elements);
      EXPECT_EQ(x.unmatched_open, ref.stats.unmatched_open);
      EXPECT_EQ(x.unmatched_close, ref.stats.unmatched_close);
      EXPECT_EQ(x.max_depth, ref.stats.max_depth);
    }
  }
}

// Random sequence over '(' ')' and 'x' with the given percentages.
std::vector<uint8_t> randomSeq(size_t n, uint32_t seed, int open_pct, int close_pct) {
  return test::randomBrackets(seed, n, BracketMix{open_pct, close_pct, false, '(', ')', 'x'});
}

std::vector<uint8_t> fromText(const std::string& t) { return std::vector<uint8_t>(t.begin(), t.end()); }

TEST(MatchParens, HandDerivedExample) {
  // (a(b)c))( : per element -1 0 0 2 2 0 0 -1 -1, as worked out by hand.
  std::vector<uint8_t> s = fromText("(a(b)c))(");
  std::vector<int64_t> out(s.size());
  MatchStats st = matchSymbols(s.data(), s.size(), '(', ')', out.data(), Execution{});
  EXPECT_EQ(out, (std::vector<int64_t>{-1, 0, 0, 2, 2, 0, 0, -1, -1}));
  EXPECT_EQ(st.unmatched_open, 1u);
  EXPECT_EQ(st.unmatched_close, 1u);
  EXPECT_EQ(st.max_depth, 2u);
}

TEST(MatchParens, EmptyAndTiny) {
  for (const char* t : {"", "(", ")", "x", "()", ")(", "((", "))", "(x)", "x)x(x"})
    expectMatches(fromText(t));
}

TEST(MatchParens, RandomManyLengths) {
  for (size_t n = 0; n < 200; ++n) expectMatches(randomSeq(n, 17u + n, 40, 40));
}

TEST(MatchParens, RandomAroundChunkAndBlockSizes) {
  const size_t block = static_cast<size_t>(treebox_detail::kBlock);
  for (size_t n : {block - 1, block, block + 1, 2 * block + 3, size_t{5000}, size_t{65535},
                   size_t{65536}, size_t{65537}, size_t{140000}})
    expectMatches(randomSeq(n, static_cast<uint32_t>(n), 50, 50));
}

TEST(MatchParens, Unbalanced) {
  expectMatches(randomSeq(3000, 1, 30, 60));  // mostly closes
  expectMatches(randomSeq(3000, 2, 60, 30));  // mostly opens
  expectMatches(fromText(std::string(2500, ')') + std::string(2500, '(')));
}

TEST(MatchParens, DeepAndFlatNesting) {
  for (size_t half : {size_t{1}, size_t{500}, size_t{1024}, size_t{70000}}) {
    expectMatches(fromText(std::string(half, '(') + std::string(half, ')')));
    std::string flat;
    for (size_t i = 0; i < half; ++i) flat += "()";
    expectMatches(fromText(flat));
    expectMatches(fromText("(" + flat + ")"));  // every element reads one far-away open
  }
}

TEST(MatchParens, RunsOfEightEqualBrackets) {
  // The loop resolves eight equal brackets in a row with vector stores
  // (match_kernel.hpp, BracketRuns): runs aligned and not aligned to the
  // 8-byte groups, a run going below the block's start and back up (the block
  // summary reads the stack slots the runs write), runs straddling chunk and
  // block borders, and runs next to unmatched closes.
  std::mt19937 rng(8);
  for (int round = 0; round < 12; ++round) {
    std::string s(static_cast<size_t>(round % 8), 'x');  // shifts the groups
    for (int piece = 0; piece < 400; ++piece) {
      switch (rng() % 6) {
        case 0: s += std::string(8 * (1 + rng() % 4), '('); break;
        case 1: s += std::string(8 * (1 + rng() % 4), ')'); break;
        case 2: s += std::string(8 + rng() % 8, '('); break;
        case 3: s += std::string(8 + rng() % 8, ')'); break;
        case 4: s += ")))))))))((((((((("; break;
        default: {
          std::vector<uint8_t> mix = randomSeq(1 + rng() % 20, static_cast<uint32_t>(rng()), 45, 45);
          s.append(mix.begin(), mix.end());
        }
      }
    }
    expectMatches(fromText(s));
  }
}

TEST(MatchParens, NonConsecutiveAndMixedOpenLists) {
  // Unmatched opens that are not consecutive indices ("(x" …, "(()" …) are
  // stored as lists, consecutive ones as runs; a stack mixing both, closed
  // across many chunks.
  std::string s1, s2, s3;
  for (int i = 0; i < 3000; ++i) s1 += "(x";
  for (int i = 0; i < 3000; ++i) s1 += "x)";
  for (int i = 0; i < 2000; ++i) s2 += "(()";
  s2 += std::string(2000, ')');
  s3 = std::string(1500, '(') + s1.substr(0, 2000) + std::string(1200, '(');
  std::vector<uint8_t> mixed = fromText(s3);
  std::vector<uint8_t> noise = randomSeq(3000, 11, 50, 50);
  mixed.insert(mixed.end(), noise.begin(), noise.end());
  std::string closes(5000, ')');
  mixed.insert(mixed.end(), closes.begin(), closes.end());
  expectMatches(fromText(s1));
  expectMatches(fromText(s2));
  expectMatches(mixed);
}

TEST(MatchParens, OnlyPlainElements) {
  expectMatches(fromText(std::string(3000, 'x')));
  expectMatches(randomSeq(3000, 3, 0, 0));
}

TEST(MatchParens, OtherSymbolsAndKinds) {
  std::vector<uint8_t> s = randomSeq(4000, 9, 30, 30);
  for (auto& c : s) c = c == '(' ? '[' : (c == ')' ? ']' : c);
  expectMatches(s, '[', ']');

  MatchReference ref = test::textbookMatch(s, '[', ']');
  std::vector<ParenKind> kinds(s.size());
  for (size_t i = 0; i < s.size(); ++i)
    kinds[i] = s[i] == '[' ? ParenKind::kOpen : (s[i] == ']' ? ParenKind::kClose : ParenKind::kOther);
  for (const Variant& cfg : configs()) {
    if (cfg.chunk != 0) continue;
    Execution ex{cfg.backend, cfg.threads};
    std::vector<int64_t> out(s.size(), 77);
    MatchStats st = matchParentheses(kinds.data(), kinds.size(), out.data(), ex);
    EXPECT_EQ(out, ref.out) << cfg.name;
    EXPECT_EQ(st.max_depth, ref.stats.max_depth);
    std::vector<int64_t> br(s.size(), 77);
    matchBrackets(s.data(), s.size(), '[', ']', br.data(), ex);
    EXPECT_EQ(br, ref.out) << cfg.name;
  }
}

TEST(MatchParens, RandomGeneratorHasNoUnmatchedClose) {
  std::vector<uint8_t> s(10000);
  randomParentheses(s.size(), 5, 0.5, s.data());
  MatchReference ref = test::textbookMatch(s, '(', ')');
  EXPECT_EQ(ref.stats.unmatched_close, 0u);
  std::vector<uint8_t> again(s.size());
  randomParentheses(again.size(), 5, 0.5, again.data());
  EXPECT_EQ(s, again);
  expectMatches(s);
}

TEST(MatchParens, ChecksumIsFnv1aOverInt64) {
  // FNV-1a of the 8 bytes of int64 -1 (all 0xff), computed byte by byte here.
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < 8; ++i) h = (h ^ 0xffu) * 0x100000001b3ull;
  int32_t a32 = -1;
  int64_t a64 = -1;
  EXPECT_EQ(matchChecksum(&a32, 1), h);
  EXPECT_EQ(matchChecksum(&a64, 1), h);
}

TEST(MatchParens, Errors) {
  uint8_t s[2] = {'(', ')'};
  int64_t out[2];
  EXPECT_THROW(matchSymbols(s, 2, '(', '(', out, Execution{}), std::invalid_argument);
  if (openclDevices().empty()) {  // with a device, tests/opencl/treebox_opencl_test.cpp runs it
    EXPECT_THROW(matchSymbols(s, 2, '(', ')', out, Execution{Backend::kOpenCL, 0}),
                 BackendUnavailableError);
  }
}

}  // namespace
}  // namespace procgen

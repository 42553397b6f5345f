// Backend parity for L-systems (issue 4): one test body runs on every backend
// variant — serial, cpu×1, cpu×2, cpu×7 and cpu with tiny forced chunks — and
// compares against the serial engine (itself checked against independent
// references in examples_reference_test.cpp):
//  - derivation: the final strings are identical, symbol by symbol and
//    parameter by parameter (bit patterns, so NaN and -0 count), for every
//    shipped example (n capped so the test stays fast), seeds 1..20 for the
//    stochastic ones, and for randomly generated grammars (parametric,
//    context-sensitive with brackets in the right context, stochastic,
//    conditions with ran(), decomposition, '%' cuts, #ignore);
//  - stages: the cpu runner's bracket partners and cut pass against their
//    serial twins on random strings, unmatched brackets included.
// Tiny chunks (1, 3 and 7 modules) make every context, bracket pair and cut
// straddle chunk borders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/brackets.hpp"
#include "common/lsystem_helpers.hpp"
#include "common/reference_lsystem.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/pass_runner.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::Backend;
using procgen::ModuleString;

using procgen::test::compareStrings;
using procgen::test::CpuChunkScope;
using procgen::test::Variant;

// ---------------------------------------------------------------------------
// Backend variants: the common ones, and cpu with tiny forced chunks.

std::vector<Variant> parityVariants() {
  std::vector<Variant> v = procgen::test::backendVariants();
  for (const auto& [threads, chunk] : {std::pair{2, 3}, std::pair{7, 1}, std::pair{3, 7}})
    v.push_back(procgen::test::makeVariant(Backend::kCpu, threads, chunk));
  return v;
}

/// The serial backend is the reference the other rows are compared with;
/// comparing it with itself would check nothing. Serial is compared with
/// independent references instead: SerialReference.* below,
/// ExamplesReference.* (examples_reference_test.cpp), the hand-derived turtle
/// tests (turtle_test.cpp) and the textbook D0L rewriting (d0l_count_test.cpp).
class Parity : public procgen::test::BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (variant().backend == Backend::kSerial)
      GTEST_SKIP() << "serial is the reference here; it is checked against independent references in "
                      "SerialReference.*, ExamplesReference.* and Turtle*";
  }
  /// Whether geometry the cpu backend draws bit-exactly (the work-queue path)
  /// must be bit-exact here too. Not on opencl: its turtle calls the device's
  /// sin/cos (turns with a parameter, tropism), which OpenCL C does not require
  /// to round like the host's; there the stated coordinate tolerance applies.
  bool exactAllowed() const { return variant().backend != Backend::kOpenCL; }
};

ModuleString deriveWith(const procgen::LSystem& lsystem, int n, uint64_t seed,
                        const procgen::Execution& execution, procgen::DeriveStats* stats = nullptr) {
  procgen::DeriveOptions options;
  options.iterations = n;
  options.seed = seed;
  options.execution = execution;
  return procgen::derive(lsystem, options, stats);
}

// ---------------------------------------------------------------------------
// Shipped examples

struct SerialCache {
  std::map<std::string, ModuleString> strings;
  const ModuleString& get(const std::string& key, const std::function<ModuleString()>& make) {
    auto it = strings.find(key);
    if (it == strings.end()) it = strings.emplace(key, make()).first;
    return it->second;
  }
};
SerialCache& serialCache() {
  static SerialCache cache;
  return cache;
}

procgen::Execution serialExecution() { return procgen::Execution{}; }

TEST_P(Parity, EveryExampleDerivesIdentically) {
  ASSERT_FALSE(procgen::test::exampleModels().empty());
  // Tiny chunks cost a task per module or three: keep those strings smaller.
  const uint64_t max_modules = variant().chunk ? 60000 : 400000;
  for (const fs::path& file : procgen::test::exampleModels()) {
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(file);
    const bool stochastic = lsystem.data().productions.hasStochastic();
    const int n = procgen::test::largestIterationsWithin(lsystem, lsystem.derivationLength(), max_modules);
    ASSERT_GT(n, 0) << file;
    const int seeds = stochastic ? 20 : 1;
    for (int seed = 1; seed <= seeds; ++seed) {
      SCOPED_TRACE(file.filename().string() + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const std::string key = file.string() + "/" + std::to_string(n) + "/" + std::to_string(seed);
      const ModuleString& want =
          serialCache().get(key, [&] { return deriveWith(lsystem, n, seed, serialExecution()); });
      CpuChunkScope chunks(variant().chunk);
      procgen::DeriveStats stats;
      const ModuleString got = deriveWith(lsystem, n, seed, execution(), &stats);
      EXPECT_EQ(compareStrings(got, want, tolerance()), "");
      EXPECT_EQ(stats.modules, want.size());
      EXPECT_EQ(stats.threads, variant().backend == Backend::kSerial ? 1 : variant().threads);
    }
  }
}

// ---------------------------------------------------------------------------
// Random grammars

TEST_P(Parity, RandomGrammarsDeriveIdentically) {
  const uint64_t max_modules = variant().chunk ? 6000 : 30000;
  int checked = 0;
  for (uint32_t g = 1; g <= 60; ++g) {
    const std::string text = procgen::test::GrammarGenerator(g).generate();
    SCOPED_TRACE("grammar " + std::to_string(g) + ":\n" + text);
    procgen::LSystem lsystem = procgen::LSystem::fromText(text, "random-" + std::to_string(g) + ".l");
    const int n = procgen::test::largestIterationsWithin(lsystem, 10, max_modules);
    const bool stochastic = lsystem.data().productions.hasStochastic() ||
                            text.find("ran(") != std::string::npos;
    const int seeds = stochastic ? 20 : 1;
    for (int seed = 1; seed <= seeds; ++seed) {
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const ModuleString want = deriveWith(lsystem, n, seed, serialExecution());
      CpuChunkScope chunks(variant().chunk);
      const ModuleString got = deriveWith(lsystem, n, seed, execution());
      ASSERT_EQ(compareStrings(got, want, tolerance()), "");
      if (want.size() > 50) ++checked;
    }
  }
  // The generator must produce non-trivial strings, or this test checks little.
  EXPECT_GT(checked, 200);
}

// ---------------------------------------------------------------------------
// Interpretation: identical counts, order, colours, depths and instances.
// Branching strings (and strings with tropism or '$') take the work-queue
// path, which starts every item from an exact copy of the serial state, so
// there the geometry must be bit-identical. Non-branching strings take the
// matrix-scan path, whose frames are composed per chunk: coordinates must lie
// within procgen::test::matrixScanTolerance (tests/common/lsystem_helpers.hpp).

/// Bit for bit where `exact`, else within the matrix-scan tolerance.
std::string compareGeometry(const procgen::Geometry& got, const procgen::Geometry& want, bool exact,
                            uint64_t modules) {
  return procgen::test::compareGeometry(got, want, exact ? 0.0 : procgen::test::matrixScanTolerance(want, modules));
}

bool hasBrackets(const ModuleString& s) {
  return std::find_if(s.symbols.begin(), s.symbols.end(), [](uint8_t c) { return c == '[' || c == ']'; }) !=
         s.symbols.end();
}

procgen::Geometry interpretWith(const procgen::LSystem& lsystem, const ModuleString& s,
                                const procgen::ViewSettings& view, uint64_t seed,
                                const procgen::Execution& execution) {
  procgen::InterpretOptions options;
  options.view = view;
  options.seed = seed;
  options.instance = 3;
  options.execution = execution;
  return procgen::interpret(lsystem, s, options);
}

TEST_P(Parity, EveryExampleInterpretsIdentically) {
  const uint64_t max_modules = variant().chunk ? 30000 : 300000;
  for (const fs::path& file : procgen::test::exampleModels()) {
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(file);
    const int n = procgen::test::largestIterationsWithin(lsystem, lsystem.derivationLength(), max_modules);
    SCOPED_TRACE(file.filename().string() + " n=" + std::to_string(n));
    const ModuleString s = deriveWith(lsystem, n, 1, serialExecution());
    const procgen::Geometry want = interpretWith(lsystem, s, lsystem.view(), 1, serialExecution());
    CpuChunkScope chunks(variant().chunk);
    const procgen::Geometry got = interpretWith(lsystem, s, lsystem.view(), 1, execution());
    EXPECT_EQ(compareGeometry(got, want, exactAllowed() && (hasBrackets(s) || lsystem.view().elasticity != 0.0f),
                              s.size()),
              "");
  }
}

TEST_P(Parity, RandomTurtleStringsInterpretIdentically) {
  const procgen::LSystem lsystem = procgen::LSystem::fromText("Axiom: F\n");
  std::mt19937 rng(2024);
  const uint64_t sizes[] = {1, 10, 500, 5000, 40000};
  int case_index = 0;
  for (uint64_t n : sizes) {
    for (int kind = 0; kind < 8; ++kind, ++case_index) {
      const bool branching = kind & 1, polygons = kind & 2, tropism = kind & 4;
      if (variant().chunk && n > 5000) continue;
      const ModuleString s = procgen::test::randomTurtleString(rng, n, {branching, polygons, true});
      procgen::ViewSettings view;
      view.angle_deg = 27.5f;
      view.width_factor = 0.9f;
      if (tropism) view.elasticity = 0.15f;
      SCOPED_TRACE("case " + std::to_string(case_index) + " n=" + std::to_string(n) + " branching=" +
                   std::to_string(branching) + " polygons=" + std::to_string(polygons) +
                   " tropism=" + std::to_string(tropism));
      const procgen::Geometry want = interpretWith(lsystem, s, view, 1, serialExecution());
      CpuChunkScope chunks(variant().chunk);
      const procgen::Geometry got = interpretWith(lsystem, s, view, 1, execution());
      // Linear path (no brackets, no '$', no tropism) composes frames: tolerance.
      const bool exact = exactAllowed() && (hasBrackets(s) || tropism ||
                                            std::find(s.symbols.begin(), s.symbols.end(), '$') != s.symbols.end());
      ASSERT_EQ(compareGeometry(got, want, exact, s.size()), "");
    }
  }
}

/// Widths and colours set with and without a parameter in the chunks the
/// non-branching path walks from the identity frame: each such chunk notes
/// where its first '!(w)' and '\'(c)' make its values independent of its start
/// state (the walk is split there), so every offset of them within 8-module
/// chunks, either first, is checked against serial (colours exactly).
TEST_P(Parity, WidthAndColourSetInLaterChunksInterpretIdentically) {
  const procgen::LSystem lsystem = procgen::LSystem::fromText("Axiom: F\n");
  const std::string patterns[] = {"!F'F F!(0.5)F+'(7)F{.F.F}F !F'F!(0.25)F'(9)F",
                                  "'F!F F'(4)F-{.F.F}F!(2)F !F'F'(6)F!(0.75)F"};
  for (const std::string& pattern : patterns) {
    for (int pad = 0; pad < 10; ++pad) {
      ModuleString s;
      s.clear(true);
      auto add = [&](uint8_t c, const std::vector<float>& params) {
        s.symbols.push_back(c);
        s.params.insert(s.params.end(), params.begin(), params.end());
        s.param_offsets.push_back(s.params.size());
      };
      for (int i = 0; i < 400 + pad; ++i) add(i % 5 == 4 ? '+' : 'F', {});
      for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == ' ') continue;
        std::vector<float> params;
        if (i + 1 < pattern.size() && pattern[i + 1] == '(') {
          const size_t close = pattern.find(')', i);
          params.push_back(std::stof(pattern.substr(i + 2, close - i - 2)));
          add(static_cast<uint8_t>(pattern[i]), params);
          i = close;
        } else {
          add(static_cast<uint8_t>(pattern[i]), params);
        }
      }
      for (int i = 0; i < 100; ++i) add(i % 3 == 2 ? '-' : 'F', {});
      SCOPED_TRACE(pattern + " pad=" + std::to_string(pad));
      procgen::ViewSettings view;
      view.angle_deg = 33.0f;
      view.width_factor = 0.8f;
      view.initial_width = 0.7f;  // a start width other than 1, so a mis-noted '!(w)' shows
      const procgen::Geometry want = interpretWith(lsystem, s, view, 1, serialExecution());
      ASSERT_EQ(want.polygonCount(), 1u);
      CpuChunkScope chunks(8);
      const procgen::Geometry got = interpretWith(lsystem, s, view, 1, execution());
      ASSERT_EQ(compareGeometry(got, want, false, s.size()), "");
    }
  }
}

/// A polygon open across many count blocks, then plain drawing: the blocks
/// between '{' and '}' hold nothing but turtle moves, and the one holding '}'
/// has no other special symbol, so every way the count pass can skip a block
/// as "plain" is exercised at block borders.
TEST_P(Parity, LongPolygonsAcrossBlocksInterpretIdentically) {
  const procgen::LSystem lsystem = procgen::LSystem::fromText("Axiom: F\n");
  for (const uint64_t inside : {uint64_t{4}, uint64_t{2500}, uint64_t{9000}}) {
    ModuleString s;
    s.clear(true);
    auto add = [&](uint8_t c) {
      s.symbols.push_back(c);
      s.param_offsets.push_back(s.params.size());
    };
    add('F');
    add('{');
    for (uint64_t i = 0; i < inside; ++i) {
      add(i % 3 == 2 ? 'G' : 'F');
      add('+');
    }
    add('}');
    for (uint64_t i = 0; i < 5000; ++i) {
      add(i % 4 == 0 ? 'G' : 'F');
      add('-');
    }
    SCOPED_TRACE("inside=" + std::to_string(inside));
    procgen::ViewSettings view;
    view.angle_deg = 0.5f;
    const procgen::Geometry want = interpretWith(lsystem, s, view, 1, serialExecution());
    ASSERT_EQ(want.polygonCount(), 1u);
    CpuChunkScope chunks(variant().chunk);
    const procgen::Geometry got = interpretWith(lsystem, s, view, 1, execution());
    ASSERT_EQ(compareGeometry(got, want, false, s.size()), "");
  }
}

TEST_P(Parity, HomomorphismIsAppliedIdentically) {
  // Context-sensitive, parametric and random homomorphism successors, two
  // levels deep, over random strings of A(x), B and turtle commands.
  const procgen::LSystem lsystem = procgen::LSystem::fromText(
      "Lsystem: 1\n"
      "Axiom: B\n"
      "homomorphism:\n"
      "maximum depth: 2\n"
      "A(x) < B --> F(x)[+B]{.F.F.}\n"
      "A(x) : x > 0.5 --> F(x)+(ran(40))C(x*0.5)\n"
      "A(x) --> f(x)-F\n"
      "B > [A(y)] --> G[-F]\n"
      "B --> F!\n"
      "C(x) --> F(x)&F(x)\n"
      "endlsystem\n");
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (uint64_t n : {7, 300, 20000}) {
    for (int seed = 1; seed <= 5; ++seed) {
      ModuleString s;
      s.clear(true);
      int64_t depth = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const int r = static_cast<int>(rng() % 10);
        uint8_t c = r < 3 ? 'A' : r < 5 ? 'B' : r < 6 ? '[' : r < 7 && depth > 0 ? ']' : r < 8 ? '+' : 'F';
        depth += c == '[' ? 1 : c == ']' ? -1 : 0;
        s.symbols.push_back(c);
        if (c == 'A') s.params.push_back(u(rng));
        s.param_offsets.push_back(s.params.size());
      }
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const procgen::Geometry want = interpretWith(lsystem, s, lsystem.view(), seed, serialExecution());
      CpuChunkScope chunks(variant().chunk);
      const procgen::Geometry got = interpretWith(lsystem, s, lsystem.view(), seed, execution());
      ASSERT_GT(want.segments.size(), n / 4);
      ASSERT_EQ(compareGeometry(got, want, exactAllowed() && hasBrackets(s), s.size()), "");
    }
  }
}

// ---------------------------------------------------------------------------
// Serial against independent references (the serial rows above are skipped).

// Random non-parametric context-sensitive grammars with brackets, '%' cuts and
// #ignore, derived by the serial engine and by the brute-force first-match
// rewriting of common/reference_lsystem.hpp, step by step.
TEST(SerialReference, RandomContextGrammarsMatchBruteForce) {
  std::mt19937 rng(2026);
  int long_strings = 0;
  for (int g = 0; g < 120; ++g) {
    const procgen::test::ReferenceGrammar grammar = procgen::test::ReferenceGrammar::random(rng);
    const std::string text = grammar.text();
    SCOPED_TRACE("grammar " + std::to_string(g) + ":\n" + text);
    const procgen::LSystem lsystem = procgen::LSystem::fromText(text, "reference.l");
    std::string want = grammar.axiom;
    for (int n = 1; n <= 12 && want.size() < 20000; ++n) {
      want = grammar.step(want);
      const ModuleString got = deriveWith(lsystem, n, 1, serialExecution());
      const std::string got_text(got.symbols.begin(), got.symbols.end());
      ASSERT_EQ(got_text, want) << "n=" << n;
      if (want.size() > 200) ++long_strings;
    }
  }
  EXPECT_GT(long_strings, 40);  // the generator grows strings, or this checks little
}

// The serial pass runner's cut and cutBranches against the brute-force cut,
// on balanced and unbalanced bracket strings.
TEST(SerialReference, CutMatchesBruteForce) {
  std::mt19937 rng(3);
  auto runner = procgen::detail::makeSerialPassRunner();
  for (bool balanced : {true, false}) {
    for (uint64_t n : {0, 1, 5, 40, 1000, 5000}) {
      const ModuleString s = procgen::test::randomCutString(rng, n, false, 20, balanced);
      const std::string want = procgen::test::cutReference(std::string(s.symbols.begin(), s.symbols.end()));
      ModuleString a = s, b = s;
      const bool removed_a = runner->cut(a);
      const bool removed_b = procgen::detail::cutBranches(b);
      SCOPED_TRACE("n=" + std::to_string(n) + " balanced=" + std::to_string(balanced));
      EXPECT_EQ(removed_a, want.size() != s.size());
      EXPECT_EQ(removed_b, want.size() != s.size());
      EXPECT_EQ(std::string(a.symbols.begin(), a.symbols.end()), want);
      EXPECT_EQ(std::string(b.symbols.begin(), b.symbols.end()), want);
    }
  }
  // Parametric: the parameters of removed modules go with them (randomCutString
  // gives module i the parameters i, i + 0.25 for A and i for B).
  const ModuleString s = procgen::test::randomCutString(rng, 3000, true, 20, true);
  ModuleString a = s;
  runner->cut(a);
  const std::vector<size_t> kept = procgen::test::cutKeptIndices(std::string(s.symbols.begin(), s.symbols.end()));
  ASSERT_EQ(a.size(), kept.size());
  std::vector<float> want_params;
  for (size_t i : kept)
    for (uint64_t k = s.param_offsets[i]; k < s.param_offsets[i + 1]; ++k) want_params.push_back(s.params[k]);
  EXPECT_EQ(std::vector<float>(a.params.begin(), a.params.end()), want_params);
}

INSTANTIATE_TEST_SUITE_P(Backends, Parity, testing::ValuesIn(parityVariants()), procgen::test::variantName);

// ---------------------------------------------------------------------------
// Stage parity: bracket partners and the cut pass against their serial twins.

#if PROCGEN_HAVE_TBB

TEST(CpuStages, BracketPartnersMatchSerial) {
  std::mt19937 rng(7);
  for (uint64_t chunk : {0, 1, 3, 64}) {
    CpuChunkScope scope(chunk);
    for (int threads : {1, 2, 7}) {
      auto runner = procgen::detail::makeCpuPassRunner(threads);
      EXPECT_EQ(runner->threads(), threads);
      for (uint64_t n : {0, 1, 2, 17, 1000, 200000}) {
        for (bool balanced : {true, false}) {
          const ModuleString s = procgen::test::randomCutString(rng, n, false, 20, balanced);
          std::vector<int64_t> want(n, -7);
          std::vector<int64_t> got = procgen::test::poisoned<int64_t>(n);
          procgen::detail::bracketPartnersSerial(s.symbols.data(), n, want.data());
          runner->bracketPartners(s.symbols.data(), n, got.data());
          for (uint64_t i = 0; i < n; ++i) {
            if (s.symbols[i] == '[' || s.symbols[i] == ']') {
              ASSERT_EQ(got[i], want[i]) << "i=" << i << " n=" << n << " chunk=" << chunk << " threads=" << threads;
            }
          }
        }
      }
    }
  }
}

TEST(CpuStages, CutMatchesSerial) {
  std::mt19937 rng(11);
  for (uint64_t chunk : {0, 1, 3, 64}) {
    CpuChunkScope scope(chunk);
    for (int threads : {1, 2, 7}) {
      auto runner = procgen::detail::makeCpuPassRunner(threads);
      for (uint64_t n : {0, 1, 5, 40, 1000, 100000}) {
        for (bool parametric : {false, true}) {
          for (bool balanced : {true, false}) {
            const ModuleString s = procgen::test::randomCutString(rng, n, parametric, 20, balanced);
            ModuleString want = s, got = s;
            const bool want_removed = procgen::detail::cutBranches(want);
            const bool got_removed = runner->cut(got);
            SCOPED_TRACE("n=" + std::to_string(n) + " chunk=" + std::to_string(chunk) +
                         " threads=" + std::to_string(threads) + " parametric=" + std::to_string(parametric));
            EXPECT_EQ(got_removed, want_removed);
            ASSERT_EQ(compareStrings(got, want), "");
          }
        }
      }
    }
  }
}

// The D0L fast path copies a whole 32-byte table row per module and lets the
// copy spill into the next modules' output; chunks written side by side must
// still come out exact. Successors of 1..40 modules (rows for <= 32, the
// per-module copy otherwise), chunks around the row width, against a textbook
// rewriting written here; both the count-then-rewrite and the one-pass forms.
TEST(CpuStages, D0LRewriteMatchesTextbookAcrossChunkBorders) {
  std::mt19937 rng(21);
  const std::string letters = "ABCF+-";
  for (int trial = 0; trial < 12; ++trial) {
    const int longest = trial % 2 == 0 ? 32 : 40;
    std::map<char, std::string> rules;
    std::string text = "Axiom: A\n";
    for (char c : std::string("ABC")) {
      std::string succ;
      const int len = 1 + static_cast<int>(rng() % static_cast<unsigned>(longest));
      for (int k = 0; k < len; ++k) succ += letters[rng() % letters.size()];
      rules[c] = succ;
      text += std::string(1, c) + " --> " + succ + "\n";
    }
    const procgen::LSystem l = procgen::LSystem::fromText(text, "d0l.l");
    const procgen::detail::D0LTable table = procgen::detail::makeD0LTable(l.data(), l.data().productions);
    ASSERT_TRUE(table.usable);
    EXPECT_EQ(table.padded.empty(), std::any_of(rules.begin(), rules.end(),
                                                [](const auto& r) { return r.second.size() > 32; }));
    std::string in;
    for (int i = 0; i < 5000; ++i) in += letters[rng() % letters.size()];
    const std::string want = procgen::test::rewriteTextbook(rules, in);
    const auto* symbols = reinterpret_cast<const uint8_t*>(in.data());
    for (uint64_t chunk : {31, 32, 33, 34, 65, 100}) {
      CpuChunkScope scope(chunk);
      auto runner = procgen::detail::makeCpuPassRunner(2);
      const uint64_t total = runner->countD0L(table, symbols, in.size());
      ASSERT_EQ(total, want.size());
      std::string got(total, '?');
      runner->rewriteD0L(table, symbols, in.size(), reinterpret_cast<uint8_t*>(got.data()));
      ASSERT_EQ(got, want) << "chunk " << chunk << ", longest successor " << longest;
      // The one-pass form (each chunk counts, waits for its predecessor's
      // prefix, writes), into room for the longest possible output.
      for (int threads : {2, 7}) {
        auto fused = procgen::detail::makeCpuPassRunner(threads);
        std::string room(in.size() * table.max_length, '?');
        const uint64_t size =
            fused->countRewriteD0L(table, symbols, in.size(), reinterpret_cast<uint8_t*>(room.data()), 0);
        ASSERT_EQ(room.substr(0, size), want) << "one pass, chunk " << chunk << ", threads " << threads;
      }
    }
  }
}

#endif  // PROCGEN_HAVE_TBB

}  // namespace

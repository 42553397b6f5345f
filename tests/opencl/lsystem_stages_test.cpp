// opencl derivation stages against their serial twins (STYLE.md practice 7):
//  - bracket partners (bracket_partners.cl) on random strings, balanced and
//    unbalanced, deep nesting, lengths around the 32-element min-tree blocks;
//  - whole derivations with forced chunk sizes 1, 3 and 7 modules per work item,
//    so contexts, brackets and successors straddle work-item borders;
//  - the device cut pass (cut.cl) against cutBranches on random strings,
//    unbalanced and deeply nested ones included;
//  - the one driver on the device-resident runner reports the same
//    statistics and progress as the host driver and stops at the same step
//    when a derivation exceeds --max-modules.
// The end-to-end parity over every example, random grammar and seed is the
// "opencl" variant of tests/lsystem/parity_test.cpp. Skips without a device.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/brackets.hpp"
#include "common/lsystem_helpers.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/opencl/pass_runner.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace {

namespace fs = std::filesystem;

TEST(OpenCLStages, BracketPartnersMatchSerial) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  std::mt19937 rng(11);
  for (uint64_t n : {1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 5000, 300000}) {
    for (int shape = 0; shape < 4; ++shape) {
      // random balanced, random unbalanced, deep (mostly opens), many closes
      const int open = shape == 2 ? 70 : shape == 3 ? 20 : 25;
      const int close = shape == 2 ? 5 : shape == 3 ? 45 : 25;
      const std::vector<uint8_t> s = procgen::test::randomBrackets(rng, n, {open, close, shape == 0});
      std::vector<int64_t> want(n, -7);
      std::vector<int64_t> got = procgen::test::poisoned<int64_t>(n);
      procgen::detail::bracketPartnersSerial(s.data(), n, want.data());
      procgen::detail::bracketPartnersOpenCL(s.data(), n, got.data());
      for (uint64_t i = 0; i < n; ++i) {
        if (s[i] == '[' || s[i] == ']') {
          ASSERT_EQ(got[i], want[i]) << "i=" << i << " n=" << n << " shape=" << shape;
        }
      }
    }
  }
  // Deep nesting: [[[[...]]]] of 2 x 100000.
  std::vector<uint8_t> deep(200000);
  for (size_t i = 0; i < deep.size(); ++i) deep[i] = i < deep.size() / 2 ? '[' : ']';
  std::vector<int64_t> want(deep.size());
  std::vector<int64_t> got = procgen::test::poisoned<int64_t>(deep.size());
  procgen::detail::bracketPartnersSerial(deep.data(), deep.size(), want.data());
  procgen::detail::bracketPartnersOpenCL(deep.data(), deep.size(), got.data());
  EXPECT_EQ(got, want);
}

class ChunkOverride {
 public:
  explicit ChunkOverride(uint64_t chunk) { procgen::detail::setOpenCLChunkOverrideForTesting(chunk); }
  ~ChunkOverride() { procgen::detail::setOpenCLChunkOverrideForTesting(0); }
};

TEST(OpenCLStages, TinyWorkItemChunksDeriveIdentically) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  int checked = 0;
  for (const fs::path& file : procgen::test::exampleModels()) {
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(file);
    // The largest n (up to the file's) whose string stays small.
    const int n = procgen::test::largestIterationsWithin(lsystem, lsystem.derivationLength(), 20000);
    procgen::DeriveOptions options;
    options.iterations = n;
    const procgen::ModuleString want = procgen::derive(lsystem, options);
    options.execution.backend = procgen::Backend::kOpenCL;
    for (uint64_t chunk : {1, 3, 7}) {
      SCOPED_TRACE(file.filename().string() + " n=" + std::to_string(n) + " chunk=" + std::to_string(chunk));
      ChunkOverride scope(chunk);
      const procgen::ModuleString got = procgen::derive(lsystem, options);
      ASSERT_EQ(procgen::test::compareStrings(got, want), "");
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

TEST(OpenCLStages, CutMatchesSerial) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  std::mt19937 rng(13);
  for (uint64_t n : {0, 1, 2, 5, 31, 33, 1000, 100000}) {
    for (bool parametric : {false, true}) {
      for (int deep_pct : {20, 35}) {
        const procgen::ModuleString s = procgen::test::randomCutString(rng, n, parametric, deep_pct);
        procgen::ModuleString want = s, got = s;
        const bool want_removed = procgen::detail::cutBranches(want);
        const bool got_removed = procgen::detail::cutBranchesOpenCL(got);
        SCOPED_TRACE("n=" + std::to_string(n) + " parametric=" + std::to_string(parametric) +
                     " deep=" + std::to_string(deep_pct));
        EXPECT_EQ(got_removed, want_removed);
        ASSERT_EQ(procgen::test::compareStrings(got, want), "");
      }
    }
  }
  // A '%' deep inside 50000 levels of nesting, and one at top level.
  std::string text(50000, '[');
  text += "A%B[C]D";
  text += std::string(50000, ']');
  text += "E%F[G]H";
  procgen::ModuleString want = procgen::parseModuleString(text, false), got = want;
  procgen::detail::cutBranches(want);
  procgen::detail::cutBranchesOpenCL(got);
  EXPECT_EQ(got.symbols, want.symbols);
}

TEST(OpenCLStages, ResidentDerivationReportsLikeTheHostDriver) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const fs::path dir = procgen::test::examplesDir();
  for (const char* name : {"plant-context.l", "koch-island.l", "tree-3d.l"}) {
    SCOPED_TRACE(name);
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(dir / name);
    procgen::DeriveOptions options;
    options.iterations = std::min(lsystem.derivationLength(), 5);
    std::vector<std::vector<uint64_t>> calls[2];
    procgen::DeriveStats stats[2];
    for (int b = 0; b < 2; ++b) {
      options.execution.backend = b ? procgen::Backend::kOpenCL : procgen::Backend::kSerial;
      options.progress = [&calls, b](int step, int steps, uint64_t modules) {
        calls[b].push_back({uint64_t(step), uint64_t(steps), modules});
      };
      (void)procgen::derive(lsystem, options, &stats[b]);
    }
    EXPECT_EQ(calls[1], calls[0]);
    EXPECT_EQ(stats[1].modules, stats[0].modules);
    EXPECT_EQ(stats[1].modules_total, stats[0].modules_total);
    EXPECT_EQ(stats[1].step_modules, stats[0].step_modules);
    EXPECT_EQ(stats[1].iterations, stats[0].iterations);
    EXPECT_EQ(stats[1].threads, 1);

    // A module limit stops both at the same step, before allocating.
    options.progress = nullptr;
    options.max_modules = stats[0].step_modules.back() - 1;
    std::string messages[2];
    for (int b = 0; b < 2; ++b) {
      options.execution.backend = b ? procgen::Backend::kOpenCL : procgen::Backend::kSerial;
      try {
        (void)procgen::derive(lsystem, options);
      } catch (const procgen::ResourceError& e) {
        messages[b] = e.what();
      }
    }
    EXPECT_FALSE(messages[0].empty());
    EXPECT_EQ(messages[1], messages[0]);
  }
}

}  // namespace

namespace {

/// `steps` steps of textbook D0L rewriting, for the jump tests.
std::string rewriteD0LTextbook(std::string s, const std::map<char, std::string>& rules, int steps) {
  for (int i = 0; i < steps; ++i) {
    std::string next;
    for (char c : s) {
      auto it = rules.find(c);
      next += it == rules.end() ? std::string(1, c) : it->second;
    }
    s = std::move(next);
  }
  return s;
}

// The driver jumps over the last D0L steps with composed k-step tables on
// every backend (derive.cpp); on the device the jump tables are uploaded and
// run by countD0L/rewriteD0L. Random D0L grammars, 1 to 14 steps (jumps of
// up to 8 steps after a remainder), work items of 1, 3 and the default chunk,
// against rewriting written here; the statistics and progress calls against
// the serial driver's, which takes the same jumps.
TEST(OpenCLStages, D0LJumpsMatchTextbookRewriting) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  std::mt19937 rng(31);
  const std::string letters = "ABF+-[]";
  for (int trial = 0; trial < 6; ++trial) {
    std::map<char, std::string> rules;
    std::string text = "Axiom: AB\n";
    for (char c : std::string("ABF")) {
      std::string succ;
      const int len = 1 + static_cast<int>(rng() % 5u);
      for (int k = 0; k < len; ++k) succ += letters[rng() % letters.size()];
      rules[c] = succ;
      text += std::string(1, c) + " --> " + succ + "\n";
    }
    const procgen::LSystem l = procgen::LSystem::fromText(text, "jump.l");
    for (int steps : {1, 2, 7, 9, 11, 14}) {
      const std::string want = rewriteD0LTextbook("AB", rules, steps);
      if (want.size() > 4000000) continue;
      for (uint64_t chunk : {0, 1, 3}) {
        SCOPED_TRACE(text + "steps " + std::to_string(steps) + " chunk " + std::to_string(chunk));
        ChunkOverride scope(chunk);
        procgen::DeriveOptions options;
        options.iterations = steps;
        std::vector<std::vector<uint64_t>> calls[2];
        procgen::DeriveStats stats[2];
        procgen::ModuleString got[2];
        for (int b = 0; b < 2; ++b) {
          options.execution.backend = b ? procgen::Backend::kOpenCL : procgen::Backend::kSerial;
          options.progress = [&calls, b](int step, int n, uint64_t modules) {
            calls[b].push_back({uint64_t(step), uint64_t(n), modules});
          };
          got[b] = procgen::derive(l, options, &stats[b]);
        }
        ASSERT_EQ(std::string(got[1].symbols.begin(), got[1].symbols.end()), want);
        EXPECT_EQ(calls[1], calls[0]);
        EXPECT_EQ(stats[1].step_modules, stats[0].step_modules);
        EXPECT_EQ(stats[1].modules_total, stats[0].modules_total);
        ASSERT_EQ(stats[1].step_modules.size(), static_cast<size_t>(steps));
        EXPECT_EQ(stats[1].step_modules.back(), want.size());
      }
    }
  }
}

// The device jumps only from strings of 4,096 modules on; the Fibonacci
// L-system (lengths 2, 3, 5, 8, ...) reaches 4,181 after step 17 and jumps
// over the steps after it (18-22, then 23-30). Derived in full against
// textbook rewriting; then a module limit met in the middle of the last jump
// stops the device derivation at the same step, with the same message and
// the same steps reported, as the serial one (which jumps from the axiom).
TEST(OpenCLStages, D0LJumpStopsAtTheStepOverTheLimit) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const procgen::LSystem l = procgen::LSystem::fromText("Axiom: A\nA --> AB\nB --> A\n", "fib.l");
  procgen::DeriveOptions options;
  options.execution.backend = procgen::Backend::kOpenCL;
  options.iterations = 24;
  const procgen::ModuleString full = procgen::derive(l, options);
  ASSERT_EQ(std::string(full.symbols.begin(), full.symbols.end()),
            rewriteD0LTextbook("A", {{'A', "AB"}, {'B', "A"}}, 24));
  ASSERT_EQ(full.size(), 121393u);

  options.iterations = 30;
  options.max_modules = 150000;  // step 24: 121,393 modules; step 25: 196,418
  std::string messages[2];
  std::vector<int> steps[2];
  for (int b = 0; b < 2; ++b) {
    options.execution.backend = b ? procgen::Backend::kOpenCL : procgen::Backend::kSerial;
    options.progress = [&steps, b](int step, int, uint64_t) { steps[b].push_back(step); };
    try {
      (void)procgen::derive(l, options);
    } catch (const procgen::ResourceError& e) {
      messages[b] = e.what();
    }
  }
  EXPECT_NE(messages[0].find("derivation step 25 would produce 196418"), std::string::npos) << messages[0];
  EXPECT_EQ(messages[1], messages[0]);
  EXPECT_EQ(steps[1], steps[0]);
  EXPECT_EQ(steps[0].size(), 24u);
}

}  // namespace

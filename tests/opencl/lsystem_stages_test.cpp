// opencl derivation stages against their serial twins (STYLE.md practice 7):
//  - bracket partners (bracket_partners.cl) on random strings, balanced and
//    unbalanced, deep nesting, lengths around the 32-element min-tree blocks;
//  - whole derivations with forced chunk sizes 1, 3 and 7 modules per work item,
//    so contexts, brackets and successors straddle work-item borders.
// The end-to-end parity over every example, random grammar and seed is the
// "opencl" variant of tests/lsystem/parity_test.cpp. Skips without a device.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/opencl/pass_runner.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/opencl.hpp"

namespace {

namespace fs = std::filesystem;

#define PROCGEN_SKIP_WITHOUT_OPENCL()                                              \
  do {                                                                             \
    if (procgen::openclDevices().empty()) GTEST_SKIP() << procgen::openclStatus(); \
  } while (0)

std::vector<uint8_t> randomBrackets(std::mt19937& rng, uint64_t n, int open_pct, int close_pct, bool balanced) {
  std::vector<uint8_t> s(n);
  int64_t depth = 0;
  std::uniform_int_distribution<int> d(0, 99);
  for (uint64_t i = 0; i < n; ++i) {
    const int r = d(rng);
    uint8_t c = r < open_pct ? '[' : r < open_pct + close_pct ? ']' : 'A';
    if (balanced && c == ']' && depth == 0) c = 'A';
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    s[i] = c;
  }
  return s;
}

TEST(OpenCLStages, BracketPartnersMatchSerial) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  auto runner = procgen::detail::makeOpenCLPassRunner(-1);
  std::mt19937 rng(11);
  for (uint64_t n : {1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 5000, 300000}) {
    for (int shape = 0; shape < 4; ++shape) {
      // random balanced, random unbalanced, deep (mostly opens), many closes
      const int open = shape == 2 ? 70 : shape == 3 ? 20 : 25;
      const int close = shape == 2 ? 5 : shape == 3 ? 45 : 25;
      const std::vector<uint8_t> s = randomBrackets(rng, n, open, close, shape == 0);
      std::vector<int64_t> want(n, -7), got(n, -7);
      procgen::detail::bracketPartnersSerial(s.data(), n, want.data());
      runner->bracketPartners(s.data(), n, got.data());
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
  std::vector<int64_t> want(deep.size()), got(deep.size());
  procgen::detail::bracketPartnersSerial(deep.data(), deep.size(), want.data());
  runner->bracketPartners(deep.data(), deep.size(), got.data());
  EXPECT_EQ(got, want);
}

class ChunkOverride {
 public:
  explicit ChunkOverride(uint64_t chunk) { procgen::detail::setOpenCLChunkOverrideForTesting(chunk); }
  ~ChunkOverride() { procgen::detail::setOpenCLChunkOverrideForTesting(0); }
};

TEST(OpenCLStages, TinyWorkItemChunksDeriveIdentically) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const fs::path dir = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".l") continue;
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(e.path());
    // The largest n (up to the file's) whose string stays small.
    int n = lsystem.derivationLength();
    procgen::DeriveOptions options;
    options.max_modules = 20000;
    procgen::ModuleString want;
    for (; n > 0; --n) {
      options.iterations = n;
      try {
        want = procgen::derive(lsystem, options);
        break;
      } catch (const procgen::ResourceError&) {
      }
    }
    options.max_modules = 0;
    options.execution.backend = procgen::Backend::kOpenCL;
    for (uint64_t chunk : {1, 3, 7}) {
      SCOPED_TRACE(e.path().filename().string() + " n=" + std::to_string(n) + " chunk=" + std::to_string(chunk));
      ChunkOverride scope(chunk);
      const procgen::ModuleString got = procgen::derive(lsystem, options);
      ASSERT_EQ(got.symbols, want.symbols);
      ASSERT_EQ(got.param_offsets, want.param_offsets);
      ASSERT_EQ(got.params.size(), want.params.size());
      for (size_t k = 0; k < got.params.size(); ++k)
        ASSERT_EQ(std::memcmp(&got.params[k], &want.params[k], 4), 0) << "param " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

}  // namespace

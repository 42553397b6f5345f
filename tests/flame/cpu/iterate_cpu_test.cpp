// iterateFlame on the cpu backend against serial: bit-identical histograms
// (every float of every bucket, the sample, bad-value and iteration counts)
// at 1, 2 and 7 threads, also with rounds cut to one unit, for both methods
// and genomes that take every path (xaos, final xform with opacity,
// opacity, rotation, linear palette, bad values). The order of additions
// into each bucket is the generation order on both (flame/chaos_game.hpp).
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "common/backends.hpp"
#include "flame/iterate_helpers.hpp"
#include "procgen/error.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

struct CpuCase {
  test::Variant variant;
  FlameMethod method;
};

class FlameIterateCpu : public testing::TestWithParam<CpuCase> {
 protected:
  void SetUp() override { PROCGEN_SKIP_UNLESS_RUNNABLE(GetParam().variant); }

  // serial and this variant on `g`; the histograms must be the same bits.
  void expectParity(const FlameGenome& g, uint64_t seed) {
    const FlameRenderOptions o = test::optionsFor(GetParam().method, seed);
    const FlameHistogram serial = iterateFlame(g, o, Execution{Backend::kSerial, 1});
    FlameHistogram cpu;
    {
      test::CpuChunkScope chunk(GetParam().variant.chunk);
      cpu = iterateFlame(g, o, GetParam().variant.execution());
    }
    ASSERT_EQ(cpu.buckets.size(), serial.buckets.size());
    EXPECT_EQ(cpu.samples, serial.samples);
    EXPECT_EQ(cpu.bad_values, serial.bad_values);
    EXPECT_EQ(cpu.iterations, serial.iterations);
    size_t differing = 0, first = 0;
    for (size_t i = 0; i < cpu.buckets.size(); ++i) {
      const FlameBucket& a = cpu.buckets[i];
      const FlameBucket& b = serial.buckets[i];
      const bool same = test::floatBits(a.red) == test::floatBits(b.red) &&
                        test::floatBits(a.green) == test::floatBits(b.green) &&
                        test::floatBits(a.blue) == test::floatBits(b.blue) &&
                        test::floatBits(a.alpha) == test::floatBits(b.alpha) &&
                        test::floatBits(a.count) == test::floatBits(b.count);
      if (!same && differing++ == 0) first = i;
    }
    EXPECT_EQ(differing, 0u) << "first differing bucket " << first << ": cpu count "
                             << cpu.buckets[first].count << ", serial " << serial.buckets[first].count;
    EXPECT_GT(test::totalCount(serial), 0.0);
  }
};

// Several rounds of units: presorted units are 262144 samples, naive 10000.
TEST_P(FlameIterateCpu, EverythingGenomeMatchesSerialBitForBit) {
  const bool naive = GetParam().method == FlameMethod::kNaive;
  expectParity(test::everythingGenome(naive ? 40 : 80), 11);
}

TEST_P(FlameIterateCpu, SphericalGenomeMatchesSerialBitForBit) {
  expectParity(test::sphericalGenome(30), 5);
}

TEST_P(FlameIterateCpu, BadValuesMatchSerial) {
  FlameGenome g = test::emptyGenome(40, 40, 10, 100);
  g.xforms.push_back(test::affineXform(1, 1, 0, 1e12, 0, 1, 0));
  g.xforms.push_back(test::affineXform(1, 0.5, 0, 0, 0, 0.5, 0));
  expectParity(g, 2);
}

// The cpu stage's buffers (a round of records, per-thread scratch) count
// against the budget with the histogram: a budget that holds only the
// histogram is refused before allocating (ResourceError, exit 2).
TEST_P(FlameIterateCpu, MemoryBudgetCountsTheRoundBuffers) {
  const FlameGenome g = test::fixedPointGenome();
  FlameRenderOptions o = test::optionsFor(GetParam().method);
  const FlameHistogramLayout layout = flameHistogramLayout(g, o);
  o.memory_budget = static_cast<uint64_t>(layout.width) * layout.height * sizeof(FlameBucket) + 1;
  EXPECT_THROW(iterateFlame(g, o, GetParam().variant.execution()), ResourceError);
}

// Progress: from the calling thread (never a worker), non-decreasing, ending at 1.
TEST_P(FlameIterateCpu, ProgressComesFromTheCallingThread) {
  FlameRenderOptions o = test::optionsFor(GetParam().method);
  const auto caller = std::this_thread::get_id();
  double last = 0;
  int calls = 0;
  o.progress = [&](double f) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_GE(f, last);
    last = f;
    ++calls;
  };
  test::CpuChunkScope chunk(GetParam().variant.chunk);
  iterateFlame(test::sphericalGenome(30), o, GetParam().variant.execution());
  EXPECT_GT(calls, 0);
  EXPECT_EQ(last, 1.0);
}

std::vector<CpuCase> cpuCases() {
  std::vector<CpuCase> cases;
  for (FlameMethod m : {FlameMethod::kPresorted, FlameMethod::kNaive})
    for (const test::Variant& v :
         {test::makeVariant(Backend::kCpu, 1), test::makeVariant(Backend::kCpu, 2),
          test::makeVariant(Backend::kCpu, 7), test::makeVariant(Backend::kCpu, 2, 1),
          test::makeVariant(Backend::kCpu, 7, 3)})
      cases.push_back({v, m});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Backends, FlameIterateCpu, testing::ValuesIn(cpuCases()),
                         [](const testing::TestParamInfo<CpuCase>& info) {
                           return std::string(info.param.method == FlameMethod::kPresorted ? "presorted_"
                                                                                           : "naive_") +
                                  info.param.variant.name;
                         });

}  // namespace
}  // namespace procgen

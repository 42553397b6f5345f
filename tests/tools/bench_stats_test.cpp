// The statistics of `procgen bench` (tools/procgen/bench_stats.hpp) against
// values worked out by hand.
#include <gtest/gtest.h>

#include "bench_stats.hpp"

namespace {

using procgen::cli::median;
using procgen::cli::pairedSpeedup;
using procgen::cli::quantile;

TEST(BenchStats, QuantilesInterpolateBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  // Position (n - 1) q: 0.75 and 2.25 for n = 4.
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.25), 7.0);
  EXPECT_DOUBLE_EQ(quantile({1, 9}, 1.0), 9.0);
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(BenchStats, SpeedupIsTheMedianOfPerRoundRatios) {
  // Ratios per round 2, 2, 3, 1 -> sorted 1, 2, 2, 3.
  const auto s = pairedSpeedup({10, 20, 30, 40}, {5, 10, 10, 40});
  ASSERT_TRUE(s.valid());
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 2.25);
}

TEST(BenchStats, MachineDriftBetweenRoundsCancels) {
  // The machine is 1x, 3x, 1x, 3x, 3x slower from round to round, and within
  // every round but the second the parallel column is 1.6x faster (in the
  // second the drift reached it a moment later). The ratio of the medians,
  // 30 / 6.25 = 4.8, is off; the median of the per-round ratios is 1.6.
  const std::vector<double> serial{10, 30, 10, 30, 30};
  const std::vector<double> cpu{6.25, 6.25, 6.25, 18.75, 18.75};
  EXPECT_DOUBLE_EQ(median(serial) / median(cpu), 4.8);
  const auto s = pairedSpeedup(serial, cpu);
  EXPECT_DOUBLE_EQ(s.median, 1.6);
  EXPECT_DOUBLE_EQ(s.q1, 1.6);
  EXPECT_DOUBLE_EQ(s.q3, 1.6);
}

TEST(BenchStats, RoundsWithoutBothTimesAreSkipped) {
  EXPECT_DOUBLE_EQ(pairedSpeedup({10, -1, 9}, {5, 5}).median, 2.0);
  EXPECT_FALSE(pairedSpeedup({}, {1, 2}).valid());
  EXPECT_FALSE(pairedSpeedup({-1}, {1}).valid());
}

}  // namespace

// The naive grid on oneTBB: the serial stage's rows (naiveRows) cut into
// chunks of rows on the CpuExecutor. Every point is computed by the same code
// from the same inputs whatever the partition, so the grid is bit-identical
// to serial at every thread count; the min/max of the chunks are combined
// afterwards (min and max are exact in any order).
#include <vector>

#include "cpu/executor.hpp"
#include "noise/noise_stages.hpp"

namespace procgen::detail {

namespace {
/// About this many points per chunk: enough work to amortize a task.
constexpr uint64_t kPointsPerChunk = 16384;
}  // namespace

NoiseRange cpuNaiveGrid(const NoiseSetup& setup, std::span<float> out, int threads) {
  CpuExecutor exec(threads);
  const uint64_t rows = setup.rows();
  const ChunkPlan plan = exec.plan(rows, std::max<uint64_t>(1, kPointsPerChunk / setup.size[0]));
  std::vector<NoiseRange> ranges(plan.count, emptyRange());
  exec.forEachChunk(plan, [&](uint64_t c) { ranges[c] = naiveRows(setup, plan.begin(c), plan.end(c), out); });
  NoiseRange range = emptyRange();
  for (const NoiseRange& r : ranges) range = combineRanges(range, r);
  return range;
}

}  // namespace procgen::detail

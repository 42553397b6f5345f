// The optimized grid on oneTBB: the serial stage's blocks (grid_optimized.hpp;
// paper §4.2–4.3, one block of rows per task instead of one work-group) spread
// over the CpuExecutor. A point's arithmetic does not depend on the block it
// falls in, so the grid is bit-identical to serial at every thread count; the
// blocks' min/max are combined afterwards (exact in any order).
#include <vector>

#include "cpu/executor.hpp"
#include "noise/grid_optimized.hpp"

namespace procgen::detail {

NoiseRange cpuOptimizedGrid(const NoiseSetup& setup, std::span<float> out, int threads) {
  CpuExecutor exec(threads);
  if (!OptimizedGrid::handles(setup)) {
    // Simplex, cellular and warped fields: the naive rows in chunks.
    const ChunkPlan plan = exec.plan(setup.rows(), std::max<uint64_t>(1, 16384 / setup.size[0]));
    std::vector<NoiseRange> ranges(plan.count, emptyRange());
    exec.forEachChunk(plan, [&](uint64_t c) { ranges[c] = naiveRows(setup, plan.begin(c), plan.end(c), out); });
    NoiseRange range = emptyRange();
    for (const NoiseRange& r : ranges) range = combineRanges(range, r);
    return range;
  }
  const OptimizedGrid grid(setup);
  // One block per chunk (exec.plan's minimum chunk counts elements, not
  // blocks of rows): there are at least 64 blocks where the grid allows.
  ChunkPlan plan;
  plan.n = grid.blockCount();
  plan.size = 1;
  plan.count = plan.n;
  std::vector<NoiseRange> ranges(plan.count, emptyRange());
  exec.forEachChunk(plan, [&](uint64_t c) {
    NoiseRange r = emptyRange();
    for (uint64_t b = plan.begin(c); b < plan.end(c); ++b) r = combineRanges(r, grid.runBlock(b, out));
    ranges[c] = r;
  });
  NoiseRange range = emptyRange();
  for (const NoiseRange& r : ranges) range = combineRanges(range, r);
  return range;
}

}  // namespace procgen::detail

// The optimized grid on oneTBB: the serial stage's blocks (grid_optimized.hpp;
// paper §4.2–4.3, one block of rows at a time per worker instead of one
// work-group) spread over the CpuExecutor's workers in contiguous shares
// (cpu/owned_ranges.hpp). The workers run the serial stage's kernel on one
// OptimizedGrid (per-axis tables built once per call, read by all; built
// inside the fork, as its preparation jobs, so that the calling thread builds
// them while the sleeping worker wakes instead of before waking it). A point's
// arithmetic does not depend on the block it falls in or the worker that runs
// it, so the grid is bit-identical to serial at every thread count; the
// workers' min/max are combined afterwards (exact in any order).
//
// A 128³ volume is 128 blocks of 3–75 µs. Shares rather than a task per block
// keep each worker on contiguous y-slices and off a shared task tree; the two
// schedules measured the same wall time on the shared guest, where the fork's
// wake-up and the cores' shared memory side are what keep cpu ×2 under 2×
// serial (docs/performance.md, "the cpu grid in per-worker shares").
#include <vector>

#include "cpu/executor.hpp"
#include "cpu/owned_ranges.hpp"
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
  // The tables are built inside the fork, by the workers that have arrived,
  // while the others wake up.
  OptimizedGrid grid(setup, OptimizedGrid::kTablesLater);
  struct alignas(64) WorkerRange {
    NoiseRange range = emptyRange();
  };
  std::vector<WorkerRange> ranges(static_cast<size_t>(exec.threads()));
  forEachItemInOwnedShares(
      exec, grid.blockCount(), grid.tableJobs(), [&](uint64_t job) { grid.buildTable(job); },
      [&](int worker, uint64_t block) {
        ranges[worker].range = combineRanges(ranges[worker].range, grid.runBlock(block, out));
      });
  NoiseRange range = emptyRange();
  for (const WorkerRange& r : ranges) range = combineRanges(range, r.range);
  return range;
}

}  // namespace procgen::detail

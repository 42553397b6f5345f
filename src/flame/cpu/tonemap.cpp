// Flame tone mapping on oneTBB: the stages of tonemap_stages.hpp run over
// pieces of rows (and density-estimation bands) on the CpuExecutor. Each
// element is computed as in the serial driver, and the bands of one parity
// write disjoint rows, so the image is bit-identical to serial at every
// thread count (tonemap.cpp has the stage order and flam3 sources).
#include <algorithm>
#include <cstdint>

#include "cpu/executor.hpp"
#include "flame/tonemap_stages.hpp"

namespace procgen::flame {

FlameImage toneMapCpu(const ToneMapSetup& setup, const FlameHistogram& histogram, int threads) {
  detail::CpuExecutor exec(threads);
  const RangeRunner run = [&](int n, int grain, const std::function<void(int, int)>& body) {
    if (n <= 0) return;
    // A few pieces per thread for work stealing (dense and sparse rows differ
    // a lot in density-estimation cost); the partition does not change results.
    const uint64_t per_thread = (static_cast<uint64_t>(n) + 4 * exec.threads() - 1) / (4 * exec.threads());
    detail::ChunkPlan plan;
    plan.n = static_cast<uint64_t>(n);
    plan.size = std::max<uint64_t>(1, std::min<uint64_t>(static_cast<uint64_t>(grain), per_thread));
    plan.count = (plan.n + plan.size - 1) / plan.size;
    exec.forEachChunk(
        plan, [&](uint64_t c) { body(static_cast<int>(plan.begin(c)), static_cast<int>(plan.end(c))); });
  };
  return runToneMap(setup, histogram, run);
}

}  // namespace procgen::flame

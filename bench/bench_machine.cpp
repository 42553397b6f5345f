// Machine facts the performance notes rely on (docs/performance.md), measured
// with the same harness as the rest: what a oneTBB parallel region costs
// before any work is done, depending on how long the workers have been idle.
//
// BM_TbbRegionAfterGap/G: the calling thread is busy for G µs (serial work
// between two parallel stages, as in a derivation step), then runs a region of
// two 20 µs tasks on two threads. The time reported is the region's alone:
// ~20 µs when the second worker is still spinning, 20 µs + its wake-up
// latency once it has gone to sleep.
#include <benchmark/benchmark.h>

#if PROCGEN_HAVE_TBB
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <chrono>

namespace {

using Clock = std::chrono::steady_clock;

void spinFor(std::chrono::microseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

void BM_TbbRegionAfterGap(benchmark::State& state) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
  const std::chrono::microseconds gap(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    spinFor(gap);
    state.ResumeTiming();
    const auto t0 = Clock::now();
    tbb::parallel_for(0, 2, [](int) { spinFor(std::chrono::microseconds(20)); }, tbb::simple_partitioner());
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
}
BENCHMARK(BM_TbbRegionAfterGap)->Arg(0)->Arg(50)->Arg(200)->Arg(1000)->Arg(5000)->UseManualTime()->Unit(
    benchmark::kMicrosecond);

}  // namespace
#endif

// Machine facts the performance notes rely on (docs/performance.md), measured
// with the same harness as the rest: what a oneTBB parallel region costs
// before any work is done, depending on how long the workers have been idle.
//
// BM_TbbRegionAfterGap/G: the calling thread is busy for G µs (serial work
// between two parallel stages, as in a derivation step), then runs a region of
// two 20 µs tasks on two threads. The time reported is the region's alone:
// ~20 µs when the second worker is still spinning, 20 µs + its wake-up
// latency once it has gone to sleep.
//
// BM_WriteCeiling/KiB/threads: the most a parallel D0L derivation step could
// gain. A D0L jump (derive.cpp) is a pure write: the final string, KiB long,
// copied from rows of a small table. Here the same write with memcpy from a
// 4 KiB source, after both cores' caches are settled as `procgen bench` does
// (each writes 4 MiB elsewhere), on one thread or split in halves with a
// second plain thread that is already spinning (no wake-up, no scheduler):
// the ratio of the two is the ceiling of the derivation speedup of the D0L
// models on this machine, before any overhead.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

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

namespace {

void writeRows(unsigned char* out, size_t begin, size_t end, const unsigned char* rows) {
  constexpr size_t kRow = 2048;  // about a Hilbert 3-step row
  for (size_t i = begin; i < end; i += kRow) std::memcpy(out + i, rows + (i / kRow % 2) * kRow, std::min(kRow, end - i));
}

void BM_WriteCeiling(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 10;
  const bool two = state.range(1) == 2;
  std::vector<unsigned char> out(bytes), rows(4096, 'F');
  std::vector<unsigned char> settle0(4 << 20), settle1(4 << 20);
  // The helper spins on `posted` between jobs, so it is always awake; `done`
  // counts the jobs it finished.
  enum Job { kNone, kSettle, kWriteBackHalf, kQuit };
  std::atomic<int> posted{kNone}, done{0};
  std::thread helper([&] {
    for (;;) {
      int job;
      while ((job = posted.exchange(kNone, std::memory_order_acquire)) == kNone) {
      }
      if (job == kQuit) return;
      if (job == kSettle) std::fill(settle1.begin(), settle1.end(), static_cast<unsigned char>(done.load()));
      else writeRows(out.data(), bytes / 2, bytes, rows.data());
      done.fetch_add(1, std::memory_order_release);
    }
  });
  int jobs = 0;
  auto post = [&](Job job) {
    ++jobs;
    posted.store(job, std::memory_order_release);
  };
  auto awaitHelper = [&] {
    while (done.load(std::memory_order_acquire) != jobs) {
    }
  };
  for (auto _ : state) {
    // Settle: each core writes 4 MiB.
    post(kSettle);
    std::fill(settle0.begin(), settle0.end(), static_cast<unsigned char>(jobs));
    awaitHelper();
    const auto t0 = std::chrono::steady_clock::now();
    if (two) {
      post(kWriteBackHalf);
      writeRows(out.data(), 0, bytes / 2, rows.data());
      awaitHelper();
    } else {
      writeRows(out.data(), 0, bytes, rows.data());
    }
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    benchmark::DoNotOptimize(out.data());
  }
  post(kQuit);
  helper.join();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
// Koch n=7, Hilbert n=6, plant-2d n=7 final strings (610, 1083, 5559 KiB).
BENCHMARK(BM_WriteCeiling)
    ->ArgsProduct({{610, 1083, 5559}, {1, 2}})
    ->ArgNames({"KiB", "threads"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

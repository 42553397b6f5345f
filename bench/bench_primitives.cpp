// Primitives throughput (items per second): the radix sort of 64-bit keys with
// 32-bit values beside std::sort, std::stable_sort and tbb::parallel_sort of
// the same (key, value) pairs by key; scan and compaction beside a plain loop
// and std::inclusive_scan. Backends: serial, cpu×1, cpu×2, opencl (labelled
// with the device; on PoCL the CPU again).
//
// Sizes 10^5, 10^6, 10^7. Key shapes: uniform random 64-bit keys, and Morton
// codes of clustered points (8 Gaussian clusters in the unit cube), 21 bits
// per axis (63-bit keys) or 10 bits per axis (30-bit keys): few distinct high
// bits, and for 30-bit keys four constant bytes the sort skips.
//
// Steady state: inputs are generated once; every iteration restores the
// unsorted input with the timer paused and sorts with scratch reused across
// iterations (RadixScratch), so no iteration pays page faults.
//   build/bench/procgen_bench --benchmark_filter='Sort/.*/10000000'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "primitives/primitives.hpp"
#include "procgen/opencl.hpp"

#if PROCGEN_HAVE_TBB
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include "cpu/executor.hpp"
#endif
#if PROCGEN_HAVE_OPENCL
#include "primitives/opencl/device.hpp"
#endif

namespace {

namespace pr = procgen::primitives;

enum KeyShape { kUniform = 0, kMorton63 = 1, kMorton30 = 2 };
const char* const kShapeNames[] = {"uniform", "morton63", "morton30"};

uint64_t spreadBits(uint64_t v, int bits) {  // bit i -> bit 3i
  uint64_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((v >> i) & 1) << (3 * i);
  return r;
}

const std::vector<uint64_t>& keys(int shape, int64_t n) {
  static std::map<std::pair<int, int64_t>, std::vector<uint64_t>> cache;
  auto& k = cache[{shape, n}];
  if (!k.empty()) return k;
  k.resize(static_cast<size_t>(n));
  std::mt19937_64 rng(12345 + static_cast<uint64_t>(shape));
  if (shape == kUniform) {
    for (auto& x : k) x = rng();
    return k;
  }
  const int bits = shape == kMorton63 ? 21 : 10;
  const double scale = static_cast<double>((uint64_t{1} << bits) - 1);
  std::uniform_real_distribution<double> unit(0.1, 0.9);
  std::normal_distribution<double> spread(0.0, 0.02);
  double centres[8][3];
  for (auto& c : centres)
    for (double& x : c) x = unit(rng);
  for (auto& x : k) {
    const double* c = centres[rng() % 8];
    uint64_t code = 0;
    for (int a = 0; a < 3; ++a) {
      const double p = std::clamp(c[a] + spread(rng), 0.0, 1.0);
      code |= spreadBits(static_cast<uint64_t>(p * scale), bits) << a;
    }
    x = code;
  }
  return k;
}

void setLabel(benchmark::State& state, const std::string& what) {
  state.SetLabel(what + " " + kShapeNames[state.range(1)]);
}

// ---- comparison sorts of (key, value) pairs ---------------------------------

using Pair = std::pair<uint64_t, uint32_t>;
bool byKey(const Pair& a, const Pair& b) { return a.first < b.first; }

std::vector<Pair> pairs(int shape, int64_t n) {
  const auto& k = keys(shape, n);
  std::vector<Pair> p(k.size());
  for (size_t i = 0; i < k.size(); ++i) p[i] = {k[i], static_cast<uint32_t>(i)};
  return p;
}

template <typename Sort>
void runPairSort(benchmark::State& state, Sort&& sort) {
  const std::vector<Pair> input = pairs(static_cast<int>(state.range(1)), state.range(0));
  std::vector<Pair> work(input.size());
  for (auto _ : state) {
    state.PauseTiming();
    std::copy(input.begin(), input.end(), work.begin());
    state.ResumeTiming();
    sort(work);
    benchmark::DoNotOptimize(work.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_SortStdSort(benchmark::State& state) {
  setLabel(state, "std::sort");
  runPairSort(state, [](std::vector<Pair>& w) { std::sort(w.begin(), w.end(), byKey); });
}
void BM_SortStdStableSort(benchmark::State& state) {
  setLabel(state, "std::stable_sort");
  runPairSort(state, [](std::vector<Pair>& w) { std::stable_sort(w.begin(), w.end(), byKey); });
}
#if PROCGEN_HAVE_TBB
void BM_SortTbbParallelSort(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(2));
  setLabel(state, "tbb::parallel_sort x" + std::to_string(threads));
  tbb::task_arena arena(threads);
  runPairSort(state, [&](std::vector<Pair>& w) {
    arena.execute([&] { tbb::parallel_sort(w.begin(), w.end(), byKey); });
  });
}
#endif

// ---- the radix sort -----------------------------------------------------------

/// range(2): 0 serial, 1 cpu×1, 2 cpu×2, 3 opencl (device buffers).
void BM_SortRadix(benchmark::State& state) {
  const auto& input = keys(static_cast<int>(state.range(1)), state.range(0));
  const uint64_t n = input.size();
  std::vector<uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0u);
  std::vector<uint64_t> k(n);
  std::vector<uint32_t> v(n);
  pr::RadixScratch scratch;
  const int which = static_cast<int>(state.range(2));
  auto restore = [&] {
    std::copy(input.begin(), input.end(), k.begin());
    std::copy(index.begin(), index.end(), v.begin());
  };
  if (which == 0) {
    setLabel(state, "radix serial");
    restore();
    pr::serial::radixSort(k.data(), v.data(), n, scratch);  // faults in the scratch before timing
    for (auto _ : state) {
      state.PauseTiming();
      restore();
      state.ResumeTiming();
      pr::serial::radixSort(k.data(), v.data(), n, scratch);
    }
  } else if (which <= 2) {
#if PROCGEN_HAVE_TBB
    setLabel(state, "radix cpu x" + std::to_string(which));
    procgen::detail::CpuExecutor exec(which);
    restore();
    pr::cpu::radixSort(exec, k.data(), v.data(), n, scratch);  // faults in the scratch before timing
    for (auto _ : state) {
      state.PauseTiming();
      restore();
      state.ResumeTiming();
      pr::cpu::radixSort(exec, k.data(), v.data(), n, scratch);
    }
#else
    state.SkipWithError("cpu backend not built");
    return;
#endif
  } else {
#if PROCGEN_HAVE_OPENCL
    if (procgen::openclDevices().empty()) {
      state.SkipWithError(procgen::openclStatus().c_str());
      return;
    }
    setLabel(state, "radix opencl " + procgen::openclSelectedDevice().name);
    auto& ctx = pr::opencl::Context::get();
    pr::opencl::DeviceRadixSort sort(ctx, sizeof(uint64_t), true);
    pr::opencl::Buffer dk(ctx, "bench keys"), dv(ctx, "bench values");
    uint64_t probe = 0;
    dk.upload(input.data(), n * sizeof(uint64_t));
    dv.upload(index.data(), n * sizeof(uint32_t));
    sort.sort(dk.get(), dv.get(), n);  // allocates the device scratch before timing
    for (auto _ : state) {
      state.PauseTiming();
      dk.upload(input.data(), n * sizeof(uint64_t));
      dv.upload(index.data(), n * sizeof(uint32_t));
      state.ResumeTiming();
      sort.sort(dk.get(), dv.get(), n);
      dk.read(&probe, sizeof probe);  // waits for the queue
    }
#else
    state.SkipWithError("opencl backend not built");
    return;
#endif
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void sortArgs(benchmark::internal::Benchmark* b, std::vector<int64_t> third) {
  for (int64_t n : {100000, 1000000, 10000000})
    for (int64_t shape : {kUniform, kMorton63, kMorton30})
      for (int64_t t : third) b->Args({n, shape, t});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_SortStdSort)->Apply([](auto* b) { sortArgs(b, {0}); });
BENCHMARK(BM_SortStdStableSort)->Apply([](auto* b) { sortArgs(b, {0}); });
#if PROCGEN_HAVE_TBB
BENCHMARK(BM_SortTbbParallelSort)->Apply([](auto* b) { sortArgs(b, {1, 2}); });
#endif
BENCHMARK(BM_SortRadix)->Apply([](auto* b) { sortArgs(b, {0, 1, 2, 3}); });

// ---- scan and compaction ------------------------------------------------------

const std::vector<uint32_t>& values32(int64_t n) {
  static std::map<int64_t, std::vector<uint32_t>> cache;
  auto& v = cache[n];
  if (v.empty()) {
    std::mt19937 rng(7);
    v.resize(static_cast<size_t>(n));
    for (auto& x : v) x = rng() & 0xFF;
  }
  return v;
}

/// The row range(1) of the scan and compaction benchmarks: 0 the baseline
/// (labelled `baseline`), 1 serial, 2 cpu×1, 3 cpu×2, 4 opencl (host arrays).
/// False (the row skipped) when that backend is unavailable.
bool rowExecution(benchmark::State& state, const char* baseline, procgen::Execution& exec) {
  const int which = static_cast<int>(state.range(1));
  const char* const names[] = {baseline, "serial", "cpu x1", "cpu x2", "opencl (host arrays)"};
  state.SetLabel(names[which]);
  exec.backend = which == 4 ? procgen::Backend::kOpenCL : which >= 2 ? procgen::Backend::kCpu : procgen::Backend::kSerial;
  exec.threads = which == 3 ? 2 : 1;
  if (!procgen::backendAvailable(exec.backend) ||
      (exec.backend == procgen::Backend::kOpenCL && procgen::openclDevices().empty())) {
    state.SkipWithError("backend unavailable");
    return false;
  }
  return true;
}

/// range(1): 0 std::inclusive_scan, 1 serial, 2 cpu×1, 3 cpu×2, 4 opencl (host arrays).
void BM_ScanU32(benchmark::State& state) {
  const auto& in = values32(state.range(0));
  const uint64_t n = in.size();
  std::vector<uint32_t> out(n);
  const int which = static_cast<int>(state.range(1));
  procgen::Execution exec;
  if (!rowExecution(state, "std::inclusive_scan", exec)) return;
  for (auto _ : state) {
    if (which == 0)
      std::inclusive_scan(in.begin(), in.end(), out.begin());
    else
      pr::scan<pr::SumU32>(exec, pr::ScanKind::kInclusive, in.data(), nullptr, out.data(), n);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

/// range(1): 0 plain loop, 1 serial, 2 cpu×1, 3 cpu×2, 4 opencl (host arrays).
void BM_CompactU32(benchmark::State& state) {
  const auto& in = values32(state.range(0));
  const uint64_t n = in.size();
  std::vector<uint8_t> flags(n);
  for (uint64_t i = 0; i < n; ++i) flags[i] = in[i] & 1;  // half kept, at random
  std::vector<uint32_t> out(n);
  const int which = static_cast<int>(state.range(1));
  procgen::Execution exec;
  if (!rowExecution(state, "plain loop", exec)) return;
  for (auto _ : state) {
    uint64_t kept = 0;
    if (which == 0) {
      for (uint64_t i = 0; i < n; ++i)
        if (flags[i]) out[kept++] = in[i];
    } else {
      kept = pr::compact(exec, in.data(), flags.data(), n, out.data());
    }
    benchmark::DoNotOptimize(kept);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void scanArgs(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1000000, 10000000})
    for (int64_t w = 0; w <= 4; ++w) b->Args({n, w});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_ScanU32)->Apply(scanArgs);
BENCHMARK(BM_CompactU32)->Apply(scanArgs);

}  // namespace

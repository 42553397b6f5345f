// Parentheses matching throughput (elements per second), serial vs cpu vs
// opencl (labelled with the device name; on PoCL a CPU figure), for
// random (push/pop equally likely unless the stack is empty), deep (((…)))
// and flat ()()() inputs at n = 2^20, 2^24, 2^26, next to the machine's copy
// bandwidth and the ceiling it implies for 1 byte in + 4 bytes out per element,
// and a measured stream of exactly that shape (no stack, no dependency).
//
// Steady state: the input and the output array are allocated and touched
// once, before timing, and reused by every iteration (the library's per-thread
// stacks persist too), so no iteration pays page faults. The CLI's `ms` does
// include first-touch faults of its fresh output array.
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "procgen/opencl.hpp"
#include "procgen/treebox.hpp"

#if PROCGEN_HAVE_TBB
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#endif

namespace {

using namespace procgen;

// Label suffix naming the device of the opencl rows; false (and the state
// skipped with the reason) when there is none.
bool deviceLabel(benchmark::State& state, Backend backend, std::string& suffix) {
  if (backend != Backend::kOpenCL) return true;
  if (openclDevices().empty()) {
    state.SkipWithError(openclStatus().c_str());
    return false;
  }
  // push_back/append, not " " + name: GCC 12 reports a false -Wrestrict overlap.
  suffix.clear();
  suffix.push_back(' ');
  suffix.append(openclSelectedDevice().name);
  return true;
}

enum Shape { kRandom = 0, kDeep = 1, kFlat = 2 };

const std::vector<uint8_t>& input(int shape, int64_t n) {
  static std::map<std::pair<int, int64_t>, std::vector<uint8_t>> cache;
  auto& s = cache[{shape, n}];
  if (s.empty()) {
    s.resize(static_cast<size_t>(n));
    if (shape == kRandom) randomParentheses(static_cast<uint64_t>(n), 1, 0.5, s.data());
    for (int64_t i = 0; i < n; ++i) {
      if (shape == kDeep) s[i] = i < n / 2 ? '(' : ')';
      if (shape == kFlat) s[i] = (i & 1) ? ')' : '(';
    }
  }
  return s;
}

// Output buffer reused across runs (first touch happens once, outside timing).
int32_t* output(int64_t n) {
  static std::unique_ptr<int32_t[]> buf;
  static int64_t size = 0;
  if (size < n) {
    buf.reset(new int32_t[static_cast<size_t>(n)]);
    std::memset(buf.get(), 0, static_cast<size_t>(n) * sizeof(int32_t));
    size = n;
  }
  return buf.get();
}

void BM_MatchParens(benchmark::State& state, Backend backend) {
  const int shape = static_cast<int>(state.range(0));
  const int64_t n = int64_t{1} << state.range(1);
  const int threads = static_cast<int>(state.range(2));
  const std::vector<uint8_t>& s = input(shape, n);
  int32_t* out = output(n);
  Execution ex{backend, threads};
  std::string device;
  if (!deviceLabel(state, backend, device)) return;
  // opencl steady state: the program built and the device buffers allocated
  // and touched once, outside timing, like the host arrays above.
  if (!device.empty()) matchSymbols(s.data(), static_cast<uint64_t>(n), '(', ')', out, ex);
  for (auto _ : state) {
    MatchStats st = matchSymbols(s.data(), static_cast<uint64_t>(n), '(', ')', out, ex);
    benchmark::DoNotOptimize(st);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
  static const char* names[] = {"random", "deep", "flat"};
  state.SetLabel(names[shape] + device);
}

void matchArgs(benchmark::internal::Benchmark* b, bool cpu) {
  b->ArgNames({"shape", "log2n", "threads"});
  for (int log2n : {20, 24, 26})
    for (int shape : {kRandom, kDeep, kFlat})
      for (int t : cpu ? std::vector<int>{1, 2} : std::vector<int>{1}) b->Args({shape, log2n, t});
  b->Unit(benchmark::kMillisecond)->MinTime(0.3)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_MatchParens, serial, Backend::kSerial)->Apply([](auto* b) { matchArgs(b, false); });
#if PROCGEN_HAVE_TBB
BENCHMARK_CAPTURE(BM_MatchParens, cpu, Backend::kCpu)->Apply([](auto* b) { matchArgs(b, true); });
#endif
#if PROCGEN_HAVE_OPENCL
BENCHMARK_CAPTURE(BM_MatchParens, opencl, Backend::kOpenCL)->Apply([](auto* b) { matchArgs(b, false); });
#endif

// The memory-only ceiling of matching: read 1 byte, write 4 bytes per
// element (out[i] = in[i] + i, vectorised), chunks of 2^16 taken in order by
// `threads` workers like the cpu backend. No stack and no loop-carried
// dependency, so it bounds what any matching loop can reach here.
void BM_StreamCeiling(benchmark::State& state) {
  const int64_t n = int64_t{1} << 26;
  const int threads = static_cast<int>(state.range(0));
  const std::vector<uint8_t>& s = input(kRandom, n);
  int32_t* out = output(n);
  const uint8_t* in = s.data();
  auto pass = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<int32_t>(in[i]) + static_cast<int32_t>(i);
  };
  for (auto _ : state) {
#if PROCGEN_HAVE_TBB
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, int64_t{1} << 16),
                        [&](const tbb::blocked_range<int64_t>& r) { pass(r.begin(), r.end()); },
                        tbb::simple_partitioner());
    });
#else
    pass(0, n);
#endif
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 5);
}
BENCHMARK(BM_StreamCeiling)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)
    ->MinTime(0.3)->UseRealTime();

// Tree bounding boxes on a random scene (randomBoxTree: about a quarter of the
// elements open groups), serial vs cpu vs opencl.
void BM_TreeBBox(benchmark::State& state, Backend backend) {
  const uint64_t n = uint64_t{1} << state.range(0);
  const int threads = static_cast<int>(state.range(1));
  static std::map<uint64_t, BoxTree> scenes;
  BoxTree& scene = scenes[n];
  if (scene.size() == 0) scene = randomBoxTree(n, 3, 2);
  std::vector<Box3> out(n);
  Execution ex{backend, threads};
  std::string device;
  if (!deviceLabel(state, backend, device)) return;
  if (!device.empty()) {
    state.SetLabel(device.substr(1));
    treeBoundingBoxes(scene, out.data(), ex);  // steady state, as in BM_MatchParens
  }
  for (auto _ : state) {
    treeBoundingBoxes(scene, out.data(), ex);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK_CAPTURE(BM_TreeBBox, serial, Backend::kSerial)
    ->Args({22, 1})->ArgNames({"log2n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
#if PROCGEN_HAVE_TBB
BENCHMARK_CAPTURE(BM_TreeBBox, cpu, Backend::kCpu)
    ->Args({22, 1})->Args({22, 2})->ArgNames({"log2n", "threads"})->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#endif
#if PROCGEN_HAVE_OPENCL
BENCHMARK_CAPTURE(BM_TreeBBox, opencl, Backend::kOpenCL)
    ->Args({22, 0})->ArgNames({"log2n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

// Copy bandwidth: memcpy of 2^26 int32 (256 MiB) on 1 or 2 threads. Bytes
// counted are read + written; ceiling_elems/s divides them by 5 bytes per
// element (1 byte of input read, 4 bytes of output written).
void BM_CopyBandwidth(benchmark::State& state) {
  const size_t bytes = size_t{4} << 26;
  const int threads = static_cast<int>(state.range(0));
  static std::unique_ptr<char[]> src, dst;
  if (!src) {
    src.reset(new char[bytes]);
    dst.reset(new char[bytes]);
    std::memset(src.get(), 1, bytes);
    std::memset(dst.get(), 2, bytes);
  }
  for (auto _ : state) {
#if PROCGEN_HAVE_TBB
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::parallel_for(0, threads, [&](int t) {
        size_t part = bytes / static_cast<size_t>(threads);
        std::memcpy(dst.get() + t * part, src.get() + t * part, part);
      });
    });
#else
    std::memcpy(dst.get(), src.get(), bytes);
#endif
    benchmark::ClobberMemory();
  }
  const double moved = 2.0 * static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(moved));
  state.counters["ceiling_elems/s"] = benchmark::Counter(moved / 5.0, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CopyBandwidth)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)
    ->MinTime(0.3)->UseRealTime();

}  // namespace

// The cpu backend's arenas (one per thread count) and chunking policy (see executor.hpp).
#include "cpu/executor.hpp"

#include <tbb/info.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace procgen::detail {
namespace {
std::atomic<uint64_t> chunk_override{0};
}  // namespace

void setCpuChunkOverrideForTesting(uint64_t modules) { chunk_override.store(modules); }
uint64_t cpuChunkOverride() { return chunk_override.load(); }

CpuExecutor::Pool::Pool(int threads) : arena(threads) {
  // The global scheduler caps workers at the core count; a request for more
  // (e.g. 7 threads on 2 cores in the parity tests) raises the cap.
  if (threads > tbb::info::default_concurrency())
    oversubscribe.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
}

namespace {
std::shared_ptr<CpuExecutor::Pool> poolFor(int threads) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<CpuExecutor::Pool>> pools;
  std::lock_guard<std::mutex> lock(mutex);
  auto& pool = pools[threads];
  if (!pool) pool = std::make_shared<CpuExecutor::Pool>(threads);
  return pool;
}
}  // namespace

int CpuExecutor::resolveThreads(int threads) { return threads > 0 ? threads : tbb::info::default_concurrency(); }

CpuExecutor::CpuExecutor(int threads)
    : threads_(resolveThreads(threads)),
      pool_(poolFor(threads_)),
      arena_(pool_->arena) {}

std::function<void()> prepareCpuBackend(int threads) {
  CpuExecutor exec(threads);  // the arena registry exists before the background half runs
  return [exec, threads]() mutable {
    // Every worker enters the arena once: oneTBB loads its allocator and
    // runtime libraries, creates the threads and they join — the fixed costs
    // a fresh process would otherwise pay inside its first stage.
    // Each waits (at most 20 ms) until all have arrived, so that every worker
    // really starts instead of one thread running two bodies. Asleep, not
    // spinning: on two vCPUs a spinning body took the core the main thread
    // or the worker being created needed.
    std::mutex mutex;
    std::condition_variable all_in;
    int arrived = 0;
    exec.forEachWorker([&](int) {
      std::unique_lock<std::mutex> lock(mutex);
      if (++arrived == threads) all_in.notify_all();
      all_in.wait_for(lock, std::chrono::milliseconds(20), [&] { return arrived >= threads; });
    });
  };
}

ChunkPlan CpuExecutor::plan(uint64_t n, uint64_t default_size) const {
  ChunkPlan p;
  p.n = n;
  uint64_t size = cpuChunkOverride();
  if (size == 0) {
    // Several chunks per thread so work stealing evens out chunks whose
    // successors are much longer than others'; never so small that the
    // per-chunk overhead shows.
    constexpr uint64_t kMinChunk = 2048;
    const uint64_t target = (n + 8 * static_cast<uint64_t>(threads_) - 1) / (8 * static_cast<uint64_t>(threads_));
    size = std::max(kMinChunk, std::min(default_size, target));
  }
  p.size = std::max<uint64_t>(size, 1);
  p.count = (n + p.size - 1) / p.size;
  return p;
}

}  // namespace procgen::detail

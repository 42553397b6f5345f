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

int defaultCpuThreads() { return tbb::info::default_concurrency(); }

int CpuExecutor::resolveThreads(int threads) { return threads > 0 ? threads : defaultCpuThreads(); }

CpuExecutor::CpuExecutor(int threads)
    : threads_(resolveThreads(threads)),
      pool_(poolFor(threads_)),
      arena_(pool_->arena) {}

namespace {
/// Regions handed to late workers by finishPreparation(), one entry per
/// helper task enqueued. The helpers capture nothing and take their region
/// here under a mutex: a capture would be written into oneTBB's task storage,
/// which ThreadSanitizer cannot order against the worker reading it (the
/// system oneTBB is not instrumented); the mutex it can.
struct Handoff {
  std::mutex mutex;
  std::vector<std::shared_ptr<CpuExecutor::SharedChunks>> regions;
};

Handoff& handoff() {
  static Handoff* h = new Handoff;  // never destroyed: a helper may run during exit
  return *h;
}

void helpOneRegion() {
  std::shared_ptr<CpuExecutor::SharedChunks> region;
  {
    std::lock_guard<std::mutex> lock(handoff().mutex);
    if (handoff().regions.empty()) return;
    region = std::move(handoff().regions.back());
    handoff().regions.pop_back();
  }
  region->take();
}
}  // namespace

void CpuExecutor::SharedChunks::take() {
  active.fetch_add(1, std::memory_order_acq_rel);
  const uint64_t n = count;
  for (uint64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
    try {
      (*body)(c);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      next.store(n, std::memory_order_relaxed);  // hand out no more chunks
    }
  }
  active.fetch_sub(1, std::memory_order_release);
}

bool CpuExecutor::runWhileStarting(uint64_t count, const std::function<void(uint64_t)>& body) {
  auto shared = std::make_shared<SharedChunks>(count, body);
  {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    if (pool_->state.load(std::memory_order_relaxed) != kPreparing) return false;
    pool_->pending.push_back(shared);
  }
  shared->take();
  // Every chunk is taken; wait for those a helper is still running. A helper
  // entering take() from now on finds none left.
  for (int spin = 0; shared->active.load(std::memory_order_acquire) > 0; ++spin)
    if (spin > 64) std::this_thread::yield();
  if (shared->failure) std::rethrow_exception(shared->failure);
  return true;
}

void CpuExecutor::beginPreparation() {
  std::lock_guard<std::mutex> lock(pool_->mutex);
  int cold = kCold;
  pool_->state.compare_exchange_strong(cold, kPreparing);
}

void CpuExecutor::finishPreparation() {
  std::vector<std::shared_ptr<SharedChunks>> regions;
  {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    pool_->state.store(kWarm, std::memory_order_release);
    regions.swap(pool_->pending);
  }
  for (const std::shared_ptr<SharedChunks>& r : regions) {
    if (r->next.load(std::memory_order_relaxed) >= r->count) continue;  // done
    for (int w = 1; w < threads_; ++w) {
      {
        std::lock_guard<std::mutex> lock(handoff().mutex);
        handoff().regions.push_back(r);
      }
      arena_.enqueue([] { helpOneRegion(); });
    }
  }
}

std::function<void()> prepareCpuBackend(int threads) {
  CpuExecutor exec(threads);  // the arena registry exists before the background half runs
  exec.beginPreparation();
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
    exec.finishPreparation();
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

// The cpu backend's one executor, shared by every system (L-systems, treebox,
// primitives, and the systems to come): a oneTBB arena per thread count, kept
// for the whole process (creating an arena per call costs more than a small
// stage), the chunking policy of the cpu stages (the input is cut into chunks
// of consecutive elements, each one independent piece of work — L-systems
// paper §4.2 and §5), and the ThreadSanitizer fork/join annotations that make
// the uninstrumented system oneTBB visible to TSan (tsan_fork_join.hpp).
//
// Usage: `CpuExecutor exec(threads); exec.forEachChunk(exec.plan(n, size), body);`
// Constructing one is cheap (a map lookup under a lock); keep it for a call.
#pragma once

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/chunk_plan.hpp"
#include "cpu/tsan_fork_join.hpp"

namespace procgen::detail {

/// Test hook: when non-zero, every cpu stage that plans with CpuExecutor::plan
/// cuts its input into chunks of this many elements (tests force tiny chunks so
/// that contexts, brackets and branches straddle chunk borders). 0 restores
/// the default.
void setCpuChunkOverrideForTesting(uint64_t modules);
uint64_t cpuChunkOverride();

/// The default arena's thread count: oneTBB's default concurrency, the
/// cores of this process's affinity mask (effectiveThreads reports the same).
int defaultCpuThreads();

class CpuExecutor {
 public:
  /// `threads` <= 0 means defaultCpuThreads(). More threads than cores are
  /// honoured (oversubscription), so parity tests see the partitions they ask for.
  explicit CpuExecutor(int threads);

  /// The thread count CpuExecutor(threads) runs with, without making its arena.
  static int resolveThreads(int threads);

  int threads() const { return threads_; }

  /// Whether this arena's workers have run once in this process (a parallel
  /// region finished, or the CLI's prepareBackend warm-up did). Until then
  /// the workers are not there yet: a region waits ~1 ms for oneTBB to start
  /// them (2-vCPU guests measured), or, while the warm-up is under way, runs
  /// on the caller until they join (runWhileStarting) — either way more than
  /// a short stage takes alone.
  bool warm() const { return pool_->state.load(std::memory_order_relaxed) == kWarm; }

  /// Called by prepareBackend's warm-up: from now until finishPreparation()
  /// a parallel region does not wait for the workers to start
  /// (runWhileStarting).
  void beginPreparation();
  /// The warm-up is done: the arena is warm, and the regions that started
  /// meanwhile get their helpers.
  void finishPreparation();

  /// Chunks for a stage over n elements: `default_size` elements each
  /// (balanced by input size), at least enough chunks for every thread to
  /// steal from, unless the test override is set.
  ChunkPlan plan(uint64_t n, uint64_t default_size) const;

  /// Runs body(c) for every chunk c of `plan`, in parallel inside the arena
  /// (serially when there is one chunk or one thread).
  template <typename Body>
  void forEachChunk(const ChunkPlan& plan, Body&& body) {
    if (plan.count == 0) return;
    if (plan.count == 1 || threads_ == 1) {
      for (uint64_t c = 0; c < plan.count; ++c) body(c);
      return;
    }
    if (pool_->state.load(std::memory_order_acquire) == kPreparing &&
        runWhileStarting(plan.count, [&](uint64_t c) { body(c); }))
      return;
    // The system oneTBB is not instrumented: tell TSan about its fork and join.
    TsanForkJoin sync;
    sync.fork();
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, plan.count, 1),
                        [&](const tbb::blocked_range<uint64_t>& r) {
                          sync.enter();
                          for (uint64_t c = r.begin(); c != r.end(); ++c) body(c);
                          sync.leave();
                        },
                        tbb::simple_partitioner());
    });
    sync.join();
    markWarm();
  }

  /// Runs worker(w) once on each of threads() workers w = 0 .. threads()-1 at
  /// the same time, for stages that hand out their own work (e.g. chunks taken
  /// in order from a shared counter, with look-back between them).
  template <typename Worker>
  void forEachWorker(Worker&& worker) {
    if (threads_ == 1) {
      worker(0);
      return;
    }
    TsanForkJoin sync;
    sync.fork();
    arena_.execute([&] {
      tbb::parallel_for(0, threads_, [&](int w) {
        sync.enter();
        worker(w);
        sync.leave();
      }, tbb::simple_partitioner());
    });
    sync.join();
    markWarm();
  }

  /// Runs f() inside the arena (for task_group / parallel_for_each users).
  template <typename F>
  void execute(F&& f) {
    arena_.execute(std::forward<F>(f));
  }

  /// The chunks of one region that the calling thread shares with workers
  /// joining late (runWhileStarting). Shared-owned: a helper that starts
  /// after the region ended finds no chunk left and touches nothing else.
  /// `count` and `body` are set before the region is published; a helper
  /// receives it through two mutexes (the pool's pending list, then the
  /// hand-off list), which order those writes and the caller's data before it.
  struct SharedChunks {
    SharedChunks(uint64_t n, const std::function<void(uint64_t)>& f) : count(n), body(&f) {}
    const uint64_t count;                          ///< chunks in the region
    const std::function<void(uint64_t)>* const body;  ///< dangling once the region ended: read only for a chunk < count
    std::atomic<uint64_t> next{0};                 ///< the next chunk to take
    std::atomic<int> active{0};                    ///< threads inside take()
    std::mutex mutex;
    std::exception_ptr failure;  ///< the first exception a chunk threw
    /// Runs chunks until none is left (after a failure, none is).
    void take();
  };

  enum State : int { kCold, kPreparing, kWarm };

  /// One arena per thread count for the whole process: creating an arena per
  /// call costs more than a small derivation step.
  struct Pool {
    std::optional<tbb::global_control> oversubscribe;
    tbb::task_arena arena;
    std::atomic<int> state{kCold};  ///< see warm() and beginPreparation()
    std::mutex mutex;               ///< guards `pending` and the change from kPreparing
    std::vector<std::shared_ptr<SharedChunks>> pending;  ///< regions waiting for helpers
    explicit Pool(int threads);
  };

 private:
  /// While the warm-up is starting oneTBB (~1 ms in a fresh process, during
  /// which entering the arena blocks), the calling thread runs the region's
  /// chunks itself, taking them from a shared counter, and the workers take
  /// them too as soon as finishPreparation() hands them the region. Returns
  /// false, having run nothing, when the arena became warm meanwhile.
  bool runWhileStarting(uint64_t count, const std::function<void(uint64_t)>& body);

  /// After a region: the arena's workers have run (one store, then none).
  void markWarm() {
    if (pool_->state.load(std::memory_order_relaxed) != kWarm) pool_->state.store(kWarm, std::memory_order_relaxed);
  }

  int threads_;
  std::shared_ptr<Pool> pool_;
  tbb::task_arena& arena_;
};

/// prepareBackend's cpu half (src/common/backend.cpp): marks the arena of
/// `threads` as preparing and returns the warm-up, which the caller runs on a
/// thread of its own; every worker enters the arena once, then
/// finishPreparation() hands the regions started meanwhile to the workers.
std::function<void()> prepareCpuBackend(int threads);

/// A work queue on a tbb::task_group (paper §5.2.2): items are indices into
/// storage the caller fills *before* spawn(), so the hand-over is ordered for
/// ThreadSanitizer although the system oneTBB is not instrumented; the only
/// accesses TSan cannot order are the glue lambdas in this header reading
/// their captured (queue, index), which tests/lsystem/tsan.supp names.
/// Used by the L-system interpretation's branch hierarchy (paper §5.2.2).
class WorkQueue {
 public:
  WorkQueue(CpuExecutor& exec, std::function<void(uint64_t)> run) : exec_(exec), run_(std::move(run)) {}
  /// Runs item `root` and every item spawned from it, inside the arena.
  void runAll(uint64_t root) {
    exec_.execute([&] {
      spawn(root);
      group_.wait();
    });
    sync_.join();
  }
  /// Runs item k as a task (callable from inside a running item).
  void spawn(uint64_t k) {
    sync_.fork();
    group_.run([this, k] {
      sync_.enter();
      run_(k);
      sync_.leave();
    });
  }

 private:
  CpuExecutor& exec_;
  std::function<void(uint64_t)> run_;
  tbb::task_group group_;
  TsanForkJoin sync_;
};

}  // namespace procgen::detail

// Items [0, n) over the CpuExecutor's workers in contiguous shares, for stages
// whose items are many short pieces of similar cost (the noise grid's blocks,
// 3–75 µs each): worker w owns the w-th contiguous share of the items and
// takes them one by one from its front; a worker whose share is empty takes
// the back half of the largest share left (work stealing, the thief taking
// from the far end as in the Cilk deque). Against a parallel_for with one
// task per item this keeps
//  - a worker's items contiguous (for the noise volume: whole runs of
//    y-slices, so a worker writes 32 KiB runs of every z-plane instead of
//    512-byte rows scattered over it), with its claims on its own cache line
//    instead of a task tree's reference counts shared between the cores;
//  - the balance of dynamic scheduling: a worker that starts late (the
//    executor's threads sleep between stages and take 30–60 µs to wake on
//    this guest) or is preempted loses items to the others instead of
//    holding up the join.
// Which worker runs an item depends on timing; callers make the result
// independent of it (per-item results, or an exact combine).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>

#include "cpu/executor.hpp"

namespace procgen::detail {

/// Runs body(worker, item) for every item in [0, n), each once, on
/// exec.threads() workers (worker in [0, threads)); returns when all have run.
/// Items of one worker run in increasing order within each share it takes.
/// Before any item, prepare(job) runs for every job in [0, jobs), each once,
/// on whichever workers have arrived (independent jobs: a stage's tables).
/// The calling thread takes them as soon as it has woken the others, so the
/// preparation overlaps their wake-up instead of delaying it (on this guest
/// the wake-up syscall costs the caller ~9 µs and a sleeping worker starts
/// ~20 µs later). A worker that finds every job taken waits (yielding) for
/// the last one to finish.
template <typename Prepare, typename Body>
void forEachItemInOwnedShares(CpuExecutor& exec, uint64_t n, uint64_t jobs, Prepare&& prepare, Body&& body) {
  const int workers = exec.threads();
  if (workers == 1 || n <= 1) {
    for (uint64_t j = 0; j < jobs; ++j) prepare(j);
    for (uint64_t i = 0; i < n; ++i) body(0, i);
    return;
  }
  // The preparation: jobs claimed from one counter; `finished` counts those
  // done (or failed: a throwing job must not leave the others waiting).
  struct alignas(64) Preparation {
    std::atomic<uint64_t> next{0};
    std::atomic<uint64_t> finished{0};
    std::atomic<bool> failed{false};
  } preparation;
  auto prepareAll = [&] {
    for (uint64_t j; (j = preparation.next.fetch_add(1, std::memory_order_relaxed)) < jobs;) {
      try {
        prepare(j);
      } catch (...) {
        preparation.failed.store(true, std::memory_order_relaxed);
        preparation.finished.fetch_add(1, std::memory_order_release);
        throw;
      }
      preparation.finished.fetch_add(1, std::memory_order_release);
    }
    while (preparation.finished.load(std::memory_order_acquire) < jobs) std::this_thread::yield();
    return !preparation.failed.load(std::memory_order_relaxed);
  };
  // Shares count units of `group` consecutive items, fewer than 2^32.
  const uint64_t group = n / 0xffffffffu + 1;
  const uint64_t units = (n + group - 1) / group;
  auto run = [&](int w, uint64_t unit) {
    for (uint64_t i = unit * group, end = std::min(n, i + group); i < end; ++i) body(w, i);
  };
  // The unclaimed items of worker w's share: [front, back) packed as
  // back << 32 | front, so that a claim and a steal are one compare-exchange.
  struct alignas(64) Share {
    std::atomic<uint64_t> items{0};
  };
  auto pack = [](uint64_t front, uint64_t back) { return back << 32 | front; };
  const std::unique_ptr<Share[]> shares(new Share[static_cast<size_t>(workers)]);
  for (int w = 0; w < workers; ++w)
    shares[w].items.store(pack(units * w / workers, units * (w + 1) / workers), std::memory_order_relaxed);

  exec.forEachWorker([&](int w) {
    if (!prepareAll()) return;
    std::atomic<uint64_t>& own = shares[w].items;
    for (;;) {
      // Claim the front item of the own share.
      uint64_t cur = own.load(std::memory_order_relaxed);
      while ((cur & 0xffffffffu) < (cur >> 32) &&
             !own.compare_exchange_weak(cur, cur + 1, std::memory_order_relaxed)) {
      }
      if ((cur & 0xffffffffu) < (cur >> 32)) {
        run(w, cur & 0xffffffffu);
        continue;
      }
      // The own share is empty: take the back half of the largest other one.
      bool stole = false;
      for (;;) {
        int victim = -1;
        uint64_t victim_items = 0, largest = 0;
        for (int v = 0; v < workers; ++v) {
          const uint64_t it = shares[v].items.load(std::memory_order_relaxed);
          const uint64_t left = (it >> 32) - std::min(it >> 32, it & 0xffffffffu);
          if (left > largest) {
            largest = left;
            victim = v;
            victim_items = it;
          }
        }
        if (victim < 0) break;  // nothing left anywhere: every item is claimed
        const uint64_t front = victim_items & 0xffffffffu, back = victim_items >> 32;
        const uint64_t mid = front + (back - front) / 2;
        if (shares[victim].items.compare_exchange_strong(victim_items, pack(front, mid),
                                                         std::memory_order_relaxed)) {
          own.store(pack(mid, back), std::memory_order_relaxed);
          stole = true;
          break;
        }
      }
      if (!stole) return;
    }
  });
}

/// The same without preparation jobs.
template <typename Body>
void forEachItemInOwnedShares(CpuExecutor& exec, uint64_t n, Body&& body) {
  forEachItemInOwnedShares(exec, n, 0, [](uint64_t) {}, std::forward<Body>(body));
}

}  // namespace procgen::detail

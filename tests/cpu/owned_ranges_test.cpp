// forEachItemInOwnedShares (src/cpu/owned_ranges.hpp): every item runs exactly
// once, on a worker in range, whatever the thread count and however the
// workers' timing makes them steal; with one thread, in order on worker 0;
// the preparation jobs each run once, all before the first item, and a
// throwing job reaches the caller instead of leaving the others waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/owned_ranges.hpp"

namespace procgen::detail {
namespace {

/// Runs the items with `threads` workers; `delay(worker, item)` is called
/// inside the body first (to make some workers slow). Returns per item the
/// number of times it ran, and checks the worker indices.
template <typename Delay>
std::vector<int> runCounts(int threads, uint64_t n, Delay&& delay) {
  CpuExecutor exec(threads);
  std::unique_ptr<std::atomic<int>[]> runs(new std::atomic<int>[n + 1]);
  for (uint64_t i = 0; i < n; ++i) runs[i].store(0);
  std::atomic<int> bad_worker{0};
  forEachItemInOwnedShares(exec, n, [&](int worker, uint64_t item) {
    if (worker < 0 || worker >= threads) bad_worker.fetch_add(1);
    delay(worker, item);
    runs[item].fetch_add(1);
  });
  EXPECT_EQ(bad_worker.load(), 0);
  std::vector<int> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = runs[i].load();
  return out;
}

TEST(OwnedSharesTest, EveryItemRunsOnceAtEveryThreadCount) {
  for (int threads : {1, 2, 3, 7})
    for (uint64_t n : {0u, 1u, 2u, 3u, 5u, 128u, 1000u}) {
      const std::vector<int> counts = runCounts(threads, n, [](int, uint64_t) {});
      for (uint64_t i = 0; i < n; ++i)
        ASSERT_EQ(counts[i], 1) << "threads " << threads << ", n " << n << ", item " << i;
    }
}

TEST(OwnedSharesTest, ASlowWorkerLosesItemsButNoneIsLostOrRepeated) {
  // Worker 0 dawdles on every item (up to 200 µs), so the others empty their
  // shares and steal from its back; items still run once each.
  for (int threads : {2, 3, 7}) {
    const std::vector<int> counts = runCounts(threads, 300, [](int worker, uint64_t) {
      if (worker == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    for (uint64_t i = 0; i < counts.size(); ++i)
      ASSERT_EQ(counts[i], 1) << "threads " << threads << ", item " << i;
  }
}

TEST(OwnedSharesTest, OneThreadRunsTheItemsInOrder) {
  CpuExecutor exec(1);
  std::vector<uint64_t> order;
  forEachItemInOwnedShares(exec, 10, [&](int worker, uint64_t item) {
    EXPECT_EQ(worker, 0);
    order.push_back(item);
  });
  ASSERT_EQ(order.size(), 10u);
  for (uint64_t i = 0; i < 10; ++i) EXPECT_EQ(order[i], i);
}

TEST(OwnedSharesTest, PreparationJobsRunOnceEachAndAllBeforeTheFirstItem) {
  for (int threads : {1, 2, 3, 7})
    for (uint64_t jobs : {0u, 1u, 5u, 24u}) {
      CpuExecutor exec(threads);
      const uint64_t n = 200;
      std::unique_ptr<std::atomic<int>[]> job_runs(new std::atomic<int>[jobs + 1]);
      std::unique_ptr<std::atomic<int>[]> item_runs(new std::atomic<int>[n]);
      for (uint64_t j = 0; j < jobs; ++j) job_runs[j].store(0);
      for (uint64_t i = 0; i < n; ++i) item_runs[i].store(0);
      std::atomic<uint64_t> jobs_done{0};
      std::atomic<int> early_items{0};
      forEachItemInOwnedShares(
          exec, n, jobs,
          [&](uint64_t job) {
            // Slow jobs, so that a worker arriving meanwhile finds them taken and waits.
            std::this_thread::sleep_for(std::chrono::microseconds(job % 3 == 0 ? 300 : 20));
            job_runs[job].fetch_add(1);
            jobs_done.fetch_add(1);
          },
          [&](int, uint64_t item) {
            if (jobs_done.load() != jobs) early_items.fetch_add(1);
            item_runs[item].fetch_add(1);
          });
      EXPECT_EQ(early_items.load(), 0) << "threads " << threads << ", jobs " << jobs;
      for (uint64_t j = 0; j < jobs; ++j) ASSERT_EQ(job_runs[j].load(), 1) << "threads " << threads << ", job " << j;
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(item_runs[i].load(), 1) << "threads " << threads << ", item " << i;
    }
}

TEST(OwnedSharesTest, AThrowingPreparationJobReachesTheCallerAndRunsNoItem) {
  for (int threads : {1, 2, 7}) {
    CpuExecutor exec(threads);
    std::atomic<int> items{0};
    EXPECT_THROW(forEachItemInOwnedShares(
                     exec, 100, 8,
                     [&](uint64_t job) {
                       std::this_thread::sleep_for(std::chrono::microseconds(50));
                       if (job == 5) throw std::runtime_error("job 5");
                     },
                     [&](int, uint64_t) { items.fetch_add(1); }),
                 std::runtime_error)
        << "threads " << threads;
    EXPECT_EQ(items.load(), 0) << "threads " << threads;
  }
}

}  // namespace
}  // namespace procgen::detail

// forEachItemInOwnedShares (src/cpu/owned_ranges.hpp): every item runs exactly
// once, on a worker in range, whatever the thread count and however the
// workers' timing makes them steal; with one thread, in order on worker 0.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
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

}  // namespace
}  // namespace procgen::detail

// CpuExecutor while the cpu backend's warm-up is starting oneTBB
// (src/cpu/executor.cpp, runWhileStarting): the calling thread runs a
// region's chunks itself instead of waiting for the workers, the workers join
// the region once the warm-up is done, every chunk runs exactly once, an
// exception reaches the caller, and the arena is warm afterwards. Each test
// uses a thread count no other test uses: the arenas are per process and a
// warm one never prepares again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/executor.hpp"

namespace procgen::detail {
namespace {

using Clock = std::chrono::steady_clock;

/// Waits (at most 10 s) until done() holds; whether it did.
template <typename Done>
bool waitFor(Done&& done) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!done() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(50));
  return done();
}

TEST(ExecutorStartTest, TheCallerRunsEveryChunkOnceBeforeTheWarmUpRuns) {
  constexpr int kThreads = 5;
  constexpr uint64_t kChunks = 64;
  std::function<void()> warm_up = prepareCpuBackend(kThreads);
  CpuExecutor exec(kThreads);
  ASSERT_FALSE(exec.warm());
  std::vector<int> runs(kChunks, 0);  // plain ints: only this thread may run them
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  exec.forEachChunk(ChunkPlan{kChunks, 1, kChunks}, [&](uint64_t c) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
    ++runs[c];
  });
  EXPECT_EQ(elsewhere.load(), 0) << "no worker may run a chunk before the warm-up hands the region over";
  for (uint64_t c = 0; c < kChunks; ++c) EXPECT_EQ(runs[c], 1) << "chunk " << c;
  std::thread(warm_up).join();
  EXPECT_TRUE(exec.warm());
}

TEST(ExecutorStartTest, WorkersJoinARegionStartedBeforeTheWarmUpEnded) {
  constexpr int kThreads = 6;
  constexpr uint64_t kChunks = 2000;
  std::function<void()> warm_up = prepareCpuBackend(kThreads);
  CpuExecutor exec(kThreads);
  std::unique_ptr<std::atomic<int>[]> runs(new std::atomic<int>[kChunks]);
  for (uint64_t c = 0; c < kChunks; ++c) runs[c].store(0);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<uint64_t> elsewhere{0};
  std::atomic<bool> warm_up_done{false};
  std::thread warm_up_thread;
  bool helped = false;
  exec.forEachChunk(ChunkPlan{kChunks, 1, kChunks}, [&](uint64_t c) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
    if (c == 0) {
      // The region is running on the caller: finish the warm-up now, then
      // hold this chunk until a worker has taken one of the others.
      warm_up_thread = std::thread([&] {
        warm_up();
        warm_up_done.store(true);
      });
      helped = waitFor([&] { return elsewhere.load() > 0; });
    }
    runs[c].fetch_add(1);
  });
  warm_up_thread.join();
  EXPECT_TRUE(warm_up_done.load());
  EXPECT_TRUE(helped) << "no worker joined the region within 10 s of the warm-up";
  for (uint64_t c = 0; c < kChunks; ++c) ASSERT_EQ(runs[c].load(), 1) << "chunk " << c;
  EXPECT_TRUE(exec.warm());
}

TEST(ExecutorStartTest, AThrowingChunkReachesTheCallerAndNoChunkRunsTwice) {
  constexpr int kThreads = 9;
  constexpr uint64_t kChunks = 100;
  std::function<void()> warm_up = prepareCpuBackend(kThreads);
  CpuExecutor exec(kThreads);
  std::vector<int> runs(kChunks, 0);
  EXPECT_THROW(exec.forEachChunk(ChunkPlan{kChunks, 1, kChunks},
                                 [&](uint64_t c) {
                                   ++runs[c];
                                   if (c == 10) throw std::runtime_error("chunk 10");
                                 }),
               std::runtime_error);
  for (uint64_t c = 0; c < kChunks; ++c) EXPECT_LE(runs[c], 1) << "chunk " << c;
  EXPECT_EQ(runs[10], 1);
  EXPECT_EQ(runs[11], 0) << "after a failure no chunk is handed out";
  std::thread(warm_up).join();
  EXPECT_TRUE(exec.warm());
}

}  // namespace
}  // namespace procgen::detail

// The large-array allocator (procgen/memory.hpp, src/common/large_buffer.cpp):
// alignment, overwrite semantics, reuse of freed blocks, zero sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "common/large_buffer.hpp"
#include "procgen/memory.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define LARGE_BUFFER_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LARGE_BUFFER_TEST_ASAN 1
#endif
#endif

namespace {

using procgen::allocateLarge;
using procgen::deallocateLarge;
using procgen::kHugePageBytes;
using procgen::kLargeBlockBytes;
using procgen::keptLargeBlockBytes;
using procgen::OverwriteVector;
using procgen::releaseLargeBlocks;

bool alignedTo(const void* p, size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }

TEST(LargeBuffer, LargeBlocksAreHugePageAligned) {
  releaseLargeBlocks();
  for (size_t bytes : {kLargeBlockBytes, kLargeBlockBytes + 1, 3 * kHugePageBytes + 12345}) {
    void* p = allocateLarge(bytes);
    EXPECT_TRUE(alignedTo(p, kHugePageBytes)) << bytes;
    std::memset(p, 0x5a, bytes);  // the whole size is writable
    deallocateLarge(p, bytes);
  }
  void* small = allocateLarge(1000);
  EXPECT_TRUE(alignedTo(small, __STDCPP_DEFAULT_NEW_ALIGNMENT__));
  deallocateLarge(small, 1000);
  releaseLargeBlocks();
}

TEST(LargeBuffer, FreedBlockIsReusedForAboutItsSize) {
  releaseLargeBlocks();
  const size_t bytes = 4 * kHugePageBytes;  // 8 MiB
  void* p = allocateLarge(bytes);
  deallocateLarge(p, bytes);
  EXPECT_EQ(keptLargeBlockBytes(), bytes);
  void* again = allocateLarge(bytes);
  EXPECT_EQ(again, p);
  EXPECT_EQ(keptLargeBlockBytes(), 0u);
  deallocateLarge(again, bytes);
  // A request of at least half the kept block takes it, a larger one does not.
  void* smaller = allocateLarge(bytes / 2 + 1);
  EXPECT_EQ(smaller, p);
  void* larger = allocateLarge(2 * bytes);
  EXPECT_NE(larger, p);
  deallocateLarge(larger, 2 * bytes);
  deallocateLarge(smaller, bytes / 2 + 1);
  // The kept block of the small request has the block's full size: the same
  // block serves the full request again.
  void* full = allocateLarge(bytes);
  EXPECT_EQ(full, p);
  deallocateLarge(full, bytes);
  releaseLargeBlocks();
  EXPECT_EQ(keptLargeBlockBytes(), 0u);
}

TEST(LargeBuffer, ResizeLeavesNewElementsUnsetAndGrowthKeepsContents) {
  releaseLargeBlocks();
  const size_t n = kLargeBlockBytes / sizeof(uint32_t) * 2;
  const uint32_t* first = nullptr;
  {
    OverwriteVector<uint32_t> v(n);
    first = v.data();
    std::fill(v.begin(), v.end(), 0xdeadbeefu);
  }
  // The reused block still holds the old values: resize wrote nothing.
  OverwriteVector<uint32_t> w;
  procgen::detail::resizeForOverwrite(w, n);
  ASSERT_EQ(w.data(), first);
  EXPECT_EQ(w[0], 0xdeadbeefu);
  EXPECT_EQ(w[n - 1], 0xdeadbeefu);
  // Constructing from a value still writes it.
  w.resize(n + 10, 7u);
  EXPECT_EQ(w[n + 9], 7u);
  EXPECT_EQ(w[n], 7u);
  // Growth by appending copies the old elements into the new block.
  std::iota(w.begin(), w.end(), 0u);
  const size_t before = w.size();
  while (w.size() < 3 * before) w.push_back(static_cast<uint32_t>(w.size()));
  for (size_t i = 0; i < w.size(); i += 4099) ASSERT_EQ(w[i], i);
  EXPECT_EQ(w.back(), w.size() - 1);
}

TEST(LargeBuffer, MidSizeBlocksComeFromSlabsAndAreReusedInTheirClass) {
  using procgen::kMidBlockBytes;
  // Every size between the thresholds is writable in full, 16 KiB aligned,
  // and blocks in use never overlap.
  std::vector<std::pair<char*, size_t>> live;
  for (size_t bytes = kMidBlockBytes; bytes < kLargeBlockBytes; bytes += 12345) {
    auto* p = static_cast<char*>(allocateLarge(bytes));
#if !defined(LARGE_BUFFER_TEST_ASAN)
    EXPECT_TRUE(alignedTo(p, kMidBlockBytes)) << bytes;
#endif
    std::memset(p, static_cast<int>(live.size() & 0xff), bytes);
    live.emplace_back(p, bytes);
  }
  for (size_t k = 0; k < live.size(); ++k) {
    const auto [p, bytes] = live[k];
    for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(p[i], static_cast<char>(k & 0xff)) << k;
  }
  for (const auto& [p, bytes] : live) deallocateLarge(p, bytes);
#if !defined(LARGE_BUFFER_TEST_ASAN)  // under ASan they stay malloc's (redzones)
  // A freed block serves the next request of its power-of-two class (20 KiB
  // and 30 KiB both round to 32 KiB), not one of another class.
  void* a = allocateLarge(20 << 10);
  deallocateLarge(a, 20 << 10);
  void* b = allocateLarge(30 << 10);
  EXPECT_EQ(b, a);
  void* c = allocateLarge(40 << 10);
  EXPECT_NE(c, a);
  deallocateLarge(c, 40 << 10);
  deallocateLarge(b, 30 << 10);
#endif
  // Below the mid-size threshold: plain operator new, default alignment.
  void* small = allocateLarge(kMidBlockBytes - 1);
  EXPECT_TRUE(alignedTo(small, __STDCPP_DEFAULT_NEW_ALIGNMENT__));
  deallocateLarge(small, kMidBlockBytes - 1);
  releaseLargeBlocks();
}

TEST(LargeBuffer, ZeroSizes) {
  void* p = allocateLarge(0);
  EXPECT_NE(p, nullptr);
  deallocateLarge(p, 0);
  deallocateLarge(nullptr, 0);
  deallocateLarge(nullptr, kLargeBlockBytes);
  OverwriteVector<uint8_t> v;
  procgen::detail::resizeForOverwrite(v, 0);
  EXPECT_TRUE(v.empty());
  procgen::detail::resizeForOverwrite(v, kLargeBlockBytes);
  EXPECT_EQ(v.size(), kLargeBlockBytes);
  procgen::detail::resizeForOverwrite(v, 0);
  EXPECT_TRUE(v.empty());
}

}  // namespace

// The large-block allocator of procgen/memory.hpp and the huge-page helpers of
// common/large_buffer.hpp (issue 15, cold-start speed).
#include "common/large_buffer.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "procgen/budget.hpp"
#include "procgen/memory.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

// Kept blocks are poisoned under AddressSanitizer, so a use after free of a
// large array is still reported although the memory stays mapped.
#if defined(__SANITIZE_ADDRESS__)
#define PROCGEN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROCGEN_ASAN 1
#endif
#endif
#if defined(PROCGEN_ASAN)
#include <sanitizer/asan_interface.h>
#define PROCGEN_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define PROCGEN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define PROCGEN_POISON(p, n) ((void)(p), (void)(n))
#define PROCGEN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace procgen {
namespace {

constexpr size_t roundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

/// The blocks in use (address -> mapped size) and the kept free blocks. Never
/// destroyed: vectors with static storage may free their blocks after every
/// other static object is gone.
struct BlockCache {
  std::mutex mutex;
  std::unordered_map<void*, size_t> live;
  struct Kept {
    void* p;
    size_t bytes;
  };
  std::vector<Kept> kept;  ///< oldest first
  size_t kept_bytes = 0;
  size_t budget = 0;
};

BlockCache& cache() {
  static BlockCache& c = *[] {
    auto* fresh = new BlockCache;
    // An eighth of the smallest memory limit (RAM, RLIMIT_AS, cgroup): kept
    // blocks stay mapped, so under `ulimit -v` they take address space the
    // memory budget (half that limit) does not count.
    fresh->budget = static_cast<size_t>(defaultMemoryBudget() / 4);
    return fresh;
  }();
  return c;
}

/// A fresh mapping of `bytes` (a multiple of kHugePageBytes) starting on a
/// kHugePageBytes boundary, advised to huge pages before anything touches it.
void* mapBlock(size_t bytes) {
#if defined(__linux__)
  const size_t slack = kHugePageBytes;
  void* raw = mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > begin) munmap(raw, aligned - begin);
  const uintptr_t end = begin + bytes + slack;
  if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
  void* p = reinterpret_cast<void*>(aligned);
  detail::adviseHugePages(p, bytes);
  return p;
#else
  return ::operator new(bytes, std::align_val_t{kHugePageBytes});
#endif
}

void unmapBlock(void* p, size_t bytes) noexcept {
  PROCGEN_UNPOISON(p, bytes);
#if defined(__linux__)
  munmap(p, bytes);
#else
  ::operator delete(p, std::align_val_t{kHugePageBytes});
  (void)bytes;
#endif
}

}  // namespace

void* allocateLarge(size_t bytes) {
  if (bytes < kLargeBlockBytes) return ::operator new(bytes == 0 ? 1 : bytes);
  const size_t mapped = roundUp(bytes, kHugePageBytes);
  BlockCache& c = cache();
  {
    // Best fit among the kept blocks no more than twice the size: a much
    // larger one would be held by a small array while a later large request
    // maps (and faults in) fresh memory.
    std::lock_guard<std::mutex> lock(c.mutex);
    size_t best = c.kept.size();
    for (size_t k = 0; k < c.kept.size(); ++k)
      if (c.kept[k].bytes >= mapped && c.kept[k].bytes / 2 <= mapped &&
          (best == c.kept.size() || c.kept[k].bytes < c.kept[best].bytes))
        best = k;
    if (best != c.kept.size()) {
      const BlockCache::Kept block = c.kept[best];
      c.kept.erase(c.kept.begin() + static_cast<std::ptrdiff_t>(best));
      c.kept_bytes -= block.bytes;
      c.live.emplace(block.p, block.bytes);
      PROCGEN_UNPOISON(block.p, block.bytes);
      return block.p;
    }
  }
  void* p = nullptr;
  try {
    p = mapBlock(mapped);
  } catch (const std::bad_alloc&) {
    // The kept blocks may be what fills the address space: give them back, retry once.
    releaseLargeBlocks();
    p = mapBlock(mapped);
  }
  try {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.live.emplace(p, mapped);
  } catch (...) {
    unmapBlock(p, mapped);
    throw;
  }
  return p;
}

void deallocateLarge(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kLargeBlockBytes) {
    ::operator delete(p);
    return;
  }
  BlockCache& c = cache();
  std::vector<BlockCache::Kept> unmap;
  size_t mapped = roundUp(bytes, kHugePageBytes);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.live.find(p);
    if (it != c.live.end()) {
      mapped = it->second;
      c.live.erase(it);
    }
    if (mapped > c.budget) {
      unmap.push_back({p, mapped});
    } else {
      // Oldest first out until the new block fits the budget.
      size_t drop = 0;
      while (c.kept_bytes + mapped > c.budget) {
        c.kept_bytes -= c.kept[drop].bytes;
        ++drop;
      }
      unmap.assign(c.kept.begin(), c.kept.begin() + static_cast<std::ptrdiff_t>(drop));
      c.kept.erase(c.kept.begin(), c.kept.begin() + static_cast<std::ptrdiff_t>(drop));
      try {
        c.kept.push_back({p, mapped});
        c.kept_bytes += mapped;
        PROCGEN_POISON(p, mapped);
      } catch (...) {
        unmap.push_back({p, mapped});
      }
    }
  }
  for (const BlockCache::Kept& b : unmap) unmapBlock(b.p, b.bytes);
}

void releaseLargeBlocks() noexcept {
  BlockCache& c = cache();
  std::vector<BlockCache::Kept> unmap;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    unmap.swap(c.kept);
    c.kept_bytes = 0;
  }
  for (const BlockCache::Kept& b : unmap) unmapBlock(b.p, b.bytes);
}

size_t keptLargeBlockBytes() noexcept {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.kept_bytes;
}

namespace detail {

void adviseHugePages(const void* p, size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p == nullptr || bytes < kLargeBufferBytes) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  // A hint only: EINVAL (THP compiled out) or a heap-backed range changes nothing.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace detail
}  // namespace procgen

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

/// Size classes of the mid-size blocks: powers of two from kMidBlockBytes up
/// to kLargeBlockBytes.
constexpr int kMidClasses = 5;
#if defined(PROCGEN_ASAN)
// Under AddressSanitizer they stay malloc's, whose redzones catch overflows
// of these (often test-sized) arrays; a slab has none between its blocks.
constexpr size_t kSlabMinBytes = kLargeBlockBytes;
#else
constexpr size_t kSlabMinBytes = kMidBlockBytes;
#endif
static_assert((kMidBlockBytes << (kMidClasses - 1)) == kLargeBlockBytes, "the classes end where large blocks begin");

int midClass(size_t bytes) {
  int k = 0;
  for (size_t size = kMidBlockBytes; size < bytes; size <<= 1) ++k;
  return k;
}

/// Mid-size blocks (kMidBlockBytes <= size < kLargeBlockBytes) carved from
/// 2 MiB huge-page slabs. Before, malloc served them: from fresh 4 KiB-paged
/// mappings or heap growth, each page a fault, and freed heap tops went back
/// to the kernel (glibc trims them), so even a steady-state derivation of
/// tree-3d took 224 page faults per call for the small early steps' strings
/// and per-chunk arrays. Freed blocks stay in their class for the next
/// request; the slabs are unmapped only by releaseLargeBlocks() once no
/// mid-size block is in use.
struct MidPool {
  std::vector<void*> free[kMidClasses];
  std::vector<void*> slabs;
  char* next = nullptr;  ///< unused rest of the newest slab
  size_t left = 0;
  size_t live = 0;  ///< blocks handed out and not freed
};

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
  MidPool mid;
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

/// A mid-size block of class k (the caller holds c.mutex).
void* takeMidBlock(BlockCache& c, int k) {
  MidPool& m = c.mid;
  const size_t size = kMidBlockBytes << k;
  void* p = nullptr;
  if (!m.free[k].empty()) {
    p = m.free[k].back();
    m.free[k].pop_back();
    PROCGEN_UNPOISON(p, size);
  } else {
    if (m.left < size) {
      // The rest of the slab goes to the smaller classes, largest first.
      for (int j = k - 1; j >= 0; --j)
        while (m.left >= (kMidBlockBytes << j)) {
          m.free[j].push_back(m.next);
          PROCGEN_POISON(m.next, kMidBlockBytes << j);
          m.next += kMidBlockBytes << j;
          m.left -= kMidBlockBytes << j;
        }
      m.slabs.reserve(m.slabs.size() + 1);
      m.next = static_cast<char*>(mapBlock(kHugePageBytes));
      m.left = kHugePageBytes;
      m.slabs.push_back(m.next);
    }
    p = m.next;
    m.next += size;
    m.left -= size;
  }
  ++m.live;
  return p;
}

}  // namespace

void* allocateLarge(size_t bytes) {
  if (bytes < kSlabMinBytes) return ::operator new(bytes == 0 ? 1 : bytes);
  if (bytes < kLargeBlockBytes) {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return takeMidBlock(c, midClass(bytes));
  }
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
  if (bytes < kSlabMinBytes) {
    ::operator delete(p);
    return;
  }
  BlockCache& c = cache();
  if (bytes < kLargeBlockBytes) {
    std::lock_guard<std::mutex> lock(c.mutex);
    const int k = midClass(bytes);
    try {
      c.mid.free[k].push_back(p);
    } catch (...) {
      // Out of memory for the list: the block is lost until its slab goes.
    }
    PROCGEN_POISON(p, kMidBlockBytes << k);
    --c.mid.live;
    return;
  }
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
  std::vector<void*> slabs;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    unmap.swap(c.kept);
    c.kept_bytes = 0;
    if (c.mid.live == 0) {
      slabs.swap(c.mid.slabs);
      for (std::vector<void*>& list : c.mid.free) list.clear();
      c.mid.next = nullptr;
      c.mid.left = 0;
    }
  }
  for (const BlockCache::Kept& b : unmap) unmapBlock(b.p, b.bytes);
  for (void* slab : slabs) unmapBlock(slab, kHugePageBytes);
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

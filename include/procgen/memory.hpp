// Memory of the large arrays (module strings, geometry, parentheses outputs).
//
// A one-shot run writes fresh arrays of tens to hundreds of MB, and a fresh
// page costs a fault and a kernel zero-fill before the first store: with
// 4 KiB pages that dominated one-shot runs (issue 15: 0.56 G elements/s for a
// bare 1-byte-in, 4-bytes-out loop into a fresh array on two threads, 1.18 with
// huge pages). So the arrays of OverwriteVector come from allocateLarge():
//  - blocks of kLargeBlockBytes or more are their own mappings, aligned to
//    2 MiB and advised to transparent huge pages before their first touch, so
//    the kernel can back every 2 MiB of them with one huge page (512× fewer
//    faults; on Linux, in THP mode "madvise" or "always");
//  - a freed block is kept (up to an eighth of the smallest memory limit: RAM,
//    RLIMIT_AS, cgroup; procgen/budget.hpp) and handed to the
//    next request of about its size, so a program that generates again and
//    again writes into pages that are already mapped;
//  - resize(n) leaves new elements unset, so the first touch of a page is the
//    store of the thread that computes it, in parallel on the cpu backend.
//  - blocks from kMidBlockBytes up to kLargeBlockBytes are carved, in
//    power-of-two size classes, from 2 MiB huge-page slabs and kept in their
//    class when freed (malloc gave them 4 KiB pages and gave freed ones back
//    to the kernel, so every call faulted them in again).
// Smaller blocks come from ::operator new. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace procgen {

/// Smallest block served by a 2 MiB-aligned huge-page mapping (rounded up to
/// whole huge pages). Low because 4 KiB faults are dear on a virtual machine:
/// faulting in 4 MB took 19-36 ms with 4 KiB pages against 0.34-0.59 ms with
/// one 2 MiB-aligned huge-page mapping (`procgen bench floor`, 2026-11-25), so
/// even a 256 KiB array (64 faults) costs more than zeroing one huge page.
inline constexpr size_t kLargeBlockBytes = size_t{256} << 10;

/// Smallest block carved from a huge-page slab (mid-size blocks: below
/// kLargeBlockBytes, rounded up to a power of two, aligned to 16 KiB; under
/// AddressSanitizer they stay malloc's, whose redzones catch overflows).
inline constexpr size_t kMidBlockBytes = size_t{16} << 10;

/// Size and alignment of the huge pages large blocks are laid out for.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// Returns `bytes` (> 0) of uninitialised memory aligned to at least
/// __STDCPP_DEFAULT_NEW_ALIGNMENT__, and to kHugePageBytes when bytes >=
/// kLargeBlockBytes. A large block may be one freed earlier (its old contents
/// are left). Throws std::bad_alloc.
void* allocateLarge(size_t bytes);

/// Frees a block of allocateLarge(bytes) (`bytes` the same value). A large
/// block is kept for reuse while the kept blocks stay within the budget.
void deallocateLarge(void* p, size_t bytes) noexcept;

/// Returns every kept block to the system (a one-shot benchmark that wants
/// fresh pages, or a program about to sleep), and the mid-size slabs when no
/// mid-size block is in use. Blocks in use are not affected.
void releaseLargeBlocks() noexcept;

/// Bytes held in kept (freed, not yet reused) large blocks (mid-size blocks
/// not counted).
size_t keptLargeBlockBytes() noexcept;

/// Allocator of the large arrays: memory from allocateLarge(), and growing a
/// vector with resize(n) leaves the new elements unset (like
/// std::make_unique_for_overwrite) instead of value-initializing them. The
/// parallel stages size an array from a count pass and then every thread
/// writes its own range; a zero-fill before that would be a single-threaded
/// pass over every byte that also faults every page in on one thread (13 of
/// 33 ms for the 2 M segments of the 2D plant, n=7, with two threads).
/// Everything that constructs from a value (push_back, emplace_back,
/// resize(n, value), insert, copies) behaves as with std::allocator.
template <typename T>
struct OverwriteAllocator {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "only plain structs may be left unset");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned types are not supported");
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = OverwriteAllocator<U>;
  };
  OverwriteAllocator() noexcept = default;
  template <typename U>
  OverwriteAllocator(const OverwriteAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { deallocateLarge(p, n * sizeof(T)); }

  /// Value-initialization: nothing is written (the caller overwrites it).
  template <typename U>
  void construct(U*) noexcept {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const OverwriteAllocator<U>&) const noexcept {
    return true;
  }
};

/// A std::vector whose resize(n) leaves new elements unset and whose large
/// arrays are huge-page mappings reused across calls (see OverwriteAllocator).
template <typename T>
using OverwriteVector = std::vector<T, OverwriteAllocator<T>>;

}  // namespace procgen

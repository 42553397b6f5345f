// Large working arrays (module strings, bracket partners, geometry, scratch)
// backed by transparent huge pages where the kernel allows it.
//
// Why: derivation and interpretation write fresh arrays of tens to hundreds of
// MB once each, so their cost in a fresh process is dominated by first-touch
// page faults, not by the work. With 4 KiB pages that is one fault per 4 KiB,
// and on a virtual machine each fault costs microseconds (plant-2d, n=7: 2 M
// segments, 230 ms of interpretation of which ~80 % in the kernel). Debian's
// default THP mode is "madvise": huge pages only where asked for — 512× fewer
// faults, and they scale across threads instead of queueing.
//
// The arrays themselves are OverwriteVectors (procgen/memory.hpp), whose
// allocator maps 2 MiB-aligned, advised blocks and keeps freed ones for reuse;
// the helpers here size them without writing a byte, so the first touch of
// every page is the store of the thread that computes it.
#pragma once

#include <cstddef>
#include <type_traits>

#include "procgen/memory.hpp"

namespace procgen::detail {

/// Smallest array worth advising: the size from which allocateLarge() maps
/// huge pages (see kLargeBlockBytes).
inline constexpr size_t kLargeBufferBytes = kLargeBlockBytes;

/// Asks the kernel to back the whole 4 KiB pages inside [p, p + bytes) with
/// huge pages from their first touch. No effect on arrays below
/// kLargeBufferBytes; never fails.
void adviseHugePages(const void* p, size_t bytes) noexcept;

/// Advises a vector's new allocation, unless its allocator is the
/// OverwriteAllocator: allocateLarge() maps its blocks advised already, and a
/// second madvise per call is a system call on every reuse of a kept block.
template <typename Vector>
void adviseNewAllocation(const Vector& v) noexcept {
  using T = typename Vector::value_type;
  if constexpr (!std::is_same_v<typename Vector::allocator_type, OverwriteAllocator<T>>)
    adviseHugePages(v.data(), v.capacity() * sizeof(T));
}

/// Makes `v` hold `n` elements whose values the caller is about to overwrite:
/// growing does not copy the old elements to the new allocation, and with an
/// OverwriteVector nothing is written (with a std::vector the new elements
/// are value-initialized, so large scratch arrays should be OverwriteVectors).
template <typename Vector>
void resizeForOverwrite(Vector& v, size_t n) {
  if (n > v.capacity()) {
    Vector fresh;
    fresh.reserve(n);
    adviseNewAllocation(fresh);
    v.swap(fresh);
  }
  v.resize(n);
}

/// reserve() for an array that will grow to `n` elements by appending, with
/// the new allocation advised to huge pages.
template <typename Vector>
void reserveLarge(Vector& v, size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  adviseNewAllocation(v);
}

}  // namespace procgen::detail

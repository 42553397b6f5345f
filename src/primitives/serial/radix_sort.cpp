// Primitive radix_sort, serial backend: radix_sort_impl.hpp with one chunk
// (MSD splits down to cache-sized ranges, LSD passes within them).
#include "primitives/primitives.hpp"
#include "primitives/radix_sort_impl.hpp"

namespace procgen::primitives::serial {
namespace {

struct OneChunk {
  uint64_t n;
  uint64_t count = 1;
  uint64_t begin(uint64_t) const { return 0; }
  uint64_t end(uint64_t) const { return n; }
};

template <typename K>
void sortOne(K* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  const OneChunk plan{n};
  impl::radixSortAny(
      plan, [](const OneChunk&, auto&& body) { body(0); },
      [](uint64_t count, auto&& body) {
        for (uint64_t i = 0; i < count; ++i) body(i);
      },
      keys, values, n, scratch);
}

}  // namespace

void radixSort(uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortOne(keys, values, n, scratch);
}
void radixSort(uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortOne(keys, values, n, scratch);
}

}  // namespace procgen::primitives::serial

// Primitive radix_sort, cpu backend (oneTBB): radix_sort_impl.hpp over the
// executor's chunks — the first split on the highest varying digit as a
// parallel pass (per-chunk histograms, a digit-major scan of them, a stable
// scatter per chunk), then the 256 buckets sorted in parallel.
#include "cpu/executor.hpp"
#include "primitives/primitives.hpp"
#include "primitives/radix_sort_impl.hpp"

namespace procgen::primitives::cpu {
namespace {

/// Few large chunks: the chunk count times the bucket count is the first
/// pass's write streams.
constexpr uint64_t kSortChunk = uint64_t{1} << 20;

template <typename K>
void sortChunks(detail::CpuExecutor& exec, K* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  if (exec.threads() == 1) {
    // Nothing to share out: the serial twin, without the chunk bookkeeping.
    serial::radixSort(keys, values, n, scratch);
    return;
  }
  const detail::ChunkPlan plan = exec.plan(n, kSortChunk);
  impl::radixSortAny(
      plan, [&](const detail::ChunkPlan& p, auto&& body) { exec.forEachChunk(p, body); },
      [&](uint64_t count, auto&& body) {
        detail::ChunkPlan each;
        each.n = count;
        each.size = 1;
        each.count = count;
        exec.forEachChunk(each, body);
      },
      keys, values, n, scratch);
}

}  // namespace

void radixSort(detail::CpuExecutor& exec, uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortChunks(exec, keys, values, n, scratch);
}
void radixSort(detail::CpuExecutor& exec, uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortChunks(exec, keys, values, n, scratch);
}

}  // namespace procgen::primitives::cpu

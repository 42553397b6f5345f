// Primitive radix_sort, cpu backend (oneTBB): the chunked LSD sort of
// radix_sort_impl.hpp over the executor's chunks — per-chunk histograms, a
// digit-major scan of them, and a parallel stable scatter per pass.
#include "lsystem/cpu/executor.hpp"
#include "primitives/primitives.hpp"
#include "primitives/radix_sort_impl.hpp"

namespace procgen::primitives::cpu {
namespace {

/// Few large chunks: every chunk costs a 256-entry histogram per pass, and
/// the chunk count times the bucket count is the scatter's write streams.
constexpr uint64_t kSortChunk = uint64_t{1} << 20;

template <typename K>
void sortChunks(detail::CpuExecutor& exec, K* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  if (exec.threads() == 1) {
    // One chunk: the single counting pass serves every digit (as serial).
    serial::radixSort(keys, values, n, scratch);
    return;
  }
  const detail::ChunkPlan plan = exec.plan(n, kSortChunk);
  impl::radixSortAny(
      plan, [&](const detail::ChunkPlan& p, auto&& body) { exec.forEachChunk(p, body); }, keys, values, n, scratch);
}

}  // namespace

void radixSort(detail::CpuExecutor& exec, uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortChunks(exec, keys, values, n, scratch);
}
void radixSort(detail::CpuExecutor& exec, uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortChunks(exec, keys, values, n, scratch);
}

}  // namespace procgen::primitives::cpu

// Primitives scan, reduce and compact, cpu backend (oneTBB): the two-pass
// chunked forms. Scan: reduce every chunk (ranges.hpp reduceRange, lifted for
// segments), scan the chunk totals serially in chunk order, rescan every
// chunk from its carry. Compaction: count flags per chunk, scan, copy.
// Chunk totals are combined in index order, so non-commutative monoids work.
#include <vector>

#include "cpu/executor.hpp"
#include "primitives/primitives.hpp"
#include "primitives/ranges.hpp"

namespace procgen::primitives::cpu {
namespace {
/// Elements per chunk: enough work to hide the task overhead, few enough
/// chunks for the serial scan of their totals to be negligible.
constexpr uint64_t kChunk = uint64_t{1} << 16;
}  // namespace

template <typename M>
void scan(detail::CpuExecutor& exec, ScanKind kind, const typename M::Value* in, const uint8_t* heads,
          typename M::Value* out, uint64_t n) {
  const detail::ChunkPlan plan = exec.plan(n, kChunk);
  if (plan.count <= 1 || exec.threads() == 1) {
    impl::scanRange<M>(kind, in, heads, out, 0, n, M::identity());
    return;
  }
  using L = impl::Lifted<M>;
  std::vector<L> carry(plan.count);
  exec.forEachChunk(plan, [&](uint64_t c) { carry[c] = impl::reduceRange<M>(in, heads, plan.begin(c), plan.end(c)); });
  L acc = L::identity();
  for (uint64_t c = 0; c < plan.count; ++c) {
    const L here = carry[c];
    carry[c] = acc;
    acc = L::combine(acc, here);
  }
  exec.forEachChunk(plan, [&](uint64_t c) {
    impl::scanRange<M>(kind, in, heads, out, plan.begin(c), plan.end(c), carry[c].value);
  });
}

template <typename M>
typename M::Value reduce(detail::CpuExecutor& exec, const typename M::Value* in, uint64_t n) {
  const detail::ChunkPlan plan = exec.plan(n, kChunk);
  std::vector<typename M::Value> totals(plan.count);
  exec.forEachChunk(plan, [&](uint64_t c) {
    totals[c] = impl::reduceRange<M>(in, nullptr, plan.begin(c), plan.end(c)).value;
  });
  return impl::reduceRange<M>(totals.data(), nullptr, 0, plan.count).value;
}

template <typename T>
uint64_t compact(detail::CpuExecutor& exec, const T* in, const uint8_t* flags, uint64_t n, T* out) {
  const detail::ChunkPlan plan = exec.plan(n, kChunk);
  if (plan.count <= 1 || exec.threads() == 1) return impl::compactRange(in, flags, 0, n, out, 0);
  std::vector<uint64_t> at(plan.count + 1);
  exec.forEachChunk(plan, [&](uint64_t c) { at[c] = impl::countFlags(flags, plan.begin(c), plan.end(c)); });
  impl::scanRange<SumU64>(ScanKind::kExclusive, at.data(), nullptr, at.data(), 0, plan.count + 1, 0);
  exec.forEachChunk(plan, [&](uint64_t c) { impl::compactRange(in, flags, plan.begin(c), plan.end(c), out, at[c]); });
  return at[plan.count];
}

#define PROCGEN_INSTANTIATE_MONOID(M)                                                                       \
  template void scan<M>(detail::CpuExecutor&, ScanKind, const M::Value*, const uint8_t*, M::Value*, uint64_t); \
  template M::Value reduce<M>(detail::CpuExecutor&, const M::Value*, uint64_t);
PROCGEN_PRIMITIVES_MONOIDS(PROCGEN_INSTANTIATE_MONOID)
#undef PROCGEN_INSTANTIATE_MONOID
#define PROCGEN_INSTANTIATE_COMPACT(T) \
  template uint64_t compact<T>(detail::CpuExecutor&, const T*, const uint8_t*, uint64_t, T*);
PROCGEN_PRIMITIVES_COMPACT_TYPES(PROCGEN_INSTANTIATE_COMPACT)
#undef PROCGEN_INSTANTIATE_COMPACT

}  // namespace procgen::primitives::cpu

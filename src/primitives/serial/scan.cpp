// Primitives scan, reduce and compact, serial backend: the reference loops
// (ranges.hpp) over the whole array. See primitives.hpp for the contracts.
#include "primitives/primitives.hpp"
#include "primitives/ranges.hpp"

namespace procgen::primitives::serial {

template <typename M>
void scan(ScanKind kind, const typename M::Value* in, const uint8_t* heads, typename M::Value* out, uint64_t n) {
  impl::scanRange<M>(kind, in, heads, out, 0, n, M::identity());
}

template <typename M>
typename M::Value reduce(const typename M::Value* in, uint64_t n) {
  return impl::reduceRange<M>(in, nullptr, 0, n).value;
}

template <typename T>
uint64_t compact(const T* in, const uint8_t* flags, uint64_t n, T* out) {
  return impl::compactRange(in, flags, 0, n, out, 0);
}

#define PROCGEN_INSTANTIATE_MONOID(M)                                                                 \
  template void scan<M>(ScanKind, const M::Value*, const uint8_t*, M::Value*, uint64_t); \
  template M::Value reduce<M>(const M::Value*, uint64_t);
PROCGEN_PRIMITIVES_MONOIDS(PROCGEN_INSTANTIATE_MONOID)
#undef PROCGEN_INSTANTIATE_MONOID
#define PROCGEN_INSTANTIATE_COMPACT(T) template uint64_t compact<T>(const T*, const uint8_t*, uint64_t, T*);
PROCGEN_PRIMITIVES_COMPACT_TYPES(PROCGEN_INSTANTIATE_COMPACT)
#undef PROCGEN_INSTANTIATE_COMPACT

}  // namespace procgen::primitives::serial

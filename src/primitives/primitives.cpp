// The dispatching entry points of the primitives (primitives.hpp): the
// backend is a value; a backend that is not compiled in throws.
#include "primitives/primitives.hpp"

#include <utility>

#include "common/dispatch.hpp"
#if PROCGEN_HAVE_TBB
#include "cpu/executor.hpp"
#endif

namespace procgen::primitives {
namespace {

/// detail::dispatch (common/dispatch.hpp) with the cpu branch handed an
/// executor of exec.threads and the opencl branch the device index. The
/// branches are variadic generic lambdas so that the one of a backend that is
/// not compiled in is never instantiated (no CpuExecutor without oneTBB).
template <typename S, typename C, typename O>
decltype(auto) dispatch(const Execution& exec, const char* what, S&& s, C&& c, O&& o) {
  return procgen::detail::dispatch(
      exec, what, std::forward<S>(s),
      [&](auto...) {
#if PROCGEN_HAVE_TBB
        procgen::detail::CpuExecutor executor(exec.threads);
        return c(executor);
#endif
      },
      [&](auto...) { return o(exec.device); });
}

}  // namespace

template <typename M>
void scan(const Execution& exec, ScanKind kind, const typename M::Value* in, const uint8_t* heads,
          typename M::Value* out, uint64_t n) {
  dispatch(
      exec, "primitives::scan", [&] { serial::scan<M>(kind, in, heads, out, n); },
      [&](auto& cpu_exec) { cpu::scan<M>(cpu_exec, kind, in, heads, out, n); },
      [&](auto device) { opencl::scan<M>(device, kind, in, heads, out, n); });
}

template <typename M>
typename M::Value reduce(const Execution& exec, const typename M::Value* in, uint64_t n) {
  return dispatch(
      exec, "primitives::reduce", [&] { return serial::reduce<M>(in, n); },
      [&](auto& cpu_exec) { return cpu::reduce<M>(cpu_exec, in, n); },
      [&](auto device) { return opencl::reduce<M>(device, in, n); });
}

template <typename T>
uint64_t compact(const Execution& exec, const T* in, const uint8_t* flags, uint64_t n, T* out) {
  return dispatch(
      exec, "primitives::compact", [&] { return serial::compact(in, flags, n, out); },
      [&](auto& cpu_exec) { return cpu::compact(cpu_exec, in, flags, n, out); },
      [&](auto device) { return opencl::compact(device, in, flags, n, out); });
}

namespace {
template <typename K>
void sortAny(const Execution& exec, K* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  dispatch(
      exec, "primitives::radixSort", [&] { serial::radixSort(keys, values, n, scratch); },
      [&](auto& cpu_exec) { cpu::radixSort(cpu_exec, keys, values, n, scratch); },
      [&](auto device) { opencl::radixSort(device, keys, values, n); });
}
}  // namespace

void radixSort(const Execution& exec, uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortAny(exec, keys, values, n, scratch);
}
void radixSort(const Execution& exec, uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch) {
  sortAny(exec, keys, values, n, scratch);
}

#define PROCGEN_INSTANTIATE_MONOID(M)                                                                      \
  template void scan<M>(const Execution&, ScanKind, const M::Value*, const uint8_t*, M::Value*, uint64_t); \
  template M::Value reduce<M>(const Execution&, const M::Value*, uint64_t);
PROCGEN_PRIMITIVES_MONOIDS(PROCGEN_INSTANTIATE_MONOID)
#undef PROCGEN_INSTANTIATE_MONOID
#define PROCGEN_INSTANTIATE_COMPACT(T) \
  template uint64_t compact<T>(const Execution&, const T*, const uint8_t*, uint64_t, T*);
PROCGEN_PRIMITIVES_COMPACT_TYPES(PROCGEN_INSTANTIATE_COMPACT)
#undef PROCGEN_INSTANTIATE_COMPACT

}  // namespace procgen::primitives

// One way to pick and check a backend, for every system's public entry points
// (STYLE.md practice 4: the backend is a value, not a fork in the API).
//
//   return detail::dispatch(execution, "treeBoundingBoxes",
//       [&] { return serialStage(...); },
//       [&] { return cpuStage(...); },
//       [&] { return openclStage(...); });
//
// Each branch is a callable; the branch of a backend that is not compiled in
// is never instantiated, so its stage may be declared unconditionally and
// defined only in that backend's sources (src/**/cpu/, src/**/opencl/, which
// CMake leaves out when the backend is off). A backend that is not built
// throws BackendUnavailableError with the one wording below; a backend that is
// built but has no device (opencl) throws from the stage itself.
#pragma once

#include <string_view>
#include <utility>

#include "procgen/backend.hpp"

namespace procgen::detail {

inline constexpr bool kHaveCpuBackend = PROCGEN_HAVE_TBB != 0;
inline constexpr bool kHaveOpenCLBackend = PROCGEN_HAVE_OPENCL != 0;

/// Throws BackendUnavailableError: "<what>: backend '<name>' is not available
/// in this build".
[[noreturn]] void throwBackendUnavailable(Backend backend, std::string_view what);

/// Throws as above unless `backend` is compiled in.
inline void requireBackend(Backend backend, std::string_view what) {
  if (!backendAvailable(backend)) throwBackendUnavailable(backend, what);
}

/// Calls the branch of execution.backend and returns its result. All three
/// branches must return the same type.
template <typename SerialFn, typename CpuFn, typename OpenCLFn>
decltype(auto) dispatch(const Execution& execution, std::string_view what, SerialFn&& serial, CpuFn&& cpu,
                        OpenCLFn&& opencl) {
  if (execution.backend == Backend::kCpu) {
    if constexpr (kHaveCpuBackend) return std::forward<CpuFn>(cpu)();
    else throwBackendUnavailable(execution.backend, what);
  } else if (execution.backend == Backend::kOpenCL) {
    if constexpr (kHaveOpenCLBackend) return std::forward<OpenCLFn>(opencl)();
    else throwBackendUnavailable(execution.backend, what);
  }
  return std::forward<SerialFn>(serial)();
}

}  // namespace procgen::detail

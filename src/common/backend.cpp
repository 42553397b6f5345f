#include "procgen/backend.hpp"

#include <string>
#include <thread>

#include "common/dispatch.hpp"
#include "procgen/error.hpp"

namespace procgen {

std::string_view backendName(Backend backend) {
  switch (backend) {
    case Backend::kSerial: return "serial";
    case Backend::kCpu: return "cpu";
    case Backend::kOpenCL: return "opencl";
  }
  return "unknown";
}

std::optional<Backend> parseBackend(std::string_view name) {
  if (name == "serial") return Backend::kSerial;
  if (name == "cpu") return Backend::kCpu;
  if (name == "opencl") return Backend::kOpenCL;
  return std::nullopt;
}

bool backendAvailable(Backend backend) {
  switch (backend) {
    case Backend::kSerial: return true;
    case Backend::kCpu: return PROCGEN_HAVE_TBB != 0;
    case Backend::kOpenCL: return PROCGEN_HAVE_OPENCL != 0;
  }
  return false;
}

int effectiveThreads(const Execution& execution) {
  if (execution.backend == Backend::kSerial) return 1;
  if (execution.threads > 0) return execution.threads;
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

namespace detail {

void throwBackendUnavailable(Backend backend, std::string_view what) {
  throw BackendUnavailableError(std::string(what) + ": backend '" + std::string(backendName(backend)) +
                                "' is not available in this build");
}

}  // namespace detail
}  // namespace procgen

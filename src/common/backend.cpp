#include "procgen/backend.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

namespace detail {
int defaultCpuThreads();  // src/cpu/executor.cpp
}  // namespace detail

namespace {
/// The cores this process may run on: its affinity mask (taskset, mpirun's
/// default binding of one core per rank, a cpuset), not every core of the machine.
int usableCores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}
}  // namespace

int effectiveThreads(const Execution& execution) {
  if (execution.backend == Backend::kSerial) return 1;
  if (execution.threads > 0) return execution.threads;
#if PROCGEN_HAVE_TBB
  // The count the cpu executor's default arena takes (oneTBB's, which
  // follows the affinity mask too), so that what a command reports, plans
  // and prepares is what runs.
  if (execution.backend == Backend::kCpu) return detail::defaultCpuThreads();
#endif
  return usableCores();
}

namespace detail {
// Each returns the background half of the preparation after doing the part
// that must happen first on the calling thread: constructing the registries
// (function-local statics) that the background half uses, so that they are
// destroyed only after the atexit handler below has joined it.
std::function<void()> prepareCpuBackend(int threads);    // src/cpu/executor.cpp
std::function<void()> prepareOpenCLBackend(int device);  // src/opencl/runtime.cpp
}  // namespace detail

namespace {
/// The preparation threads. Never destroyed: joined by an atexit handler
/// registered after the statics they use were constructed, so exit() (a
/// command's early error included) waits for them before tearing those down.
struct Preparations {
  std::mutex mutex;
  std::vector<std::thread> threads;
};

Preparations& preparations() {
  static Preparations* p = new Preparations;
  return *p;
}

void joinPreparations() {
  Preparations& p = preparations();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (std::thread& t : p.threads)
    if (t.joinable()) t.join();
}

void startPreparation(std::function<void()> job) {
  Preparations& p = preparations();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.threads.size() >= 8) return;  // preparation is an optimization: a few are plenty
  if (std::atexit(joinPreparations) != 0) return;
  p.threads.emplace_back(std::move(job));
}
}  // namespace

void prepareBackend(const Execution& execution) {
  if (!backendAvailable(execution.backend)) return;
  switch (execution.backend) {
    case Backend::kSerial: return;
    case Backend::kCpu: {
      const int threads = effectiveThreads(execution);
      if (threads > 1) startPreparation(detail::prepareCpuBackend(threads));
      return;
    }
    case Backend::kOpenCL: startPreparation(detail::prepareOpenCLBackend(execution.device)); return;
  }
}

namespace detail {

void throwBackendUnavailable(Backend backend, std::string_view what) {
  throw BackendUnavailableError(std::string(what) + ": backend '" + std::string(backendName(backend)) +
                                "' is not available in this build");
}

}  // namespace detail
}  // namespace procgen

// The execution backend is a value passed to every entry point, never a fork in
// the API (STYLE.md practice 4). Public headers expose no TBB or OpenCL types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace procgen {

enum class Backend {
  kSerial,  ///< optimized single-core reference; every other backend must agree with it
  kCpu,     ///< all cores via oneTBB
  kOpenCL,  ///< OpenCL kernels (GPU, or PoCL on the CPU)
};

struct Execution {
  Backend backend = Backend::kSerial;
  int threads = 0;  ///< 0 = all hardware threads; ignored by the serial backend
  int device = -1;  ///< opencl: device index (procgen/opencl.hpp); -1 = PROCGEN_OPENCL_DEVICE, else a GPU first
};

std::string_view backendName(Backend backend);
/// Parses "serial", "cpu" or "opencl"; nullopt otherwise.
std::optional<Backend> parseBackend(std::string_view name);
/// True when the backend was compiled in (its devices may still be missing).
bool backendAvailable(Backend backend);
/// Threads the backend will actually use for `execution` (1 for serial).
int effectiveThreads(const Execution& execution);

/// Starts the one-time setup of `execution`'s backend on a background thread
/// and returns at once: for cpu the worker threads of its arena (and the
/// oneTBB runtime's own loading), for opencl the device's context and queue.
/// A stage that needs them meanwhile waits for them; errors are not reported
/// here but by the stage. Optional: it only moves fixed one-time costs off the
/// first stage of a fresh process, so a command can overlap them with reading
/// its input (the CLI calls it as soon as the options are known).
void prepareBackend(const Execution& execution);

}  // namespace procgen

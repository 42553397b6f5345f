// The opencl backend's PassRunner (pass_runner.cpp): derivation stages as
// OpenCL kernels (paper §4.2).
#pragma once

#include <cstdint>
#include <memory>

#include "lsystem/pass_runner.hpp"

namespace procgen::detail {

/// Runs on the device chosen by `device` (see procgen/opencl.hpp). Throws
/// BackendUnavailableError when there is no device, OpenCLError when a kernel
/// fails to build.
std::unique_ptr<PassRunner> makeOpenCLPassRunner(int device);

/// Forces `chunk` modules per work item in count/rewrite (0 = default); tests only.
void setOpenCLChunkOverrideForTesting(uint64_t chunk);
/// Modules per work item in count/rewrite: the override, else the default.
uint64_t openclChunkModules();

}  // namespace procgen::detail

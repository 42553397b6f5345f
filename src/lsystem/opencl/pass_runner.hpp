// The opencl backend's PassRunner (pass_runner.cpp): the derivation stages as
// OpenCL kernels over a string resident on the device (paper §4.2).
#pragma once

#include <cstdint>
#include <memory>

#include "lsystem/pass_runner.hpp"

namespace procgen::detail {

/// Runs on the device chosen by `device` (see procgen/opencl.hpp), holding its
/// lock until destroyed. Throws BackendUnavailableError when there is no
/// device, OpenCLError when a kernel fails to build.
std::unique_ptr<PassRunner> makeOpenCLPassRunner(int device);

/// The device stages on host strings, for the stage tests: bracket partners
/// (bracketPartnersSerial's result) and the cut pass (cutBranches' result).
void bracketPartnersOpenCL(const uint8_t* symbols, uint64_t n, int64_t* partner, int device = -1);
bool cutBranchesOpenCL(ModuleString& s, int device = -1);

/// Forces `chunk` modules per work item in count/rewrite (0 = default); tests only.
void setOpenCLChunkOverrideForTesting(uint64_t chunk);
/// Modules per work item in count/rewrite: the override, else the default.
uint64_t openclChunkModules();

}  // namespace procgen::detail

// Derivation on the opencl backend with the string resident on the device
// (paper §4.2; issue 5 point 2): see derive.cpp.
#pragma once

#include <cstdint>

#include "lsystem/lsystem_data.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::detail {

/// derive() for Backend::kOpenCL: the same steps, passes, random phases,
/// memory checks, statistics and progress calls as the host driver
/// (derive.cpp), with every pass on the device. Only sizes are read back
/// between passes; the final string at the end. Throws as derive() does, plus
/// BackendUnavailableError without a device.
ModuleString deriveOpenCL(const LSystemData& data, const DeriveOptions& options, int iterations,
                          DeriveStats* stats);

/// The device cut pass on a host string (tests): cutBranches' result.
bool cutBranchesOpenCL(ModuleString& s, int device = -1);

}  // namespace procgen::detail

// Turtle interpretation on the opencl backend (paper §5): see interpret.cl.
#pragma once

#include <cstdint>

#include "lsystem/lsystem_data.hpp"
#include "procgen/geometry.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::detail {

/// Appends the geometry of `string` to `out`, as interpretSerial does: same
/// counts and order; coordinates within the opencl tolerance (device sin/cos).
/// Runs on options.execution.device. Throws BackendUnavailableError without a
/// device, ResourceError when the buffers do not fit the device.
void interpretOpenCL(const LSystemData& data, const ModuleString& string, const InterpretOptions& options,
                     uint64_t seed, Geometry& out);

}  // namespace procgen::detail

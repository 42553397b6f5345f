// Turtle interpretation on the opencl backend (paper §5): see interpret.cl.
#pragma once

#include <cstdint>
#include <vector>

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

/// Paper §6: the instances of a scene drawn in one batched pass over their
/// combined string — one root work item per instance, with its own view,
/// initial state and instance id; polygon depth and bracket matching restart
/// at every instance. Instance k is modules [begin[k], begin[k+1]) of
/// `combined`; it is drawn only when draw[k] (no homomorphism: the caller
/// draws those with interpretOpenCL). Returns one unplaced Geometry per
/// instance (empty where !draw[k]), equal to interpretOpenCL of the instance
/// alone.
std::vector<Geometry> interpretBatchOpenCL(const ModuleString& combined, const std::vector<uint64_t>& begin,
                                           const std::vector<InterpretOptions>& options,
                                           const std::vector<bool>& draw, int device);

}  // namespace procgen::detail

// The validation every volume writer shares (raw, sidecars, OpenVDB).
#pragma once

#include <cstdint>

#include "procgen/volume.hpp"

namespace procgen::detail {

/// The number of values of a valid view. Throws Error (kUsage) for null
/// values, a zero dimension, a size overflowing 64 bits (as bytes), spacing
/// not finite and positive, or an origin that is not finite.
uint64_t checkedVolumeCount(const VolumeView& volume);

}  // namespace procgen::detail

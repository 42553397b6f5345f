#pragma once

#include "lsystem/lsystem_data.hpp"
#include "procgen/geometry.hpp"

namespace procgen::detail {

/// Appends the geometry of `string` to `out` (string order). `seed` keys the
/// ran() draws of homomorphism successors.
void interpretSerial(const LSystemData& data, const ModuleString& string,
                     const InterpretOptions& options, uint64_t seed, Geometry& out);

}  // namespace procgen::detail

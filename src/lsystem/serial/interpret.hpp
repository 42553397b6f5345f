#pragma once

#include "lsystem/lsystem_data.hpp"
#include "procgen/geometry.hpp"

namespace procgen::detail {

/// Appends the geometry of `string` to `out` (string order). `seed` keys the
/// ran() draws of homomorphism successors. Returns whether every segment it
/// appended is finite (coordinates and width, tested as they are drawn, so
/// interpret() need not read the whole output again); polygons not checked.
bool interpretSerial(const LSystemData& data, const ModuleString& string,
                     const InterpretOptions& options, uint64_t seed, Geometry& out);

}  // namespace procgen::detail

// The cpu backend's interpreter (cpu/interpret.cpp), twin of serial/interpret.hpp.
#pragma once

#include "lsystem/lsystem_data.hpp"
#include "procgen/geometry.hpp"

namespace procgen::detail {

/// Appends the geometry of `string` to `out`, in the serial interpreter's
/// order, using options.execution.threads threads (0: all cores). Returns
/// whether every segment it appended is finite (tested as the walks write
/// them, on those threads); polygons not checked.
bool interpretCpu(const LSystemData& data, const ModuleString& string, const InterpretOptions& options,
                  uint64_t seed, Geometry& out);

}  // namespace procgen::detail

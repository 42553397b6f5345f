// Many L-systems derived together on the opencl backend (paper §6): see scene.cpp.
#pragma once

#include "procgen/scene.hpp"

namespace procgen::detail {

/// deriveScene() for Backend::kOpenCL: the batched passes of scene.cpp with the
/// combined string resident on the device; instance k gets exactly the string
/// derive() gives it alone. Only per-instance sizes are read back between passes.
LSystemSceneDerivation deriveSceneOpenCL(const LSystemScene& scene, const DeriveOptions& options);

}  // namespace procgen::detail

// interpret(): backend dispatch for turtle interpretation (paper §5).
#include <string>

#include "lsystem/serial/interpret.hpp"
#if PROCGEN_HAVE_TBB
#include "lsystem/cpu/interpret.hpp"
#endif
#if PROCGEN_HAVE_OPENCL
#include "lsystem/opencl/interpret.hpp"
#endif
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {

Geometry interpret(const LSystem& lsystem, const ModuleString& string, const InterpretOptions& options) {
  Geometry geometry;
  switch (options.execution.backend) {
    case Backend::kSerial:
      detail::interpretSerial(lsystem.data(), string, options, options.seed, geometry);
      return geometry;
#if PROCGEN_HAVE_TBB
    case Backend::kCpu:
      detail::interpretCpu(lsystem.data(), string, options, options.seed, geometry);
      return geometry;
#else
    case Backend::kCpu:
#endif
#if PROCGEN_HAVE_OPENCL
    case Backend::kOpenCL:
      detail::interpretOpenCL(lsystem.data(), string, options, options.seed, geometry);
      return geometry;
#else
    case Backend::kOpenCL:
#endif
      break;
  }
  throw BackendUnavailableError("L-system interpretation has no '" +
                                std::string(backendName(options.execution.backend)) +
                                "' backend in this build");
}

}  // namespace procgen

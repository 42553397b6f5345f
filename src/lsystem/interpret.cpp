// interpret(): backend dispatch for turtle interpretation (paper §5).
#include <string>

#include "lsystem/serial/interpret.hpp"
#if PROCGEN_HAVE_TBB
#include "lsystem/cpu/interpret.hpp"
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
    case Backend::kOpenCL:
      // Honest until the §5 kernels land (issue 5): derivation runs on opencl, drawing does not.
      if (backendAvailable(Backend::kOpenCL))
        throw BackendUnavailableError(
            "L-system interpretation on the 'opencl' backend is not implemented yet (derivation "
            "is); draw with --backend serial or cpu");
      break;
  }
  throw BackendUnavailableError("L-system interpretation has no '" +
                                std::string(backendName(options.execution.backend)) +
                                "' backend in this build");
}

}  // namespace procgen

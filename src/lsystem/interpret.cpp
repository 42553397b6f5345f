// interpret(): backend dispatch for turtle interpretation (paper §5).
#include "common/dispatch.hpp"
#include "lsystem/cpu/interpret.hpp"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/interpret.hpp"
#include "lsystem/serial/interpret.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {

Geometry interpret(const LSystem& lsystem, const ModuleString& string, const InterpretOptions& options) {
  Geometry geometry;
  const detail::LSystemData& data = lsystem.data();
  detail::checkInterpretation(data, string, 0, string.size(), options.seed, options.max_modules,
                              options.memory_budget_bytes, detail::MemoryBudget::bytesOf(string), "interpretation");
  if (options.keep_going && !options.keep_going()) throw InterpretCancelled();
  detail::dispatch(
      options.execution, "L-system interpretation",
      [&] { detail::interpretSerial(data, string, options, options.seed, geometry); },
      [&] { detail::interpretCpu(data, string, options, options.seed, geometry); },
      [&] { detail::interpretOpenCL(data, string, options, options.seed, geometry); });
  if (!detail::finiteGeometry(geometry)) detail::throwNonFiniteGeometry(data, string, options);
  return geometry;
}

}  // namespace procgen

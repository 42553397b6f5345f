// interpret(): backend dispatch for turtle interpretation (paper §5).
#include "common/dispatch.hpp"
#include "lsystem/cpu/interpret.hpp"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/interpret_cancel.hpp"
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
  detail::InterpretCancel(options).check();  // before the first stage, as every backend asks between its own
  // The serial and cpu interpreters test their segments for finiteness as
  // they draw (or on their threads): a second serial pass over the whole
  // output here cost 15-25 % of a steady-state interpretation.
  bool segments_finite = false;
  detail::dispatch(
      options.execution, "L-system interpretation",
      [&] { segments_finite = detail::interpretSerial(data, string, options, options.seed, geometry); },
      [&] { segments_finite = detail::interpretCpu(data, string, options, options.seed, geometry); },
      [&] {
        detail::interpretOpenCL(data, string, options, options.seed, geometry);
        segments_finite = detail::finiteSegments(geometry.segments.data(), geometry.segments.size());
      });
  if (!segments_finite || !detail::finitePolygonVertices(geometry))
    detail::throwNonFiniteGeometry(data, string, options);
  return geometry;
}

}  // namespace procgen

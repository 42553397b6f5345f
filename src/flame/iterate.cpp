// iterateFlame (procgen/flame_render.hpp): checks the genome and the options,
// compiles the chaos program (flame/chaos_program.hpp) and runs the backend's
// iteration stage (flame/flame_stages.hpp). The chaos game itself is
// flame/chaos_game.hpp (serial and cpu) and flame/opencl/ (opencl).
// Paper: shared/seeds/003_*.txt; flam3: flam3.c flam3_iterate, rect.c.
#include <cstdint>
#include <string>

#include "common/dispatch.hpp"
#include "flame/flame_stages.hpp"
#include "procgen/error.hpp"

namespace procgen {

FlameHistogram iterateFlame(const FlameGenome& genome, const FlameRenderOptions& options,
                            const Execution& execution) {
  if (options.method != FlameMethod::kPresorted && options.method != FlameMethod::kNaive)
    throw Error("iterateFlame: unknown method", ExitCode::kUsage);
  // Throws for bad sizes and qualities, and for a histogram over the budget,
  // before anything is allocated.
  const FlameHistogramLayout layout = flameHistogramLayout(genome, options);
  // Record cells are 32-bit (flame/chaos_game.hpp): 4 G cells are 80 GiB of buckets.
  if (static_cast<uint64_t>(layout.width) * static_cast<uint64_t>(layout.height) > UINT32_MAX)
    throw ResourceError("flame histogram: " + std::to_string(layout.width) + "x" +
                        std::to_string(layout.height) +
                        " cells is more than the 2^32 the iteration addresses");
  const flame::ChaosProgram program = flame::compileChaosProgram(genome);
  return detail::dispatch(
      execution, "iterateFlame", [&] { return flame::iterateSerial(program, layout, options); },
      [&] { return flame::iterateCpu(program, layout, options, execution); },
      [&] { return flame::iterateOpenCL(program, layout, options, execution); });
}

}  // namespace procgen

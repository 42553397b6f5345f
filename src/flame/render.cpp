// renderFlame (procgen/flame_render.hpp): the camera layout, the chaos game
// (iterateFlame) and the tone mapping (toneMapFlame), timed for
// FlameRenderStats — flam3's render_rectangle (rect.c) in three stages.
#include <chrono>

#include "procgen/flame_render.hpp"

namespace procgen {

FlameImage renderFlame(const FlameGenome& genome, const FlameRenderOptions& options,
                       const Execution& execution, FlameRenderStats* stats) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const Clock::time_point start = Clock::now();
  // iterateFlame resolves the layout (and refuses an over-budget histogram) first.
  const FlameHistogram histogram = iterateFlame(genome, options, execution);
  const Clock::time_point iterated = Clock::now();
  FlameImage image = toneMapFlame(genome, histogram, options, execution);
  const Clock::time_point done = Clock::now();
  if (stats) {
    stats->samples = histogram.samples;
    stats->bad_values = histogram.bad_values;
    stats->iter_ms = ms(iterated - start);
    stats->filter_ms = ms(done - iterated);
    stats->total_ms = ms(done - start);
  }
  return image;
}

}  // namespace procgen

// renderFlame and renderFlameAcrossRanks (procgen/flame_render.hpp): the camera layout, the chaos game
// (iterateFlame) and the tone mapping (toneMapFlame), timed for
// FlameRenderStats — flam3's render_rectangle (rect.c) in three stages.
#include <chrono>

#include "procgen/distributed.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {

namespace {

/// iterate() then, when `tone_map`, the tone mapping, timed into `stats`.
template <typename Iterate>
FlameImage timedRender(const FlameGenome& genome, const FlameRenderOptions& options, const Execution& execution,
                       FlameRenderStats* stats, Iterate&& iterate, bool tone_map) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const Clock::time_point start = Clock::now();
  // The iteration resolves the layout (and refuses an over-budget histogram) first.
  const FlameHistogram histogram = iterate();
  const Clock::time_point iterated = Clock::now();
  FlameImage image;
  if (tone_map) image = toneMapFlame(genome, histogram, options, execution);
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

}  // namespace

FlameImage renderFlame(const FlameGenome& genome, const FlameRenderOptions& options,
                       const Execution& execution, FlameRenderStats* stats) {
  return timedRender(genome, options, execution, stats, [&] { return iterateFlame(genome, options, execution); },
                     /*tone_map=*/true);
}

FlameImage renderFlameAcrossRanks(const FlameGenome& genome, const FlameRenderOptions& options,
                                  const Execution& execution, FlameRenderStats* stats) {
  if (distributed::size() == 1) return renderFlame(genome, options, execution, stats);
  // Every rank iterates its share; rank 0 alone tone-maps the summed histogram.
  return timedRender(genome, options, execution, stats,
                     [&] { return iterateFlameAcrossRanks(genome, options, execution); }, distributed::isRoot());
}

}  // namespace procgen

// The chaos game on one core: the work units of flame/chaos_game.hpp in
// order, each unit's plotted points added to the histogram as they come —
// the generation order the cpu stage reproduces band by band, so the two
// give bit-identical histograms. flam3: rect.c iter_thread (one thread).
#include <algorithm>

#include "common/large_buffer.hpp"
#include "flame/chaos_game.hpp"
#include "flame/flame_stages.hpp"
#include "procgen/budget.hpp"

namespace procgen::flame {

FlameHistogram iterateSerial(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options) {
  const ChaosGame game(program, layout, options);
  const uint64_t cells = static_cast<uint64_t>(layout.width) * static_cast<uint64_t>(layout.height);
  requireMemory("flame iteration", game.workspaceBytes() + game.tableBytes(), options.memory_budget,
                cells * sizeof(FlameBucket));
  FlameHistogram histogram;
  histogram.layout = layout;
  detail::reserveLarge(histogram.buckets, cells);  // huge pages: fewer first-touch faults
  histogram.buckets.resize(cells);
  UnitWorkspace workspace;
  game.prepareWorkspace(workspace);
  // Each slice of records straight into the histogram, in generation order.
  struct Accumulate final : RecordSink {
    const ChaosGame& game;
    FlameBucket* buckets;
    Accumulate(const ChaosGame& g, FlameBucket* b) : game(g), buckets(b) {}
    void take(const PlotRecord* records, uint64_t n) override { game.accumulate(records, n, buckets); }
  } sink(game, histogram.buckets.data());

  const uint64_t units = game.unitCount();
  // Progress about every 2^20 samples (a presorted unit): the studio's
  // cancellation waits for the next call, and a newer edit waits up to 1 s
  // for the slot (src/studio/server.cpp). At 2^22, StudioFlameRender.
  // BusySlotsGive429 (trig.flam3) got 429 twice in the clang ASan + coverage
  // build; at 2^20 it passed.
  const uint64_t progress_every = std::max<uint64_t>(1, (uint64_t{1} << 20) / game.maxUnitSamples());
  for (uint64_t u = 0; u < units; ++u) {
    const UnitStats stats = game.runUnit(u, workspace, sink);
    histogram.samples += stats.samples;
    histogram.bad_values += stats.bad_values;
    histogram.iterations += stats.iterations;
    if (options.progress && (u + 1) % progress_every == 0)
      options.progress(static_cast<double>(u + 1) / units);
  }
  if (options.progress) options.progress(1.0);
  return histogram;
}

}  // namespace procgen::flame

// The backend stages of the flame renderer, dispatched by src/flame/iterate.cpp
// (detail::dispatch) and src/flame/tonemap.cpp. Each iterate stage returns a
// histogram with `layout` set and every bucket filled.
#pragma once

#include "flame/chaos_program.hpp"
#include "procgen/flame_render.hpp"

namespace procgen::flame {

FlameHistogram iterateSerial(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options);
FlameHistogram iterateCpu(const ChaosProgram& program, const FlameHistogramLayout& layout,
                          const FlameRenderOptions& options, const Execution& execution);
/// Units [first, first + count) of `game` (flame/chaos_game.hpp), their
/// records appended to `records` in unit order; for the iteration over MPI
/// ranks (src/flame/distributed_iterate.cpp). Sums of the units' stats.
struct UnitStats;
struct UnitWorkspace;
class ChaosGame;
struct PlotRecord;
UnitStats runUnitsSerial(const ChaosGame& game, uint64_t first, uint64_t count, UnitWorkspace& workspace,
                         std::vector<PlotRecord>& records);
UnitStats runUnitsCpu(const ChaosGame& game, uint64_t first, uint64_t count, std::vector<PlotRecord>& records,
                      const Execution& execution);

FlameHistogram iterateOpenCL(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options, const Execution& execution);

}  // namespace procgen::flame

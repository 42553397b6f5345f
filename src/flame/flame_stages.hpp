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
FlameHistogram iterateOpenCL(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options, const Execution& execution);

}  // namespace procgen::flame

// The backend stages of the flame renderer, dispatched by src/flame/iterate.cpp
// (detail::dispatch) and src/flame/tonemap.cpp. Each iterate stage returns a
// histogram with `layout` set and every bucket filled.
#pragma once

#include <functional>

#include "flame/chaos_program.hpp"
#include "procgen/flame_render.hpp"

namespace procgen::flame {

FlameHistogram iterateSerial(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options);
FlameHistogram iterateCpu(const ChaosProgram& program, const FlameHistogramLayout& layout,
                          const FlameRenderOptions& options, const Execution& execution);
/// For the iteration over MPI ranks (src/flame/distributed_iterate.cpp):
/// runs task(worker, t) for every t < tasks on the cpu backend's threads
/// (src/flame/cpu/iterate.cpp), each worker w < threads taking tasks in
/// increasing order from a shared counter; returns when all are done.
int cpuWorkerThreads(const Execution& execution);
void runTasksCpu(const Execution& execution, uint64_t tasks, const std::function<void(int, uint64_t)>& task);

FlameHistogram iterateOpenCL(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options, const Execution& execution);

}  // namespace procgen::flame

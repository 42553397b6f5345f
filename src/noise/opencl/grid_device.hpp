// What both opencl noise grids (naive_grid.cpp, optimized_grid.cpp) keep per
// device: one kernel, its work-group size, and the buffers of one batch —
// config, per-axis lattice tables, output, per-group min/max.
#pragma once

#include <cstdint>

#include "opencl/runtime.hpp"

namespace procgen::detail {

/// Points of output the device holds at once; larger grids run in batches.
inline constexpr uint64_t kNoiseBatchPoints = uint64_t{1} << 24;

struct NoiseGridDevice {
  NoiseGridDevice(opencl::Context& c, const char* program, const char* kernel_name, size_t preferred_wg)
      : ctx(c), cfg(c, "noise config"), cells(c, "noise lattice cells"), fracs(c, "noise lattice fractions"),
        out(c, "noise grid"), ranges(c, "noise group ranges") {
    kernel = opencl::Kernel(c.program(program), kernel_name);
    wg = c.workGroupSize(kernel.get(), preferred_wg);
  }
  opencl::Context& ctx;
  opencl::Kernel kernel;
  size_t wg;
  opencl::Buffer cfg, cells, fracs, out, ranges;
};

}  // namespace procgen::detail

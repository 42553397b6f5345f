// The Barnes–Hut stages per backend (STYLE.md practice 1): serial/barnes_hut.cpp
// and cpu/barnes_hut.cpp instantiate the loops of barnes_hut_impl.hpp with the
// serial and the cpu policy, opencl/barnes_hut.{cpp,cl} run the same walk
// (gravity.h) one work-item per target on monopoles made by the serial twin;
// nbody.cpp checks arguments and dispatches. The cpu twins take the thread
// count (0 = all hardware threads), the opencl twins the device index.
#pragma once

#include <cstdint>

#include "octree/barnes_hut_impl.hpp"

namespace procgen::nbody_impl {

#define PROCGEN_NBODY_STAGES(...)                                                                                  \
  uint64_t barnesHut(__VA_ARGS__ const Octree& tree, const OctreePoints& points, MassOf mass_of,                  \
                     const NbodyOptions& options, double* acceleration, double* potential);                       \
  uint64_t directSum(__VA_ARGS__ const OctreePoints& points, MassOf mass_of, const uint32_t* targets,             \
                     uint64_t count, const NbodyOptions& options, double* acceleration, double* potential);

namespace serial {
PROCGEN_NBODY_STAGES()
}
namespace cpu {
PROCGEN_NBODY_STAGES(int threads, )
}
namespace opencl {
PROCGEN_NBODY_STAGES(int device, )
}
namespace serial {
/// Stage 1 alone (the opencl twin's host part).
Monopoles monopoles(const Octree& tree, const OctreePoints& points, MassOf mass_of);
}

#undef PROCGEN_NBODY_STAGES

}  // namespace procgen::nbody_impl

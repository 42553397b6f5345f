// Stage naive_grid, opencl backend: host driver of naive_grid.cl. The host
// builds the per-axis lattice tables (makeLatticeTables, the serial stage's
// double arithmetic), uploads them with the config, and runs the grid in
// batches of at most kNoiseBatchPoints points, so the device holds one batch of
// output at a time; each batch's per-group min/max are combined on the host.
#include <algorithm>
#include <vector>

#include "noise/noise_stages.hpp"
#include "noise/opencl/grid_device.hpp"
#include "opencl/runtime.hpp"

namespace procgen::detail {

using opencl::Context;

namespace {

/// The stage's per-device state (opencl::withState): its kernel and batch buffers.
struct NaiveGridDevice : NoiseGridDevice {
  explicit NaiveGridDevice(Context& c) : NoiseGridDevice(c, "noise/opencl/naive_grid.cl", "naiveGrid", 256) {}
};

}  // namespace

NoiseRange openclNaiveGrid(const NoiseSetup& setup, std::span<float> out, int device) {
  const LatticeTables tables = makeLatticeTables(setup);
  return opencl::withState<NaiveGridDevice>(device, [&](NaiveGridDevice& d) {
    d.cfg.upload(&setup.cfg, sizeof(PgNoiseConfig));
    d.cells.upload(tables.cells.data(), tables.cells.size() * sizeof(uint32_t));
    d.fracs.upload(tables.fracs.data(), tables.fracs.size() * sizeof(float));
    const uint64_t points = setup.points();
    const uint64_t batch = std::min(points, kNoiseBatchPoints);
    const uint64_t groups = (batch + d.wg - 1) / d.wg;
    d.out.reserve(batch * sizeof(float));
    d.ranges.reserve(groups * 2 * sizeof(float));
    std::vector<float> group_range(groups * 2);
    NoiseRange range = emptyRange();
    d.kernel.arg(0, d.cfg).arg(1, d.cells).arg(2, d.fracs);
    d.kernel.arg(3, cl_ulong{setup.size[0]}).arg(4, cl_ulong{setup.size[1]}).arg(5, cl_ulong{setup.size[2]});
    for (int a = 0; a < 4; ++a) d.kernel.arg(6 + a, cl_uint{tables.base[a]});
    d.kernel.arg(10, cl_uint{tables.total}).arg(11, cl_int{setup.table_octaves});
    d.kernel.arg(14, d.out).arg(15, d.ranges).localArg(16, d.wg * sizeof(float)).localArg(17, d.wg * sizeof(float));
    for (uint64_t first = 0; first < points; first += batch) {
      const uint64_t count = std::min(batch, points - first);
      d.kernel.arg(12, cl_ulong{first}).arg(13, cl_ulong{count});
      d.kernel.run(d.ctx, count, d.wg);
      d.out.read(out.data() + first, count * sizeof(float));
      const uint64_t used = (count + d.wg - 1) / d.wg;
      d.ranges.read(group_range.data(), used * 2 * sizeof(float));
      for (uint64_t g = 0; g < used; ++g) range = combineRanges(range, {group_range[2 * g], group_range[2 * g + 1]});
    }
    return range;
  });
}

}  // namespace procgen::detail

// Stage optimized_grid, opencl backend: host driver of optimized_grid.cl (the
// paper's cooperative gradient caching in local memory, §4.2). Perlin noise
// without a warp on a 2D or 3D lattice runs the cached kernel with one NDRange
// dimension per lattice axis (16×16 or 8×8×8 work-groups, smaller when the
// device allows less); other types, warps and 4D lattices run the naive
// kernel (their footprint per group is not a small box of shared nodes: the
// warp moves every point on its own; 4D would need 9⁴ nodes). Large grids
// run in batches of at most kNoiseBatchPoints along their outermost axis.
#include <algorithm>
#include <array>
#include <vector>

#include "noise/noise_stages.hpp"
#include "noise/opencl/grid_device.hpp"
#include "opencl/runtime.hpp"

namespace procgen::detail {

using opencl::Context;
using opencl::Kernel;

namespace {

constexpr size_t kMaxNodes = 729;  // PG_OPT_MAX_NODES in optimized_grid.cl

/// The stage's per-device state (opencl::withState): its kernel and batch buffers.
struct OptimizedGridDevice : NoiseGridDevice {
  explicit OptimizedGridDevice(Context& c) : NoiseGridDevice(c, "noise/opencl/optimized_grid.cl", "optimizedGrid", 512) {}
};

/// The work-group shape for `wg` work-items (a power of two): 16×16 for a
/// single z slice, 8×8×8 otherwise, halved while the device allows less.
std::array<size_t, 3> groupShape(size_t wg, bool flat) {
  std::array<size_t, 3> shape = flat ? std::array<size_t, 3>{16, 16, 1} : std::array<size_t, 3>{8, 8, 8};
  for (int d = 2; shape[0] * shape[1] * shape[2] > wg; d = (d + 2) % 3)
    if (shape[d] > 1) shape[d] /= 2;
  return shape;
}

}  // namespace

NoiseRange openclOptimizedGrid(const NoiseSetup& setup, std::span<float> out, int device) {
  const bool cacheable = setup.cfg.type == PG_NOISE_PERLIN && setup.cfg.warp == PG_WARP_NONE &&
                         setup.lattice_dims <= 3 && setup.size[3] == 1;
  if (!cacheable) return openclNaiveGrid(setup, out, device);
  const LatticeTables tables = makeLatticeTables(setup);
  return opencl::withState<OptimizedGridDevice>(device, [&](OptimizedGridDevice& d) {
    const std::array<size_t, 3> local = groupShape(d.wg, setup.size[2] == 1);
    const size_t lsize = local[0] * local[1] * local[2];
    d.cfg.upload(&setup.cfg, sizeof(PgNoiseConfig));
    d.cells.upload(tables.cells.data(), tables.cells.size() * sizeof(uint32_t));
    d.fracs.upload(tables.fracs.data(), tables.fracs.size() * sizeof(float));
    // batches along the outermost axis with more than one sample
    const int axis = setup.size[2] > 1 ? 2 : 1;
    const uint64_t slab = axis == 2 ? setup.size[0] * setup.size[1] : setup.size[0];
    uint64_t per_batch = std::max<uint64_t>(1, kNoiseBatchPoints / slab);
    per_batch = std::max<uint64_t>(local[axis], per_batch / local[axis] * local[axis]);
    per_batch = std::min<uint64_t>(per_batch, setup.size[axis]);
    std::array<size_t, 3> global{};
    for (int a = 0; a < 3; ++a) {
      const uint64_t n = a == axis ? per_batch : setup.size[a];
      global[a] = static_cast<size_t>((n + local[a] - 1) / local[a] * local[a]);
    }
    const size_t groups = global[0] / local[0] * (global[1] / local[1]) * (global[2] / local[2]);
    d.out.reserve(per_batch * slab * sizeof(float));
    d.ranges.reserve(groups * 2 * sizeof(float));
    std::vector<float> group_range(groups * 2);
    NoiseRange range = emptyRange();
    Kernel& k = d.kernel;
    k.arg(0, d.cfg).arg(1, d.cells).arg(2, d.fracs);
    for (int a = 0; a < 3; ++a) k.arg(3 + a, static_cast<cl_uint>(setup.size[a]));
    for (int a = 0; a < 3; ++a) k.arg(6 + a, cl_uint{tables.base[a]});
    k.arg(9, cl_uint{tables.total}).arg(10, static_cast<cl_uint>(axis));
    k.arg(13, d.out).arg(14, d.ranges).localArg(15, kMaxNodes * 3 * sizeof(float));
    k.localArg(16, lsize * sizeof(float)).localArg(17, lsize * sizeof(float));
    for (uint64_t first = 0; first < setup.size[axis]; first += per_batch) {
      const uint64_t end = std::min<uint64_t>(setup.size[axis], first + per_batch);
      k.arg(11, static_cast<cl_uint>(first)).arg(12, static_cast<cl_uint>(end));
      std::array<size_t, 3> g = global;
      g[axis] = static_cast<size_t>((end - first + local[axis] - 1) / local[axis] * local[axis]);
      opencl::check(clEnqueueNDRangeKernel(d.ctx.queue(), k.get(), 3, nullptr, g.data(), local.data(), 0, nullptr,
                                           nullptr),
                    "clEnqueueNDRangeKernel(optimizedGrid)");
      d.out.read(out.data() + first * slab, (end - first) * slab * sizeof(float));
      const size_t used = g[0] / local[0] * (g[1] / local[1]) * (g[2] / local[2]);
      d.ranges.read(group_range.data(), used * 2 * sizeof(float));
      for (size_t gi = 0; gi < used; ++gi)
        range = combineRanges(range, {group_range[2 * gi], group_range[2 * gi + 1]});
    }
    return range;
  });
}

}  // namespace procgen::detail

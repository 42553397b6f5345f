// The cpu twin of the serial iso-surface stage (src/mesh/isosurface.cpp):
// the same per-plane code over slabs of z-planes on the cpu executor. Every
// plane writes at offsets fixed by the counting pass, so the mesh is
// identical to the serial one at every thread count.
#include "cpu/executor.hpp"
#include "mesh/isosurface_impl.hpp"

namespace procgen::mesh_detail {

TriangleMesh extractIsosurfaceCpu(const VolumeView& volume, const IsosurfaceOptions& options, int threads) {
  detail::CpuExecutor exec(threads);
  return extractWith(volume, options, [&](int64_t n, auto&& body) {
    // A few slabs per thread: a slab re-numbers one extra plane at its end.
    // (Not exec.plan: its minimum chunk is meant for elements, not planes.)
    // The test override of chunk sizes applies, in planes.
    detail::ChunkPlan plan;
    plan.n = static_cast<uint64_t>(n);
    const uint64_t slabs = 4 * static_cast<uint64_t>(exec.threads());
    plan.size = detail::cpuChunkOverride() != 0 ? detail::cpuChunkOverride() : std::max<uint64_t>(1, (plan.n + slabs - 1) / slabs);
    plan.count = (plan.n + plan.size - 1) / plan.size;
    exec.forEachChunk(plan, [&](uint64_t c) { body(int64_t(plan.begin(c)), int64_t(plan.end(c))); });
  });
}

}  // namespace procgen::mesh_detail

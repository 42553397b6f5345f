// extractIsosurfaceAcrossRanks (procgen/mesh.hpp): the marching tetrahedra
// of isosurface_impl.hpp over z-slabs on MPI ranks (docs/scaling.md,
// "Noise"). The extraction is already plane by plane with output offsets
// from per-plane counts; here each rank counts its point planes, an
// exclusive sum over the ranks gives its first vertex and triangle, and it
// numbers and emits its planes exactly as one process would — the ids of the
// plane above its slab (the next rank's first plane) are recomputed from the
// window's ghost planes. Concatenated in rank order on rank 0, the parts are
// the single-process mesh: no cracks, no duplicated border vertices.
#include <limits>
#include <string>

#include "mesh/isosurface_impl.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"
#include "procgen/error.hpp"

namespace procgen {
namespace {

template <typename T>
std::vector<T> gatherOnRoot(const std::vector<T>& mine) {
  const std::vector<uint8_t> bytes =
      distributed::gather({reinterpret_cast<const uint8_t*>(mine.data()), mine.size() * sizeof(T)}, 0);
  std::vector<T> all(bytes.size() / sizeof(T));
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<uint8_t*>(all.data()));
  return all;
}

}  // namespace

TriangleMesh extractIsosurfaceAcrossRanks(const VolumeView& window, uint64_t window_first, uint64_t depth,
                                          uint64_t own_begin, uint64_t own_end, const IsosurfaceOptions& options,
                                          const Execution& execution) {
  const int ranks = distributed::size(), me = distributed::rank();
  const auto [need_first, need_last] = isosurfaceWindow(own_begin, own_end, depth);
  if (own_begin > own_end || own_end > depth || window_first > need_first ||
      window_first + window.dims[2] < need_last)
    throw Error("iso-surface: the window does not hold the slab's planes and their neighbours", ExitCode::kUsage);
  if (ranks == 1) {
    if (own_begin != 0 || own_end != depth || window_first != 0 || window.dims[2] != depth)
      throw Error("iso-surface: one rank owns the whole volume", ExitCode::kUsage);
    return extractIsosurface(window, options, execution);
  }
  VolumeView whole = window;
  whole.dims[2] = depth;
  mesh_detail::checkIsosurfaceInput(whole, options);
  const mesh_detail::IsoVolume iso(window, options, window_first, depth);
  const int64_t shift = options.close_boundary ? 1 : 0, nz = iso.nz();
  // Extended point planes owned: the caps' virtual planes go to the first and last rank.
  // An empty slab (more ranks than planes) owns nothing.
  const bool owns = own_begin < own_end;
  const int64_t begin = own_begin == 0 && owns ? 0 : int64_t(own_begin) + shift;
  const int64_t end = own_end == depth && owns ? nz : int64_t(own_end) + shift;

  std::vector<uint64_t> plane_vertices(size_t(std::max<int64_t>(end - begin, 0)) + 1, 0),
      plane_triangles(plane_vertices.size(), 0);
  for (int64_t z = begin; z < end; ++z)
    iso.countPlane(z, plane_vertices[size_t(z - begin) + 1], plane_triangles[size_t(z - begin) + 1]);
  for (size_t i = 1; i < plane_vertices.size(); ++i) {
    plane_vertices[i] += plane_vertices[i - 1];
    plane_triangles[i] += plane_triangles[i - 1];
  }
  // Every rank's totals, summed: this rank's offsets and the whole mesh's size.
  std::vector<uint64_t> counts(2 * size_t(ranks), 0);
  counts[2 * size_t(me)] = plane_vertices.back();
  counts[2 * size_t(me) + 1] = plane_triangles.back();
  distributed::allReduce(std::span<uint64_t>(counts), distributed::ReduceOp::kSum);
  uint64_t vertex_base = 0, triangle_base = 0, vertices = 0, triangles = 0;
  for (int r = 0; r < ranks; ++r) {
    if (r < me) {
      vertex_base += counts[2 * size_t(r)];
      triangle_base += counts[2 * size_t(r) + 1];
    }
    vertices += counts[2 * size_t(r)];
    triangles += counts[2 * size_t(r) + 1];
  }
  if (vertices > std::numeric_limits<uint32_t>::max())
    throw Error("iso-surface: " + std::to_string(vertices) + " vertices exceed 2^32 - 1; use a smaller volume",
                ExitCode::kBadInput);
  requireMemory("iso-surface mesh",
                (me == 0 ? vertices * 2 * sizeof(Vec3) + triangles * 3 * sizeof(uint32_t) : 0) +
                    plane_vertices.back() * 2 * sizeof(Vec3) + plane_triangles.back() * 3 * sizeof(uint32_t),
                options.memory_budget);

  TriangleMesh part;
  part.positions.resize(plane_vertices.back());
  part.normals.resize(plane_vertices.back());
  part.indices.resize(plane_triangles.back() * 3);
  if (end > begin) {
    const uint32_t stored_from = static_cast<uint32_t>(vertex_base);
    std::vector<uint32_t> lo(iso.planeIds()), hi(iso.planeIds());
    iso.numberPlane(begin, stored_from, lo.data(), &part, stored_from);
    for (int64_t z = begin; z < end && z + 1 < nz; ++z) {
      // Plane z + 1: this rank's (ids and vertices) or the next rank's first (ids only).
      const uint32_t first = static_cast<uint32_t>(vertex_base + plane_vertices[size_t(z + 1 - begin)]);
      iso.numberPlane(z + 1, first, hi.data(), z + 1 < end ? &part : nullptr, stored_from);
      iso.emitCells(z, lo.data(), hi.data(), plane_triangles[size_t(z - begin)], part);
      lo.swap(hi);
    }
  }
  (void)triangle_base;
  (void)execution;  // the slab is meshed on one thread (the field's generation dominates)
  TriangleMesh mesh;
  mesh.positions = gatherOnRoot(part.positions);
  mesh.normals = gatherOnRoot(part.normals);
  mesh.indices = gatherOnRoot(part.indices);
  return mesh;
}

}  // namespace procgen

// extractIsosurfaceAcrossRanks (procgen/mesh.hpp): the marching tetrahedra
// of isosurface_impl.hpp over z-slabs on MPI ranks (docs/scaling.md,
// "Noise"). The extraction is already plane by plane with output offsets
// from per-plane counts; here each rank counts its point planes, an
// exclusive sum over the ranks gives its first vertex and triangle, and it
// numbers and emits its planes exactly as one process would — the ids of the
// plane above its slab (the next rank's first plane) are recomputed from the
// window's ghost planes. Concatenated in rank order on rank 0, the parts are
// the single-process mesh: no cracks, no duplicated border vertices.
#include <algorithm>
#include <limits>
#include <string>

#include "mesh/isosurface_impl.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"
#include "procgen/error.hpp"

namespace procgen {
namespace mesh_detail {

IsoSlab::IsoSlab(const VolumeView& window, uint64_t window_first, uint64_t depth, uint64_t own_begin,
                 uint64_t own_end, const IsosurfaceOptions& options)
    : iso_(window, options, window_first, depth) {
  const auto [need_first, need_last] = isosurfaceWindow(own_begin, own_end, depth);
  if (own_begin > own_end || own_end > depth || window_first > need_first ||
      window_first + window.dims[2] < need_last)
    throw Error("iso-surface: the window does not hold the slab's planes and their neighbours", ExitCode::kUsage);
  const int64_t shift = options.close_boundary ? 1 : 0;
  // The caps' virtual planes go to the first and last slab; an empty slab
  // (more ranks than planes) owns nothing.
  const bool owns = own_begin < own_end;
  begin_ = own_begin == 0 && owns ? 0 : int64_t(own_begin) + shift;
  end_ = own_end == depth && owns ? iso_.nz() : int64_t(own_end) + shift;
  plane_vertices_.assign(size_t(std::max<int64_t>(end_ - begin_, 0)) + 1, 0);
  plane_triangles_.assign(plane_vertices_.size(), 0);
  for (int64_t z = begin_; z < end_; ++z)
    iso_.countPlane(z, plane_vertices_[size_t(z - begin_) + 1], plane_triangles_[size_t(z - begin_) + 1]);
  for (size_t i = 1; i < plane_vertices_.size(); ++i) {
    plane_vertices_[i] += plane_vertices_[i - 1];
    plane_triangles_[i] += plane_triangles_[i - 1];
  }
}

TriangleMesh IsoSlab::mesh(uint64_t vertex_base) const {
  TriangleMesh part;
  part.positions.resize(vertices());
  part.normals.resize(vertices());
  part.indices.resize(triangles() * 3);
  if (end_ <= begin_) return part;
  const uint32_t stored_from = static_cast<uint32_t>(vertex_base);
  std::vector<uint32_t> lo(iso_.planeIds()), hi(iso_.planeIds());
  iso_.numberPlane(begin_, stored_from, lo.data(), &part, stored_from);
  for (int64_t z = begin_; z < end_ && z + 1 < iso_.nz(); ++z) {
    // Plane z + 1: this slab's (ids and vertices) or the next slab's first
    // (ids only, numbered from where this slab's vertices end).
    const uint32_t first = static_cast<uint32_t>(vertex_base + plane_vertices_[size_t(z + 1 - begin_)]);
    iso_.numberPlane(z + 1, first, hi.data(), z + 1 < end_ ? &part : nullptr, stored_from);
    iso_.emitCells(z, lo.data(), hi.data(), plane_triangles_[size_t(z - begin_)], part);
    lo.swap(hi);
  }
  return part;
}

}  // namespace mesh_detail

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
  if (ranks == 1) {
    if (own_begin != 0 || own_end != depth || window_first != 0 || window.dims[2] != depth)
      throw Error("iso-surface: one rank owns the whole volume", ExitCode::kUsage);
    return extractIsosurface(window, options, execution);
  }
  VolumeView whole = window;
  whole.dims[2] = depth;
  mesh_detail::checkIsosurfaceInput(whole, options);
  const mesh_detail::IsoSlab slab(window, window_first, depth, own_begin, own_end, options);
  // Every rank's counts, summed: this rank's first vertex and the whole mesh's size.
  std::vector<uint64_t> counts(2 * size_t(ranks), 0);
  counts[2 * size_t(me)] = slab.vertices();
  counts[2 * size_t(me) + 1] = slab.triangles();
  distributed::allReduce(std::span<uint64_t>(counts), distributed::ReduceOp::kSum);
  uint64_t vertex_base = 0, vertices = 0, triangles = 0;
  for (int r = 0; r < ranks; ++r) {
    if (r < me) vertex_base += counts[2 * size_t(r)];
    vertices += counts[2 * size_t(r)];
    triangles += counts[2 * size_t(r) + 1];
  }
  if (vertices > std::numeric_limits<uint32_t>::max())
    throw Error("iso-surface: " + std::to_string(vertices) + " vertices exceed 2^32 - 1; use a smaller volume",
                ExitCode::kBadInput);
  requireMemory("iso-surface mesh",
                (me == 0 ? vertices * 2 * sizeof(Vec3) + triangles * 3 * sizeof(uint32_t) : 0) +
                    slab.vertices() * 2 * sizeof(Vec3) + slab.triangles() * 3 * sizeof(uint32_t),
                options.memory_budget);
  (void)execution;  // a slab is meshed on one thread (generating the field dominates)
  const TriangleMesh part = slab.mesh(vertex_base);
  TriangleMesh mesh;
  mesh.positions = gatherOnRoot(part.positions);
  mesh.normals = gatherOnRoot(part.normals);
  mesh.indices = gatherOnRoot(part.indices);
  return mesh;
}

}  // namespace procgen

// Marching tetrahedra over a volume, cut into z-planes so that the serial and
// the cpu stage run the same per-plane code (STYLE practice 1): a counting
// pass gives every point plane its vertex count and every cell plane its
// triangle count; prefix sums turn them into output offsets; the emitting
// pass then writes each plane's vertices and triangles at fixed offsets, so
// the mesh is the same whatever the slabs and threads (determinism by
// construction, not by ordering after the fact).
//
// Why tetrahedra (the Freudenthal/Kuhn decomposition: six tetrahedra per
// cube, each a path 000 → e_a → e_a+e_b → 111): neighbouring cubes cut every
// shared face along the same diagonal, so every face is triangulated the same
// way from both sides and the surface has no ambiguous cases and no cracks —
// marching cubes needs a 256-case table with consistent face decisions for
// that, and a wrong entry is a hole. The price is about twice the triangles.
// The seed (shared/seeds/001_191daa7b81372e37.txt §5) shows the field as voxels
// above a threshold; this is the smooth surface of the same solid.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "procgen/mesh.hpp"

namespace procgen::mesh_detail {

/// One tetrahedron edge: from cube corner `from` (bits x=1, y=2, z=4) in
/// direction `dir` (a non-empty corner mask disjoint from `from`).
struct TetEdge {
  uint8_t from, dir;
};

/// Triangles of one tetrahedron for one inside/outside case, oriented so that
/// their normal points from the inside corners to the outside ones.
struct TetCase {
  uint8_t triangles = 0;
  std::array<std::array<TetEdge, 3>, 2> tri{};
};

struct TetTable {
  std::array<std::array<TetCase, 16>, 6> cases;  ///< [tetrahedron][inside mask of its 4 corners]
  std::array<std::array<uint8_t, 4>, 6> corners;  ///< cube corners of each tetrahedron
};

const TetTable& tetTable();

/// The volume as the extractor sees it: when the boundary is closed, one
/// virtual layer of outside samples around the real ones. `v` may hold only
/// the z-planes [window_first, window_first + v.dims[2]) of a volume `depth`
/// planes deep (a slab of an MPI rank); planes and borders are the whole
/// volume's, and only samples inside the window are read.
class IsoVolume {
 public:
  IsoVolume(const VolumeView& v, const IsosurfaceOptions& o, uint64_t window_first = 0, uint64_t depth = 0);

  int64_t nx() const { return n_[0]; }
  int64_t ny() const { return n_[1]; }
  int64_t nz() const { return n_[2]; }  ///< point planes (extended when closed)

  /// Vertices owned by point plane z, and triangles of cell plane z (0 when z is the last plane).
  void countPlane(int64_t z, uint64_t& vertices, uint64_t& triangles) const;

  /// Ids of the crossed edges owned by point plane z, numbered from `first`
  /// in output order, into ids (7 per point). With `mesh`, also writes the
  /// vertices' positions and normals at those ids (minus `stored_from`: a
  /// mesh holding the vertices from that id on).
  void numberPlane(int64_t z, uint32_t first, uint32_t* ids, TriangleMesh* mesh, uint32_t stored_from = 0) const;

  /// Writes the triangles of cell plane z at triangle index `first`, given
  /// the ids of point planes z and z + 1.
  void emitCells(int64_t z, const uint32_t* ids_lo, const uint32_t* ids_hi, uint64_t first, TriangleMesh& mesh) const;

  size_t planeIds() const { return static_cast<size_t>(n_[0] * n_[1] * 7); }

 private:
  // Sample at extended index; `real` false for the virtual outside layer.
  float sample(int64_t x, int64_t y, int64_t z, bool& real) const;
  bool inside(int64_t x, int64_t y, int64_t z) const {
    bool real;
    const float v = sample(x, y, z, real);
    return real && v > threshold_;
  }
  uint8_t cellMask(int64_t x, int64_t y, int64_t z) const;
  Vec3 gradient(int64_t gx, int64_t gy, int64_t gz) const;  // at a real sample, grid index
  void vertex(int64_t x, int64_t y, int64_t z, int dir, Vec3& position, Vec3& normal) const;

  VolumeView v_;
  std::array<uint64_t, 3> dims_;  // the whole volume's
  int64_t window_first_;          // grid z of v_'s first plane
  float threshold_;
  int64_t shift_;  // 1 when closed: extended index = grid index + 1
  std::array<int64_t, 3> n_;
};

/// The whole extraction over planes [0, nz): `forPlanes(count, body)` runs
/// body(begin, end) over a partition of [0, count) (serially or in parallel).
template <typename ForPlanes>
TriangleMesh extractWith(const VolumeView& volume, const IsosurfaceOptions& options, ForPlanes&& forPlanes);

void checkIsosurfaceInput(const VolumeView& volume, const IsosurfaceOptions& options);

/// Output offsets from the per-plane counts; throws when the mesh is too big.
void prepareMesh(std::vector<uint64_t>& vertex_offsets, std::vector<uint64_t>& triangle_offsets,
                 const IsosurfaceOptions& options, TriangleMesh& mesh);

template <typename ForPlanes>
TriangleMesh extractWith(const VolumeView& volume, const IsosurfaceOptions& options, ForPlanes&& forPlanes) {
  checkIsosurfaceInput(volume, options);
  const IsoVolume iso(volume, options);
  const int64_t nz = iso.nz();
  std::vector<uint64_t> vertex_offsets(static_cast<size_t>(nz) + 1, 0), triangle_offsets(static_cast<size_t>(nz) + 1, 0);
  forPlanes(nz, [&](int64_t begin, int64_t end) {
    for (int64_t z = begin; z < end; ++z)
      iso.countPlane(z, vertex_offsets[static_cast<size_t>(z) + 1], triangle_offsets[static_cast<size_t>(z) + 1]);
  });
  TriangleMesh mesh;
  prepareMesh(vertex_offsets, triangle_offsets, options, mesh);
  if (mesh.indices.empty()) return mesh;
  forPlanes(nz, [&](int64_t begin, int64_t end) {
    std::vector<uint32_t> lo(iso.planeIds()), hi(iso.planeIds());
    iso.numberPlane(begin, static_cast<uint32_t>(vertex_offsets[static_cast<size_t>(begin)]), lo.data(), &mesh);
    for (int64_t z = begin; z < end && z + 1 < nz; ++z) {
      iso.numberPlane(z + 1, static_cast<uint32_t>(vertex_offsets[static_cast<size_t>(z) + 1]), hi.data(),
                      z + 1 < end ? &mesh : nullptr);
      iso.emitCells(z, lo.data(), hi.data(), triangle_offsets[static_cast<size_t>(z)], mesh);
      lo.swap(hi);
    }
  });
  return mesh;
}

/// One rank's part of extractIsosurfaceAcrossRanks (src/mesh/
/// distributed_isosurface.cpp): the extended point planes it owns for grid
/// planes [own_begin, own_end) of a volume `depth` deep, counted on
/// construction; mesh(vertex_base) numbers its vertices from vertex_base (the
/// vertices of the slabs before it) and writes its vertices and triangles in
/// the single-process order, so the parts of all slabs, concatenated, are
/// extractIsosurface's mesh.
class IsoSlab {
 public:
  IsoSlab(const VolumeView& window, uint64_t window_first, uint64_t depth, uint64_t own_begin, uint64_t own_end,
          const IsosurfaceOptions& options);
  uint64_t vertices() const { return plane_vertices_.back(); }
  uint64_t triangles() const { return plane_triangles_.back(); }
  TriangleMesh mesh(uint64_t vertex_base) const;

 private:
  IsoVolume iso_;
  int64_t begin_ = 0, end_ = 0;  // extended point planes owned
  std::vector<uint64_t> plane_vertices_, plane_triangles_;  // prefix sums over the owned planes
};

/// The cpu stage (src/mesh/cpu/isosurface.cpp): planes in slabs over the cpu executor.
TriangleMesh extractIsosurfaceCpu(const VolumeView& volume, const IsosurfaceOptions& options, int threads);

}  // namespace procgen::mesh_detail

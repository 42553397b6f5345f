// procgen meshes from scalar fields: the iso-surface of a volume (the seed's
// voxel terrain with a threshold, shared/seeds/001_191daa7b81372e37.txt §5)
// and the terrain grid of a heightfield, as indexed triangle meshes with
// per-vertex normals. io.hpp writes them (OBJ, PLY, glTF, a shaded PNG).
#pragma once

#include <utility>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/geometry.hpp"
#include "procgen/volume.hpp"

namespace procgen {

/// An indexed triangle mesh in flat arrays. Triangle t has the vertices
/// indices[3t], indices[3t+1], indices[3t+2], counter-clockwise seen from the
/// side its normals point to (the outside of an iso-surface, the top of a
/// terrain). normals has one unit vector per position.
struct TriangleMesh {
  std::vector<Vec3> positions;
  std::vector<Vec3> normals;
  std::vector<uint32_t> indices;

  size_t vertexCount() const { return positions.size(); }
  size_t triangleCount() const { return indices.size() / 3; }
  Bounds bounds() const {
    Bounds b;
    for (const Vec3& p : positions) b.add(p);
    return b;
  }
};

struct IsosurfaceOptions {
  /// The surface is where the field equals `threshold`; samples above it are
  /// inside (solid, the seed's "voxels above the threshold are shown").
  float threshold = 0.0f;
  /// Treat everything beyond the volume as outside, so solids touching the
  /// volume's faces are closed by flat caps half a sample step beyond the
  /// outermost samples (a watertight chunk, like the seed's voxel scene).
  /// Off: the surface stops at the outermost samples and is open there.
  bool close_boundary = false;
  /// Memory budget in bytes for the mesh (budget.hpp; 0 = the default).
  uint64_t memory_budget = 0;
};

/// The iso-surface of `volume` at options.threshold, by marching tetrahedra:
/// every cell of 2×2×2 samples is cut into the six tetrahedra of the
/// Freudenthal (Kuhn) decomposition along its main diagonal, and each
/// tetrahedron gets 0, 1 or 2 triangles with vertices interpolated linearly
/// on its edges. Neighbouring cells cut their common face along the same
/// diagonal, so there are no ambiguous faces and no cracks: the mesh is
/// watertight wherever the surface is closed (every edge shared by exactly
/// two triangles), with each vertex shared by all the triangles around it
/// (one vertex per crossed lattice edge). NaN samples count as outside.
///
/// Positions are in world units (volume origin + index ⊙ spacing); normals
/// are −∇field (central differences, one-sided at the border), interpolated
/// along the edge like the position and normalized, so they point from
/// inside to outside.
///
/// Output order: vertices by their edge's lower sample (z, then y, then x,
/// then edge direction), triangles by cell (z, y, x) then tetrahedron.
/// Deterministic: serial and cpu (slabs of z-planes over the cpu executor)
/// return identical meshes at every thread count. opencl runs the serial code.
/// Throws Error (kUsage) for a bad view, ResourceError when the mesh exceeds
/// the memory budget (checked after counting, before allocating), OutputError
/// never; Error (kBadInput) beyond 2^32 − 1 vertices.
/// Complexity: two passes over the samples; memory O(mesh + threads × plane).
TriangleMesh extractIsosurface(const VolumeView& volume, const IsosurfaceOptions& options,
                               const Execution& execution = {});

/// extractIsosurface of a volume split into z-slabs over the ranks of an MPI
/// job (procgen/distributed.hpp). Collective. This rank owns grid planes
/// [own_begin, own_end) of a volume `depth` planes deep (the ranks' ranges
/// in rank order, together [0, depth)); `window` holds planes
/// [window_first, window_first + window.dims[2]) — the owned planes plus one
/// below and two above where the volume has them (isosurfaceWindow), the
/// samples the vertices and normals at the slab's borders read. Each rank
/// meshes its planes with vertex ids offset by the vertex counts of the
/// ranks before it, and rank 0 gathers the parts: the same mesh as
/// extractIsosurface of the whole volume, bit for bit and in the same order.
/// Other ranks get an empty mesh. One rank: extractIsosurface of the window.
/// Throws as extractIsosurface (the size checks count the whole mesh).
TriangleMesh extractIsosurfaceAcrossRanks(const VolumeView& window, uint64_t window_first, uint64_t depth,
                                          uint64_t own_begin, uint64_t own_end, const IsosurfaceOptions& options,
                                          const Execution& execution = {});

/// The planes [first, last) extractIsosurfaceAcrossRanks needs for owned
/// planes [own_begin, own_end) of a volume `depth` planes deep.
inline std::pair<uint64_t, uint64_t> isosurfaceWindow(uint64_t own_begin, uint64_t own_end, uint64_t depth) {
  return {own_begin == 0 ? 0 : own_begin - 1, own_end + 2 < depth ? own_end + 2 : depth};
}

struct HeightfieldOptions {
  double spacing = 1.0;       ///< world units between neighbouring samples (x and z)
  double height_scale = 1.0;  ///< world units per field unit (y)
  double origin_x = 0.0, origin_z = 0.0;
};

/// A terrain grid: sample (x, y) of the row-major `values` (width × height,
/// row y at values + y·width) becomes vertex x + width·y at
/// (origin_x + x·spacing, value·height_scale, origin_z + y·spacing): +Y is
/// up, as in glTF. Two triangles per grid square (2(w−1)(h−1) in all, split
/// along the same diagonal everywhere), normals from central differences,
/// facing +Y. Non-finite samples are written as height 0.
/// Throws Error (kUsage) when width or height is below 2, spacing or scale not
/// finite and positive, or the grid has more than 2^32 − 1 vertices.
TriangleMesh heightfieldMesh(const float* values, uint64_t width, uint64_t height,
                             const HeightfieldOptions& options = {});

}  // namespace procgen

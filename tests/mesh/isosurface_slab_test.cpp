// The iso-surface split into z-slabs (extractIsosurfaceAcrossRanks, one
// slab per MPI rank) simulated in one process: each slab meshed from only its
// window of planes (mesh_detail::IsoSlab, the code every rank runs) with
// vertex ids offset by the slabs before it; the parts concatenated must be
// extractIsosurface's mesh of the whole volume, byte for byte (positions,
// normals and indices in the same order) — so no crack, no duplicated border
// vertex and no one-sided normal at a slab border. Open and closed boundaries,
// slabs of one plane, and more slabs than planes (empty slabs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "mesh/isosurface_impl.hpp"
#include "procgen/distributed.hpp"
#include "procgen/mesh.hpp"

namespace procgen {
namespace {

// A bumpy sphere that touches the volume's faces (so the caps matter) with
// random perturbations (so cells hit every case).
std::vector<float> bumpyField(uint64_t nx, uint64_t ny, uint64_t nz, uint64_t seed) {
  std::vector<float> v(nx * ny * nz);
  uint64_t state = seed;
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < ny; ++y)
      for (uint64_t x = 0; x < nx; ++x) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double jitter = double(state >> 40) / double(1 << 24) - 0.5;
        const double dx = double(x) - 0.5 * double(nx), dy = double(y) - 0.4 * double(ny), dz = double(z) - 0.55 * double(nz);
        v[x + nx * (y + ny * z)] = float(0.45 * double(nx) - std::sqrt(dx * dx + dy * dy + dz * dz) + 0.8 * jitter);
      }
  return v;
}

TriangleMesh meshInSlabs(const std::vector<float>& values, const VolumeView& whole, int slabs,
                         const IsosurfaceOptions& options) {
  const uint64_t depth = whole.dims[2], plane = whole.dims[0] * whole.dims[1];
  TriangleMesh all;
  uint64_t vertex_base = 0;
  for (int r = 0; r < slabs; ++r) {
    const distributed::Block own = distributed::blockOf(depth, r, slabs);
    const auto [first, last] = isosurfaceWindow(own.begin, own.end, depth);
    // Only the window's planes, copied: reading outside it would be a bug the copy exposes.
    std::vector<float> window_values(values.begin() + int64_t(first * plane), values.begin() + int64_t(last * plane));
    VolumeView window = whole;
    window.values = window_values.data();
    window.dims[2] = last - first;
    const mesh_detail::IsoSlab slab(window, first, depth, own.begin, own.end, options);
    const TriangleMesh part = slab.mesh(vertex_base);
    EXPECT_EQ(part.positions.size(), slab.vertices());
    EXPECT_EQ(part.indices.size(), 3 * slab.triangles());
    all.positions.insert(all.positions.end(), part.positions.begin(), part.positions.end());
    all.normals.insert(all.normals.end(), part.normals.begin(), part.normals.end());
    all.indices.insert(all.indices.end(), part.indices.begin(), part.indices.end());
    vertex_base += slab.vertices();
  }
  return all;
}

void expectSameBytes(const TriangleMesh& got, const TriangleMesh& want) {
  ASSERT_EQ(got.positions.size(), want.positions.size());
  ASSERT_EQ(got.indices.size(), want.indices.size());
  EXPECT_EQ(std::memcmp(got.positions.data(), want.positions.data(), want.positions.size() * sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(got.normals.data(), want.normals.data(), want.normals.size() * sizeof(Vec3)), 0);
  EXPECT_EQ(got.indices, want.indices);
}

TEST(IsosurfaceSlabs, ConcatenatedSlabsAreTheWholeMesh) {
  const uint64_t nx = 14, ny = 11, nz = 9;
  const std::vector<float> values = bumpyField(nx, ny, nz, 7);
  const VolumeView whole{values.data(), {nx, ny, nz}, {0.5, 0.75, 1.25}, {-1, 2, 3}};
  for (bool closed : {true, false}) {
    IsosurfaceOptions options;
    options.close_boundary = closed;
    options.threshold = 0.1f;
    const TriangleMesh want = extractIsosurface(whole, options);
    ASSERT_GT(want.triangleCount(), 100u);
    for (int slabs : {1, 2, 3, 4, 9, 11}) {  // 9: one plane each; 11: two empty slabs
      SCOPED_TRACE(testing::Message() << (closed ? "closed" : "open") << ", " << slabs << " slabs");
      expectSameBytes(meshInSlabs(values, whole, slabs, options), want);
    }
  }
}

TEST(IsosurfaceSlabs, WindowMissingANeighbourPlaneIsRefused) {
  const std::vector<float> values = bumpyField(6, 6, 8, 3);
  VolumeView window{values.data() + 36 * 3, {6, 6, 3}};  // planes 3..5 for slab [3, 5): plane 6 is missing
  EXPECT_THROW(mesh_detail::IsoSlab(window, 3, 8, 3, 5, IsosurfaceOptions{}), Error);
}

}  // namespace
}  // namespace procgen

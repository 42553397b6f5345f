// Iso-surfaces against geometry worked out by hand: a sphere's area (4πr²),
// enclosed volume (4/3 πr³), Euler characteristic (2) and outward normals; a
// closed box's area; watertightness (every edge in exactly two triangles, each
// direction once) on random fields whose cells hit every ambiguous case; and
// serial ≡ cpu, byte for byte, at 1, 2 and 7 threads with slabs of one plane.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <utility>
#include <vector>

#include "common/backends.hpp"
#include "procgen/error.hpp"
#include "procgen/mesh.hpp"

namespace {

using procgen::Backend;
using procgen::Execution;
using procgen::IsosurfaceOptions;
using procgen::TriangleMesh;
using procgen::Vec3;
using procgen::VolumeView;

struct Field {
  std::vector<float> values;
  VolumeView view;
};

// f = r − |p − c|: positive (inside) within the sphere.
Field sphereField(uint64_t n, double r, double spacing = 1.0) {
  Field f;
  f.values.resize(n * n * n);
  const double c = 0.5 * double(n - 1) * spacing + 0.123;  // off the lattice: no sample exactly on the surface
  for (uint64_t z = 0; z < n; ++z)
    for (uint64_t y = 0; y < n; ++y)
      for (uint64_t x = 0; x < n; ++x) {
        const double dx = double(x) * spacing - c, dy = double(y) * spacing - c, dz = double(z) * spacing - c;
        f.values[x + n * (y + n * z)] = float(r - std::sqrt(dx * dx + dy * dy + dz * dz));
      }
  f.view = {f.values.data(), {n, n, n}, {spacing, spacing, spacing}, {0, 0, 0}};
  return f;
}

// splitmix64 values in [-1, 1): every inside/outside pattern of a cell occurs.
Field randomField(uint64_t nx, uint64_t ny, uint64_t nz, uint64_t seed) {
  Field f;
  f.values.resize(nx * ny * nz);
  uint64_t s = seed;
  for (float& v : f.values) {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t x = s;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    v = float(double(x >> 11) / double(uint64_t{1} << 53) * 2.0 - 1.0);
  }
  f.view = {f.values.data(), {nx, ny, nz}, {1.0, 0.75, 1.5}, {-3, 2, 5}};
  return f;
}

Vec3 sub(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
Vec3 cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
double dot(Vec3 a, Vec3 b) { return double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z; }

double area(const TriangleMesh& m) {
  double sum = 0;
  for (size_t t = 0; t < m.triangleCount(); ++t) {
    const Vec3 a = m.positions[m.indices[3 * t]], b = m.positions[m.indices[3 * t + 1]],
               c = m.positions[m.indices[3 * t + 2]];
    const Vec3 n = cross(sub(b, a), sub(c, a));
    sum += 0.5 * std::sqrt(dot(n, n));
  }
  return sum;
}

// Divergence theorem: positive for a closed surface oriented outwards.
double signedVolume(const TriangleMesh& m) {
  double sum = 0;
  for (size_t t = 0; t < m.triangleCount(); ++t) {
    const Vec3 a = m.positions[m.indices[3 * t]], b = m.positions[m.indices[3 * t + 1]],
               c = m.positions[m.indices[3 * t + 2]];
    sum += dot(a, cross(b, c)) / 6.0;
  }
  return sum;
}

// Every undirected edge in exactly two triangles, once in each direction
// (a closed, consistently oriented surface). Returns the number of edges.
size_t expectClosed(const TriangleMesh& m) {
  std::map<std::pair<uint32_t, uint32_t>, int> directed;
  for (size_t t = 0; t < m.triangleCount(); ++t)
    for (int k = 0; k < 3; ++k)
      ++directed[{m.indices[3 * t + size_t(k)], m.indices[3 * t + size_t((k + 1) % 3)]}];
  size_t bad = 0;
  for (const auto& [e, count] : directed) {
    const auto back = directed.find({e.second, e.first});
    if (count != 1 || back == directed.end() || back->second != 1) ++bad;
  }
  EXPECT_EQ(bad, 0u) << "edges not shared by exactly two opposite triangles";
  return directed.size() / 2;
}

void expectFinite(const TriangleMesh& m) {
  ASSERT_EQ(m.normals.size(), m.positions.size());
  for (size_t i = 0; i < m.positions.size(); ++i) {
    const Vec3 p = m.positions[i], n = m.normals[i];
    ASSERT_TRUE(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) << i;
    ASSERT_NEAR(std::sqrt(dot(n, n)), 1.0, 1e-5) << i;
  }
  for (uint32_t i : m.indices) ASSERT_LT(i, m.positions.size());
}

TEST(Isosurface, SphereAreaVolumeTopologyAndNormals) {
  const double r = 20.0;
  const Field f = sphereField(48, r);
  const TriangleMesh m = procgen::extractIsosurface(f.view, IsosurfaceOptions{});
  ASSERT_GT(m.triangleCount(), 1000u);
  expectFinite(m);
  const size_t edges = expectClosed(m);
  EXPECT_EQ(int64_t(m.vertexCount()) - int64_t(edges) + int64_t(m.triangleCount()), 2);  // a sphere
  const double pi = std::numbers::pi;
  EXPECT_NEAR(area(m) / (4 * pi * r * r), 1.0, 0.02);
  EXPECT_NEAR(signedVolume(m) / (4.0 / 3.0 * pi * r * r * r), 1.0, 0.02);
  const double c = 0.5 * 47 + 0.123;
  for (size_t i = 0; i < m.vertexCount(); ++i) {
    const Vec3 d = sub(m.positions[i], Vec3{float(c), float(c), float(c)});
    const double len = std::sqrt(dot(d, d));
    EXPECT_NEAR(len, r, 0.05) << i;                    // on the sphere (linear interpolation of a distance)
    EXPECT_GT(dot(m.normals[i], d) / len, 0.99) << i;  // −∇f points outwards, radially
  }
}

TEST(Isosurface, ThresholdAndSpacingScaleTheSphere) {
  // f = 20 − |p| (world units, samples 0.5 apart) at threshold 5 is the sphere of radius 15.
  const Field f = sphereField(80, 20.0, 0.5);
  IsosurfaceOptions o;
  o.threshold = 5.0f;
  const TriangleMesh m = procgen::extractIsosurface(f.view, o);
  expectClosed(m);
  EXPECT_NEAR(area(m) / (4 * std::numbers::pi * 15.0 * 15.0), 1.0, 0.02);
}

TEST(Isosurface, ClosedBoundaryCapsAFullVolumeIntoABox) {
  // Everything inside: no surface at all, unless the boundary is closed, which
  // gives the box from -0.5 to n - 0.5 samples in every axis (world units),
  // its edges and corners chamfered within the outer half step (the cells
  // there have three outside corners): between the box through the outermost
  // samples and the box half a step beyond them.
  std::vector<float> ones(5 * 4 * 3, 1.0f);
  const VolumeView v{ones.data(), {5, 4, 3}, {2.0, 1.0, 0.5}, {10, 0, 0}};
  EXPECT_EQ(procgen::extractIsosurface(v, IsosurfaceOptions{}).triangleCount(), 0u);
  IsosurfaceOptions o;
  o.close_boundary = true;
  const TriangleMesh m = procgen::extractIsosurface(v, o);
  expectFinite(m);
  expectClosed(m);
  const double a = 5 * 2.0, b = 4 * 1.0, c = 3 * 0.5;  // outer box
  const double ai = 4 * 2.0, bi = 3 * 1.0, ci = 2 * 0.5;  // through the outermost samples
  EXPECT_LT(area(m), 2 * (a * b + b * c + c * a));
  EXPECT_GT(area(m), 2 * (ai * bi + bi * ci + ci * ai));
  EXPECT_LT(signedVolume(m), a * b * c);
  EXPECT_GT(signedVolume(m), ai * bi * ci);
  const procgen::Bounds bb = m.bounds();
  EXPECT_FLOAT_EQ(bb.min.x, 10.0f - 1.0f);
  EXPECT_FLOAT_EQ(bb.max.x, 10.0f + 9.0f);
  EXPECT_FLOAT_EQ(bb.min.z, -0.25f);
  EXPECT_FLOAT_EQ(bb.max.z, 1.25f);
  // Cap normals are the box's face normals.
  for (size_t i = 0; i < m.vertexCount(); ++i) {
    const Vec3 p = m.positions[i], n = m.normals[i];
    if (p.x == bb.min.x && p.y > bb.min.y && p.y < bb.max.y && p.z > bb.min.z && p.z < bb.max.z) {
      EXPECT_FLOAT_EQ(n.x, -1.0f);
    }
  }
}

TEST(Isosurface, RandomFieldsAreWatertightWhenClosed) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Field f = randomField(9, 7, 6, seed);
    IsosurfaceOptions o;
    o.close_boundary = true;
    o.threshold = 0.1f;
    const TriangleMesh m = procgen::extractIsosurface(f.view, o);
    ASSERT_GT(m.triangleCount(), 100u);
    expectFinite(m);
    expectClosed(m);
    EXPECT_GT(signedVolume(m), 0.0);
  }
}

TEST(Isosurface, NanSamplesCountAsOutside) {
  Field f = sphereField(24, 8.0);
  f.values[12 + 24 * (12 + 24 * 12)] = std::nanf("");  // the centre
  const TriangleMesh m = procgen::extractIsosurface(f.view, IsosurfaceOptions{});
  expectFinite(m);
  expectClosed(m);  // the sphere plus a small closed cavity around the NaN
}

TEST(Isosurface, BadInputIsAUsageError) {
  std::vector<float> v(8, 0.0f);
  VolumeView view{v.data(), {2, 2, 2}, {1, 1, 1}, {0, 0, 0}};
  IsosurfaceOptions o;
  o.threshold = INFINITY;
  EXPECT_THROW(procgen::extractIsosurface(view, o), procgen::Error);
  view.spacing[1] = 0;
  EXPECT_THROW(procgen::extractIsosurface(view, IsosurfaceOptions{}), procgen::Error);
  view.spacing[1] = 1;
  view.dims[2] = 0;
  EXPECT_THROW(procgen::extractIsosurface(view, IsosurfaceOptions{}), procgen::Error);
}

TEST(Isosurface, OverTheMemoryBudgetStopsBeforeAllocating) {
  const Field f = sphereField(32, 12.0);
  IsosurfaceOptions o;
  o.memory_budget = 1024;  // bytes: far less than the mesh
  EXPECT_THROW(procgen::extractIsosurface(f.view, o), procgen::ResourceError);
}

class IsosurfaceParity : public procgen::test::BackendTest {};

TEST_P(IsosurfaceParity, IdenticalToSerial) {
  const procgen::test::Variant& v = GetParam();
  PROCGEN_SKIP_UNLESS_RUNNABLE(v);
  for (bool closed : {false, true}) {
    const Field f = randomField(11, 9, 13, 7);
    IsosurfaceOptions o;
    o.close_boundary = closed;
    const TriangleMesh serial = procgen::extractIsosurface(f.view, o);
    procgen::test::CpuChunkScope chunk(v.chunk);
    const TriangleMesh other = procgen::extractIsosurface(f.view, o, v.execution());
    ASSERT_EQ(other.indices, serial.indices);
    ASSERT_EQ(other.positions.size(), serial.positions.size());
    EXPECT_EQ(std::memcmp(other.positions.data(), serial.positions.data(), serial.positions.size() * sizeof(Vec3)), 0);
    EXPECT_EQ(std::memcmp(other.normals.data(), serial.normals.data(), serial.normals.size() * sizeof(Vec3)), 0);
  }
}

std::vector<procgen::test::Variant> isoVariants() {
  std::vector<procgen::test::Variant> v = procgen::test::backendVariants();
  v.push_back(procgen::test::makeVariant(Backend::kCpu, 2, 1));  // slabs of one plane
  v.push_back(procgen::test::makeVariant(Backend::kCpu, 7, 2));
  return v;
}

INSTANTIATE_TEST_SUITE_P(Backends, IsosurfaceParity, testing::ValuesIn(isoVariants()), procgen::test::variantName);

TEST(HeightfieldMesh, CountsPositionsAndNormals) {
  // h(x, y) = 0.5 x − 0.25 y: a plane with known normal (−0.5 s, 1, 0.25 s) / |…| for scale s.
  const uint64_t w = 7, h = 5;
  std::vector<float> values(w * h);
  for (uint64_t y = 0; y < h; ++y)
    for (uint64_t x = 0; x < w; ++x) values[y * w + x] = 0.5f * float(x) - 0.25f * float(y);
  procgen::HeightfieldOptions o;
  o.spacing = 2.0;
  o.height_scale = 4.0;
  o.origin_x = 1.0;
  o.origin_z = -3.0;
  const TriangleMesh m = procgen::heightfieldMesh(values.data(), w, h, o);
  ASSERT_EQ(m.vertexCount(), w * h);
  ASSERT_EQ(m.triangleCount(), 2 * (w - 1) * (h - 1));
  // slope in world units: dy/dx = 0.5 · 4 / 2 = 1, dy/dz = −0.25 · 4 / 2 = −0.5
  const double len = std::sqrt(1.0 + 1.0 + 0.25);
  for (uint64_t y = 0; y < h; ++y)
    for (uint64_t x = 0; x < w; ++x) {
      const Vec3 p = m.positions[y * w + x], n = m.normals[y * w + x];
      EXPECT_FLOAT_EQ(p.x, float(1.0 + 2.0 * double(x)));
      EXPECT_FLOAT_EQ(p.y, values[y * w + x] * 4.0f);
      EXPECT_FLOAT_EQ(p.z, float(-3.0 + 2.0 * double(y)));
      EXPECT_NEAR(n.x, -1.0 / len, 1e-6);
      EXPECT_NEAR(n.y, 1.0 / len, 1e-6);
      EXPECT_NEAR(n.z, 0.5 / len, 1e-6);
    }
  // Every triangle faces up (+y), like the normals.
  for (size_t t = 0; t < m.triangleCount(); ++t) {
    const Vec3 a = m.positions[m.indices[3 * t]], b = m.positions[m.indices[3 * t + 1]],
               c = m.positions[m.indices[3 * t + 2]];
    EXPECT_GT(cross(sub(b, a), sub(c, a)).y, 0.0f) << t;
  }
  // Interior edges are shared by two triangles, border edges by one: (w−1)h + w(h−1) + (w−1)(h−1) edges.
  std::map<std::pair<uint32_t, uint32_t>, int> edges;
  for (size_t t = 0; t < m.triangleCount(); ++t)
    for (int k = 0; k < 3; ++k) {
      uint32_t a = m.indices[3 * t + size_t(k)], b = m.indices[3 * t + size_t((k + 1) % 3)];
      ++edges[{std::min(a, b), std::max(a, b)}];
    }
  EXPECT_EQ(edges.size(), (w - 1) * h + w * (h - 1) + (w - 1) * (h - 1));
  EXPECT_THROW(procgen::heightfieldMesh(values.data(), 1, 5), procgen::Error);
}

}  // namespace

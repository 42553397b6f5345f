// Points on a surface (issue 18 point 1): area-weighted sampling of a
// triangle mesh — a triangle chosen by binary search of the cumulative areas,
// the point uniform inside it by the square-root barycentric map (Osada,
// Funkhouser, Chazelle, Dobkin, "Shape distributions", ACM TOG 2002, §4.2) —
// with the point i a pure function of (seed, i) through one Philox4x32-10
// block (common/random.h), and the surface of turtle geometry (segment tubes
// and polygon fans) so that an L-system's output can be sampled too.
#include <algorithm>
#include <cmath>

#include "common/random.h"
#include "io/geometry/cylinder_mesh.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/points.hpp"

namespace procgen {
namespace {

constexpr uint32_t kSurfacePhase = 0x73757266u;  // "surf": apart from other systems' draws

/// A double in [0, 1) from 53 random bits.
double unit53(uint32_t high, uint32_t low) {
  return double((uint64_t(high) << 21) ^ (uint64_t(low) >> 11)) * (1.0 / 9007199254740992.0);
}

}  // namespace

void sampleSurface(const TriangleMesh& mesh, uint64_t n, uint64_t seed, double* xyz, uint64_t memory_budget_bytes) {
  const size_t triangles = mesh.triangleCount();
  requireMemory("surface sampling (cumulative areas)", uint64_t(triangles) * sizeof(double), memory_budget_bytes);
  std::vector<double> cumulative(triangles);
  auto corner = [&](size_t t, int k) { return mesh.positions[mesh.indices[3 * t + size_t(k)]]; };
  double total = 0;
  size_t last_positive = triangles;
  for (size_t t = 0; t < triangles; ++t) {
    const Vec3 a = corner(t, 0), b = corner(t, 1), c = corner(t, 2);
    const double ux = double(b.x) - a.x, uy = double(b.y) - a.y, uz = double(b.z) - a.z;
    const double vx = double(c.x) - a.x, vy = double(c.y) - a.y, vz = double(c.z) - a.z;
    const double cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
    const double area = 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
    if (area > 0 && std::isfinite(area)) {
      total += area;
      last_positive = t;
    }
    cumulative[t] = total;
  }
  if (last_positive == triangles || !std::isfinite(total))
    throw Error("surface sampling: the mesh has no triangle of positive, finite area", ExitCode::kBadInput);
  for (uint64_t i = 0; i < n; ++i) {
    const philox4x32_ctr_t ctr = {{uint32_t(i), uint32_t(i >> 32), kSurfacePhase, 0u}};
    const philox4x32_key_t key = {{uint32_t(seed), uint32_t(seed >> 32)}};
    const philox4x32_ctr_t r = philox4x32(ctr, key);
    // The first triangle whose cumulative area exceeds the target: zero-area
    // triangles are never chosen; rounding at the top end is clamped.
    const double target = unit53(r.v[0], r.v[1]) * total;
    size_t t = size_t(std::upper_bound(cumulative.begin(), cumulative.end(), target) - cumulative.begin());
    t = std::min(t, last_positive);
    const double s = std::sqrt(double(r.v[2]) * (1.0 / 4294967296.0));
    const double v = double(r.v[3]) * (1.0 / 4294967296.0);
    const double w0 = 1.0 - s, w1 = s * (1.0 - v), w2 = s * v;
    const Vec3 a = corner(t, 0), b = corner(t, 1), c = corner(t, 2);
    xyz[3 * i] = w0 * a.x + w1 * b.x + w2 * c.x;
    xyz[3 * i + 1] = w0 * a.y + w1 * b.y + w2 * c.y;
    xyz[3 * i + 2] = w0 * a.z + w1 * b.z + w2 * c.z;
  }
}

TriangleMesh geometrySurface(const Geometry& geometry, int sides, uint64_t memory_budget_bytes) {
  if (sides < 3 || sides > 64) throw Error("geometry surface: sides must be in 3..64", ExitCode::kUsage);
  io::CylinderMesher mesher(sides);
  uint64_t vertices = uint64_t(geometry.segments.size()) * mesher.verticesPerSegment();
  uint64_t triangles = uint64_t(geometry.segments.size()) * 2 * uint64_t(sides);
  for (size_t p = 0; p < geometry.polygonCount(); ++p) {
    const uint64_t n = geometry.polygon_offsets[p + 1] - geometry.polygon_offsets[p];
    if (n < 3) continue;
    vertices += n;
    triangles += n - 2;
  }
  if (vertices > UINT32_MAX) throw Error("geometry surface: more than 2^32 - 1 vertices", ExitCode::kBadInput);
  requireMemory("geometry surface", vertices * 2 * sizeof(Vec3) + triangles * 3 * sizeof(uint32_t),
                memory_budget_bytes);
  TriangleMesh mesh;
  mesh.positions.resize(vertices);
  mesh.normals.resize(vertices);
  mesh.indices.reserve(3 * triangles);
  uint32_t at = 0;
  for (const Segment& segment : geometry.segments) {
    mesher.vertices(segment, &mesh.positions[at], &mesh.normals[at]);
    for (int k = 0; k < sides; ++k) {
      const std::array<uint32_t, 4> q = mesher.quad(k);
      mesh.indices.insert(mesh.indices.end(), {at + q[0], at + q[1], at + q[2], at + q[0], at + q[2], at + q[3]});
    }
    at += mesher.verticesPerSegment();
  }
  for (size_t p = 0; p < geometry.polygonCount(); ++p) {
    const uint64_t begin = geometry.polygon_offsets[p], n = geometry.polygon_offsets[p + 1] - begin;
    if (n < 3) continue;
    // The polygon's normal by Newell's method, shared by its fan.
    double nx = 0, ny = 0, nz = 0;
    for (uint64_t k = 0; k < n; ++k) {
      const Vec3 &u = geometry.polygon_vertices[begin + k], &w = geometry.polygon_vertices[begin + (k + 1) % n];
      nx += (double(u.y) - w.y) * (double(u.z) + w.z);
      ny += (double(u.z) - w.z) * (double(u.x) + w.x);
      nz += (double(u.x) - w.x) * (double(u.y) + w.y);
    }
    const double length = std::sqrt(nx * nx + ny * ny + nz * nz);
    const Vec3 normal = length > 0 ? Vec3{float(nx / length), float(ny / length), float(nz / length)} : Vec3{0, 1, 0};
    for (uint64_t k = 0; k < n; ++k) {
      mesh.positions[at + k] = geometry.polygon_vertices[begin + k];
      mesh.normals[at + k] = normal;
    }
    for (uint32_t k = 1; k + 1 < n; ++k) mesh.indices.insert(mesh.indices.end(), {at, at + k, at + k + 1});
    at += uint32_t(n);
  }
  return mesh;
}

}  // namespace procgen

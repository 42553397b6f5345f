// Small helpers shared by the mesh writers (OBJ, PLY, glTF).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "procgen/budget.hpp"
#include "procgen/geometry.hpp"

namespace procgen::io {

/// Bytes the geometry itself holds (it stays allocated while a writer runs,
/// so it counts against the writer's budget).
inline uint64_t geometryBytes(const Geometry& g) {
  return g.segments.size() * sizeof(Segment) + g.polygon_vertices.size() * sizeof(Vec3) +
         g.polygonCount() * (sizeof(uint64_t) + 2 * sizeof(int32_t));
}

/// Turtle output is mostly polylines: a segment usually starts exactly where
/// the previous one ended, so writers share that vertex (bitwise equality).
inline bool sameBits(const Vec3& a, const Vec3& b) { return std::memcmp(&a, &b, sizeof(Vec3)) == 0; }

/// Polygons with fewer than 3 vertices have no area and are skipped everywhere.
inline bool drawablePolygon(const Geometry& g, size_t p) {
  return g.polygon_offsets[p + 1] - g.polygon_offsets[p] >= 3;
}

/// Newell's method: robust plane normal of a (possibly non-planar) polygon.
inline Vec3 polygonNormal(const Vec3* v, size_t n) {
  Vec3 sum;
  for (size_t i = 0; i < n; ++i) {
    const Vec3& a = v[i];
    const Vec3& b = v[(i + 1) % n];
    sum.x += (a.y - b.y) * (a.z + b.z);
    sum.y += (a.z - b.z) * (a.x + b.x);
    sum.z += (a.x - b.x) * (a.y + b.y);
  }
  float len = std::sqrt(sum.x * sum.x + sum.y * sum.y + sum.z * sum.z);
  if (!(len > 0.0f) || !std::isfinite(len)) return {0, 0, 1};
  return {sum.x / len, sum.y / len, sum.z / len};
}

/// Element indices per instance, instances ascending, string order kept inside
/// each instance. With a single instance this is just 0..n-1.
struct InstanceGroup {
  int32_t instance = 0;
  std::vector<uint32_t> segments;
  std::vector<uint32_t> polygons;
};

inline std::vector<InstanceGroup> groupByInstance(const Geometry& g) {
  std::vector<int32_t> ids;
  for (const Segment& s : g.segments) ids.push_back(s.instance);
  ids.insert(ids.end(), g.polygon_instances.begin(), g.polygon_instances.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<InstanceGroup> groups(std::max<size_t>(ids.size(), 1));
  for (size_t k = 0; k < ids.size(); ++k) groups[k].instance = ids[k];
  auto groupOf = [&](int32_t id) {
    return static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  if (ids.size() <= 1) {
    groups[0].segments.resize(g.segments.size());
    std::iota(groups[0].segments.begin(), groups[0].segments.end(), 0u);
    groups[0].polygons.resize(g.polygonCount());
    std::iota(groups[0].polygons.begin(), groups[0].polygons.end(), 0u);
    return groups;
  }
  for (size_t i = 0; i < g.segments.size(); ++i)
    groups[groupOf(g.segments[i].instance)].segments.push_back(static_cast<uint32_t>(i));
  for (size_t p = 0; p < g.polygonCount(); ++p)
    groups[groupOf(g.polygon_instances[p])].polygons.push_back(static_cast<uint32_t>(p));
  return groups;
}

}  // namespace procgen::io

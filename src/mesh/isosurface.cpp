// Iso-surfaces by marching tetrahedra (isosurface_impl.hpp says why) and the
// serial stage; the seed (shared/seeds/001_191daa7b81372e37.txt §5) shows a
// noise volume as the voxels above a threshold, this meshes the same solid.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "common/dispatch.hpp"
#include "mesh/isosurface_impl.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::mesh_detail {
namespace {

constexpr float kOutside = -std::numeric_limits<float>::infinity();

struct V3 {
  double x, y, z;
};
V3 cornerPoint(int c) { return {double(c & 1), double((c >> 1) & 1), double((c >> 2) & 1)}; }
V3 mid(int a, int b) {
  const V3 p = cornerPoint(a), q = cornerPoint(b);
  return {(p.x + q.x) / 2, (p.y + q.y) / 2, (p.z + q.z) / 2};
}

TetTable buildTable() {
  TetTable t{};
  const int axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < 6; ++k) {
    const int a = 1 << axes[k][0], b = 1 << axes[k][1];
    t.corners[k] = {0, uint8_t(a), uint8_t(a | b), 7};
  }
  for (int k = 0; k < 6; ++k) {
    const auto& c = t.corners[k];
    for (int mask = 1; mask < 15; ++mask) {
      std::vector<int> in, out;
      for (int i = 0; i < 4; ++i) (mask >> i & 1 ? in : out).push_back(c[size_t(i)]);
      // Corners along a chain are nested bit sets: the edge runs from the smaller one.
      auto edge = [](int p, int q) {
        const int lo = (p & q) == p ? p : q, hi = lo == p ? q : p;
        return std::pair{TetEdge{uint8_t(lo), uint8_t(hi ^ lo)}, mid(p, q)};
      };
      std::vector<std::array<std::pair<TetEdge, V3>, 3>> tris;
      if (in.size() == 1 || out.size() == 1) {
        const int apex = in.size() == 1 ? in[0] : out[0];
        const std::vector<int>& rest = in.size() == 1 ? out : in;
        tris.push_back({edge(apex, rest[0]), edge(apex, rest[1]), edge(apex, rest[2])});
      } else {  // two and two: the quad on edges (i0,o0) (i1,o0) (i1,o1) (i0,o1), a parallelogram
        const auto e00 = edge(in[0], out[0]), e10 = edge(in[1], out[0]), e11 = edge(in[1], out[1]),
                   e01 = edge(in[0], out[1]);
        tris.push_back({e00, e10, e11});
        tris.push_back({e00, e11, e01});
      }
      V3 ci{0, 0, 0}, co{0, 0, 0};
      for (int i : in) ci = {ci.x + cornerPoint(i).x / in.size(), ci.y + cornerPoint(i).y / in.size(), ci.z + cornerPoint(i).z / in.size()};
      for (int o : out) co = {co.x + cornerPoint(o).x / out.size(), co.y + cornerPoint(o).y / out.size(), co.z + cornerPoint(o).z / out.size()};
      const V3 d{co.x - ci.x, co.y - ci.y, co.z - ci.z};
      TetCase& tc = t.cases[k][size_t(mask)];
      tc.triangles = uint8_t(tris.size());
      for (size_t i = 0; i < tris.size(); ++i) {
        auto& tri = tris[i];
        const V3 p = tri[0].second, q = tri[1].second, r = tri[2].second;
        const V3 u{q.x - p.x, q.y - p.y, q.z - p.z}, w{r.x - p.x, r.y - p.y, r.z - p.z};
        const V3 n{u.y * w.z - u.z * w.y, u.z * w.x - u.x * w.z, u.x * w.y - u.y * w.x};
        if (n.x * d.x + n.y * d.y + n.z * d.z < 0) std::swap(tri[1], tri[2]);
        tc.tri[i] = {tri[0].first, tri[1].first, tri[2].first};
      }
    }
  }
  return t;
}

Vec3 normalized(double x, double y, double z, bool& ok) {
  const double len = std::sqrt(x * x + y * y + z * z);
  ok = len > 0 && std::isfinite(len);
  if (!ok) return {};
  return {float(x / len), float(y / len), float(z / len)};
}

}  // namespace

const TetTable& tetTable() {
  static const TetTable table = buildTable();
  return table;
}

void checkIsosurfaceInput(const VolumeView& v, const IsosurfaceOptions& o) {
  auto bad = [](const std::string& why) { throw Error("iso-surface: " + why, ExitCode::kUsage); };
  if (!v.values) bad("no values");
  uint64_t count = 1;
  for (int a = 0; a < 3; ++a) {
    if (v.dims[a] == 0) bad("every dimension must be at least 1");
    if (v.dims[a] > (uint64_t{1} << 31)) bad("a dimension above 2^31");
    const std::optional<uint64_t> c = checkedMul(count, v.dims[a]);
    if (!c) bad("the size overflows 64 bits");
    count = *c;
    if (!std::isfinite(v.spacing[a]) || !(v.spacing[a] > 0.0)) bad("spacing must be finite and positive");
    if (!std::isfinite(v.origin[a])) bad("origin must be finite");
  }
  if (!std::isfinite(o.threshold)) bad("the threshold must be finite");
}

void prepareMesh(std::vector<uint64_t>& vertex_offsets, std::vector<uint64_t>& triangle_offsets,
                 const IsosurfaceOptions& options, TriangleMesh& mesh) {
  std::partial_sum(vertex_offsets.begin(), vertex_offsets.end(), vertex_offsets.begin());
  std::partial_sum(triangle_offsets.begin(), triangle_offsets.end(), triangle_offsets.begin());
  const uint64_t vertices = vertex_offsets.back(), triangles = triangle_offsets.back();
  if (vertices > std::numeric_limits<uint32_t>::max())
    throw Error("iso-surface: " + std::to_string(vertices) + " vertices exceed 2^32 - 1; use a smaller volume",
                ExitCode::kBadInput);
  requireMemory("iso-surface mesh", vertices * 2 * sizeof(Vec3) + triangles * 3 * sizeof(uint32_t),
                options.memory_budget);
  mesh.positions.resize(vertices);
  mesh.normals.resize(vertices);
  mesh.indices.resize(triangles * 3);
}

IsoVolume::IsoVolume(const VolumeView& v, const IsosurfaceOptions& o, uint64_t window_first, uint64_t depth)
    : v_(v),
      dims_{v.dims[0], v.dims[1], depth == 0 ? v.dims[2] : depth},
      window_first_(int64_t(window_first)),
      threshold_(o.threshold),
      shift_(o.close_boundary ? 1 : 0) {
  for (int a = 0; a < 3; ++a) n_[size_t(a)] = int64_t(dims_[size_t(a)]) + 2 * shift_;
}

float IsoVolume::sample(int64_t x, int64_t y, int64_t z, bool& real) const {
  x -= shift_;
  y -= shift_;
  z -= shift_;
  real = x >= 0 && y >= 0 && z >= 0 && x < int64_t(dims_[0]) && y < int64_t(dims_[1]) && z < int64_t(dims_[2]);
  if (!real) return kOutside;
  return v_.values[uint64_t(x) + v_.dims[0] * (uint64_t(y) + v_.dims[1] * uint64_t(z - window_first_))];
}

uint8_t IsoVolume::cellMask(int64_t x, int64_t y, int64_t z) const {
  uint8_t m = 0;
  for (int c = 0; c < 8; ++c)
    if (inside(x + (c & 1), y + (c >> 1 & 1), z + (c >> 2 & 1))) m = uint8_t(m | 1 << c);
  return m;
}

Vec3 IsoVolume::gradient(int64_t gx, int64_t gy, int64_t gz) const {
  const int64_t g[3] = {gx, gy, gz};
  double d[3];
  for (int a = 0; a < 3; ++a) {
    const int64_t n = int64_t(dims_[size_t(a)]);
    if (n == 1) {
      d[a] = 0;
      continue;
    }
    int64_t lo[3] = {gx, gy, gz}, hi[3] = {gx, gy, gz};
    lo[a] = std::max<int64_t>(g[a] - 1, 0);
    hi[a] = std::min<int64_t>(g[a] + 1, n - 1);
    auto at = [&](const int64_t* p) {
      return double(v_.values[uint64_t(p[0]) + v_.dims[0] * (uint64_t(p[1]) + v_.dims[1] * uint64_t(p[2] - window_first_))]);
    };
    d[a] = (at(hi) - at(lo)) / (double(hi[a] - lo[a]) * v_.spacing[size_t(a)]);
  }
  return {float(d[0]), float(d[1]), float(d[2])};
}

void IsoVolume::vertex(int64_t x, int64_t y, int64_t z, int dir, Vec3& position, Vec3& normal) const {
  const int64_t q[3] = {x + (dir & 1), y + (dir >> 1 & 1), z + (dir >> 2 & 1)};
  const int64_t p[3] = {x, y, z};
  bool real_p, real_q;
  const float vp = sample(x, y, z, real_p), vq = sample(q[0], q[1], q[2], real_q);
  const bool p_inside = real_p && vp > threshold_;
  double t = 0.5;
  if (real_p && real_q && !std::isnan(vp) && !std::isnan(vq))
    t = std::clamp((double(threshold_) - double(vp)) / (double(vq) - double(vp)), 0.0, 1.0);
  double world[3], edge[3];
  for (int a = 0; a < 3; ++a) {
    const double gp = double(p[a] - shift_), gq = double(q[a] - shift_);
    world[a] = v_.origin[size_t(a)] + (gp + t * (gq - gp)) * v_.spacing[size_t(a)];
    edge[a] = (gq - gp) * v_.spacing[size_t(a)] * (p_inside ? 1.0 : -1.0);  // inside → outside
  }
  position = {float(world[0]), float(world[1]), float(world[2])};
  bool ok = false;
  if (!real_p || !real_q) {
    // A cap: the outward normal of the volume faces the virtual sample lies beyond.
    const int64_t* w = real_p ? q : p;
    double n[3];
    for (int a = 0; a < 3; ++a) {
      const int64_t g = w[a] - shift_;
      n[a] = g < 0 ? -1.0 : g >= int64_t(dims_[size_t(a)]) ? 1.0 : 0.0;
    }
    normal = normalized(n[0], n[1], n[2], ok);
  } else {
    const Vec3 gp = gradient(p[0] - shift_, p[1] - shift_, p[2] - shift_);
    const Vec3 gq = gradient(q[0] - shift_, q[1] - shift_, q[2] - shift_);
    normal = normalized(-(gp.x + t * (gq.x - gp.x)), -(gp.y + t * (gq.y - gp.y)), -(gp.z + t * (gq.z - gp.z)), ok);
  }
  if (!ok) normal = normalized(edge[0], edge[1], edge[2], ok);
}

void IsoVolume::countPlane(int64_t z, uint64_t& vertices, uint64_t& triangles) const {
  uint64_t nv = 0, nt = 0;
  const TetTable& table = tetTable();
  for (int64_t y = 0; y < n_[1]; ++y)
    for (int64_t x = 0; x < n_[0]; ++x) {
      const bool in = inside(x, y, z);
      for (int d = 1; d < 8; ++d) {
        const int64_t qx = x + (d & 1), qy = y + (d >> 1 & 1), qz = z + (d >> 2 & 1);
        if (qx >= n_[0] || qy >= n_[1] || qz >= n_[2]) continue;
        if (inside(qx, qy, qz) != in) ++nv;
      }
      if (z + 1 < n_[2] && y + 1 < n_[1] && x + 1 < n_[0]) {
        const uint8_t m = cellMask(x, y, z);
        if (m == 0 || m == 0xff) continue;
        for (size_t k = 0; k < 6; ++k) {
          int tm = 0;
          for (int i = 0; i < 4; ++i) tm |= (m >> table.corners[k][size_t(i)] & 1) << i;
          nt += table.cases[k][size_t(tm)].triangles;
        }
      }
    }
  vertices = nv;
  triangles = nt;
}

void IsoVolume::numberPlane(int64_t z, uint32_t first, uint32_t* ids, TriangleMesh* mesh, uint32_t stored_from) const {
  uint32_t next = first;
  for (int64_t y = 0; y < n_[1]; ++y)
    for (int64_t x = 0; x < n_[0]; ++x) {
      const bool in = inside(x, y, z);
      uint32_t* cell = ids + size_t((y * n_[0] + x) * 7);
      for (int d = 1; d < 8; ++d) {
        const int64_t qx = x + (d & 1), qy = y + (d >> 1 & 1), qz = z + (d >> 2 & 1);
        if (qx >= n_[0] || qy >= n_[1] || qz >= n_[2]) continue;
        if (inside(qx, qy, qz) == in) continue;
        cell[d - 1] = next;
        if (mesh) vertex(x, y, z, d, mesh->positions[next - stored_from], mesh->normals[next - stored_from]);
        ++next;
      }
    }
}

void IsoVolume::emitCells(int64_t z, const uint32_t* ids_lo, const uint32_t* ids_hi, uint64_t first,
                          TriangleMesh& mesh) const {
  const TetTable& table = tetTable();
  uint32_t* out = mesh.indices.data() + first * 3;
  for (int64_t y = 0; y + 1 < n_[1]; ++y)
    for (int64_t x = 0; x + 1 < n_[0]; ++x) {
      const uint8_t m = cellMask(x, y, z);
      if (m == 0 || m == 0xff) continue;
      auto id = [&](TetEdge e) {
        const uint32_t* plane = e.from & 4 ? ids_hi : ids_lo;
        const int64_t px = x + (e.from & 1), py = y + (e.from >> 1 & 1);
        return plane[size_t((py * n_[0] + px) * 7 + e.dir - 1)];
      };
      for (size_t k = 0; k < 6; ++k) {
        int tm = 0;
        for (int i = 0; i < 4; ++i) tm |= (m >> table.corners[k][size_t(i)] & 1) << i;
        const TetCase& tc = table.cases[k][size_t(tm)];
        for (int t = 0; t < tc.triangles; ++t)
          for (const TetEdge& e : tc.tri[size_t(t)]) *out++ = id(e);
      }
    }
}

}  // namespace procgen::mesh_detail

namespace procgen {

TriangleMesh extractIsosurface(const VolumeView& volume, const IsosurfaceOptions& options,
                               const Execution& execution) {
  auto serial = [&] {
    return mesh_detail::extractWith(volume, options, [](int64_t n, auto&& body) { body(int64_t{0}, n); });
  };
  return detail::dispatch(
      execution, "extractIsosurface", serial,
      [&] { return mesh_detail::extractIsosurfaceCpu(volume, options, execution.threads); },
      serial);  // opencl: the mesh is small next to the field; the serial code serves
}

}  // namespace procgen

// A heightfield (a 2D noise image) as a terrain grid mesh: one vertex per
// sample, two triangles per grid square, normals from central differences.
#include <cmath>
#include <limits>
#include <string>

#include "procgen/error.hpp"
#include "procgen/mesh.hpp"

namespace procgen {

TriangleMesh heightfieldMesh(const float* values, uint64_t width, uint64_t height, const HeightfieldOptions& o) {
  auto bad = [](const std::string& why) { throw Error("terrain mesh: " + why, ExitCode::kUsage); };
  if (!values) bad("no values");
  if (width < 2 || height < 2) bad("the field needs at least 2x2 samples");
  if (width > std::numeric_limits<uint32_t>::max() / height) bad("more than 2^32 - 1 vertices");
  if (!std::isfinite(o.spacing) || !(o.spacing > 0) || !std::isfinite(o.height_scale) || !(o.height_scale > 0))
    bad("spacing and height scale must be finite and positive");
  if (!std::isfinite(o.origin_x) || !std::isfinite(o.origin_z)) bad("the origin must be finite");
  auto h = [&](uint64_t x, uint64_t y) {
    const float v = values[y * width + x];
    return std::isfinite(v) ? double(v) * o.height_scale : 0.0;
  };
  TriangleMesh mesh;
  mesh.positions.resize(width * height);
  mesh.normals.resize(width * height);
  for (uint64_t y = 0; y < height; ++y)
    for (uint64_t x = 0; x < width; ++x) {
      const uint64_t i = y * width + x;
      mesh.positions[i] = {float(o.origin_x + double(x) * o.spacing), float(h(x, y)),
                           float(o.origin_z + double(y) * o.spacing)};
      const uint64_t x0 = x > 0 ? x - 1 : x, x1 = x + 1 < width ? x + 1 : x;
      const uint64_t y0 = y > 0 ? y - 1 : y, y1 = y + 1 < height ? y + 1 : y;
      const double dx = (h(x1, y) - h(x0, y)) / (double(x1 - x0) * o.spacing);
      const double dz = (h(x, y1) - h(x, y0)) / (double(y1 - y0) * o.spacing);
      // The surface y = h(x, z) has the upward normal (−∂h/∂x, 1, −∂h/∂z).
      const double len = std::sqrt(dx * dx + 1.0 + dz * dz);
      mesh.normals[i] = {float(-dx / len), float(1.0 / len), float(-dz / len)};
    }
  mesh.indices.reserve((width - 1) * (height - 1) * 6);
  for (uint64_t y = 0; y + 1 < height; ++y)
    for (uint64_t x = 0; x + 1 < width; ++x) {
      const uint32_t a = uint32_t(y * width + x), b = a + 1, c = uint32_t(a + width), d = c + 1;
      // +x right, +z towards the viewer: (a, c, b) is counter-clockwise seen from +y.
      for (uint32_t v : {a, c, b, b, c, d}) mesh.indices.push_back(v);
    }
  return mesh;
}

}  // namespace procgen

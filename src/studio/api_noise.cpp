// The studio's noise endpoints (issue 20 point 3: the noise seed's viewer).
//
// Paper: shared/seeds/001_191daa7b81372e37.txt §5 — the application shows the
// generated voxel scene (128³), turned by dragging the mouse, with a panel that
// chooses the generating algorithm and its parameters and a "Threshold" slider
// above which voxels are shown. Here the field comes from generateNoise
// (procgen/noise.hpp) and the shown surface from extractIsosurface
// (procgen/mesh.hpp); a 2D field is shown as a colour-mapped image
// (fieldToImage8) and as a terrain grid (heightfieldMesh).
//
//   POST /api/noise/heightmap  a 2D field: f32 heights, an RGBA image, optionally the terrain grid mesh
//   POST /api/noise/terrain    a 3D field's iso-surface at `threshold`
//   POST /api/noise/export     the same as a file: png, png16, obj, ply, glb
//
// Every parameter is checked here (Params) or by validateNoise before the field
// is allocated; sizes are bounded per axis so that one request stays within a
// second or so on a 2-core machine. docs/studio.md ("Noise") lists them.
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "procgen/budget.hpp"
#include "procgen/image.hpp"
#include "procgen/io.hpp"
#include "procgen/memory.hpp"
#include "procgen/mesh.hpp"
#include "procgen/noise.hpp"
#include "studio/api.hpp"

namespace procgen::studio {

namespace {

using Clock = std::chrono::steady_clock;

/// Per-axis bounds, each reply well under a second on this 2-core machine
/// (Perlin fbm, 5 octaves): 2048² heights (16 MiB of floats and 16 MiB of
/// RGBA, ~0.3 s, mostly the colour map), a terrain grid of 1024² samples
/// (1 M vertices), 256³ voxels (64 MiB; the surface is bounded by the budget).
constexpr int64_t kMaxHeightmapSide = 2048;
constexpr int64_t kMaxHeightfieldMeshSide = 1024;
constexpr int64_t kMaxTerrainSide = 256;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The parsed name of a choice; `parse` is the library's parser for the same names.
template <typename Parse>
auto chosen(const Params& p, std::string_view key, std::string fallback, const std::vector<std::string>& names,
            Parse parse) {
  return *parse(p.choice(key, std::move(fallback), names));
}

/// A field request: what generateNoise needs, checked.
struct FieldRequest {
  NoiseParams params;
  NoiseGrid grid;
  NoiseEvaluation evaluation = NoiseEvaluation::kOptimized;
  Execution execution;
  uint64_t bytes() const { return grid.points() * sizeof(float); }
};

/// "size": one integer for every axis, or one per axis; each in [2, max_side].
std::array<uint64_t, 4> gridSize(const Params& p, int dims, int64_t fallback, int64_t max_side) {
  std::array<uint64_t, 4> size{1, 1, 1, 1};
  auto it = p.raw().find("size");
  if (it != p.raw().end() && it->is_array()) {
    const std::vector<double> sides = p.numbers("size", size_t(dims));
    if (sides.size() != size_t(dims))
      throw BadRequest("'size' needs " + std::to_string(dims) + " numbers (one per axis), not " +
                       std::to_string(sides.size()));
    for (int d = 0; d < dims; ++d) {
      if (sides[size_t(d)] != std::floor(sides[size_t(d)]) || sides[size_t(d)] < 2 || sides[size_t(d)] > double(max_side))
        throw BadRequest("'size' must hold integers in [2, " + std::to_string(max_side) + "]");
      size[size_t(d)] = uint64_t(sides[size_t(d)]);
    }
  } else {
    const auto side = uint64_t(p.integer("size", fallback, 2, max_side));
    for (int d = 0; d < dims; ++d) size[size_t(d)] = side;
  }
  return size;
}

/// The noise parameters of a request (defaults: the library's), its grid and execution.
FieldRequest fieldRequest(const Params& p, int dims, int64_t default_side, int64_t max_side, const Job& job) {
  FieldRequest r;
  NoiseParams& n = r.params;
  n.dims = dims;
  n.type = chosen(p, "type", "perlin", {"perlin", "simplex", "value", "cellular"}, parseNoiseType);
  n.fractal = chosen(p, "fractal", "fbm", {"none", "fbm", "ridged", "billow", "pingpong"}, parseFractalType);
  n.octaves = int(p.integer("octaves", n.octaves, 1, kMaxOctaves));
  n.frequency = p.number("frequency", n.frequency, 1e-6, 100);
  n.lacunarity = float(p.number("lacunarity", n.lacunarity, 0.1, 8));
  n.gain = float(p.number("gain", n.gain, -2, 2));
  n.weighted_strength = float(p.number("weighted_strength", n.weighted_strength, 0, 1));
  n.ping_pong_strength = float(p.number("ping_pong_strength", n.ping_pong_strength, 0, 16));
  n.cellular_distance = chosen(p, "cellular_distance", "euclidean", {"euclidean", "sq", "manhattan", "chebyshev"},
                               parseCellularDistance);
  n.cellular_return = chosen(p, "cellular_return", "f1", {"f1", "f2", "f2-f1", "value"}, parseCellularReturn);
  n.cellular_jitter = float(p.number("jitter", n.cellular_jitter, 0, 1));
  n.warp_amplitude = float(p.number("warp", 0, 0, 1e4));
  const std::string warp_type = p.choice("warp_type", "single", {"single", "fractal"});
  n.warp = n.warp_amplitude == 0 ? DomainWarp::kNone : warp_type == "fractal" ? DomainWarp::kFractal : DomainWarp::kSingle;
  if (p.has("time")) n.time = p.number("time", 0, -1e6, 1e6);
  n.seed = p.seed("seed", n.seed);

  r.grid.size = gridSize(p, dims, default_side, max_side);
  const std::vector<double> origin = p.numbers("origin", size_t(dims));
  if (!origin.empty() && origin.size() != size_t(dims))
    throw BadRequest("'origin' needs " + std::to_string(dims) + " numbers, not " + std::to_string(origin.size()));
  for (size_t d = 0; d < origin.size(); ++d) r.grid.origin[d] = origin[d];
  r.grid.step = p.number("step", 1.0, 1e-6, 1e6);
  r.grid.tile = p.boolean("tile", false);
  r.evaluation = p.choice("evaluation", "optimized", {"optimized", "naive"}) == "naive" ? NoiseEvaluation::kNaive
                                                                                         : NoiseEvaluation::kOptimized;
  r.execution = job.execution(p);
  // The library's own checks (lattice reach, simplex with tile, cellular in
  // 3D + time, …), with its messages, before anything is allocated.
  validateNoise(n, &r.grid);
  return r;
}

struct Field {
  OverwriteVector<float> values;
  NoiseRange range;
  double noise_ms = 0;
};

/// Generates the field once `extra_bytes` (what the reply will add) fit the budget too.
Field generateField(const FieldRequest& r, const Job& job, uint64_t extra_bytes) {
  requireMemory("noise field", r.bytes() + extra_bytes, job.memoryBudget());
  job.check();
  Field f;
  f.values.resize(r.grid.points());
  const auto start = Clock::now();
  f.range = generateNoise(r.params, r.grid, std::span<float>(f.values.data(), f.values.size()), r.execution,
                          r.evaluation);
  f.noise_ms = msSince(start);
  job.check();
  return f;
}

/// The field and request summary every reply's header carries.
json fieldHeader(const char* kind, const FieldRequest& r, const Field& f) {
  json size = json::array();
  for (int d = 0; d < r.params.dims; ++d) size.push_back(r.grid.size[size_t(d)]);
  return {{"kind", kind},
          {"type", std::string(noiseTypeName(r.params.type))},
          {"size", size},
          {"points", r.grid.points()},
          {"step", r.grid.step},
          {"seed", std::to_string(r.params.seed)},
          {"min", f.range.min},
          {"max", f.range.max},
          {"backend", std::string(backendName(r.execution.backend))},
          {"threads", effectiveThreads(r.execution)},
          {"timings", {{"noise_ms", f.noise_ms}}}};
}

/// Positions as u16 normalized into the mesh's bounds (half the bytes of
/// floats; web/src/viewer.js places them): q = round((p − lo) / (hi − lo) · 65535),
/// 0 along a flat axis. Returns [x0, y0, z0, x1, y1, z1], or null for no vertices.
json addQuantizedPositions(Frame& frame, const TriangleMesh& mesh) {
  if (mesh.positions.empty()) {
    frame.add("positions", static_cast<const uint16_t*>(nullptr), 0);
    return nullptr;
  }
  const Bounds b = mesh.bounds();
  const U16Quantizer quantize({b.min.x, b.min.y, b.min.z}, {b.max.x, b.max.y, b.max.z});
  std::vector<uint16_t> q(mesh.positions.size() * 3);
  for (size_t i = 0; i < mesh.positions.size(); ++i) quantize.put(mesh.positions[i], &q[3 * i]);
  frame.add("positions", q);
  return json::array({b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z});
}

/// A mesh into a frame: positions (u16, bounds in the header), normals (f32 × 3), indices (u32 × 3 per triangle).
void addMesh(Frame& frame, const TriangleMesh& mesh) {
  frame.header["bounds"] = addQuantizedPositions(frame, mesh);
  frame.add("normals", reinterpret_cast<const float*>(mesh.normals.data()), mesh.normals.size() * 3);
  frame.add("indices", mesh.indices);
  frame.header["vertices"] = mesh.vertexCount();
  frame.header["triangles"] = mesh.triangleCount();
}

/// Bytes of a mesh with `vertices` and `triangles` (positions, normals, indices).
uint64_t meshBytes(uint64_t vertices, uint64_t triangles) {
  return vertices * 2 * sizeof(Vec3) + triangles * 3 * sizeof(uint32_t);
}

// --- 2D: heightmaps --------------------------------------------------------

struct Heightmap {
  FieldRequest request;
  ColorMap colormap = ColorMap::kTerrain;
  bool full_range = false;  ///< colours over [−1, 1] (every type's range) instead of the field's min..max
  bool mesh = false;
  double height_scale = 1;
};

Heightmap heightmapRequest(const Params& p, const Job& job) {
  Heightmap h;
  h.request = fieldRequest(p, 2, 256, kMaxHeightmapSide, job);
  h.colormap = chosen(p, "colormap", "terrain", {"gray", "viridis", "terrain"}, parseColorMap);
  h.full_range = p.choice("range", "field", {"field", "full"}) == "full";
  h.mesh = p.boolean("mesh", false);
  const auto& size = h.request.grid.size;
  if (h.mesh && (size[0] > kMaxHeightfieldMeshSide || size[1] > kMaxHeightfieldMeshSide))
    throw BadRequest("'size' with 'mesh' must be at most " + std::to_string(kMaxHeightfieldMeshSide) +
                     " per axis (a terrain grid of " + std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                     " samples is too large to send)");
  // As procgen noise --height-scale: 0.15 × the larger extent by default.
  const double extent = double(std::max(size[0], size[1])) * h.request.grid.step;
  h.height_scale = p.number("height_scale", 0.15 * extent, 1e-6, 1e9);
  return h;
}

FieldImage8 heightmapImage(const Heightmap& h, const Field& f) {
  const auto& size = h.request.grid.size;
  return fieldToImage8(f.values.data(), int(size[0]), int(size[1]), h.colormap, h.full_range ? -1.0f : 0.0f,
                       h.full_range ? 1.0f : 0.0f);
}

TriangleMesh heightmapMesh(const Heightmap& h, const Field& f) {
  HeightfieldOptions terrain;
  terrain.spacing = h.request.grid.step;
  terrain.height_scale = h.height_scale;
  terrain.origin_x = h.request.grid.origin[0];
  terrain.origin_z = h.request.grid.origin[1];
  return heightfieldMesh(f.values.data(), h.request.grid.size[0], h.request.grid.size[1], terrain);
}

Reply heightmap(const Request& request, Job& job) {
  const Heightmap h = heightmapRequest(request.params, job);
  const uint64_t points = h.request.grid.points();
  // The image (≤ 3 channels) and its RGBA copy, and the terrain grid.
  const uint64_t extra = points * 7 + (h.mesh ? meshBytes(points, 2 * points) : 0);
  const Field f = generateField(h.request, job, extra);

  Frame frame;
  frame.header = fieldHeader("noise.heightmap", h.request, f);
  auto start = Clock::now();
  const FieldImage8 image = heightmapImage(h, f);
  // RGBA, so the page hands it to ImageData / a texture as it is.
  std::vector<uint8_t> rgba(points * 4);
  for (uint64_t i = 0; i < points; ++i) {
    for (int c = 0; c < 3; ++c) rgba[4 * i + uint64_t(c)] = image.pixels[i * uint64_t(image.channels) + uint64_t(image.channels == 1 ? 0 : c)];
    rgba[4 * i + 3] = 255;
  }
  frame.header["timings"]["image_ms"] = msSince(start);
  frame.header["width"] = h.request.grid.size[0];
  frame.header["height"] = h.request.grid.size[1];
  frame.header["colormap_range"] = {image.low, image.high};
  frame.add("field", f.values.data(), f.values.size());
  frame.add("rgba", rgba);
  job.check();
  if (h.mesh) {
    start = Clock::now();
    const TriangleMesh mesh = heightmapMesh(h, f);
    frame.header["timings"]["mesh_ms"] = msSince(start);
    frame.header["height_scale"] = h.height_scale;
    addMesh(frame, mesh);
  }
  frame.header["timings"]["total_ms"] = job.elapsedMs();
  return Reply::ofFrame(frame);
}

// --- 3D: the voxel terrain ---------------------------------------------------

struct Terrain {
  FieldRequest request;
  IsosurfaceOptions iso;
  std::optional<ColorMap> colormap;  ///< vertex colours by height (y), or none
};

Terrain terrainRequest(const Params& p, const Job& job) {
  Terrain t;
  t.request = fieldRequest(p, 3, 96, kMaxTerrainSide, job);
  // Every type's values are in [−1, 1]; a threshold beyond shows all or nothing.
  t.iso.threshold = float(p.number("threshold", 0.0, -2, 2));
  t.iso.close_boundary = p.boolean("close_boundary", true);
  const std::string map = p.choice("colormap", "terrain", {"gray", "viridis", "terrain", "none"});
  if (map != "none") t.colormap = parseColorMap(map);
  return t;
}

TriangleMesh terrainMesh(const Terrain& t, const Field& f, const Job& job) {
  const NoiseGrid& g = t.request.grid;
  const VolumeView volume{f.values.data(), {g.size[0], g.size[1], g.size[2]}, {g.step, g.step, g.step},
                          {g.origin[0], g.origin[1], g.origin[2]}};
  IsosurfaceOptions iso = t.iso;
  // The mesh gets what the field leaves of the job's budget.
  iso.memory_budget = job.memoryBudget() > t.request.bytes() ? job.memoryBudget() - t.request.bytes() : 1;
  return extractIsosurface(volume, iso, t.request.execution);
}

Reply terrain(const Request& request, Job& job) {
  const Terrain t = terrainRequest(request.params, job);
  const Field f = generateField(t.request, job, 0);
  const auto start = Clock::now();
  const TriangleMesh mesh = terrainMesh(t, f, job);
  const double mesh_ms = msSince(start);
  job.check();

  Frame frame;
  frame.header = fieldHeader("noise.terrain", t.request, f);
  frame.header["threshold"] = t.iso.threshold;
  frame.header["timings"]["mesh_ms"] = mesh_ms;
  addMesh(frame, mesh);
  if (t.colormap) {
    // sRGB bytes of the colour map at the vertex's height within the mesh's
    // bounds: low ground dark (water, in "terrain"), peaks light.
    const Bounds b = mesh.bounds();
    const float extent = b.max.y - b.min.y;
    std::vector<uint8_t> colors(mesh.vertexCount() * 3);
    for (size_t i = 0; i < mesh.vertexCount(); ++i) {
      const std::array<float, 3> c =
          colorMapColor(*t.colormap, extent > 0 ? (mesh.positions[i].y - b.min.y) / extent : 0.5f);
      for (int k = 0; k < 3; ++k) colors[3 * i + size_t(k)] = uint8_t(std::lround(255.0f * c[size_t(k)]));
    }
    frame.add("colors", colors);
  }
  frame.header["timings"]["total_ms"] = job.elapsedMs();
  return Reply::ofFrame(frame);
}

// --- Files -------------------------------------------------------------------

std::string fileStem(const FieldRequest& r) {
  return "noise-" + std::string(noiseTypeName(r.params.type)) + "-" + std::to_string(r.params.dims) + "d-seed" +
         std::to_string(r.params.seed);
}

std::string asString(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

Reply meshFile(const TriangleMesh& mesh, const std::string& format, const std::string& stem) {
  const GeometryFormat geometry = *geometryFormatFromExtension(format);
  const char* type = format == "glb" ? "model/gltf-binary" : format == "obj" ? "model/obj" : "application/octet-stream";
  return Reply::ofBytes(type, asString(encodeMesh(mesh, geometry)), stem + "." + format);
}

/// The 2D field as a PNG (colour-mapped, or a 16-bit gray heightmap) or its
/// terrain grid; the 3D field's iso-surface. "format": png, png16, obj, ply, glb.
Reply exportFile(const Request& request, Job& job) {
  const Params& p = request.params;
  const int dims = int(p.integer("dims", 2, 2, 3));
  const std::string format = p.choice("format", dims == 2 ? "png" : "glb", {"png", "png16", "obj", "ply", "glb"});
  if (dims == 3 && format.starts_with("png"))
    throw BadRequest("'format' " + format + " is for 2D fields; a 3D terrain exports as obj, ply or glb");
  if (dims == 3) {
    const Terrain t = terrainRequest(p, job);
    const Field f = generateField(t.request, job, 0);
    return meshFile(terrainMesh(t, f, job), format, fileStem(t.request));
  }
  const Heightmap h = heightmapRequest(p, job);
  const uint64_t points = h.request.grid.points();
  const bool mesh = !format.starts_with("png");
  if (mesh && (h.request.grid.size[0] > kMaxHeightfieldMeshSide || h.request.grid.size[1] > kMaxHeightfieldMeshSide))
    throw BadRequest("'size' of a terrain grid export must be at most " + std::to_string(kMaxHeightfieldMeshSide) +
                     " per axis");
  const Field f = generateField(h.request, job, mesh ? meshBytes(points, 2 * points) : points * 3);
  const std::string stem = fileStem(h.request);
  if (mesh) return meshFile(heightmapMesh(h, f), format, stem);
  if (format == "png16") {
    const Heightmap16 map = heightmapToGray16(f.values.data(), int(h.request.grid.size[0]), int(h.request.grid.size[1]),
                                              0, h.full_range ? -1.0f : 0.0f, h.full_range ? 1.0f : 0.0f);
    return Reply::ofBytes("image/png", asString(encodePng(map.view())), stem + "-16bit.png");
  }
  const FieldImage8 image = heightmapImage(h, f);
  PngOptions png;
  png.srgb = h.colormap != ColorMap::kGray;  // a preview for screens; gray is data (as procgen noise)
  return Reply::ofBytes("image/png", asString(encodePng(image.view(), png)), stem + ".png");
}

}  // namespace

void registerNoiseEndpoints(Api& api) {
  api.compute("/api/noise/heightmap", "noise.heightmap", heightmap);
  api.compute("/api/noise/terrain", "noise.terrain", terrain);
  api.compute("/api/noise/export", "noise.export", exportFile);
}

}  // namespace procgen::studio

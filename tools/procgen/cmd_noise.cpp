// procgen noise TYPE: a noise field on a grid (procgen/noise.hpp) written as
// heightmaps, colour previews, raw float32 with a JSON sidecar, and — the
// seed's voxel terrain (shared/seeds/001_191daa7b81372e37.txt §5) — the
// iso-surface of a volume at --threshold or the terrain grid of a 2D field as
// meshes and shaded renders (procgen/mesh.hpp). `--at` prints one value.
// The options and all their checks are in noise_options.cpp: every bad input
// fails there, before the grid is allocated and before any file is written.
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <span>

#include "cli.hpp"
#include "noise_options.hpp"
#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/io.hpp"
#include "procgen/memory.hpp"
#include "procgen/mesh.hpp"

namespace procgen::cli {
namespace {

std::string shortest(float v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

/// FNV-1a (64-bit) of the float32 output bytes: the "checksum" of the stats.
uint64_t fieldChecksum(std::span<const float> values) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (size_t i = 0; i < values.size_bytes(); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

void printPoint(const NoiseJob& job) {
  const int dims = job.params.dims;
  float gradient[4] = {0, 0, 0, 0};
  const float value =
      noiseAt(job.params, *job.at, job.gradient ? std::span<float>(gradient, size_t(dims)) : std::span<float>());
  std::string line = shortest(value);
  if (job.gradient)
    for (int d = 0; d < dims; ++d) line += " " + shortest(gradient[d]);
  std::printf("%s\n", line.c_str());
  if (std::fflush(stdout) != 0) throw OutputError("cannot write to standard output");
}

/// Bytes the outputs need beside the grid, known before generating (meshes
/// of 3D fields are checked by extractIsosurface once counted).
uint64_t outputBytes(const NoiseJob& job) {
  const uint64_t points = job.grid.points();
  uint64_t bytes = 0;
  for (const NoiseOutput& o : job.outputs) {
    if (job.params.dims != 2) continue;
    if (o.kind == NoiseOutput::Kind::kImage && !job.shaded) bytes += points * (job.bits == 16 ? 2 : job.colormap == ColorMap::kGray ? 1 : 3);
    if (o.kind == NoiseOutput::Kind::kMesh || (o.kind == NoiseOutput::Kind::kImage && job.shaded)) bytes += points * (2 * sizeof(Vec3) + 6 * sizeof(uint32_t));
  }
  return bytes;
}

std::filesystem::path withExtension(const std::string& path, const char* ext) {
  std::filesystem::path p(path);
  p.replace_extension(ext);
  return p;
}

Json noiseJson(const NoiseJob& job, const NoiseRange& range) {
  const NoiseParams& p = job.params;
  Json j;
  j["type"] = std::string(noiseTypeName(p.type));
  j["dims"] = p.dims;
  Json size = Json::array();
  for (int d = 0; d < p.dims; ++d) size.push_back(job.grid.size[size_t(d)]);
  j["size"] = size;
  Json origin = Json::array();
  for (int d = 0; d < p.dims; ++d) origin.push_back(job.grid.origin[size_t(d)]);
  j["origin"] = origin;
  j["step"] = job.grid.step;
  j["frequency"] = p.frequency;
  j["seed"] = p.seed;
  j["octaves"] = p.octaves;
  j["tile"] = job.grid.tile;
  if (p.time) j["time"] = *p.time;
  j["min"] = range.min;
  j["max"] = range.max;
  return j;
}

/// OUT.raw, its sidecar OUT.json (volume.hpp's, plus "noise": the field's
/// parameters and the 4D size) and, up to 3D, a NRRD header OUT.nhdr.
void writeRaw(const std::string& path, const NoiseJob& job, std::span<const float> values, const NoiseRange& range) {
  const auto& s = job.grid.size;
  VolumeView view{values.data(), {s[0], s[1], s[2] * s[3]}, {job.grid.step, job.grid.step, job.grid.step},
                  {job.grid.origin[0], job.grid.origin[1], job.grid.origin[2]}};
  const std::filesystem::path raw = withExtension(path, ".raw");
  const std::string raw_name = raw.filename().string();
  {
    std::unique_ptr<ByteSink> sink = openOutput(raw.string());
    writeVolumeRaw(view, *sink);
  }
  Json sidecar = Json::parse(volumeJson(view, raw_name));
  sidecar["noise"] = noiseJson(job, range);
  writeOutput(withExtension(path, ".json").string(), formatJson(sidecar));
  if (job.params.dims <= 3) writeOutput(withExtension(path, ".nhdr").string(), volumeNrrdHeader(view, raw_name));
}

/// The field as one OpenVDB float grid named "density" (a 2D field is one
/// voxel thick), with the noise parameters as grid metadata.
void writeVdb(const std::string& path, const NoiseJob& job, std::span<const float> values, const NoiseRange& range) {
  const auto& s = job.grid.size;
  const VolumeView view{values.data(), {s[0], s[1], s[2]}, {job.grid.step, job.grid.step, job.grid.step},
                        {job.grid.origin[0], job.grid.origin[1], job.grid.origin[2]}};
  VdbWriteOptions options;
  options.metadata.emplace_back("procgen_noise", noiseJson(job, range).dump());
  std::unique_ptr<ByteSink> sink = openOutput(path);
  writeVolumeVdb(view, *sink, options);
}

void writeImage(const std::string& path, const NoiseJob& job, std::span<const float> values, const NoiseRange& range) {
  const int w = int(job.grid.size[0]), h = int(job.grid.size[1]);
  // The actual min..max of the field maps to black..white (or the map's ends).
  const float low = range.min < range.max ? range.min : 0.0f, high = range.min < range.max ? range.max : 0.0f;
  if (job.bits == 16) {
    const Heightmap16 map = heightmapToGray16(values.data(), w, h, 0, low, high);
    writePng(map.view(), path);
    return;
  }
  const FieldImage8 image = fieldToImage8(values.data(), w, h, job.colormap, low, high);
  PngOptions png;
  png.srgb = job.colormap != ColorMap::kGray;  // a preview for screens; gray is data
  writePng(image.view(), path, png);
}

void runNoise(const NoiseArgs& args, const ExecutionOptions& execution_options) {
  using Clock = std::chrono::steady_clock;
  const NoiseJob job = resolveNoiseArgs(args);
  const Execution execution = execution_options.resolve();
  if (job.at) return printPoint(job);

  requireMemory("noise grid", job.grid_bytes);
  requireMemory("noise outputs", outputBytes(job), 0, job.grid_bytes);
  const uint64_t points = job.grid.points();
  OverwriteVector<float> values(points);
  const auto t0 = Clock::now();
  const NoiseRange range = generateNoise(job.params, job.grid, std::span<float>(values.data(), points), execution,
                                         job.evaluation);
  const double gen_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const std::span<const float> field(values.data(), points);

  TriangleMesh mesh;
  const bool meshed = job.needsMesh();
  if (meshed && job.params.dims == 3) {
    IsosurfaceOptions iso;
    iso.threshold = job.threshold;
    iso.close_boundary = job.close_boundary;
    const uint64_t budget = effectiveMemoryBudget(0);
    iso.memory_budget = budget > job.grid_bytes ? budget - job.grid_bytes : 1;
    const auto& s = job.grid.size;
    const VolumeView view{values.data(), {s[0], s[1], s[2]}, {job.grid.step, job.grid.step, job.grid.step},
                          {job.grid.origin[0], job.grid.origin[1], job.grid.origin[2]}};
    mesh = extractIsosurface(view, iso, execution);
  } else if (meshed) {
    HeightfieldOptions terrain;
    terrain.spacing = job.grid.step;
    terrain.height_scale = job.height_scale;
    terrain.origin_x = job.grid.origin[0];
    terrain.origin_z = job.grid.origin[1];
    mesh = heightfieldMesh(values.data(), job.grid.size[0], job.grid.size[1], terrain);
  }

  for (const NoiseOutput& out : job.outputs) {
    switch (out.kind) {
      case NoiseOutput::Kind::kRaw: writeRaw(out.path, job, field, range); break;
      case NoiseOutput::Kind::kImage:
        if (job.params.dims == 2 && !job.shaded) writeImage(out.path, job, field, range);
        else writeMesh(mesh, out.path, job.write);
        break;
      case NoiseOutput::Kind::kMesh: writeMesh(mesh, out.path, job.write); break;
      case NoiseOutput::Kind::kVdb: writeVdb(out.path, job, field, range); break;
    }
  }

  double sum = 0;
  for (float v : field) sum += v;
  const double mpts = gen_ms > 0 ? double(points) / (gen_ms * 1e3) : 0.0;
  if (!job.stats_json.empty()) {
    Json j;
    j["type"] = std::string(noiseTypeName(job.params.type));
    j["dims"] = job.params.dims;
    Json size = Json::array();
    for (int d = 0; d < job.params.dims; ++d) size.push_back(job.grid.size[size_t(d)]);
    j["size"] = size;
    j["points"] = points;
    j["octaves"] = job.params.octaves;
    j["frequency"] = job.params.frequency;
    j["seed"] = job.params.seed;
    j["min"] = range.min;
    j["max"] = range.max;
    j["mean"] = sum / double(points);
    j["checksum"] = hex64(fieldChecksum(field));
    j["gen_ms"] = gen_ms;
    j["mpts_per_s"] = mpts;
    j["backend"] = std::string(backendName(execution.backend));
    j["threads"] = effectiveThreads(execution);
    j["evaluation"] = job.evaluation == NoiseEvaluation::kNaive ? "naive" : "optimized";
    if (meshed) {
      j["vertices"] = mesh.vertexCount();
      j["triangles"] = mesh.triangleCount();
    }
    writeOutput(job.stats_json, formatJson(j));
  }
  if (!job.quiet) {
    std::string size;
    for (int d = 0; d < job.params.dims; ++d) size += (d ? "x" : "") + std::to_string(job.grid.size[size_t(d)]);
    std::fprintf(stderr, "%s %dD %s: %" PRIu64 " points in %.1f ms (%.1f M points/s), range [%s, %s]",
                 std::string(noiseTypeName(job.params.type)).c_str(), job.params.dims, size.c_str(), points, gen_ms,
                 mpts, shortest(range.min).c_str(), shortest(range.max).c_str());
    if (meshed) std::fprintf(stderr, "; mesh %zu vertices, %zu triangles", mesh.vertexCount(), mesh.triangleCount());
    std::fprintf(stderr, "\n");
  }
}

void setupNoise(CLI::App& app) {
  auto args = std::make_shared<NoiseArgs>();
  auto execution = std::make_shared<ExecutionOptions>();
  CLI::App* cmd = app.add_subcommand("noise", "Noise fields (Perlin, simplex, value, cellular; fractal sums) on grids: "
                                              "heightmaps, volumes and voxel-terrain meshes");
  cmd->footer(
      "Sample i is noise((origin + step i) frequency), x fastest, then y, z, w; every type returns values in "
      "[-1, 1].\nOutputs by extension: .png (2D: gray heightmap, --bits 16 for 16-bit, --colormap for an RGB "
      "preview, --shaded for a render of the terrain grid; 3D: shaded iso-surface at --threshold), .raw (float32 little-endian + OUT.json sidecar + OUT.nhdr), "
      ".obj .ply .glb .gltf (3D: iso-surface at --threshold, closed at the volume's faces; 2D: terrain grid).\n"
      "Examples:\n  procgen noise perlin --dims 2 --size 1024x1024 -o height.png\n"
      "  procgen noise perlin --threshold 0 -o terrain.glb -o terrain.png\n"
      "  procgen noise simplex --at 1.5,2.5,3.5 --gradient");
  addNoiseOptions(*cmd, *args);
  execution->add(*cmd);
  cmd->callback([args, execution] { runNoise(*args, *execution); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(25, setupNoise);

}  // namespace procgen::cli

// procgen noise TYPE: a noise field on a grid (procgen/noise.hpp) written as
// heightmaps, colour previews, raw float32 with a JSON sidecar, and — the
// seed's voxel terrain (shared/seeds/001_191daa7b81372e37.txt §5) — the
// iso-surface of a volume at --threshold or the terrain grid of a 2D field as
// meshes and shaded renders (procgen/mesh.hpp). `--at` prints one value.
// The options and all their checks are in noise_options.cpp: every bad input
// fails there, before the grid is allocated and before any file is written.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <tuple>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <span>

#include "cli.hpp"
#include "noise_options.hpp"
#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"
#include "procgen/io.hpp"
#include "procgen/memory.hpp"
#include "procgen/mesh.hpp"

namespace procgen::cli {
namespace {

std::string shortest(float v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
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

/// The statistics of the whole field that the raw sidecar reports, from
/// every rank's slab (procgen/distributed.hpp; one rank: its own values).
struct FieldSummary {
  float finite_min = INFINITY, finite_max = -INFINITY;
  uint64_t non_finite = 0;
};

FieldSummary summarize(std::span<const float> slab) {
  FieldSummary s;
  for (float v : slab) {
    if (!std::isfinite(v)) {
      ++s.non_finite;
      continue;
    }
    s.finite_min = std::min(s.finite_min, v);
    s.finite_max = std::max(s.finite_max, v);
  }
  float lo[1] = {s.finite_min}, hi[1] = {s.finite_max};
  uint64_t count[1] = {s.non_finite};
  distributed::allReduce(std::span<float>(lo, 1), distributed::ReduceOp::kMin);
  distributed::allReduce(std::span<float>(hi, 1), distributed::ReduceOp::kMax);
  distributed::allReduce(std::span<uint64_t>(count, 1), distributed::ReduceOp::kSum);
  return {lo[0], hi[0], count[0]};
}

/// OUT.raw, its sidecar OUT.json (volume.hpp's, plus "noise": the field's
/// parameters and the 4D size) and, up to 3D, a NRRD header OUT.nhdr.
/// Collective: each rank writes its slab (values of the points from
/// `first_point` on) at its offset into the one raw file (MPI-IO); rank 0
/// writes the sidecars.
void writeRaw(const std::string& path, const NoiseJob& job, std::span<const float> slab, uint64_t first_point,
              const NoiseRange& range) {
  const auto& s = job.grid.size;
  VolumeView view{slab.data(), {s[0], s[1], s[2] * s[3]}, {job.grid.step, job.grid.step, job.grid.step},
                  {job.grid.origin[0], job.grid.origin[1], job.grid.origin[2]}};
  const std::filesystem::path raw = withExtension(path, ".raw");
  const std::string raw_name = raw.filename().string();
  distributed::writeFileAtOffsets(raw.string(), first_point * sizeof(float),
                                  {reinterpret_cast<const uint8_t*>(slab.data()), slab.size_bytes()},
                                  job.grid.points() * sizeof(float));
  const FieldSummary summary = summarize(slab);
  if (!distributed::isRoot()) return;
  // volumeJson of the whole volume: its keys from one slab, the statistics from all.
  VolumeView part = view;
  part.dims = {1, 1, 1};
  Json sidecar = Json::parse(volumeJson(part, raw_name));
  sidecar["dims"] = view.dims;
  if (summary.finite_min <= summary.finite_max) sidecar["value_range"] = {summary.finite_min, summary.finite_max};
  else sidecar["value_range"] = nullptr;
  sidecar["non_finite_values"] = summary.non_finite;
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

/// The part of the grid one rank generates: the slab it owns along the
/// slowest axis, and the window around it that its iso-surface reads.
struct NoiseSlab {
  int axis = 0;
  uint64_t depth = 1;              ///< planes along the axis
  distributed::Block own, window;  ///< planes owned, planes generated
  uint64_t plane_points = 1;       ///< points per plane
};

NoiseSlab planSlab(const NoiseJob& job, bool iso_mesh) {
  NoiseSlab slab;
  slab.axis = job.params.dims - 1;
  slab.depth = job.grid.size[size_t(slab.axis)];
  slab.plane_points = job.grid.points() / slab.depth;
  const int ranks = distributed::size();
  if (uint64_t(ranks) > slab.depth)
    throw Error("noise: " + std::to_string(ranks) + " MPI ranks for " + std::to_string(slab.depth) +
                    " planes along the slowest axis; use at most one rank per plane",
                ExitCode::kUsage);
  slab.own = distributed::blockOf(slab.depth, distributed::rank(), ranks);
  slab.window = slab.own;
  if (iso_mesh) std::tie(slab.window.begin, slab.window.end) = isosurfaceWindow(slab.own.begin, slab.own.end, slab.depth);
  return slab;
}

/// FNV-1a of the field's bytes and the double sum of its values, in the
/// field's order over the ranks' slabs (distributed::chain): the numbers one
/// process computes over the whole field.
std::pair<uint64_t, double> checksumAndSum(std::span<const float> slab, bool want_checksum) {
  struct State {
    uint64_t hash = 0xcbf29ce484222325ull;
    double sum = 0;
  } state;
  std::vector<uint8_t> bytes(sizeof(State));
  std::memcpy(bytes.data(), &state, sizeof state);
  distributed::chain(bytes, [&](std::vector<uint8_t>& b) {
    State st;
    std::memcpy(&st, b.data(), sizeof st);
    if (want_checksum) {
      const auto* p = reinterpret_cast<const unsigned char*>(slab.data());
      for (size_t i = 0; i < slab.size_bytes(); ++i) st.hash = (st.hash ^ p[i]) * 0x100000001b3ull;
    }
    for (float v : slab) st.sum += v;
    std::memcpy(b.data(), &st, sizeof st);
  });
  std::memcpy(&state, bytes.data(), sizeof state);
  return {state.hash, state.sum};
}

/// Under mpirun (procgen/distributed.hpp) the field is split into slabs of
/// its slowest axis (z-planes of a volume, rows of a 2D field) over the
/// ranks: each generates its slab (generateNoiseSlab: the same values as one
/// process), raw volumes are written collectively at each slab's offset,
/// iso-surfaces are meshed per slab (extractIsosurfaceAcrossRanks), and
/// outputs that need the whole field (images, terrain grids, .vdb) gather it
/// on rank 0, which writes them and reports. One rank: the slab is the field.
void runNoise(const NoiseArgs& args, const ExecutionOptions& execution_options) {
  using Clock = std::chrono::steady_clock;
  const NoiseJob job = resolveNoiseArgs(args);
  const Execution execution = execution_options.resolve();
  if (job.at) {
    if (distributed::isRoot()) printPoint(job);
    return;
  }
  const bool meshed = job.needsMesh();
  const bool iso_mesh = meshed && job.params.dims == 3;
  bool whole_field = meshed && !iso_mesh;  // the terrain grid of a 2D field
  for (const NoiseOutput& o : job.outputs) {
    whole_field = whole_field || o.kind == NoiseOutput::Kind::kVdb ||
                  (o.kind == NoiseOutput::Kind::kImage && job.params.dims == 2 && !job.shaded);
    // The .vdb writer is a module loaded on demand: a missing one fails now, not after the field is made.
    if (o.kind == NoiseOutput::Kind::kVdb) loadVolumeVdbWriter();
  }
  const int ranks = distributed::size();
  const NoiseSlab slab = planSlab(job, iso_mesh);

  const uint64_t points = job.grid.points();
  const uint64_t window_points = slab.plane_points * (slab.window.end - slab.window.begin);
  const uint64_t whole_bytes = ranks > 1 && whole_field && distributed::isRoot() ? job.grid_bytes : 0;
  requireMemory("noise grid", window_points * sizeof(float) + whole_bytes);
  requireMemory("noise outputs", outputBytes(job), 0, window_points * sizeof(float) + whole_bytes);
  OverwriteVector<float> values(window_points);
  const auto t0 = Clock::now();
  const NoiseRange window_range =
      generateNoiseSlab(job.params, job.grid, slab.axis, slab.window.begin, slab.window.end,
                        std::span<float>(values.data(), window_points), execution, job.evaluation);
  const double gen_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  // This rank's slab inside the window; the field's range over all slabs
  // (the window's extra planes belong to neighbouring slabs, so the range is the field's).
  const std::span<const float> own(values.data() + (slab.own.begin - slab.window.begin) * slab.plane_points,
                                   (slab.own.end - slab.own.begin) * slab.plane_points);
  float range_values[2] = {window_range.min, -window_range.max};
  distributed::allReduce(std::span<float>(range_values, 2), distributed::ReduceOp::kMin);
  const NoiseRange range{range_values[0], -range_values[1]};

  // The whole field on rank 0, when an output needs it (one rank: its own values).
  std::vector<float> gathered;
  if (ranks > 1 && whole_field) {
    const std::vector<uint8_t> bytes =
        distributed::gather({reinterpret_cast<const uint8_t*>(own.data()), own.size_bytes()}, 0);
    gathered.resize(bytes.size() / sizeof(float));
    std::memcpy(gathered.data(), bytes.data(), bytes.size());
  }
  const std::span<const float> field = ranks == 1 ? own : std::span<const float>(gathered);

  TriangleMesh mesh;
  if (iso_mesh) {
    IsosurfaceOptions iso;
    iso.threshold = job.threshold;
    iso.close_boundary = job.close_boundary;
    const uint64_t budget = effectiveMemoryBudget(0);
    iso.memory_budget = budget > job.grid_bytes ? budget - job.grid_bytes : 1;
    const auto& s = job.grid.size;
    const VolumeView window{values.data(), {s[0], s[1], slab.window.end - slab.window.begin},
                            {job.grid.step, job.grid.step, job.grid.step},
                            {job.grid.origin[0], job.grid.origin[1], job.grid.origin[2]}};
    mesh = extractIsosurfaceAcrossRanks(window, slab.window.begin, slab.depth, slab.own.begin, slab.own.end, iso,
                                        execution);
  } else if (meshed && distributed::isRoot()) {
    HeightfieldOptions terrain;
    terrain.spacing = job.grid.step;
    terrain.height_scale = job.height_scale;
    terrain.origin_x = job.grid.origin[0];
    terrain.origin_z = job.grid.origin[1];
    mesh = heightfieldMesh(field.data(), job.grid.size[0], job.grid.size[1], terrain);
  }

  for (const NoiseOutput& out : job.outputs) {
    if (out.kind == NoiseOutput::Kind::kRaw) {  // collective: every rank writes its slab
      writeRaw(out.path, job, own, slab.own.begin * slab.plane_points, range);
      continue;
    }
    if (!distributed::isRoot()) continue;
    switch (out.kind) {
      case NoiseOutput::Kind::kRaw: break;
      case NoiseOutput::Kind::kImage:
        if (job.params.dims == 2 && !job.shaded) writeImage(out.path, job, field, range);
        else writeMesh(mesh, out.path, job.write);
        break;
      case NoiseOutput::Kind::kMesh: writeMesh(mesh, out.path, job.write); break;
      case NoiseOutput::Kind::kVdb: writeVdb(out.path, job, field, range); break;
    }
  }

  // Only the stats report them (the same on every rank, so every rank skips the chain alike).
  const auto [checksum, sum] = job.stats_json.empty() ? std::pair<uint64_t, double>{0, 0.0} : checksumAndSum(own, true);
  double slowest_gen_ms[1] = {gen_ms};  // the job's generation time: its slowest rank's
  distributed::allReduce(std::span<double>(slowest_gen_ms, 1), distributed::ReduceOp::kMax);
  if (!distributed::isRoot()) return;
  const double job_gen_ms = slowest_gen_ms[0];
  const double mpts = job_gen_ms > 0 ? double(points) / (job_gen_ms * 1e3) : 0.0;
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
    j["checksum"] = hex64(checksum);
    j["gen_ms"] = job_gen_ms;
    j["mpts_per_s"] = mpts;
    j["backend"] = std::string(backendName(execution.backend));
    j["threads"] = effectiveThreads(execution);
    if (distributed::active()) j["ranks"] = ranks;
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
                 std::string(noiseTypeName(job.params.type)).c_str(), job.params.dims, size.c_str(), points,
                 job_gen_ms, mpts, shortest(range.min).c_str(), shortest(range.max).c_str());
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

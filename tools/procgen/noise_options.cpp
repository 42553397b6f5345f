#include "noise_options.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/volume.hpp"

namespace procgen::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(message, ExitCode::kUsage); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (true) {
    const size_t next = s.find(sep, at);
    parts.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) return parts;
    at = next + 1;
  }
}

uint64_t parseCount(const std::string& text, const char* what) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw Error(std::string(what) + ": '" + text + "' overflows 64 bits", ExitCode::kBadInput);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    usage(std::string(what) + ": '" + text + "' is not a whole number");
  if (v == 0) usage(std::string(what) + ": every size must be at least 1");
  return v;
}

double parseCoordinate(const std::string& text, const char* what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    usage(std::string(what) + ": '" + text + "' is not a number");
  if (!std::isfinite(v)) usage(std::string(what) + ": '" + text + "' is not finite");
  return v;
}

void requireFinite(double v, const char* option) {
  if (!std::isfinite(v)) usage(std::string(option) + " must be a finite number");
}

}  // namespace

bool NoiseJob::needsMesh() const {
  for (const NoiseOutput& o : outputs)
    if (o.kind == NoiseOutput::Kind::kMesh || (o.kind == NoiseOutput::Kind::kImage && (params.dims == 3 || shaded)))
      return true;
  return false;
}

void addNoiseOptions(CLI::App& cmd, NoiseArgs& a) {
  cmd.add_option("TYPE", a.type, "perlin, simplex, value or cellular")->required()->group("Field");
  addInteger(cmd, "--dims", a.dims, "Spatial dimensions 2, 3 or 4 (default: the number of --size components, else 3)", 2, 4)
      ->group("Field");
  cmd.add_option("--size", a.size,
                 "Samples per axis: W[xH[xD[xT]]]; one number for every axis (default 128 per axis; 512x512 in 2D)")
      ->group("Field");
  cmd.add_option("--origin", a.origin, "Position of sample 0: X,Y[,Z[,W]] (default 0)")->group("Field");
  cmd.add_option("--step", a.step, "Distance between neighbouring samples")->capture_default_str()->group("Field");
  cmd.add_option("--frequency", a.frequency, "Noise frequency: sample i is noise((origin + step i) frequency) (default 0.0173)")
      ->group("Field");
  cmd.add_option("--fractal", a.fractal, "none, fbm, ridged, billow or pingpong")->capture_default_str()->group("Fractal");
  addInteger(cmd, "--octaves", a.octaves, "Octaves 1..16 (default 5)", 1, kMaxOctaves)->group("Fractal");
  cmd.add_option("--lacunarity", a.lacunarity, "Frequency factor per octave (default 2)")->group("Fractal");
  cmd.add_option("--gain", a.gain, "Amplitude factor per octave (default 0.5)")->group("Fractal");
  cmd.add_option("--weighted-strength", a.weighted_strength, "0..1: later octaves weighted by earlier values (default 0)")
      ->group("Fractal");
  cmd.add_option("--warp", a.warp, "Domain warp amplitude in field units (default 0: none)")->group("Fractal");
  cmd.add_option("--warp-type", a.warp_type, "Domain warp: single or fractal")->capture_default_str()->group("Fractal");
  cmd.add_flag("--tile", a.tile, "Periodic with the grid's extent in every axis (seamless tiles)")->group("Field");
  cmd.add_option("--time", a.time, "Time: one more noise coordinate (2D+T, 3D+T)")->group("Field");
  cmd.add_option("--cellular-distance", a.cellular_distance, "euclidean, sq, manhattan or chebyshev")
      ->capture_default_str()
      ->group("Cellular");
  cmd.add_option("--cellular-return", a.cellular_return, "f1, f2, f2-f1 or value")->capture_default_str()->group("Cellular");
  cmd.add_option("--jitter", a.jitter, "Cellular jitter 0..1 (default 1)")->group("Cellular");
  addInteger(cmd, "--seed", a.seed, "Integer seed, 0 .. 2^64-1")->capture_default_str()->group("Field");
  cmd.add_flag("--naive", a.naive, "Evaluate every point on its own (the reference; slower)")->group("Execution");
  cmd.add_option("-o,--output", a.outputs,
                 "Output, repeatable, by extension: .png (2D: heightmap or --colormap preview; 3D: shaded "
                 "iso-surface), .raw (+ .json sidecar), .obj .ply .glb .gltf (3D: iso-surface; 2D: terrain grid)")
      ->group("Output");
  cmd.add_option("--stats-json", a.stats_json, "Write statistics as JSON to PATH, or - for stdout")->group("Output");
  cmd.add_option("--threshold", a.threshold, "Iso-surface level of meshes and renders of 3D fields (inside: above)")
      ->capture_default_str()
      ->group("Output");
  cmd.add_flag("--open-boundary", a.open_boundary,
               "Iso-surfaces stop open at the volume's faces (default: closed by caps, watertight)")
      ->group("Output");
  addInteger(cmd, "--bits", a.bits, "PNG heightmap depth: 8 or 16 (16 maps min..max to 0..65535)", 8, 16)
      ->capture_default_str()
      ->group("Output");
  cmd.add_option("--colormap", a.colormap, "2D PNG: gray (a heightmap), viridis or terrain (an 8-bit RGB preview)")
      ->capture_default_str()
      ->group("Output");
  cmd.add_flag("--shaded", a.shaded, "2D PNG: a shaded render of the terrain grid (as .obj/.glb) instead of the field")
      ->group("Output");
  cmd.add_option("--height-scale", a.height_scale,
                 "Terrain meshes of 2D fields: world units per field unit (default 0.15 x the larger extent)")
      ->group("Output");
  cmd.add_option("--image-size", a.image_size, "Size W,H of iso-surface renders (default 1024,1024)")
      ->expected(2)
      ->delimiter(',')
      ->group("Output");
  cmd.add_option("--projection", a.projection, "Iso-surface renders: front, side, top or iso")
      ->capture_default_str()
      ->group("Output");
  cmd.add_flag("-q,--quiet", a.quiet, "No summary on stderr")->group("Output");
  cmd.add_option("--at", a.at, "Print the value at one point X,Y[,Z[,W]] (scaled by --frequency) instead of a grid")
      ->group("Point");
  cmd.add_flag("--gradient", a.gradient, "With --at: also print the gradient (perlin, simplex)")->group("Point");
}

NoiseJob resolveNoiseArgs(const NoiseArgs& a) {
  NoiseJob job;
  NoiseParams& p = job.params;
  const std::optional<NoiseType> type = parseNoiseType(a.type);
  if (!type) usage("unknown noise type '" + a.type + "' (perlin, simplex, value, cellular)");
  p.type = *type;

  std::vector<uint64_t> size;
  if (!a.size.empty())
    for (const std::string& part : split(a.size, 'x')) size.push_back(parseCount(part, "--size"));
  if (size.size() > 4) usage("--size: at most 4 axes (W x H x D x T)");
  p.dims = a.dims.value_or(size.size() >= 2 ? int(size.size()) : 3);
  if (p.dims < 2 || p.dims > 4) usage("--dims must be 2, 3 or 4");
  if (size.size() > 1 && size.size() != size_t(p.dims))
    usage("--size has " + std::to_string(size.size()) + " axes but --dims is " + std::to_string(p.dims));
  const uint64_t fill = size.size() == 1 ? size[0] : p.dims == 2 ? 512 : p.dims == 3 ? 128 : 32;
  for (int d = 0; d < 4; ++d)
    job.grid.size[size_t(d)] = d >= p.dims ? 1 : size.size() > 1 ? size[size_t(d)] : fill;
  uint64_t points = 1;
  for (uint64_t s : job.grid.size) {
    const std::optional<uint64_t> next = checkedMul(points, s);
    const std::optional<uint64_t> bytes = next ? checkedMul(*next, sizeof(float)) : std::nullopt;
    if (!bytes) throw Error("--size: the grid's size overflows 64 bits", ExitCode::kBadInput);
    points = *next;
  }
  job.grid_bytes = points * sizeof(float);

  if (!a.origin.empty()) {
    const std::vector<std::string> parts = split(a.origin, ',');
    if (parts.size() != size_t(p.dims))
      usage("--origin needs " + std::to_string(p.dims) + " coordinates, got " + std::to_string(parts.size()));
    for (size_t d = 0; d < parts.size(); ++d) job.grid.origin[d] = parseCoordinate(parts[d], "--origin");
  }
  requireFinite(a.step, "--step");
  if (!(a.step > 0)) usage("--step must be positive");
  job.grid.step = a.step;
  job.grid.tile = a.tile;

  if (a.frequency) p.frequency = *a.frequency;
  const std::optional<FractalType> fractal = parseFractalType(a.fractal);
  if (!fractal) usage("unknown --fractal '" + a.fractal + "' (none, fbm, ridged, billow, pingpong)");
  p.fractal = *fractal;
  if (a.octaves) p.octaves = *a.octaves;
  if (a.lacunarity) p.lacunarity = *a.lacunarity;
  if (a.gain) p.gain = *a.gain;
  if (a.weighted_strength) p.weighted_strength = *a.weighted_strength;
  if (a.warp) {
    requireFinite(*a.warp, "--warp");
    if (a.warp_type != "single" && a.warp_type != "fractal") usage("unknown --warp-type '" + a.warp_type + "' (single, fractal)");
    p.warp_amplitude = *a.warp;
    p.warp = *a.warp == 0.0f ? DomainWarp::kNone : a.warp_type == "fractal" ? DomainWarp::kFractal : DomainWarp::kSingle;
  }
  p.time = a.time;
  const std::optional<CellularDistance> distance = parseCellularDistance(a.cellular_distance);
  if (!distance) usage("unknown --cellular-distance '" + a.cellular_distance + "' (euclidean, sq, manhattan, chebyshev)");
  p.cellular_distance = *distance;
  const std::optional<CellularReturn> ret = parseCellularReturn(a.cellular_return);
  if (!ret) usage("unknown --cellular-return '" + a.cellular_return + "' (f1, f2, f2-f1, value)");
  p.cellular_return = *ret;
  if (a.jitter) p.cellular_jitter = *a.jitter;
  p.seed = a.seed;
  job.evaluation = a.naive ? NoiseEvaluation::kNaive : NoiseEvaluation::kOptimized;
  requireFinite(a.threshold, "--threshold");
  job.threshold = a.threshold;
  job.close_boundary = !a.open_boundary;
  job.quiet = a.quiet;
  job.stats_json = a.stats_json;

  if (!a.at.empty()) {
    std::vector<double> point;
    for (const std::string& part : split(a.at, ',')) point.push_back(parseCoordinate(part, "--at"));
    if (point.size() != size_t(p.dims))
      usage("--at needs " + std::to_string(p.dims) + " coordinates (--dims), got " + std::to_string(point.size()));
    job.at = std::move(point);
    if (!a.outputs.empty()) usage("--at prints one value: it takes no -o");
  } else if (a.gradient) {
    usage("--gradient needs --at");
  }
  job.gradient = a.gradient;
  // The library's own checks (types, octaves, lacunarity, gain, ranges), with its messages.
  validateNoise(p, job.at ? nullptr : &job.grid);

  if (a.bits != 8 && a.bits != 16) usage("--bits must be 8 or 16");
  job.bits = a.bits;
  const std::optional<ColorMap> map = parseColorMap(a.colormap);
  if (!map) usage("unknown --colormap '" + a.colormap + "' (gray, viridis, terrain)");
  job.colormap = *map;
  job.shaded = a.shaded;
  if (job.shaded && p.dims == 2 && (job.grid.size[0] < 2 || job.grid.size[1] < 2))
    usage("--shaded: a terrain mesh needs at least 2x2 samples");
  if (job.bits == 16 && job.colormap != ColorMap::kGray) usage("--bits 16 is for gray heightmaps; colour previews are 8-bit");
  applyImageOptions(a.projection, a.image_size, job.write);
  const double extent = double(std::max(job.grid.size[0], job.grid.size[1])) * job.grid.step;
  job.height_scale = a.height_scale.value_or(0.15 * extent);
  if (!std::isfinite(job.height_scale) || !(job.height_scale > 0)) usage("--height-scale must be finite and positive");

  for (const std::string& path : a.outputs) {
    NoiseOutput out;
    out.path = path;
    const std::string ext = extensionOf(path);
    if (path == "-" || path.empty()) usage("-o needs a file name with an extension (standard output is for --stats-json)");
    if (ext == ".raw") {
      out.kind = NoiseOutput::Kind::kRaw;
    } else if (ext == ".vdb") {
      out.kind = NoiseOutput::Kind::kVdb;
      if (!volumeVdbAvailable())
        usage("cannot write '" + path + "': this build has no OpenVDB (.vdb); write .raw and its .json sidecar instead");
      if (p.dims == 4) usage("cannot write '" + path + "': a 4D field has no .vdb; use .raw");
    } else if (ext == ".png") {
      out.kind = NoiseOutput::Kind::kImage;
      if (p.dims == 4) usage("cannot write '" + path + "': a 4D field has no picture; use .raw");
      if (p.dims == 2 && (job.grid.size[0] > uint64_t(std::numeric_limits<int32_t>::max()) ||
                          job.grid.size[1] > uint64_t(std::numeric_limits<int32_t>::max())))
        usage("cannot write '" + path + "': PNG images are at most 2^31 - 1 pixels wide and high");
    } else if (const std::optional<GeometryFormat> f = geometryFormatFromExtension(ext);
               f && *f != GeometryFormat::kSvg && *f != GeometryFormat::kPng) {
      out.kind = NoiseOutput::Kind::kMesh;
      out.format = *f;
      if (p.dims == 4) usage("cannot write '" + path + "': meshes are made of 2D and 3D fields");
      if (p.dims == 2 && (job.grid.size[0] < 2 || job.grid.size[1] < 2))
        usage("cannot write '" + path + "': a terrain mesh needs at least 2x2 samples");
    } else {
      usage("unsupported output '" + path + "': use .png, .raw, .vdb, .obj, .ply, .glb or .gltf");
    }
    job.outputs.push_back(out);
  }
  return job;
}

}  // namespace procgen::cli

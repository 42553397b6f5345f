// The options of `procgen noise` (issue 17 point 5) and their checking, apart
// from the command so that the fuzz target (tests/fuzz/fuzz_noise_options.cpp)
// and the tests run exactly the parser the command runs. Resolving never
// allocates the grid and never touches a file: every bad value is found here,
// before anything is generated or written.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "procgen/image.hpp"
#include "procgen/io.hpp"
#include "procgen/noise.hpp"

namespace procgen::cli {

/// What CLI11 fills: raw strings where the command parses the syntax itself.
struct NoiseArgs {
  std::string type;
  std::optional<int> dims;
  std::string size, origin;
  double step = 1.0;
  std::optional<double> frequency;
  std::string fractal = "fbm";
  std::optional<int> octaves;
  std::optional<float> lacunarity, gain, weighted_strength;
  std::optional<float> warp;
  std::string warp_type = "single";
  bool tile = false;
  std::optional<double> time;
  std::string cellular_distance = "euclidean", cellular_return = "f1";
  std::optional<float> jitter;
  uint64_t seed = 1337;
  float threshold = 0.0f;
  bool naive = false;
  bool open_boundary = false;
  std::vector<std::string> outputs;
  std::string stats_json;
  int bits = 8;
  std::string colormap = "gray";
  bool shaded = false;
  std::optional<double> height_scale;
  std::vector<int> image_size;
  std::string projection = "iso";
  bool quiet = false;
  std::string at;
  bool gradient = false;
};

/// Adds every noise option (not --backend/--threads, which ExecutionOptions adds).
void addNoiseOptions(CLI::App& cmd, NoiseArgs& a);

/// One -o, by extension.
struct NoiseOutput {
  enum class Kind { kImage, kRaw, kMesh, kVdb };
  std::string path;
  Kind kind = Kind::kImage;
  GeometryFormat format = GeometryFormat::kPng;  ///< kMesh, and kImage of a 3D field (a mesh render)
};

/// The checked request.
struct NoiseJob {
  NoiseParams params;
  NoiseGrid grid;
  NoiseEvaluation evaluation = NoiseEvaluation::kOptimized;
  std::vector<NoiseOutput> outputs;
  std::string stats_json;
  std::optional<std::vector<double>> at;  ///< --at: the point (dims coordinates)
  bool gradient = false;
  int bits = 8;
  ColorMap colormap = ColorMap::kGray;
  bool shaded = false;  ///< 2D .png: a render of the terrain mesh instead of an image of the field
  float threshold = 0.0f;
  bool close_boundary = true;
  double height_scale = 1.0;  ///< terrain meshes of 2D fields
  WriteOptions write;         ///< mesh renders: size, projection
  bool quiet = false;
  uint64_t grid_bytes = 0;    ///< points × 4
  bool needsMesh() const;
};

/// Checks and converts; throws Error (kUsage, exit 1) for unknown names, bad
/// syntax, non-finite or out-of-range values and outputs that do not fit the
/// field, Error (kBadInput, exit 2) for a grid whose size overflows.
NoiseJob resolveNoiseArgs(const NoiseArgs& a);

}  // namespace procgen::cli

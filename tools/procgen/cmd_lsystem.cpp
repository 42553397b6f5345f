// procgen lsystem FILE...: derive, interpret and write an L-system.
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::cli {
namespace {

struct LsystemArgs {
  std::string file;
  std::optional<int> iterations;
  std::optional<uint64_t> seed;
  std::optional<float> angle, step, width, width_factor, width_scale, elasticity;
  std::vector<float> tropism;
  std::string view_file;
  ExecutionOptions execution;
  std::vector<std::string> outputs;
  std::string stats_json;
  bool branch_bounds = false;
  uint64_t max_modules = 0;
  bool quiet = false;
  bool cylinders = false;
  int cylinder_sides = 8;
  std::string projection = "front";
  std::vector<int> image_size;
};

std::string jsonNumber(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

std::string extensionOf(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

void runLsystem(const LsystemArgs& a) {
  using Clock = std::chrono::steady_clock;
  const Execution execution = a.execution.resolve();

  // Validate outputs before the (possibly long) run, so a typo fails at once.
  for (const std::string& out : a.outputs) {
    std::string ext = extensionOf(out);
    if (out != "-" && ext != ".txt" && !isGeometryExtension(ext))
      throw Error("unsupported output '" + out + "': use .txt (module string) or " +
                      std::string(geometryExtensionList()) + ", or - for the string on stdout",
                  ExitCode::kUsage);
  }

  LSystem lsystem = LSystem::fromFile(a.file);
  ViewSettings view = lsystem.view();
  if (!a.view_file.empty()) {
    std::ifstream in(a.view_file, std::ios::binary);
    if (!in) throw Error("cannot read view file '" + a.view_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    applyViewFile(text.str(), a.view_file, view);
  }
  if (a.angle) view.angle_deg = *a.angle;
  if (a.step) view.step = *a.step;
  if (a.width) view.initial_width = *a.width;
  if (a.width_factor) view.width_factor = *a.width_factor;
  if (a.width_scale) view.width_scale = *a.width_scale;
  if (a.elasticity) view.elasticity = *a.elasticity;
  if (!a.tropism.empty()) view.tropism = {a.tropism[0], a.tropism[1], a.tropism[2]};

  DeriveOptions derive_options;
  derive_options.iterations = a.iterations;
  derive_options.seed = a.seed.value_or(lsystem.seed().value_or(1));
  derive_options.max_modules = a.max_modules;
  derive_options.execution = execution;
  const auto t0 = Clock::now();
  const bool show_progress = !a.quiet && stderrIsTerminal();
  bool progress_shown = false;
  derive_options.progress = [&](int step, int total, uint64_t modules) {
    if (!show_progress || Clock::now() - t0 < std::chrono::seconds(1)) return;
    std::fprintf(stderr, "\rderiving %s: step %d/%d, %" PRIu64 " modules   ", lsystem.name().c_str(),
                 step, total, modules);
    progress_shown = true;
  };

  DeriveStats stats;
  ModuleString string = derive(lsystem, derive_options, &stats);
  const auto t1 = Clock::now();
  if (progress_shown) std::fprintf(stderr, "\r%60s\r", "");

  InterpretOptions interpret_options;
  interpret_options.view = view;
  interpret_options.execution = execution;
  interpret_options.seed = derive_options.seed;
  Geometry geometry = interpret(lsystem, string, interpret_options);
  const auto t2 = Clock::now();
  const double derive_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double interpret_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();

  WriteOptions write_options;
  write_options.cylinders = a.cylinders;
  write_options.cylinder_sides = a.cylinder_sides;
  write_options.projection = *parseProjection(a.projection);
  if (a.image_size.size() == 2) {
    write_options.width = a.image_size[0];
    write_options.height = a.image_size[1];
  }
  for (const std::string& out : a.outputs) {
    if (out == "-") writeTextOutput("-", toText(string) + "\n");
    else if (extensionOf(out) == ".txt") writeTextOutput(out, toText(string) + "\n");
    else writeGeometry(geometry, out, write_options);
  }

  Bounds b = geometry.bounds();
  if (b.empty()) b.min = b.max = Vec3{};
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, stringHash(string));
  std::string branches_json;  // --branch-bounds: one object per '[' (docs/treebox.md)
  if (a.branch_bounds) {
    std::ostringstream bj;
    bj << "  \"branches\": [";
    const std::vector<BranchBounds> branches = branchBounds(lsystem, string, geometry, execution);
    for (size_t k = 0; k < branches.size(); ++k) {
      const Bounds& bb = branches[k].bounds;
      bj << (k ? ",\n    " : "\n    ") << "{\"begin\": " << branches[k].begin
         << ", \"depth\": " << branches[k].depth << ", \"bbox\": ";
      if (bb.empty()) bj << "null}";
      else
        bj << "[" << jsonNumber(bb.min.x) << ", " << jsonNumber(bb.min.y) << ", "
           << jsonNumber(bb.min.z) << ", " << jsonNumber(bb.max.x) << ", " << jsonNumber(bb.max.y)
           << ", " << jsonNumber(bb.max.z) << "]}";
    }
    bj << (branches.empty() ? "],\n" : "\n  ],\n");
    branches_json = bj.str();
  }
  if (!a.stats_json.empty()) {
    std::ostringstream j;
    j << "{\n"
      << "  \"file\": " << jsonString(a.file) << ",\n"
      << "  \"modules\": " << stats.modules << ",\n"
      << "  \"modules_total\": " << stats.modules_total << ",\n"
      << "  \"iterations\": " << stats.iterations << ",\n"
      << "  \"derive_ms\": " << jsonNumber(derive_ms) << ",\n"
      << "  \"interpret_ms\": " << jsonNumber(interpret_ms) << ",\n"
      << "  \"segments\": " << geometry.segments.size() << ",\n"
      << "  \"polygons\": " << geometry.polygonCount() << ",\n"
      << "  \"bbox\": [" << jsonNumber(b.min.x) << ", " << jsonNumber(b.min.y) << ", "
      << jsonNumber(b.min.z) << ", " << jsonNumber(b.max.x) << ", " << jsonNumber(b.max.y) << ", "
      << jsonNumber(b.max.z) << "],\n"
      << "  \"string_hash\": \"" << hash << "\",\n"
      << "  \"seed\": " << derive_options.seed << ",\n"
      << "  \"backend\": \"" << backendName(execution.backend) << "\",\n"
      << branches_json
      << "  \"threads\": " << stats.threads << "\n"
      << "}\n";
    writeTextOutput(a.stats_json, j.str());
  }
  if (!a.quiet) {
    std::fprintf(stderr,
                 "%s: %d steps, %" PRIu64 " modules (%" PRIu64 " over all steps), %zu segments, "
                 "%zu polygons; derive %.1f ms, interpret %.1f ms\n",
                 lsystem.name().c_str(), stats.iterations, stats.modules, stats.modules_total,
                 geometry.segments.size(), geometry.polygonCount(), derive_ms, interpret_ms);
  }
}

void setupLsystem(CLI::App& app) {
  auto args = std::make_shared<LsystemArgs>();
  CLI::App* cmd = app.add_subcommand("lsystem", "Derive and draw an L-system (ABOP / cpfg .l file)");
  cmd->footer(
      "Outputs are chosen by extension: .txt (final module string), .obj .ply .glb .gltf "
      "(meshes), .svg .png (2D views); -o - prints the module string.\n"
      "Example: procgen lsystem examples/lsystems/plant-2d.l -n 5 -o plant.png -o plant.obj");
  cmd->add_option("FILE", args->file, "L-system file (.l)")->required()->check(CLI::ExistingFile)->group("Input");
  cmd->add_option("-n,--iterations", args->iterations, "Derivation steps (default: the file's derivation length)")
      ->check(CLI::NonNegativeNumber)->group("Derivation");
  cmd->add_option("--seed", args->seed, "Seed of the stochastic stream (default: the file's seed, else 1)")->group("Derivation");
  cmd->add_option("--max-modules", args->max_modules,
                  "Stop before a step would produce more modules than this (default: limited by half the RAM)")
      ->group("Derivation");
  cmd->add_option("--angle", args->angle, "Default turn angle in degrees")->group("Turtle");
  cmd->add_option("--step", args->step, "Default step length")->group("Turtle");
  cmd->add_option("--width", args->width, "Initial line width")->group("Turtle");
  cmd->add_option("--width-factor", args->width_factor, "Factor applied by ! without a parameter")->group("Turtle");
  cmd->add_option("--width-scale", args->width_scale, "Multiply every width (initial and !(w)), e.g. cpfg pixels to model units")
      ->group("Turtle");
  cmd->add_option("--tropism", args->tropism, "Tropism vector x y z")->expected(3)->delimiter(',')->group("Turtle");
  cmd->add_option("--elasticity", args->elasticity, "Tropism elasticity (0 disables tropism)")->group("Turtle");
  cmd->add_option("--view", args->view_file, "cpfg view file (.v) with angle/width/tropism settings")
      ->check(CLI::ExistingFile)->group("Turtle");
  args->execution.add(*cmd);
  cmd->add_option("-o,--output", args->outputs, "Output file; repeat for several")->group("Output");
  CLI::Option* stats_option =
      cmd->add_option("--stats-json", args->stats_json, "Write statistics as JSON to PATH, or - for stdout")->group("Output");
  cmd->add_flag("--branch-bounds", args->branch_bounds,
                "Add per-branch bounding boxes to --stats-json: \"branches\": [{\"begin\": module "
                "index of '[', \"depth\", \"bbox\": [x0,y0,z0,x1,y1,z1] or null}]")
      ->needs(stats_option)
      ->group("Output");
  cmd->add_flag("--cylinders", args->cylinders, "Meshes: segments as cylinders instead of lines")->group("Output");
  cmd->add_option("--cylinder-sides", args->cylinder_sides, "Sides of each cylinder")
      ->check(CLI::Range(3, 64))->capture_default_str()->group("Output");
  cmd->add_option("--projection", args->projection, "SVG/PNG view: front, side, top or iso")
      ->check(CLI::IsMember({"front", "side", "top", "iso"}))->capture_default_str()->group("Output");
  cmd->add_option("--image-size", args->image_size, "PNG/SVG size W,H in pixels")
      ->expected(2)->delimiter(',')->check(CLI::Range(16, 16384))->group("Output");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary or progress on stderr")->group("Output");
  cmd->callback([args] { runLsystem(*args); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(10, setupLsystem);

}  // namespace procgen::cli

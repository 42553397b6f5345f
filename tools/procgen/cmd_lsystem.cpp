// procgen lsystem FILE...: derive, interpret and write an L-system.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "lsystem_options.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::cli {
namespace {

struct LsystemArgs {
  std::string file;
  std::optional<int> iterations;
  std::optional<uint64_t> seed;
  TurtleOptions turtle;
  ExecutionOptions execution;
  OutputOptions output;
  bool branch_bounds = false;
  BudgetOptions budget;
  bool quiet = false;
};

void runLsystem(LsystemArgs& a) {
  using Clock = std::chrono::steady_clock;
  const Execution execution = a.execution.resolve();

  a.output.validate();  // before the (possibly long) run, so a typo fails at once
  a.output.memory_budget = a.budget.memory_budget;

  LSystem lsystem = LSystem::fromFile(a.file);
  ViewSettings view = lsystem.view();
  a.turtle.apply(view);

  DeriveOptions derive_options;
  derive_options.iterations = a.iterations;
  derive_options.seed = a.seed.value_or(lsystem.seed().value_or(1));
  a.budget.apply(derive_options);
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
  a.budget.apply(interpret_options);
  // Interpret only when an output or the statistics need geometry: a string-only
  // run works on every backend that derives.
  const bool interpreted = a.output.needsGeometry() || !a.output.files.stats_json.empty() ||
                           a.output.files.paths.empty();
  const Geometry geometry = interpreted ? interpret(lsystem, string, interpret_options) : Geometry{};
  const auto t2 = Clock::now();
  const double derive_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double interpret_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();

  a.output.write(geometry, [&] { return toText(string); });

  if (!a.output.files.stats_json.empty()) {
    Json j;
    j["file"] = a.file;
    j["modules"] = stats.modules;
    j["modules_total"] = stats.modules_total;
    j["iterations"] = stats.iterations;
    j["derive_ms"] = derive_ms;
    j["interpret_ms"] = interpret_ms;
    j["segments"] = geometry.segments.size();
    j["polygons"] = geometry.polygonCount();
    j["bbox"] = jsonBounds(geometry.bounds());
    j["string_hash"] = hex64(stringHash(string));
    j["seed"] = derive_options.seed;
    j["backend"] = std::string(backendName(execution.backend));
    if (a.branch_bounds) {  // one object per '[' (docs/treebox.md)
      Json branches = Json::array();
      for (const BranchBounds& b : branchBounds(lsystem, string, geometry, execution))
        branches.push_back({{"begin", b.begin},
                            {"depth", b.depth},
                            {"bbox", b.bounds.empty() ? Json(nullptr) : jsonBounds(b.bounds)}});
      j["branches"] = std::move(branches);
    }
    j["threads"] = stats.threads;
    a.output.files.writeStats(j);
  }
  if (!a.quiet && !interpreted) {
    std::fprintf(stderr, "%s: %d steps, %" PRIu64 " modules (%" PRIu64 " over all steps); derive %.1f ms\n",
                 lsystem.name().c_str(), stats.iterations, stats.modules, stats.modules_total, derive_ms);
  } else if (!a.quiet) {
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
  cmd->add_option("FILE", args->file, "L-system file (.l)")->required()->group("Input");  // unreadable: exit 2 from fromFile
  addInteger(*cmd, "-n,--iterations", args->iterations, "Derivation steps (default: the file's derivation length)", 0)
      ->group("Derivation");
  addInteger(*cmd, "--seed", args->seed, "Seed of the stochastic stream (default: the file's seed, else 1)")
      ->group("Derivation");
  args->budget.add(*cmd);
  args->turtle.add(*cmd);
  args->execution.add(*cmd);
  args->output.add(*cmd);
  CLI::Option* stats_option = cmd->get_option("--stats-json");
  cmd->add_flag("--branch-bounds", args->branch_bounds,
                "Add per-branch bounding boxes to --stats-json: \"branches\": [{\"begin\": module "
                "index of '[', \"depth\", \"bbox\": [x0,y0,z0,x1,y1,z1] or null}]")
      ->needs(stats_option)
      ->group("Output");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary or progress on stderr")->group("Output");
  cmd->callback([args] { runLsystem(*args); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(10, setupLsystem);

}  // namespace procgen::cli

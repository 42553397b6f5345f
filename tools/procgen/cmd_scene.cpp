// procgen scene FILE: many L-systems derived together in batched passes and
// drawn into one mesh (paper §6); docs/scenes.md describes the scene file.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "lsystem_options.hpp"
#include "procgen/scene.hpp"

namespace procgen::cli {
namespace {

struct SceneArgs {
  std::string file;
  std::optional<int> iterations;
  uint64_t seed = 1;
  BudgetOptions budget;
  TurtleOptions turtle;
  ExecutionOptions execution;
  OutputOptions output;
  bool quiet = false;
};

void runScene(SceneArgs& a) {
  using Clock = std::chrono::steady_clock;
  const Execution execution = a.execution.resolve();
  a.output.validate();
  a.output.memory_budget = a.budget.memory_budget;

  LSystemScene scene = LSystemScene::fromFile(a.file);
  for (LSystemInstance& inst : scene.instances) a.turtle.apply(inst.view);  // flags override every instance

  DeriveOptions options;
  options.iterations = a.iterations;
  options.seed = a.seed;
  a.budget.apply(options);
  options.execution = execution;
  const auto t0 = Clock::now();
  const LSystemSceneDerivation derivation = deriveScene(scene, options);
  const auto t1 = Clock::now();
  const Geometry geometry = interpretScene(scene, derivation, execution, a.seed, a.budget.max_modules,
                                           a.budget.memory_budget);
  const auto t2 = Clock::now();
  const double derive_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double interpret_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();

  a.output.write(geometry, [&] { return toText(derivation.string); });

  // Per-instance figures from the tagged geometry.
  const size_t n = derivation.instances();
  std::vector<uint64_t> segments(n, 0), polygons(n, 0);
  std::vector<Bounds> bounds(n);
  for (const Segment& s : geometry.segments) {
    segments[s.instance] += 1;
    bounds[s.instance].add(s.start);
    bounds[s.instance].add(s.end);
  }
  for (size_t p = 0; p < geometry.polygonCount(); ++p) {
    const int32_t k = geometry.polygon_instances[p];
    polygons[k] += 1;
    for (uint64_t v = geometry.polygon_offsets[p]; v < geometry.polygon_offsets[p + 1]; ++v)
      bounds[k].add(geometry.polygon_vertices[v]);
  }
  uint64_t modules_total = 0;
  for (const DeriveStats& st : derivation.stats) modules_total += st.modules_total;

  if (!a.output.files.stats_json.empty()) {
    Json j;
    j["file"] = a.file;
    j["instances"] = n;
    j["modules"] = derivation.string.size();
    j["modules_total"] = modules_total;
    j["derive_ms"] = derive_ms;
    j["interpret_ms"] = interpret_ms;
    j["segments"] = geometry.segments.size();
    j["polygons"] = geometry.polygonCount();
    j["bbox"] = jsonBounds(geometry.bounds());
    j["string_hash"] = hex64(stringHash(derivation.string));
    j["seed"] = a.seed;
    j["backend"] = std::string(backendName(execution.backend));
    j["threads"] = derivation.threads;
    Json per_instance = Json::array();
    for (size_t k = 0; k < n; ++k) {
      const DeriveStats& st = derivation.stats[k];
      Json inst;
      inst["instance"] = k;
      inst["file"] = scene.instances[k].file.string();
      inst["line"] = scene.instances[k].line;
      inst["iterations"] = st.iterations;
      inst["modules"] = st.modules;
      inst["modules_total"] = st.modules_total;
      inst["segments"] = segments[k];
      inst["polygons"] = polygons[k];
      inst["bbox"] = jsonBounds(bounds[k]);
      inst["string_hash"] = hex64(stringHash(derivation.instanceString(k, scene)));
      per_instance.push_back(std::move(inst));
    }
    j["per_instance"] = std::move(per_instance);
    a.output.files.writeStats(j);
  }
  if (!a.quiet) {
    std::fprintf(stderr,
                 "%s: %zu instances, %" PRIu64 " modules (%" PRIu64
                 " over all steps), %zu segments, %zu polygons; "
                 "derive %.1f ms, interpret %.1f ms\n",
                 a.file.c_str(), n, static_cast<uint64_t>(derivation.string.size()), modules_total,
                 geometry.segments.size(), geometry.polygonCount(), derive_ms, interpret_ms);
  }
}

void setupScene(CLI::App& app) {
  auto args = std::make_shared<SceneArgs>();
  CLI::App* cmd =
      app.add_subcommand("scene", "Derive and draw many L-systems at once (scene file, docs/scenes.md)");
  cmd->footer(
      "Each line of the scene file places one L-system: MODEL.l [n=N] [seed=S] [at=X,Y,Z] "
      "[rotate=RX,RY,RZ] [scale=S] [angle=..] [NAME=VALUE overrides #define NAME].\n"
      "Meshes tag every element with its instance (OBJ groups, PLY/glTF attributes).\n"
      "Example: procgen scene examples/scenes/forest.scene -o forest.png -o forest.glb");
  cmd->add_option("FILE", args->file, "Scene file (one L-system per line)")->required()->group("Input");
  addInteger(*cmd, "-n,--iterations", args->iterations,
             "Derivation steps for every instance (default: each its own)", 0)
      ->group("Derivation");
  addInteger(*cmd, "--seed", args->seed, "Base seed: an instance without seed= uses seed + its index")
      ->capture_default_str()
      ->group("Derivation");
  args->budget.add(*cmd);
  args->turtle.add(*cmd);
  args->execution.add(*cmd);
  args->output.add(*cmd);
  cmd->add_flag("-q,--quiet", args->quiet, "No summary on stderr")->group("Output");
  cmd->callback([args] { runScene(*args); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(15, setupScene);

}  // namespace procgen::cli

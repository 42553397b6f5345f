// procgen scene FILE: many L-systems derived together in batched passes and
// drawn into one mesh (paper §6); docs/scenes.md describes the scene file.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <sstream>
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
  uint64_t max_modules = 0;
  TurtleOptions turtle;
  ExecutionOptions execution;
  OutputOptions output;
  std::string stats_json;
  bool quiet = false;
};

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

void runScene(const SceneArgs& a) {
  using Clock = std::chrono::steady_clock;
  const Execution execution = a.execution.resolve();
  a.output.validate();

  LSystemScene scene = LSystemScene::fromFile(a.file);
  for (LSystemInstance& inst : scene.instances) a.turtle.apply(inst.view);  // flags override every instance

  DeriveOptions options;
  options.iterations = a.iterations;
  options.seed = a.seed;
  options.max_modules = a.max_modules;
  options.execution = execution;
  const auto t0 = Clock::now();
  const LSystemSceneDerivation derivation = deriveScene(scene, options);
  const auto t1 = Clock::now();
  const Geometry geometry = interpretScene(scene, derivation, execution, a.seed);
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

  if (!a.stats_json.empty()) {
    std::ostringstream j;
    j << "{\n"
      << "  \"file\": " << jsonString(a.file) << ",\n"
      << "  \"instances\": " << n << ",\n"
      << "  \"modules\": " << derivation.string.size() << ",\n"
      << "  \"modules_total\": " << modules_total << ",\n"
      << "  \"derive_ms\": " << jsonNumber(derive_ms) << ",\n"
      << "  \"interpret_ms\": " << jsonNumber(interpret_ms) << ",\n"
      << "  \"segments\": " << geometry.segments.size() << ",\n"
      << "  \"polygons\": " << geometry.polygonCount() << ",\n"
      << "  \"bbox\": " << jsonBounds(geometry.bounds()) << ",\n"
      << "  \"string_hash\": \"" << hex64(stringHash(derivation.string)) << "\",\n"
      << "  \"seed\": " << a.seed << ",\n"
      << "  \"backend\": \"" << backendName(execution.backend) << "\",\n"
      << "  \"threads\": " << derivation.threads << ",\n"
      << "  \"per_instance\": [";
    for (size_t k = 0; k < n; ++k) {
      const DeriveStats& st = derivation.stats[k];
      j << (k ? ",\n    " : "\n    ") << "{\"instance\": " << k
        << ", \"file\": " << jsonString(scene.instances[k].file.string())
        << ", \"line\": " << scene.instances[k].line << ", \"iterations\": " << st.iterations
        << ", \"modules\": " << st.modules << ", \"modules_total\": " << st.modules_total
        << ", \"segments\": " << segments[k] << ", \"polygons\": " << polygons[k]
        << ", \"bbox\": " << jsonBounds(bounds[k]) << ", \"string_hash\": \""
        << hex64(stringHash(derivation.instanceString(k, scene))) << "\"}";
    }
    j << "\n  ]\n}\n";
    writeTextOutput(a.stats_json, j.str());
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
  cmd->add_option("-n,--iterations", args->iterations,
                  "Derivation steps for every instance (default: each its own)")
      ->check(CLI::NonNegativeNumber)
      ->group("Derivation");
  cmd->add_option("--seed", args->seed, "Base seed: an instance without seed= uses seed + its index")
      ->capture_default_str()
      ->group("Derivation");
  cmd->add_option(
         "--max-modules", args->max_modules,
         "Stop before a step would produce more modules than this (default: limited by half the RAM)")
      ->group("Derivation");
  args->turtle.add(*cmd);
  args->execution.add(*cmd);
  args->output.add(*cmd);
  cmd->add_option("--stats-json", args->stats_json, "Write statistics as JSON to PATH, or - for stdout")
      ->group("Output");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary on stderr")->group("Output");
  cmd->callback([args] { runScene(*args); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(15, setupScene);

}  // namespace procgen::cli

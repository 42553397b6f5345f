// procgen scene FILE: many L-systems derived together and drawn into one
// mesh (paper §6), over the ranks of `mpirun` when started by it
// (runSceneOnRanks, src/lsystem/scene_run.cpp); docs/scenes.md describes the
// scene file, docs/scaling.md the distributed run.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "lsystem_options.hpp"
#include "procgen/distributed.hpp"
#include "procgen/output.hpp"
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
  bool parts = false;
  bool quiet = false;
};

/// `-o NAME.gltf --parts`: rank r's binary buffer NAME.part-R.bin beside it.
std::filesystem::path partPath(const std::string& index, int rank) {
  std::filesystem::path p(index);
  p.replace_filename(p.stem().string() + ".part-" + std::to_string(rank) + ".bin");
  return p;
}

/// Writes `-o NAME.gltf` as parts (collective): every rank writes the binary
/// chunk of its geometry's glb as its part file, rank 0 joins the ranks' JSON
/// chunks into the index that references the parts (mergeGltfParts).
void writeGltfParts(const std::string& index, const Geometry& geometry, const WriteOptions& write) {
  const GlbChunks chunks = splitGlb(encodeGeometry(geometry, GeometryFormat::kGlb, write));
  if (!chunks.bin.empty()) {
    FileSink sink(partPath(index, distributed::rank()).string());
    sink.write(chunks.bin.data(), chunks.bin.size());
    sink.finish();
  }
  std::vector<uint64_t> sizes;
  const std::vector<uint8_t> jsons = distributed::gather(
      {reinterpret_cast<const uint8_t*>(chunks.json.data()), chunks.json.size()}, 0, &sizes);
  if (!distributed::isRoot()) return;
  std::vector<std::string> parts, uris;
  for (size_t r = 0, at = 0; r < sizes.size(); at += sizes[r++]) {
    parts.emplace_back(reinterpret_cast<const char*>(jsons.data() + at), sizes[r]);
    uris.push_back(partPath(index, int(r)).filename().string());
  }
  writeOutput(index, mergeGltfParts(parts, uris));
}

/// Under mpirun (procgen/distributed.hpp, docs/scaling.md "Scenes") every
/// rank takes its share of the instances and rank 0 gathers the outputs
/// (runSceneOnRanks), or with --parts every rank writes its part of one glTF;
/// every output is the one-process output. One rank: the whole scene.
void runScene(SceneArgs& a) {
  const SceneClock started = SceneClock::now();
  const Execution execution = a.execution.resolve();
  a.output.validate();
  a.output.memory_budget = a.budget.memory_budget;
  if (a.parts)
    for (const std::string& out : a.output.files.paths)
      if (!OutputOptions::isStringOutput(out) && extensionOf(out) != ".gltf")
        throw Error(
            "--parts writes a glTF index with one binary part per rank: use -o NAME.gltf, not '" + out + "'",
            ExitCode::kUsage);

  LSystemScene scene = LSystemScene::fromFile(a.file);
  for (LSystemInstance& inst : scene.instances) a.turtle.apply(inst.view);  // flags override every instance
  if (scene.instances.empty()) throw Error("the scene lists no L-system");

  SceneRunOptions options;
  options.derive.iterations = a.iterations;
  options.derive.seed = a.seed;
  a.budget.apply(options.derive);
  options.derive.execution = execution;
  bool needs_geometry = false;
  for (const std::string& out : a.output.files.paths)
    (OutputOptions::isStringOutput(out) ? options.text : needs_geometry) = true;
  options.geometry = !needs_geometry ? SceneGeometryTarget::kNone
                     : a.parts       ? SceneGeometryTarget::kPerRank
                                     : SceneGeometryTarget::kRoot;
  options.statistics = !a.output.files.stats_json.empty();
  options.started = started;
  const WriteOptions write = a.output.writeOptions();
  options.write = [&](const SceneRun& run) {
    for (const std::string& out : a.output.files.paths) {
      if (a.parts && !OutputOptions::isStringOutput(out))
        writeGltfParts(out, run.geometry, write);  // collective: every rank its part
      else if (distributed::isRoot())
        OutputOptions::isStringOutput(out) ? writeOutput(out, run.text + "\n") : writeGeometry(run.geometry, out, write);
    }
  };
  const SceneRun run = runSceneOnRanks(scene, options);
  if (!distributed::isRoot()) return;

  if (options.statistics) {
    Json j;
    j["file"] = a.file;
    j["instances"] = run.instances;
    j["modules"] = run.modules;
    j["modules_total"] = run.modules_total;
    j["derive_ms"] = run.derive_ms;
    j["interpret_ms"] = run.interpret_ms;
    j["gen_ms"] = run.gen_ms;
    j["cpu_ms"] = run.cpu_ms;
    j["work_cpu_ms"] = run.work_cpu_ms;
    j["work_cpu_max_ms"] = run.work_cpu_max_ms;
    j["segments"] = run.segments;
    j["polygons"] = run.polygons;
    j["bbox"] = jsonBounds(run.bounds);
    j["string_hash"] = hex64(run.string_hash);
    j["seed"] = a.seed;
    j["backend"] = std::string(backendName(execution.backend));
    j["threads"] = run.threads;
    // Per rank: its start, then the end of each phase (ms from the earliest
    // rank's start), and its CPU time at the same marks.
    Json phases = Json::array({"start"});
    for (const char* name : SceneRun::kPhases) phases.push_back(name);
    j["timeline_phases"] = std::move(phases);
    auto rounded = [](const std::vector<double>& marks) {
      Json out = Json::array();
      for (double t : marks) out.push_back(std::round(t * 1000.0) / 1000.0);
      return out;
    };
    j["timeline_ms"] = rounded(run.timeline_ms);
    j["timeline_cpu_ms"] = rounded(run.timeline_cpu_ms);
    if (distributed::active()) {
      j["ranks"] = distributed::size();
      j["rank_balance"] = run.rank_balance;
    }
    Json per_instance = Json::array();
    for (size_t k = 0; k < run.per_instance.size(); ++k) {
      const SceneInstanceFigures& f = run.per_instance[k];
      Json inst;
      inst["instance"] = k;
      inst["file"] = scene.instances[k].file.string();
      inst["line"] = scene.instances[k].line;
      inst["iterations"] = f.iterations;
      inst["modules"] = f.modules;
      inst["modules_total"] = f.modules_total;
      inst["segments"] = f.segments;
      inst["polygons"] = f.polygons;
      inst["bbox"] = jsonBounds(f.bounds);
      inst["string_hash"] = hex64(f.string_hash);
      per_instance.push_back(std::move(inst));
    }
    j["per_instance"] = std::move(per_instance);
    a.output.files.writeStats(j);
  }
  if (!a.quiet) {
    std::fprintf(stderr,
                 "%s: %zu instances, %" PRIu64 " modules (%" PRIu64 " over all steps), %" PRIu64 " segments, %" PRIu64
                 " polygons; derive %.1f ms, interpret %.1f ms\n",
                 a.file.c_str(), run.instances, run.modules, run.modules_total, run.segments, run.polygons,
                 run.derive_ms, run.interpret_ms);
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
  cmd->add_flag("--parts", args->parts,
                "With -o NAME.gltf: write the geometry as one binary part per MPI rank (NAME.part-R.bin) "
                "and NAME.gltf as a small index referencing them, for scenes larger than one node's memory "
                "(docs/scaling.md)")
      ->group("Output");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary on stderr")->group("Output");
  cmd->callback([args] { runScene(*args); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(15, setupScene);

}  // namespace procgen::cli

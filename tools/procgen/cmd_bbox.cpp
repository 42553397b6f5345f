// procgen bbox: bounding boxes of a tree-structured scene (procgen/treebox.hpp).
#include <memory>

#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/treebox.hpp"

namespace procgen::cli {
namespace {

struct BBoxOptions {
  std::string scene;
  CommandOutputs outputs;
  uint64_t random = 0;
  uint64_t seed = 1;
  int dimensions = 2;
  std::string write_scene;
  ExecutionOptions execution;
};

void setupBBox(CLI::App& app) {
  auto o = std::make_shared<BBoxOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bbox",
      "Bounding boxes of a scene of clip groups, blend groups and leaves (docs/treebox.md): "
      "leaves and clips intersected with their clip ancestors, blends the union of their leaves");
  auto* scene = cmd->add_option("SCENE", o->scene, "Scene text file");
  auto* random = cmd->add_option("--random", o->random, "Use a random scene of N elements")
                     ->group("Input");
  scene->excludes(random);
  cmd->add_option("--seed", o->seed, "Seed of --random")->capture_default_str()->group("Input");
  cmd->add_option("--dims", o->dimensions, "Dimensions of --random (2 or 3)")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str()
      ->group("Input");
  cmd->add_option("--write-scene", o->write_scene, "Also write the scene's text (e.g. of --random)")
      ->group("Output");
  o->outputs.addOutputs(*cmd, "Write one line per element: kind and resulting box, or 'empty' ('-' = stdout)",
                        "-", "-o");
  o->execution.add(*cmd);
  cmd->callback([o, cmd] {
    if (o->scene.empty() && cmd->count("--random") == 0)
      throw CLI::ValidationError("bbox", "give SCENE or --random N");
    Execution ex = o->execution.resolve();
    Scene s = o->scene.empty() ? randomScene(o->random, o->seed, o->dimensions) : readScene(o->scene);
    std::unique_ptr<Box3[]> boxes(new Box3[s.size() == 0 ? 1 : s.size()]);
    treeBoundingBoxes(s, boxes.get(), ex);
    if (!o->write_scene.empty()) writeOutput(o->write_scene, writeScene(s));
    o->outputs.writeAll(writeSceneBoxes(s, boxes.get()));
  });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(31, setupBBox);

}  // namespace procgen::cli

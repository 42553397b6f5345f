// procgen bbox: bounding boxes of a box tree, Levien's tree-structured scene
// (procgen/treebox.hpp; text format `.boxtree`, docs/treebox.md).
#include <memory>

#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/treebox.hpp"

namespace procgen::cli {
namespace {

struct BBoxOptions {
  std::string tree;
  CommandOutputs outputs;
  uint64_t random = 0;
  uint64_t seed = 1;
  int dimensions = 2;
  std::string write_tree;
  ExecutionOptions execution;
};

void setupBBox(CLI::App& app) {
  auto o = std::make_shared<BBoxOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bbox",
      "Bounding boxes of a box tree of clip groups, blend groups and leaves (docs/treebox.md): "
      "leaves and clips intersected with their clip ancestors, blends the union of their leaves");
  auto* tree = cmd->add_option("TREE", o->tree, "Box tree text file (.boxtree; any name is read)");
  auto* random = addInteger(*cmd, "--random", o->random, "Use a random box tree of N elements")
                     ->group("Input");
  tree->excludes(random);
  addInteger(*cmd, "--seed", o->seed, "Seed of --random")->capture_default_str()->group("Input");
  addInteger(*cmd, "--dims", o->dimensions, "Dimensions of --random (2 or 3)", 2, 3)
      ->capture_default_str()
      ->group("Input");
  o->outputs.addOutputs(*cmd, "Write one line per element: kind and resulting box, or 'empty' ('-' = stdout)",
                        "-", "-o");
  o->outputs.addOutputOption(*cmd, "--write-tree,--write-scene", o->write_tree,
                             "Also write the box tree's text (e.g. of --random); --write-scene is the old name");
  o->execution.add(*cmd);
  cmd->callback([o, cmd] {
    if (o->tree.empty() && cmd->count("--random") == 0)
      throw CLI::ValidationError("bbox", "give TREE or --random N");
    Execution ex = o->execution.resolve();
    if (o->tree.empty()) {
      // The tree (kind + box), the result boxes and about 100 bytes of text
      // per element, before allocating: `--random 18446744073709551615` stops here.
      const uint64_t per_element = sizeof(BoxTreeNodeKind) + 2 * sizeof(Box3) + 100;
      requireMemory("bbox on " + std::to_string(o->random) + " random elements",
                    checkedMul(o->random, per_element).value_or(UINT64_MAX));
    }
    BoxTree s = o->tree.empty() ? randomBoxTree(o->random, o->seed, o->dimensions) : readBoxTree(o->tree);
    std::unique_ptr<Box3[]> boxes(new Box3[s.size() == 0 ? 1 : s.size()]);
    treeBoundingBoxes(s, boxes.get(), ex);
    if (!o->write_tree.empty()) writeOutput(o->write_tree, writeBoxTree(s));
    o->outputs.writeAll(writeBoxTreeBoxes(s, boxes.get()));
  });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(31, setupBBox);

}  // namespace procgen::cli

// libFuzzer target for the L-system scene reader (src/lsystem/scene_file.cpp,
// the `.scene` files of docs/scenes.md): any byte string must either read or
// throw procgen::Error. Model paths resolve against examples/scenes/ of the
// source tree, so "../lsystems/plant-2d.l n=3 a=2" names a real model and the
// key parsing, #define overrides and model compilation behind it all run.
// A scene that reads is derived for two steps under a small module limit, and
// every instance's string must equal what derive() gives that instance alone
// (the contract of deriveScene); any other exception, mismatch, crash,
// sanitizer report or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path base = std::filesystem::path(PROCGEN_SOURCE_DIR) / "examples" / "scenes";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  procgen::LSystemScene scene;
  try {
    scene = procgen::LSystemScene::fromText(text, "fuzz.scene", base);
  } catch (const procgen::Error&) {
    return 0;
  }
  if (scene.instances.empty()) std::abort();  // fromText promises at least one instance
  for (const procgen::LSystemInstance& inst : scene.instances)
    if (inst.line < 1 || !(inst.scale > 0.0f)) std::abort();

  procgen::DeriveOptions options;
  options.iterations = 2;
  options.max_modules = 20000;
  procgen::LSystemSceneDerivation derivation;
  try {
    derivation = procgen::deriveScene(scene, options);
  } catch (const procgen::Error&) {
    return 0;  // over the module limit (or a model's runtime error): allowed
  }
  if (derivation.instances() != scene.instances.size()) std::abort();
  for (size_t k = 0; k < scene.instances.size(); ++k) {
    procgen::DeriveOptions alone = options;
    alone.seed = scene.instances[k].seed.value_or(options.seed + k);
    alone.max_modules = 0;
    const procgen::ModuleString want = procgen::derive(scene.instances[k].lsystem, alone);
    const procgen::ModuleString got = derivation.instanceString(k, scene);
    if (got.symbols != want.symbols || got.params.size() != want.params.size()) std::abort();
  }
  return 0;
}

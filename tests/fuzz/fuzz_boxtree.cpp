// libFuzzer target for the treebox box tree format (src/treebox/box_tree_format.cpp):
// any byte string must either parse or throw procgen::Error. A parsed tree
// must survive a write/parse round trip unchanged, and its bounding boxes
// must agree between the serial stage and the cpu stage with tiny chunks
// (so groups span chunks); any other exception, mismatch, crash, sanitizer
// report or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/treebox.hpp"
#include "treebox/match_internal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  procgen::BoxTree scene;
  try {
    scene = procgen::parseBoxTree(text, "fuzz.boxtree");
  } catch (const procgen::Error&) {
    return 0;
  }
  procgen::BoxTree back = procgen::parseBoxTree(procgen::writeBoxTree(scene), "round-trip.boxtree");
  if (back.kinds != scene.kinds || back.dimensions != scene.dimensions) std::abort();
  for (size_t i = 0; i < scene.size(); ++i)
    if (scene.kinds[i] == procgen::BoxTreeNodeKind::kLeaf ||
        scene.kinds[i] == procgen::BoxTreeNodeKind::kClip)
      if (!(back.boxes[i] == scene.boxes[i])) std::abort();

  std::vector<procgen::Box3> serial(scene.size());
  procgen::treeBoundingBoxes(scene, serial.data(), procgen::Execution{});
#if PROCGEN_HAVE_TBB
  for (uint64_t chunk : {1, 3}) {
    std::vector<procgen::Box3> cpu(scene.size());
    procgen::treebox_detail::treeBBoxCpu(scene, cpu.data(), 2, chunk);
    for (size_t i = 0; i < scene.size(); ++i)
      if (!(cpu[i] == serial[i])) std::abort();
  }
#endif
  return 0;
}

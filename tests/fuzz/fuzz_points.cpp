// libFuzzer target for the point and mesh readers (src/io/points/: PLY ascii
// and binary, OFF, XYZ, OBJ) and the .octree reader (src/octree/octree_file.cpp):
// any byte string must either parse or throw procgen::Error, under a small
// memory budget so a header's counts cannot allocate past it. What parses
// must hold: finite coordinates, triangle indices inside the vertices, and
// an octree that decodes must re-encode to the same bytes and answer a walk
// (leaves in order, checksum) without reading out of bounds. Any other
// exception, crash, sanitizer report or hang is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/octree.hpp"
#include "procgen/octree_io.hpp"
#include "procgen/points.hpp"

namespace {

constexpr uint64_t kBudget = 64u << 20;  // 64 MiB: libFuzzer's -rss_limit_mb is 1 GiB

void points(std::string_view bytes, procgen::PointFileFormat format) {
  procgen::PointCloud cloud;
  try {
    cloud = procgen::parsePointFile(bytes, format, "fuzz", {kBudget});
  } catch (const procgen::Error&) {
    return;
  }
  if (cloud.count == 0) std::abort();
  for (uint64_t i = 0; i < cloud.count; ++i)
    for (int a = 0; a < 3; ++a)
      if (!std::isfinite(cloud.coord(i, a))) std::abort();
}

void mesh(std::string_view bytes, procgen::PointFileFormat format) {
  procgen::TriangleMesh m;
  try {
    m = procgen::parseMeshFile(bytes, format, "fuzz", {kBudget});
  } catch (const procgen::Error&) {
    return;
  }
  if (m.indices.empty() || m.indices.size() % 3 != 0 || m.normals.size() != m.positions.size()) std::abort();
  for (uint32_t index : m.indices)
    if (index >= m.positions.size()) std::abort();
  try {
    std::vector<double> xyz(3 * 16);
    procgen::sampleSurface(m, 16, 1, xyz.data(), kBudget);
  } catch (const procgen::Error&) {
    // a mesh of zero area
  }
}

void octree(std::string_view bytes) {
  procgen::Octree tree;
  try {
    tree = procgen::decodeOctree(bytes, "fuzz.octree", kBudget);
  } catch (const procgen::Error&) {
    return;
  }
  const std::vector<uint8_t> again = procgen::encodeOctree(tree);
  if (std::string_view(reinterpret_cast<const char*>(again.data()), again.size()) != bytes) std::abort();
  const std::vector<uint32_t> leaves = procgen::octreeLeavesInOrder(tree);
  if (leaves.size() != tree.stats.leaves) std::abort();
  procgen::octreeChecksum(tree);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  using procgen::PointFileFormat;
  for (PointFileFormat f : {PointFileFormat::kPly, PointFileFormat::kOff, PointFileFormat::kXyz, PointFileFormat::kObj}) {
    points(bytes, f);
    if (f != PointFileFormat::kXyz) mesh(bytes, f);
  }
  octree(bytes);
  return 0;
}

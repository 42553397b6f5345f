// The .octree file (docs/octree.md, "The .octree file"): an 80-byte
// little-endian header, then the node arrays, then the point arrays, packed
// without padding; and its reader, which treats the bytes as untrusted and
// checks every invariant the tree walks and queries rely on before
// returning a tree (the layouts are those of seed §3–§5, docs/octree.md).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/output_file.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"
#include "procgen/octree_io.hpp"

namespace procgen {
namespace {

constexpr char kMagic[8] = {'P', 'G', 'O', 'C', 'T', 'R', 'E', 'E'};
constexpr size_t kHeaderBytes = 80;
constexpr uint8_t kFlagCompressed = 1, kFlagFull = 2, kFlagSortedPoints = 4;

bool hasSplits(const Octree& t) { return t.options.split == OctreeSplit::kData; }

/// Bytes of the arrays after the header, or nullopt on overflow.
std::optional<uint64_t> arrayBytes(bool post_order, bool full, bool sorted_points, bool splits, uint64_t n,
                                   uint64_t points) {
  const uint64_t per_node = 1 + 8 + 4 + (post_order ? 1 : 4) + (full ? 1 : 0) + 4 + 4 + (splits ? 24 + 1 : 0);
  const uint64_t per_point = 4 + 8 + (sorted_points ? 24 : 0);
  const std::optional<uint64_t> a = checkedMul(n, per_node), b = checkedMul(points, per_point);
  return a && b ? checkedAdd(*a, *b) : std::nullopt;
}

template <typename Array>
void writeArray(io::OutputStream& out, const Array& a) {
  if (!a.empty()) out.write(a.data(), a.size() * sizeof(a[0]));
}

}  // namespace

void writeOctree(const Octree& t, ByteSink& sink) {
  io::OutputStream out(sink);
  const bool post_order = t.layout == OctreeLayout::kPostOrder;
  out.write(kMagic, sizeof kMagic);
  out.binary<uint32_t>(kOctreeFileVersion);
  out.binary<uint8_t>(post_order ? 1 : 0);
  out.binary<uint8_t>(t.options.method == OctreeMethod::kTopDown ? 1 : 0);
  out.binary<uint8_t>(hasSplits(t) ? 1 : 0);
  const bool full = !t.chain.empty();
  out.binary<uint8_t>(uint8_t((t.options.compressed ? kFlagCompressed : 0) | (full ? kFlagFull : 0) |
                              (t.xyz.empty() ? 0 : kFlagSortedPoints)));
  out.binary<uint32_t>(t.options.leaf_size);
  out.binary<int32_t>(t.options.max_depth);
  for (double v : t.cube.min) out.binary<double>(v);
  out.binary<double>(t.cube.side);
  out.binary<uint64_t>(t.point_count);
  out.binary<uint64_t>(t.size());
  out.binary<uint32_t>(t.root);
  out.binary<uint32_t>(0);
  writeArray(out, t.level);
  writeArray(out, t.prefix);
  writeArray(out, t.parent);
  if (post_order) writeArray(out, t.child_count);
  else writeArray(out, t.first_child);
  if (full) writeArray(out, t.chain);
  writeArray(out, t.begin);
  writeArray(out, t.end);
  if (hasSplits(t)) {
    writeArray(out, t.split_center);
    writeArray(out, t.split_axes);
  }
  writeArray(out, t.order);
  writeArray(out, t.keys);
  writeArray(out, t.xyz);
  out.close();
}

std::vector<uint8_t> encodeOctree(const Octree& tree) {
  return io::writeToMemory([&](ByteSink& sink) { writeOctree(tree, sink); });
}

void writeOctree(const Octree& tree, const std::filesystem::path& path) {
  io::writeToFile(path, [&](ByteSink& sink) { writeOctree(tree, sink); });
}

namespace {

class Reader {
 public:
  Reader(std::string_view bytes, std::string_view name) : bytes_(bytes), name_(name) {}
  template <typename T>
  T value() {
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  template <typename Array>
  void array(Array& a, uint64_t count) {
    a.resize(count);
    if (count) std::memcpy(a.data(), bytes_.data() + at_, count * sizeof(a[0]));
    at_ += count * sizeof(a[0]);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(std::string(name_) + ": not a valid .octree file: " + why, ExitCode::kBadInput);
  }
  void check(bool ok, const char* why) const {
    if (!ok) fail(why);
  }

 private:
  std::string_view bytes_, name_;
  size_t at_ = 0;
};

void checkLevelOrder(const Octree& t, const Reader& r) {
  const uint64_t n = t.size();
  r.check(t.root == 0 && t.parent[0] == kOctreeNone, "the level-order root is not node 0");
  for (uint64_t i = 0; i < n; ++i) {
    if (i > 0) {
      const uint32_t p = t.parent[i];
      r.check(p < i, "a parent does not precede its child");
      const uint32_t first = t.first_child[p];
      r.check(first != kOctreeNone && first <= i && i < uint64_t(first) + 8, "a node is not among its parent's children");
    }
    const uint32_t first = t.first_child[i];
    if (first == kOctreeNone) continue;
    r.check(first > i && uint64_t(first) + 8 <= n, "children outside the nodes");
    for (uint32_t d = 0; d < 8; ++d)
      r.check(t.parent[first + d] == i && t.level[first + d] == t.level[i] + 1, "children that do not point back");
  }
}

void checkPostOrder(const Octree& t, const Reader& r) {
  const uint64_t n = t.size();
  r.check(t.root == n - 1 && t.parent[n - 1] == kOctreeNone, "the post-order root is not the last node");
  std::vector<uint32_t> children(n, 0);
  for (uint64_t i = 0; i + 1 < n; ++i) {
    const uint32_t p = t.parent[i];
    r.check(p > i && p < n, "a parent does not follow its child");
    r.check(t.level[p] < t.level[i], "a parent is not above its child");
    ++children[p];
  }
  for (uint64_t i = 0; i < n; ++i) r.check(children[i] == t.child_count[i], "child counts differ from the parent links");
}

}  // namespace

Octree decodeOctree(std::string_view bytes, std::string_view name, uint64_t memory_budget_bytes) {
  Reader r(bytes, name);
  r.check(bytes.size() >= kHeaderBytes && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0,
          "it does not start with PGOCTREE");
  r.value<uint64_t>();
  const uint32_t version = r.value<uint32_t>();
  if (version != kOctreeFileVersion)
    r.fail("version " + std::to_string(version) + " (this build reads " + std::to_string(kOctreeFileVersion) + ")");
  Octree t;
  const uint8_t layout = r.value<uint8_t>(), method = r.value<uint8_t>(), split = r.value<uint8_t>(),
                flags = r.value<uint8_t>();
  r.check(layout <= 1 && method <= 1 && split <= 1 && flags < 8, "unknown layout, method, split or flags");
  t.layout = layout ? OctreeLayout::kPostOrder : OctreeLayout::kLevelOrder;
  t.options.method = method ? OctreeMethod::kTopDown : OctreeMethod::kBottomUp;
  t.options.split = split ? OctreeSplit::kData : OctreeSplit::kCube;
  t.options.compressed = (flags & kFlagCompressed) != 0;
  t.options.full = (flags & kFlagFull) != 0;
  t.options.sorted_points = (flags & kFlagSortedPoints) != 0;
  r.check(t.options.compressed == (layout == 1) && (!t.options.full || t.options.compressed) &&
              (!split || (method == 1 && layout == 0)) && (!t.options.compressed || method == 0),
          "inconsistent options");
  t.options.leaf_size = r.value<uint32_t>();
  t.options.max_depth = r.value<int32_t>();
  r.check(t.options.leaf_size >= 1 && t.options.max_depth >= 0 && t.options.max_depth <= kOctreeMaxLevel,
          "leaf size or maximum depth out of range");
  for (double& v : t.cube.min) v = r.value<double>();
  t.cube.side = r.value<double>();
  r.check(std::isfinite(t.cube.min[0]) && std::isfinite(t.cube.min[1]) && std::isfinite(t.cube.min[2]) &&
              std::isfinite(t.cube.side) && t.cube.side >= 0,
          "the root cube is not finite");
  t.point_count = r.value<uint64_t>();
  const uint64_t n = r.value<uint64_t>();
  t.root = r.value<uint32_t>();
  r.check(r.value<uint32_t>() == 0, "the reserved header field is not 0");
  r.check(t.point_count >= 1 && t.point_count <= kOctreeMaxPoints && n >= 1 && n <= uint64_t(kOctreeNone),
          "point or node count out of range");
  const bool post_order = layout == 1;
  const std::optional<uint64_t> body =
      arrayBytes(post_order, t.options.full, t.options.sorted_points, split == 1, n, t.point_count);
  if (!body || *body != bytes.size() - kHeaderBytes)
    r.fail("its size (" + std::to_string(bytes.size()) + " bytes) does not match the header's " + std::to_string(n) +
           " nodes and " + std::to_string(t.point_count) + " points");
  requireMemory("octree file " + std::string(name), *body, memory_budget_bytes, bytes.size());
  r.array(t.level, n);
  r.array(t.prefix, n);
  r.array(t.parent, n);
  if (post_order) r.array(t.child_count, n);
  else r.array(t.first_child, n);
  if (t.options.full) r.array(t.chain, n);
  r.array(t.begin, n);
  r.array(t.end, n);
  if (split) {
    r.array(t.split_center, 3 * n);
    r.array(t.split_axes, n);
  }
  r.array(t.order, t.point_count);
  r.array(t.keys, t.point_count);
  if (t.options.sorted_points) r.array(t.xyz, 3 * t.point_count);

  for (uint64_t i = 0; i < n; ++i) {
    r.check(t.level[i] <= kOctreeMaxLevel, "a level above 21");
    r.check(t.level[i] == kOctreeMaxLevel || t.prefix[i] >> (3 * t.level[i]) == 0, "a prefix longer than its level");
    r.check(t.begin[i] <= t.end[i] && t.end[i] <= t.point_count, "a point range outside the points");
    if (t.options.full) r.check(t.chain[i] <= 1, "a chain flag other than 0 or 1");
    if (split) {
      const uint8_t a = t.split_axes[i];
      r.check((a & 3) < 3 && ((a >> 2) & 3) < 3 && ((a >> 4) & 3) < 3 && a < 64, "split axes out of range");
    }
  }
  for (uint64_t j = 0; j < t.point_count; ++j) {
    r.check(t.order[j] < t.point_count, "a point index outside the points");
    r.check(t.keys[j] >> 63 == 0, "a key wider than 63 bits");
  }
  if (post_order) checkPostOrder(t, r);
  else checkLevelOrder(t, r);

  // The stats, from the arrays (the file does not store them).
  for (uint64_t i = 0; i < n; ++i) {
    const bool leaf = t.isLeaf(uint32_t(i));
    t.stats.leaves += leaf;
    t.stats.empty_leaves += leaf && t.begin[i] == t.end[i];
    t.stats.chain_nodes += t.options.full ? t.chain[i] : 0;
    t.stats.depth = std::max<int>(t.stats.depth, t.level[i]);
  }
  t.stats.nodes = n;
  t.stats.internal = n - t.stats.leaves;
  return t;
}

Octree readOctree(const std::filesystem::path& path, uint64_t memory_budget_bytes) {
  const std::string bytes = readInputFile(path, "octree file", memory_budget_bytes);
  return decodeOctree(bytes, path.string(), memory_budget_bytes);
}

}  // namespace procgen

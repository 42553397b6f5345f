// The studio's octree endpoints (issue 20 point 5): an octree over generated
// or uploaded points (procgen/octree.hpp — seed shared/seeds/004 §4 bottom-up
// from Morton keys, §5 top-down partitioning), sent as the points and the
// leaf boxes, and the queries listed at the end of the seed's §4 (kNN, radius,
// locate) answered on the client's last tree, which the server keeps so a
// click does not rebuild it.
//
//   POST /api/octree/build   {distribution, count, seed, <tree>}  → tree frame
//   POST /api/octree/upload  raw point file, ?name=&format=&<tree> → tree frame
//   POST /api/octree/query   {kind, point | index, k, radius}      → query frame
//
// docs/studio.md ("### Octree") lists the parameters and the frames.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <list>
#include <memory>
#include <mutex>

#include "procgen/budget.hpp"
#include "procgen/octree.hpp"
#include "procgen/octree_io.hpp"
#include "procgen/points.hpp"
#include "studio/api.hpp"

namespace procgen::studio {

namespace {

using Clock = std::chrono::steady_clock;

/// Points a request may build over: generated, or read from an upload.
constexpr int64_t kMaxPoints = 2'000'000;
/// Leaf boxes sent by default and at most (24 edges · 3 floats a box on the page).
constexpr int64_t kDefaultMaxBoxes = 100'000, kMaxBoxes = 500'000;
/// Neighbours a kNN query may ask for.
constexpr int64_t kMaxK = 4096;
/// Trees kept, one per client, least recently used dropped first.
constexpr size_t kStoredTrees = 4;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// A built tree and the points it was built from (the queries read both).
struct StoredTree {
  PointCloud cloud;
  Octree tree;
  std::vector<double> node_boxes;  ///< octreeNodeBoxes: 6 per node, for the query's leaf box
  uint64_t sequence = 0;           ///< order of the requests that built the trees
  OctreePoints points() const {
    return cloud.xyz32.empty() ? OctreePoints::of(cloud.xyz64.data(), cloud.count)
                               : OctreePoints::of(cloud.xyz32.data(), cloud.count);
  }
  uint64_t bytes() const {
    const Octree& t = tree;
    auto size = [](const auto& v) { return uint64_t(v.capacity()) * sizeof(v[0]); };
    return size(cloud.xyz32) + size(cloud.xyz64) + size(t.level) + size(t.prefix) + size(t.parent) +
           size(t.first_child) + size(t.child_count) + size(t.chain) + size(t.begin) + size(t.end) +
           size(t.order) + size(t.keys) + size(t.xyz) + size(t.split_center) + size(t.split_axes) + size(node_boxes);
  }
};

/// The last tree of each client (X-Procgen-Client), so queries do not
/// rebuild: at most kStoredTrees, and together at most half a job's memory
/// budget, so a build always has the other half (the least recently used go
/// first when a new tree needs the room).
class TreeStore {
 public:
  std::shared_ptr<const StoredTree> find(const std::string& client) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->client != client) continue;
      entries_.splice(entries_.begin(), entries_, it);  // most recently used first
      return entries_.front().tree;
    }
    return nullptr;
  }

  /// Keeps `tree` as the client's unless a newer request's tree is there
  /// already; false when it is larger than `byte_cap` on its own.
  bool put(const std::string& client, std::shared_ptr<const StoredTree> tree, uint64_t byte_cap) {
    const uint64_t bytes = tree->bytes();
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->client != client) continue;
      if (it->tree->sequence > tree->sequence) return true;  // a stale build finished late
      entries_.erase(it);
      break;
    }
    if (bytes > byte_cap) return false;
    auto total = [this] {
      uint64_t sum = 0;
      for (const Entry& e : entries_) sum += e.bytes;
      return sum;
    };
    while (!entries_.empty() && (entries_.size() >= kStoredTrees || total() + bytes > byte_cap)) entries_.pop_back();
    entries_.push_front({client, std::move(tree), bytes});
    return true;
  }

 private:
  struct Entry {
    std::string client;
    std::shared_ptr<const StoredTree> tree;
    uint64_t bytes;
  };
  std::mutex mutex_;
  std::list<Entry> entries_;
};

/// The tree parameters common to build and upload (JSON body or query string).
struct TreeRequest {
  OctreeOptions options;
  std::string method;
  enum class Boxes { kNonEmpty, kLeaves, kNone } boxes = Boxes::kNonEmpty;
  uint64_t max_boxes = kDefaultMaxBoxes;
  bool u16_positions = true;
};

TreeRequest treeRequest(const Params& params, const Job& job) {
  TreeRequest r;
  r.method = params.choice("method", "bottom-up", {"bottom-up", "top-down"});
  r.options.method = r.method == "top-down" ? OctreeMethod::kTopDown : OctreeMethod::kBottomUp;
  r.options.leaf_size = static_cast<uint32_t>(params.integer("leaf_size", 16, 1, kMaxPoints));
  r.options.max_depth = static_cast<int>(params.integer("max_depth", kOctreeMaxLevel, 0, kOctreeMaxLevel));
  // The queries read each leaf's points contiguously (several times faster kNN).
  r.options.sorted_points = true;
  r.options.memory_budget = job.memoryBudget();
  const std::string boxes = params.choice("boxes", "nonempty", {"nonempty", "leaves", "none"});
  r.boxes = boxes == "leaves" ? TreeRequest::Boxes::kLeaves
            : boxes == "none" ? TreeRequest::Boxes::kNone
                              : TreeRequest::Boxes::kNonEmpty;
  r.max_boxes = static_cast<uint64_t>(params.integer("max_boxes", kDefaultMaxBoxes, 0, kMaxBoxes));
  r.u16_positions = params.choice("positions", "u16", {"u16", "f32"}) == "u16";
  return r;
}

/// The points' bounding box x0 y0 z0 x1 y1 z1.
std::array<double, 6> boundsOf(const OctreePoints& points) {
  std::array<double, 6> b = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (uint64_t i = 0; i < points.count; ++i) {
    for (int a = 0; a < 3; ++a) {
      const double x = points.coord(i, a);
      b[a] = std::min(b[a], x);
      b[3 + a] = std::max(b[3 + a], x);
    }
  }
  return b;
}

/// The tree frame (docs/studio.md): the points (u16 normalized into `bounds`,
/// or f32), the selected leaves in Morton order — boxes (f32, 6 each),
/// box_level (u8), box_points (u32) — and the counts.
Frame treeFrame(const StoredTree& stored, const TreeRequest& request, const Job& job) {
  const Octree& tree = stored.tree;
  const OctreePoints points = stored.points();
  Frame frame;
  const std::array<double, 6> bounds = boundsOf(points);
  if (request.u16_positions) {
    requireMemory("point positions", checkedMul(points.count, 6).value_or(UINT64_MAX), job.memoryBudget());
    std::vector<uint16_t> q(3 * points.count);
    const U16Quantizer quantize({bounds[0], bounds[1], bounds[2]}, {bounds[3], bounds[4], bounds[5]});
    for (uint64_t i = 0; i < points.count; ++i)
      for (int a = 0; a < 3; ++a) q[3 * i + a] = quantize(points.coord(i, a), a);
    frame.add("positions", q);
  } else {
    requireMemory("point positions", checkedMul(points.count, 12).value_or(UINT64_MAX), job.memoryBudget());
    std::vector<float> f(3 * points.count);
    for (uint64_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(points.coord(i / 3, int(i % 3)));
    frame.add("positions", f);
  }
  job.check();

  std::vector<uint32_t> selected;
  if (request.boxes != TreeRequest::Boxes::kNone) {
    for (uint32_t leaf : octreeLeavesInOrder(tree))
      if (request.boxes == TreeRequest::Boxes::kLeaves || tree.end[leaf] > tree.begin[leaf]) selected.push_back(leaf);
  }
  const uint64_t boxes_total = selected.size();
  // Over the cap: every ⌈n / max⌉-th box from the first (as octreeGeometry thins its points).
  if (selected.size() > request.max_boxes) {
    const uint64_t stride = request.max_boxes == 0 ? selected.size() + 1
                                                   : (selected.size() + request.max_boxes - 1) / request.max_boxes;
    size_t kept = 0;
    for (size_t i = 0; i < selected.size(); i += stride) selected[kept++] = selected[i];
    selected.resize(request.max_boxes == 0 ? 0 : kept);
  }
  std::vector<float> boxes;
  std::vector<uint8_t> box_level;
  std::vector<uint32_t> box_points;
  boxes.reserve(6 * selected.size());
  for (uint32_t leaf : selected) {
    for (int c = 0; c < 6; ++c) boxes.push_back(static_cast<float>(stored.node_boxes[6 * size_t(leaf) + size_t(c)]));
    box_level.push_back(tree.level[leaf]);
    box_points.push_back(tree.end[leaf] - tree.begin[leaf]);
  }
  frame.add("boxes", boxes);
  frame.add("box_level", box_level);
  frame.add("box_points", box_points);

  const OctreeStats& s = tree.stats;
  frame.header["points"] = points.count;
  frame.header["nodes"] = s.nodes;
  frame.header["internal"] = s.internal;
  frame.header["leaves"] = s.leaves;
  frame.header["empty_leaves"] = s.empty_leaves;
  frame.header["depth"] = s.depth;
  frame.header["boxes"] = selected.size();
  frame.header["boxes_total"] = boxes_total;
  frame.header["method"] = request.method;
  frame.header["leaf_size"] = tree.options.leaf_size;
  frame.header["max_depth"] = tree.options.max_depth;
  frame.header["bounds"] = bounds;
  frame.header["cube"] = {{"min", {tree.cube.min[0], tree.cube.min[1], tree.cube.min[2]}}, {"side", tree.cube.side}};
  return frame;
}

/// Builds the tree over `cloud`, keeps it for the client, and replies with the tree frame.
/// `sequence` orders the requests (a stale build that ends late does not replace a newer tree).
Reply buildAndReply(TreeStore& store, uint64_t sequence, const Request& request, Job& job, PointCloud cloud,
                    const TreeRequest& tree_request, const Execution& execution, json source, json timings) {
  auto stored = std::make_shared<StoredTree>();
  stored->sequence = sequence;
  stored->cloud = std::move(cloud);
  job.check();
  auto t_build = Clock::now();
  stored->tree = buildOctree(stored->points(), tree_request.options, execution);
  timings["build_ms"] = msSince(t_build);
  job.check();
  stored->node_boxes = octreeNodeBoxes(stored->tree, job.memoryBudget());

  auto t_encode = Clock::now();
  Frame frame = treeFrame(*stored, tree_request, job);
  timings["encode_ms"] = msSince(t_encode);
  job.check();
  bool kept = false;
  if (!request.client.empty()) kept = store.put(request.client, std::move(stored), job.memoryBudget() / 2);
  frame.header["source"] = std::move(source);
  frame.header["timings"] = std::move(timings);
  frame.header["kept"] = kept;  // false: no X-Procgen-Client, or too large to keep: queries need a rebuild
  frame.header["backend"] = std::string(backendName(execution.backend));
  frame.header["threads"] = execution.threads;
  return Reply::ofFrame(frame);
}

PointDistribution distributionOf(const Params& params) {
  const std::vector<PointDistribution> all = {PointDistribution::kUniform, PointDistribution::kGaussian,
                                              PointDistribution::kPlummer};
  std::vector<std::string> names;
  for (PointDistribution d : all) names.emplace_back(pointDistributionName(d));
  const std::string name = params.choice("distribution", names.front(), names);
  return all[size_t(std::find(names.begin(), names.end(), name) - names.begin())];
}

/// The uploaded file's format: ?format=, else the extension of ?name=.
PointFileFormat uploadFormat(const Params& params, const std::string& name) {
  if (params.has("format")) {
    const std::string f = params.choice("format", "", {"ply", "off", "xyz", "obj"});
    return *pointFileFormat("file." + f);
  }
  if (auto format = pointFileFormat(name)) return *format;
  throw BadRequest("cannot tell the point file's format from its name '" + printableText(name, 80) +
                   "': give format=ply|off|xyz|obj, or a name ending in .ply, .off, .xyz (.txt, .pts, .csv) or .obj");
}

/// The query frame: indices (u32) and distances (f64) of the result points,
/// the leaf containing the query point.
Reply query(const StoredTree& stored, const Params& params, const Job& job) {
  const Octree& tree = stored.tree;
  const OctreePoints points = stored.points();
  const std::string kind = params.choice("kind", "knn", {"knn", "radius", "locate"});
  const bool by_index = params.has("index");
  if (by_index == params.has("point")) throw BadRequest("give the query's 'point' [x, y, z] or a point 'index' (one of them)");
  double q[3];
  if (by_index) {
    const auto index = static_cast<uint64_t>(params.integer("index", 0, 0, int64_t(points.count) - 1));
    for (int a = 0; a < 3; ++a) q[a] = points.coord(index, a);
  } else {
    const std::vector<double> p = params.numbers("point", 3);
    if (p.size() != 3) throw BadRequest("'point' must hold three numbers x, y, z");
    std::copy(p.begin(), p.end(), q);
  }
  const uint32_t k = static_cast<uint32_t>(params.integer("k", 8, 1, kMaxK));
  if (kind == "radius" && !params.has("radius")) throw BadRequest("a radius query needs 'radius'");
  const double radius = params.number("radius", 0, 0, 1e300);
  const Execution execution = job.execution(params);
  job.check();

  auto t_query = Clock::now();
  std::vector<uint32_t> indices;
  std::vector<double> distances;
  const uint32_t leaf = octreeLocate(tree, q[0], q[1], q[2]);
  if (kind == "knn") {
    indices.resize(k);
    std::vector<double> dist2(k);
    octreeKnn(tree, points, q, 1, k, indices.data(), dist2.data(), execution);
    while (!indices.empty() && indices.back() == kOctreeNone) indices.pop_back(), dist2.pop_back();
    for (double d2 : dist2) distances.push_back(std::sqrt(d2));
  } else if (kind == "radius") {
    OctreeQueryResult r = octreeRadius(tree, points, q, 1, radius, execution);
    indices = std::move(r.indices);
  } else if (leaf != kOctreeNone) {  // locate: the points of the leaf
    indices.assign(tree.order.begin() + tree.begin[leaf], tree.order.begin() + tree.end[leaf]);
  }
  if (distances.empty()) {
    for (uint32_t i : indices) {
      double d2 = 0;
      for (int a = 0; a < 3; ++a) d2 += (points.coord(i, a) - q[a]) * (points.coord(i, a) - q[a]);
      distances.push_back(std::sqrt(d2));
    }
  }
  const double query_ms = msSince(t_query);

  Frame frame;
  frame.add("indices", indices);
  frame.add("distances", distances);
  frame.header["kind"] = kind;
  frame.header["point"] = {q[0], q[1], q[2]};
  if (by_index) frame.header["index"] = params.integer("index", 0, 0, int64_t(points.count) - 1);
  if (kind == "knn") frame.header["k"] = k;
  if (kind == "radius") frame.header["radius"] = radius;
  frame.header["results"] = indices.size();
  if (leaf == kOctreeNone) {
    frame.header["leaf"] = nullptr;  // outside the root cube
  } else {
    const auto box = stored.node_boxes.begin() + 6 * ptrdiff_t(leaf);
    frame.header["leaf"] = {{"node", leaf},
                            {"level", tree.level[leaf]},
                            {"points", tree.end[leaf] - tree.begin[leaf]},
                            {"box", std::vector<double>(box, box + 6)}};
  }
  frame.header["timings"] = {{"query_ms", query_ms}};
  frame.header["tree"] = {{"points", points.count}, {"leaves", tree.stats.leaves}};
  return Reply::ofFrame(frame);
}

}  // namespace

void registerOctreeEndpoints(Api& api) {
  auto store = std::make_shared<TreeStore>();
  auto sequence = std::make_shared<std::atomic<uint64_t>>(0);

  // Generated points: Philox per point index, so the same seed gives the same
  // points on every backend and thread count.
  api.compute("/api/octree/build", "octree.build", [store, sequence](const Request& request, Job& job) {
    const uint64_t order = sequence->fetch_add(1) + 1;
    const Params& params = request.params;
    const PointDistribution distribution = distributionOf(params);
    const auto count = static_cast<uint64_t>(params.integer("count", 100'000, 1, kMaxPoints));
    const uint64_t seed = params.seed("seed", 1);
    const TreeRequest tree_request = treeRequest(params, job);
    const Execution execution = job.execution(params);

    auto t_generate = Clock::now();
    requireMemory(std::to_string(count) + " points", count * 24, job.memoryBudget());
    PointCloud cloud;
    cloud.xyz64.resize(3 * count);
    generatePoints(distribution, count, seed, cloud.xyz64.data(), execution);
    cloud.count = count;
    json timings = {{"generate_ms", msSince(t_generate)}};
    json source = {{"kind", "generated"}, {"distribution", pointDistributionName(distribution)}, {"seed", seed}};
    return buildAndReply(*store, order, request, job, std::move(cloud), tree_request, execution,
                         std::move(source), std::move(timings));
  });

  // A point file as the raw body (PLY ascii/binary, OFF, XYZ, OBJ vertices);
  // the same channel as build: either replaces the client's tree.
  api.upload("/api/octree/upload", "octree.build", [store, sequence](const Request& request, Job& job) {
    const uint64_t order = sequence->fetch_add(1) + 1;
    const Params& params = request.params;
    const std::string name = params.string("name", "upload", 255);
    const PointFileFormat format = uploadFormat(params, name);
    const TreeRequest tree_request = treeRequest(params, job);
    const Execution execution = job.execution(params);

    auto t_read = Clock::now();
    PointCloud cloud = parsePointFile(request.body, format, name, {job.memoryBudget()});
    if (cloud.count > uint64_t(kMaxPoints))
      throw Error(printableText(name, 80) + " holds " + std::to_string(cloud.count) + " points; the studio builds over at most " +
                  std::to_string(kMaxPoints) + " (procgen octree takes any number)");
    json timings = {{"read_ms", msSince(t_read)}};
    json source = {{"kind", "file"}, {"name", name}, {"format", pointFileFormatName(format)}, {"bytes", request.body.size()}};
    return buildAndReply(*store, order, request, job, std::move(cloud), tree_request, execution,
                         std::move(source), std::move(timings));
  });

  api.compute("/api/octree/query", "octree.query", [store](const Request& request, Job& job) {
    std::shared_ptr<const StoredTree> stored = request.client.empty() ? nullptr : store->find(request.client);
    if (!stored)
      throw BadRequest(request.client.empty()
                           ? "a query needs the header X-Procgen-Client naming the client whose tree it asks"
                           : "no octree to query: build one first (/api/octree/build or /api/octree/upload); the "
                             "server keeps the last tree of a few clients only");
    return query(*stored, request.params, job);
  });
}

}  // namespace procgen::studio

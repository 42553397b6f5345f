// The studio's octree endpoints (src/studio/api_octree.cpp) over real HTTP:
// the build frame against buildOctree called directly (the same leaves, in
// Morton order, with boxes worked out here from each leaf's (level, prefix)),
// uploaded files against the library reading the same file from disk, query
// results against a brute-force search over the points, the trees kept per
// client, and every kind of bad request.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include <unistd.h>

#include "procgen/octree.hpp"
#include "procgen/points.hpp"
#include "studio/studio_client.hpp"

namespace procgen {
namespace {

using nlohmann::json;
using studio_test::DecodedFrame;
using studio_test::HttpReply;
using studio_test::TestServer;

const Execution kSerial{Backend::kSerial, 1};

DecodedFrame okFrame(const HttpReply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 400);
  EXPECT_EQ(reply.content_type, "application/octet-stream");
  return studio_test::decodeFrame(reply.body);
}

/// POSTs `bytes` raw to /api/octree/upload with `query` (already encoded).
HttpReply upload(const TestServer& server, const std::string& query, const std::string& bytes,
                 const std::string& client = "") {
  httplib::Headers headers;
  if (!client.empty()) headers.emplace("X-Procgen-Client", client);
  auto result = server.client().Post(("/api/octree/upload?" + query).c_str(), headers, bytes, "application/octet-stream");
  if (!result) throw std::runtime_error("no reply from the test server");
  return {result->status, result->get_header_value("Content-Type"), result->body, {}};
}

/// The box of a cube cell, decoded here from its Morton prefix (docs/octree.md:
/// bit 3i of the prefix is x bit i, 3i+1 y, 3i+2 z; the cell spans
/// min + c·side/2^level .. min + (c+1)·side/2^level per axis).
std::array<double, 6> cellBox(const Octree& tree, uint32_t node) {
  const int level = tree.level[node];
  const uint64_t prefix = tree.prefix[node];
  std::array<double, 6> box{};
  for (int a = 0; a < 3; ++a) {
    uint64_t c = 0;
    for (int i = 0; i < level; ++i) c |= ((prefix >> (3 * i + a)) & 1u) << i;
    const double cell = tree.cube.side / std::pow(2.0, level);
    box[a] = tree.cube.min[a] + double(c) * cell;
    box[3 + a] = tree.cube.min[a] + double(c + 1) * cell;
  }
  return box;
}

/// The leaves of `tree` by a depth-first walk here (children in digit
/// order = Morton order), with or without the empty ones.
void leavesByWalk(const Octree& tree, uint32_t node, bool empty_too, std::vector<uint32_t>& out) {
  if (tree.first_child[node] == kOctreeNone) {
    if (empty_too || tree.end[node] > tree.begin[node]) out.push_back(node);
    return;
  }
  for (uint32_t d = 0; d < 8; ++d) leavesByWalk(tree, tree.first_child[node] + d, empty_too, out);
}

/// Checks a tree frame against `tree` built directly over `points`: the
/// counts, the f32 positions, and the selected leaves with their boxes.
void expectFrameShowsTree(const DecodedFrame& frame, const Octree& tree, const OctreePoints& points, bool empty_too) {
  const json& h = frame.header;
  EXPECT_EQ(h["points"], points.count);
  EXPECT_EQ(h["nodes"], tree.stats.nodes);
  EXPECT_EQ(h["leaves"], tree.stats.leaves);
  EXPECT_EQ(h["empty_leaves"], tree.stats.empty_leaves);
  EXPECT_EQ(h["depth"], tree.stats.depth);
  const auto positions = frame.as<float>("positions");
  ASSERT_EQ(positions.size(), 3 * points.count);
  for (uint64_t i = 0; i < 3 * points.count; ++i)
    ASSERT_EQ(positions[i], static_cast<float>(points.coord(i / 3, int(i % 3)))) << "coordinate " << i;

  std::vector<uint32_t> leaves;
  leavesByWalk(tree, tree.root, empty_too, leaves);
  const auto boxes = frame.as<float>("boxes");
  const auto levels = frame.as<uint8_t>("box_level");
  const auto counts = frame.as<uint32_t>("box_points");
  EXPECT_EQ(h["boxes"], leaves.size());
  EXPECT_EQ(h["boxes_total"], leaves.size());
  ASSERT_EQ(boxes.size(), 6 * leaves.size());
  ASSERT_EQ(levels.size(), leaves.size());
  ASSERT_EQ(counts.size(), leaves.size());
  for (size_t j = 0; j < leaves.size(); ++j) {
    const auto box = cellBox(tree, leaves[j]);
    for (int c = 0; c < 6; ++c) ASSERT_FLOAT_EQ(boxes[6 * j + size_t(c)], static_cast<float>(box[size_t(c)])) << "leaf " << j;
    EXPECT_EQ(levels[j], tree.level[leaves[j]]);
    EXPECT_EQ(counts[j], tree.end[leaves[j]] - tree.begin[leaves[j]]);
  }
}

TEST(StudioOctree, BuildFrameShowsTheTreeOfBuildOctree) {
  TestServer server;
  const struct {
    const char* distribution;
    PointDistribution enum_value;
    const char* method;
    OctreeMethod method_value;
    uint32_t leaf_size;
    const char* boxes;
  } cases[] = {
      {"uniform", PointDistribution::kUniform, "bottom-up", OctreeMethod::kBottomUp, 8, "leaves"},
      {"gaussian", PointDistribution::kGaussian, "top-down", OctreeMethod::kTopDown, 3, "nonempty"},
      {"plummer", PointDistribution::kPlummer, "bottom-up", OctreeMethod::kBottomUp, 1, "nonempty"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.distribution) + " " + c.method);
    const uint64_t n = 3000, seed = 77;
    std::vector<double> xyz(3 * n);
    generatePoints(c.enum_value, n, seed, xyz.data(), kSerial);
    OctreeOptions options;
    options.method = c.method_value;
    options.leaf_size = c.leaf_size;
    const Octree tree = buildOctree(OctreePoints::of(xyz), options, kSerial);

    json request = {{"distribution", c.distribution}, {"count", n},      {"seed", seed},        {"method", c.method},
                    {"leaf_size", c.leaf_size},     {"boxes", c.boxes}, {"positions", "f32"}, {"backend", "serial"}};
    const DecodedFrame frame = okFrame(server.post("/api/octree/build", request.dump()));
    expectFrameShowsTree(frame, tree, OctreePoints::of(xyz), std::string(c.boxes) == "leaves");
    EXPECT_EQ(frame.header["source"]["distribution"], c.distribution);
    for (const char* stage : {"generate_ms", "build_ms", "encode_ms"}) EXPECT_GE(frame.header["timings"][stage], 0.0);

    // Every backend and thread count sends the same bytes (Philox points, ordered prefix sums).
    for (const char* backend : {"cpu", "opencl"}) {
      if (!backendAvailable(*parseBackend(backend))) continue;
      request["backend"] = backend;
      request["threads"] = 2;
      const HttpReply reply = server.post("/api/octree/build", request.dump());
      if (reply.status == 422 && reply.json()["error"]["kind"] == "backend") continue;  // no device with fp64
      EXPECT_EQ(okFrame(reply).buffers, frame.buffers) << backend;
    }
  }
}

TEST(StudioOctree, U16PositionsAreTheBoundingBoxQuantized) {
  TestServer server;
  const uint64_t n = 2000;
  std::vector<double> xyz(3 * n);
  generatePoints(PointDistribution::kGaussian, n, 5, xyz.data(), kSerial);
  const DecodedFrame frame = okFrame(server.post("/api/octree/build", json{{"distribution", "gaussian"}, {"count", n}, {"seed", 5}}.dump()));
  std::array<double, 6> bounds = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (uint64_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) bounds[a] = std::min(bounds[a], xyz[3 * i + a]), bounds[3 + a] = std::max(bounds[3 + a], xyz[3 * i + a]);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(frame.header["bounds"][c].get<double>(), bounds[size_t(c)]);
  const auto q = frame.as<uint16_t>("positions");
  ASSERT_EQ(q.size(), 3 * n);
  for (uint64_t i = 0; i < 3 * n; ++i) {
    const int a = int(i % 3);
    const double extent = bounds[3 + a] - bounds[a];
    const double back = bounds[a] + q[i] / 65535.0 * extent;
    ASSERT_LE(std::abs(back - xyz[i]), 0.5 * extent / 65535.0 * (1 + 1e-9)) << "coordinate " << i;
  }
}

TEST(StudioOctree, ManyBoxesAreThinnedToEveryStrideTh) {
  TestServer server;
  const uint64_t n = 5000;
  const auto all = okFrame(server.post("/api/octree/build", json{{"count", n}, {"leaf_size", 1}, {"max_boxes", 500000}}.dump()));
  const auto thin = okFrame(server.post("/api/octree/build", json{{"count", n}, {"leaf_size", 1}, {"max_boxes", 1000}}.dump()));
  const uint64_t total = all.header["boxes"];
  ASSERT_GT(total, 1000u);
  EXPECT_EQ(thin.header["boxes_total"], total);
  const uint64_t stride = (total + 999) / 1000;
  const auto every = all.as<float>("boxes"), kept = thin.as<float>("boxes");
  ASSERT_EQ(kept.size(), 6 * ((total + stride - 1) / stride));
  for (size_t j = 0; j < kept.size() / 6; ++j)
    for (int c = 0; c < 6; ++c) ASSERT_EQ(kept[6 * j + size_t(c)], every[6 * j * stride + size_t(c)]);
  const auto none = okFrame(server.post("/api/octree/build", json{{"count", n}, {"boxes", "none"}}.dump()));
  EXPECT_EQ(none.header["boxes"], 0);
  EXPECT_TRUE(none.as<float>("boxes").empty());
}

class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("procgen-octree-api-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path_ / name, std::ios::binary) << bytes;
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

TEST(StudioOctree, UploadedFilesGiveTheTreeOfTheLibraryReadingTheFile) {
  TestServer server;
  TempDir dir;
  // A binary PLY from the library's writer, an ASCII one and an XYZ text written here.
  std::vector<double> xyz(3 * 700);
  generatePoints(PointDistribution::kPlummer, 700, 3, xyz.data(), kSerial);
  std::vector<Vec3> positions;
  for (size_t i = 0; i < 700; ++i) positions.push_back({float(xyz[3 * i]), float(xyz[3 * i + 1]), float(xyz[3 * i + 2])});
  PointSetView view;
  view.count = positions.size();
  view.positions = positions.data();
  const std::vector<uint8_t> ply = encodePointsPly(view);
  std::string ascii = "ply\nformat ascii 1.0\ncomment hand-written\nelement vertex 5\nproperty double x\nproperty double y\n"
                      "property double z\nproperty uchar red\nend_header\n0 0 0 1\n1 0.5 0.25 2\n-3 2 1e-3 3\n0.125 7 -1 4\n2 2 2 5\n";
  std::string text = "# x y z\n";
  for (int i = 0; i < 200; ++i) text += std::to_string(std::sin(i) * 10) + " " + std::to_string(std::cos(i * 0.7)) + ", " + std::to_string(i % 13) + "\n";

  const struct {
    std::string name, bytes, disk_name, query;
    uint32_t leaf_size;
    OctreeMethod method;
    bool empty_leaves;
  } files[] = {
      {"cloud.ply", std::string(ply.begin(), ply.end()), "cloud.ply", "leaf_size=4", 4, OctreeMethod::kBottomUp, false},
      {"hand.ply", ascii, "hand.ply", "leaf_size=1&method=top-down", 1, OctreeMethod::kTopDown, false},
      {"ring.txt", text, "ring.txt", "leaf_size=2&boxes=leaves", 2, OctreeMethod::kBottomUp, true},
      {"anything", text, "anything.xyz", "format=xyz&leaf_size=2&boxes=leaves", 2, OctreeMethod::kBottomUp, true},
  };
  for (const auto& f : files) {
    SCOPED_TRACE(f.name);
    const PointCloud cloud = readPointFile(dir.write(f.disk_name, f.bytes));
    const OctreePoints points = cloud.xyz32.empty() ? OctreePoints::of(cloud.xyz64.data(), cloud.count)
                                                    : OctreePoints::of(cloud.xyz32.data(), cloud.count);
    OctreeOptions options;
    options.leaf_size = f.leaf_size;
    options.method = f.method;
    const Octree tree = buildOctree(points, options, kSerial);
    const DecodedFrame frame = okFrame(upload(server, "name=" + f.name + "&positions=f32&" + f.query, f.bytes));
    expectFrameShowsTree(frame, tree, points, f.empty_leaves);
    EXPECT_EQ(frame.header["source"]["kind"], "file");
    EXPECT_EQ(frame.header["source"]["bytes"], f.bytes.size());
    EXPECT_GE(frame.header["timings"]["read_ms"], 0.0);
  }
}

/// Brute force: the (distance², index) of every point, sorted.
std::vector<std::pair<double, uint32_t>> byDistance(const std::vector<double>& xyz, const double q[3]) {
  std::vector<std::pair<double, uint32_t>> all;
  for (uint32_t i = 0; i < xyz.size() / 3; ++i) {
    const double dx = xyz[3 * i] - q[0], dy = xyz[3 * i + 1] - q[1], dz = xyz[3 * i + 2] - q[2];
    all.push_back({dx * dx + dy * dy + dz * dz, i});
  }
  std::sort(all.begin(), all.end());
  return all;
}

TEST(StudioOctree, QueriesEqualABruteForceSearch) {
  TestServer server;
  const uint64_t n = 4000, seed = 9;
  std::vector<double> xyz(3 * n);
  generatePoints(PointDistribution::kGaussian, n, seed, xyz.data(), kSerial);
  for (const char* method : {"bottom-up", "top-down"}) {
    SCOPED_TRACE(method);
    okFrame(server.post("/api/octree/build",
                        json{{"distribution", "gaussian"}, {"count", n}, {"seed", seed}, {"leaf_size", 5}, {"method", method}}.dump(),
                        "client-q"));
    // Query points: three of the points (by index) and three anywhere, one outside the cloud.
    std::vector<json> where = {{{"index", 0}}, {{"index", 1234}}, {{"index", n - 1}}, {{"point", {0.1, -0.2, 0.3}}},
                               {{"point", {2.5, 2.5, -2.5}}}, {{"point", {40, 40, 40}}}};
    for (const json& at : where) {
      SCOPED_TRACE(at.dump());
      double q[3];
      if (at.contains("index")) {
        for (int a = 0; a < 3; ++a) q[a] = xyz[3 * at["index"].get<size_t>() + size_t(a)];
      } else {
        for (int a = 0; a < 3; ++a) q[a] = at["point"][a];
      }
      const auto truth = byDistance(xyz, q);

      for (uint32_t k : {1u, 7u, 64u}) {
        json request = at;
        request["kind"] = "knn";
        request["k"] = k;
        const DecodedFrame frame = okFrame(server.post("/api/octree/query", request.dump(), "client-q"));
        const auto indices = frame.as<uint32_t>("indices");
        const auto distances = frame.as<double>("distances");
        ASSERT_EQ(indices.size(), k);
        EXPECT_EQ(frame.header["results"], k);
        for (uint32_t j = 0; j < k; ++j) {
          EXPECT_EQ(indices[j], truth[j].second) << "neighbour " << j;
          EXPECT_NEAR(distances[j], std::sqrt(truth[j].first), 1e-12);
        }
      }

      for (double radius : {0.0, 0.05, 0.4, 1.5}) {
        json request = at;
        request["kind"] = "radius";
        request["radius"] = radius;
        const DecodedFrame frame = okFrame(server.post("/api/octree/query", request.dump(), "client-q"));
        std::vector<uint32_t> expected;
        for (const auto& [d2, i] : truth)
          if (d2 <= radius * radius) expected.push_back(i);
        EXPECT_EQ(frame.as<uint32_t>("indices"), expected) << "radius " << radius;
        EXPECT_EQ(frame.as<double>("distances").size(), expected.size());
      }

      // locate: the leaf holding the point; its points are the ones in its box.
      json request = at;
      request["kind"] = "locate";
      const DecodedFrame frame = okFrame(server.post("/api/octree/query", request.dump(), "client-q"));
      const json& leaf = frame.header["leaf"];
      const bool outside = at.contains("point") && at["point"][0] == 40;
      if (outside) {
        EXPECT_TRUE(leaf.is_null());
        EXPECT_TRUE(frame.as<uint32_t>("indices").empty());
        continue;
      }
      ASSERT_TRUE(leaf.is_object());
      std::array<double, 6> box;
      for (int c = 0; c < 6; ++c) box[size_t(c)] = leaf["box"][c];
      for (int a = 0; a < 3; ++a) EXPECT_TRUE(box[a] <= q[a] && q[a] <= box[3 + a]) << "the leaf holds the query point";
      const auto got = frame.as<uint32_t>("indices");
      EXPECT_EQ(leaf["points"], got.size());
      const std::set<uint32_t> in_leaf(got.begin(), got.end());
      for (uint32_t i = 0; i < n; ++i) {
        bool closed = true, open = true;
        for (int a = 0; a < 3; ++a) {
          const double x = xyz[3 * i + a];
          closed = closed && box[a] <= x && x <= box[3 + a];
          open = open && box[a] < x && x < box[3 + a];
        }
        if (open) {
          EXPECT_TRUE(in_leaf.count(i)) << "point " << i << " is inside the leaf's box";
        }
        if (in_leaf.count(i)) {
          EXPECT_TRUE(closed) << "point " << i << " is outside the leaf's box";
        }
      }
    }
  }
}

TEST(StudioOctree, QueriesAnUploadedTreeAndKeepsAFewClients) {
  TestServer server;
  const std::string text = "0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n0.2 0.2 0.2\n";
  okFrame(upload(server, "name=six.xyz&leaf_size=1", text, "uploader"));
  const DecodedFrame knn = okFrame(server.post("/api/octree/query", R"({"kind": "knn", "point": [0.9, 0.9, 0.9], "k": 2})", "uploader"));
  // By hand: (1,1,1) at 0.1·√3, then (0.2,0.2,0.2) at 0.7·√3.
  EXPECT_EQ(knn.as<uint32_t>("indices"), (std::vector<uint32_t>{4, 5}));
  EXPECT_NEAR(knn.as<double>("distances")[0], 0.1 * std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(knn.as<double>("distances")[1], 0.7 * std::sqrt(3.0), 1e-12);

  // Six clients build in turn: the server keeps the last four.
  for (int c = 0; c < 6; ++c)
    okFrame(server.post("/api/octree/build", json{{"count", 100 + c}}.dump(), "client-" + std::to_string(c)));
  for (int c = 0; c < 6; ++c) {
    auto reply = server.post("/api/octree/query", R"({"kind": "knn", "index": 0})", "client-" + std::to_string(c));
    if (c < 2) {
      EXPECT_EQ(reply.status, 400) << c;
      EXPECT_EQ(reply.json()["error"]["kind"], "request");
    } else {
      EXPECT_EQ(okFrame(reply).header["tree"]["points"], 100 + c);
    }
  }
  EXPECT_EQ(server.post("/api/octree/query", R"({"kind": "knn", "index": 0})", "uploader").status, 400);
}

void expectBadRequest(const HttpReply& reply, int status, const std::string& kind, const std::string& mentions) {
  ASSERT_EQ(reply.status, status) << reply.body;
  const json error = reply.json()["error"];
  EXPECT_EQ(error["kind"], kind) << reply.body;
  EXPECT_NE(error["message"].get<std::string>().find(mentions), std::string::npos) << reply.body;
}

TEST(StudioOctree, BadRequestsGetClean4xx) {
  StudioOptions options = TestServer::quietOptions();
  options.max_body_bytes = 64 << 10;
  TestServer server(options);
  auto build = [&](const std::string& body) { return server.post("/api/octree/build", body, "bad"); };
  expectBadRequest(build("{\"count\": "), 400, "request", "not valid JSON");
  expectBadRequest(build("[1]"), 400, "request", "JSON object");
  expectBadRequest(build(R"({"count": "many"})"), 400, "request", "'count'");
  expectBadRequest(build(R"({"count": 2000001})"), 400, "request", "'count' must be in [1, 2000000]");
  expectBadRequest(build(R"({"count": 0})"), 400, "request", "'count'");
  expectBadRequest(build(R"({"leaf_size": 0})"), 400, "request", "'leaf_size'");
  expectBadRequest(build(R"({"leaf_size": 2.5})"), 400, "request", "'leaf_size' must be an integer");
  expectBadRequest(build(R"({"max_depth": 22})"), 400, "request", "'max_depth'");
  expectBadRequest(build(R"({"method": "sideways"})"), 400, "request", "bottom-up, top-down");
  expectBadRequest(build(R"({"distribution": "cubic"})"), 400, "request", "uniform, gaussian, plummer");
  expectBadRequest(build(R"({"seed": -1})"), 400, "request", "'seed'");
  expectBadRequest(build(R"({"boxes": "some"})"), 400, "request", "'boxes'");
  expectBadRequest(build(R"({"backend": "gpu"})"), 400, "request", "'backend'");

  // Queries: none without a tree or a client, then bad parameters against a tree.
  expectBadRequest(server.post("/api/octree/query", R"({"point": [0, 0, 0]})", "nobody"), 400, "request", "build one first");
  expectBadRequest(server.post("/api/octree/query", R"({"point": [0, 0, 0]})"), 400, "request", "X-Procgen-Client");
  okFrame(build(R"({"count": 500})"));
  auto query = [&](const std::string& body) { return server.post("/api/octree/query", body, "bad"); };
  expectBadRequest(query(R"({"kind": "knn"})"), 400, "request", "'point'");
  expectBadRequest(query(R"({"point": [0, 0, 0], "index": 1})"), 400, "request", "one of them");
  expectBadRequest(query(R"({"point": [0, 0]})"), 400, "request", "three numbers");
  expectBadRequest(query(R"({"point": [0, 0, "z"]})"), 400, "request", "numbers only");
  expectBadRequest(query(R"({"index": 500})"), 400, "request", "'index' must be in [0, 499]");
  expectBadRequest(query(R"({"index": 1, "k": 0})"), 400, "request", "'k'");
  expectBadRequest(query(R"({"index": 1, "k": 5000})"), 400, "request", "'k'");
  expectBadRequest(query(R"({"index": 1, "kind": "radius"})"), 400, "request", "'radius'");
  expectBadRequest(query(R"({"index": 1, "kind": "radius", "radius": -1})"), 400, "request", "'radius'");
  expectBadRequest(query(R"({"index": 1, "kind": "box"})"), 400, "request", "knn, radius, locate");
  EXPECT_EQ(query(R"({"index": 1})").status, 200);  // the tree survived every bad query

  // Files: a parse error at its line and column, binary garbage, no points, an unknown format, too big.
  const auto parse = upload(server, "name=bad.xyz", "0 0 0\n1 two 3\n", "bad");
  ASSERT_EQ(parse.status, 422) << parse.body;
  const json error = parse.json()["error"];
  EXPECT_EQ(error["kind"], "parse");
  EXPECT_EQ(error["file"], "bad.xyz");
  EXPECT_EQ(error["line"], 2);
  EXPECT_EQ(error["column"], 3);  // "two" starts at byte 3 of "1 two 3"
  const std::string truncated = "ply\nformat binary_little_endian 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
                                "property float z\nend_header\n" + std::string(20, '\0');
  expectBadRequest(upload(server, "name=cut.ply", truncated, "bad"), 422, "input", "only 20 bytes remain");
  expectBadRequest(upload(server, "name=nan.xyz", "0 0 0\nnan 1 2\n", "bad"), 422, "parse", "NaN");
  expectBadRequest(upload(server, "name=empty.xyz", "# nothing\n", "bad"), 422, "input", "no points");
  expectBadRequest(upload(server, "name=points.bin", "0 0 0\n", "bad"), 400, "request", "format");
  expectBadRequest(upload(server, "name=a.xyz&format=las", "0 0 0\n", "bad"), 400, "request", "'format'");
  expectBadRequest(upload(server, "name=a.xyz&leaf_size=0", "0 0 0\n", "bad"), 400, "request", "'leaf_size'");
  expectBadRequest(upload(server, "name=big.xyz", std::string(100 << 10, '1'), "bad"), 413, "too_large", "larger");
  EXPECT_EQ(query(R"({"index": 1})").status, 200);  // failed uploads keep the last good tree
}

TEST(StudioOctree, OverTheMemoryBudgetIsABudgetError) {
  StudioOptions options = TestServer::quietOptions();
  options.memory_budget = 1 << 20;  // 1 MiB: 2·10^5 points need 4.8 MB of coordinates alone
  TestServer server(options);
  expectBadRequest(server.post("/api/octree/build", R"({"count": 200000})"), 422, "budget", "budget");
  EXPECT_EQ(server.post("/api/octree/build", R"({"count": 1000})").status, 200);
}

TEST(StudioOctree, ATreeLargerThanHalfTheBudgetIsSentButNotKept) {
  StudioOptions options = TestServer::quietOptions();
  options.memory_budget = 4 << 20;  // the kept trees get 2 MiB; 40,000 points hold ~2.4 MB (coordinates twice, keys, order)
  TestServer server(options);
  const DecodedFrame small = okFrame(server.post("/api/octree/build", R"({"count": 1000})", "c"));
  EXPECT_EQ(small.header["kept"], true);
  const DecodedFrame large = okFrame(server.post("/api/octree/build", R"({"count": 40000})", "c"));
  EXPECT_EQ(large.header["kept"], false);
  EXPECT_EQ(large.header["points"], 40000);
  // The client's older tree is gone too: a query must not answer on points the page no longer shows.
  expectBadRequest(server.post("/api/octree/query", R"({"index": 0})", "c"), 400, "request", "build one first");
}

}  // namespace
}  // namespace procgen

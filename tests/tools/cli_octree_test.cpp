// `procgen octree` end to end (issue 18 point 8, the contract scripts depend
// on): every stats key, the counts of a hand-derived tree and a checksum
// computed here from its definition, query result files against brute force
// written in this file, the .octree file read back, and the exit codes with
// nothing written on error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_run.hpp"
#include "procgen/octree.hpp"
#include "procgen/octree_io.hpp"
#include "procgen/points.hpp"

namespace {

using namespace procgen;
using procgen::test::runProcgen;
using procgen::test::slurp;
namespace fs = std::filesystem;

class CliOctree : public procgen::test::ScratchDirTest {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name, std::ios::binary) << text; }
  int run(const std::string& args) { return runProcgen(args, dir_ / "err.txt", dir_ / "out.txt"); }
  std::string err() const { return slurp(dir_ / "err.txt"); }
  std::string out() const { return slurp(dir_ / "out.txt"); }
  /// The files of the scratch directory other than the captured streams.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n != "err.txt" && n != "out.txt") names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

uint64_t fnv(const std::vector<std::pair<int, uint64_t>>& leaves) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto byte = [&](uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
  for (const auto& [level, prefix] : leaves) {
    byte(uint8_t(level));
    for (int i = 0; i < 8; ++i) byte(uint8_t(prefix >> (8 * i)));
  }
  return h;
}

TEST_F(CliOctree, StatsOfAHandDerivedTree) {
  // Two points at opposite corners, leaf size 1: the root splits once into 8
  // leaves; digit 0 holds (0,0,0), digit 7 holds (1,1,1) (its quantized
  // coordinates clamp to 2^21 − 1), 6 are empty.
  write("two.xyz", "0 0 0\n1 1 1\n");
  ASSERT_EQ(run("octree " + path("two.xyz") + " --leaf-size 1 --stats-json -"), 0) << err();
  const nlohmann::json j = nlohmann::json::parse(out());
  for (const char* key : {"points", "method", "leaf_size", "max_depth", "nodes", "internal", "leaves", "empty_leaves",
                          "chain_nodes", "depth", "read_ms", "build_ms", "mpts_per_s", "checksum", "queries",
                          "query_ms", "mq_per_s", "bytes_per_point", "backend", "threads"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["points"], 2);
  EXPECT_EQ(j["method"], "bottom-up");
  EXPECT_EQ(j["leaf_size"], 1);
  EXPECT_EQ(j["max_depth"], 21);
  EXPECT_EQ(j["nodes"], 9);
  EXPECT_EQ(j["internal"], 1);
  EXPECT_EQ(j["leaves"], 8);
  EXPECT_EQ(j["empty_leaves"], 6);
  EXPECT_EQ(j["chain_nodes"], 0);
  EXPECT_EQ(j["depth"], 1);
  EXPECT_EQ(j["queries"], 0);
  EXPECT_EQ(j["backend"], "serial");
  EXPECT_EQ(j["threads"], 1);
  std::vector<std::pair<int, uint64_t>> leaves;
  for (uint64_t d = 0; d < 8; ++d) leaves.push_back({1, d});
  char want[17];
  std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(fnv(leaves)));
  EXPECT_EQ(j["checksum"], want);
  EXPECT_EQ(std::string(j["checksum"]).size(), 16u);
}

TEST_F(CliOctree, CompressedAndFullCountsOfAHandDerivedTree) {
  // (0,0,0) and (1,1,1) at --max-depth 3: two leaves at level 3, their LCA is
  // the root (they differ in the first digit): 3 nodes; --full adds the 2
  // chain nodes above each leaf.
  write("two.xyz", "0 0 0\n1 1 1\n");
  ASSERT_EQ(run("octree " + path("two.xyz") + " --compressed --max-depth 3 --stats-json -"), 0) << err();
  nlohmann::json j = nlohmann::json::parse(out());
  EXPECT_EQ(j["nodes"], 3);
  EXPECT_EQ(j["leaves"], 2);
  EXPECT_EQ(j["internal"], 1);
  EXPECT_EQ(j["depth"], 3);
  ASSERT_EQ(run("octree " + path("two.xyz") + " --compressed --full --max-depth 3 --stats-json -"), 0) << err();
  j = nlohmann::json::parse(out());
  EXPECT_EQ(j["nodes"], 7);
  EXPECT_EQ(j["chain_nodes"], 4);
  EXPECT_EQ(j["internal"], 5);
  EXPECT_EQ(j["leaves"], 2);
}

TEST_F(CliOctree, OnePointAndEqualPointsAreOneLeaf) {
  write("one.xyz", "1 2 3\n");
  write("same.xyz", "1 2 3\n1 2 3\n1 2 3\n");
  for (const char* file : {"one.xyz", "same.xyz"})
    for (const char* method : {"bottom-up", "top-down"}) {
      ASSERT_EQ(run("octree " + path(file) + " --leaf-size 1 --method " + method + " --stats-json -"), 0) << err();
      const nlohmann::json j = nlohmann::json::parse(out());
      EXPECT_EQ(j["nodes"], 1) << file << " " << method;
      EXPECT_EQ(j["leaves"], 1);
      EXPECT_EQ(j["depth"], 0);
    }
}

TEST_F(CliOctree, StatsEqualTheLibraryOnRandomPoints) {
  std::vector<double> xyz(3 * 5000);
  generatePoints(PointDistribution::kPlummer, 5000, 77, xyz.data(), Execution{});
  OctreeOptions o;
  o.leaf_size = 7;
  o.method = OctreeMethod::kTopDown;
  const Octree tree = buildOctree(OctreePoints::of(xyz), o, Execution{});
  for (const char* backend : {"serial", "cpu"}) {
    ASSERT_EQ(run(std::string("octree --random 5000 --distribution plummer --seed 77 --leaf-size 7 --method top-down "
                              "--stats-json - --backend ") + backend),
              0)
        << err();
    const nlohmann::json j = nlohmann::json::parse(out());
    EXPECT_EQ(j["nodes"], tree.stats.nodes);
    EXPECT_EQ(j["leaves"], tree.stats.leaves);
    EXPECT_EQ(j["empty_leaves"], tree.stats.empty_leaves);
    EXPECT_EQ(j["depth"], tree.stats.depth);
    EXPECT_EQ(j["method"], "top-down");
    char want[17];
    std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(octreeChecksum(tree)));
    EXPECT_EQ(j["checksum"], want);
  }
}

/// Points with duplicates and ties, and queries, as text files; the brute force reads the same numbers.
struct QueryCase {
  std::vector<double> points, queries;
};

QueryCase queryCase() {
  QueryCase c;
  std::vector<double> g(3 * 400);
  generatePoints(PointDistribution::kGaussian, 400, 3, g.data(), Execution{});
  for (size_t i = 0; i < g.size(); ++i) c.points.push_back(std::round(g[i] * 4) / 4);  // a lattice: many ties
  std::vector<double> q(3 * 30);
  generatePoints(PointDistribution::kGaussian, 30, 4, q.data(), Execution{});
  for (size_t i = 0; i < q.size(); ++i) c.queries.push_back(std::round(q[i] * 8) / 8);
  return c;
}

std::string asText(const std::vector<double>& xyz) {
  std::ostringstream s;
  s.precision(17);
  for (size_t i = 0; i < xyz.size(); i += 3) s << xyz[i] << ' ' << xyz[i + 1] << ' ' << xyz[i + 2] << '\n';
  return s.str();
}

double dist2(const std::vector<double>& p, size_t i, const std::vector<double>& q, size_t j) {
  double s = 0;
  for (int a = 0; a < 3; ++a) s += (p[3 * i + a] - q[3 * j + a]) * (p[3 * i + a] - q[3 * j + a]);
  return s;
}

std::string join(const std::vector<size_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

TEST_F(CliOctree, QueryResultsEqualBruteForce) {
  const QueryCase c = queryCase();
  write("p.xyz", asText(c.points));
  write("q.xyz", asText(c.queries));
  const size_t n = c.points.size() / 3, m = c.queries.size() / 3;
  std::vector<std::vector<size_t>> by_distance(m);
  for (size_t j = 0; j < m; ++j) {
    for (size_t i = 0; i < n; ++i) by_distance[j].push_back(i);
    std::stable_sort(by_distance[j].begin(), by_distance[j].end(),
                     [&](size_t a, size_t b) { return dist2(c.points, a, c.queries, j) < dist2(c.points, b, c.queries, j); });
  }
  // kNN, K = 5: the first five by (distance, index), on both host backends.
  std::vector<std::string> got;
  for (const char* backend : {"serial", "cpu --threads 2"}) {
    ASSERT_EQ(run("octree " + path("p.xyz") + " --leaf-size 4 --query knn:5 --queries " + path("q.xyz") + " -o " +
                  path("knn.txt") + " -q --backend " + backend),
              0)
        << err();
    got = lines(slurp(path("knn.txt")));
    ASSERT_EQ(got.size(), m);
    for (size_t j = 0; j < m; ++j)
      EXPECT_EQ(got[j], join(std::vector<size_t>(by_distance[j].begin(), by_distance[j].begin() + 5)))
          << backend << " query " << j;
  }
  // Radius 0.5: every point within, by (distance, index).
  ASSERT_EQ(run("octree " + path("p.xyz") + " --query radius:0.5 --queries " + path("q.xyz") + " -o " + path("r.txt") +
                " -q"),
            0)
      << err();
  got = lines(slurp(path("r.txt")));
  ASSERT_EQ(got.size(), m);
  size_t hits = 0;
  for (size_t j = 0; j < m; ++j) {
    std::vector<size_t> want;
    for (size_t i : by_distance[j])
      if (dist2(c.points, i, c.queries, j) <= 0.25) want.push_back(i);
    hits += want.size();
    EXPECT_EQ(got[j], join(want)) << "query " << j;
  }
  EXPECT_GT(hits, m) << "the case must have hits to compare";
  // Box [q − 0.3, q + 0.5] per query: by index.
  ASSERT_EQ(run("octree " + path("p.xyz") + " --query box:-0.3,-0.3,-0.3,0.5,0.5,0.5 --queries " + path("q.xyz") +
                " -o " + path("b.txt") + " -q"),
            0)
      << err();
  got = lines(slurp(path("b.txt")));
  ASSERT_EQ(got.size(), m);
  for (size_t j = 0; j < m; ++j) {
    std::vector<size_t> want;
    for (size_t i = 0; i < n; ++i) {
      bool in = true;
      for (int a = 0; a < 3; ++a)
        in = in && c.points[3 * i + a] >= c.queries[3 * j + a] - 0.3 && c.points[3 * i + a] <= c.queries[3 * j + a] + 0.5;
      if (in) want.push_back(i);
    }
    EXPECT_EQ(got[j], join(want)) << "query " << j;
  }
  // One absolute box without query points.
  ASSERT_EQ(run("octree " + path("p.xyz") + " --query box:0,0,0,1,1,1 -o -"), 0) << err();
  std::vector<size_t> want;
  for (size_t i = 0; i < n; ++i)
    if (c.points[3 * i] >= 0 && c.points[3 * i] <= 1 && c.points[3 * i + 1] >= 0 && c.points[3 * i + 1] <= 1 &&
        c.points[3 * i + 2] >= 0 && c.points[3 * i + 2] <= 1)
      want.push_back(i);
  EXPECT_EQ(out(), join(want) + "\n");
}

TEST_F(CliOctree, LocateNamesTheLeafByDefinition) {
  // The leaf printed for a query contains the query's key, holds at most
  // leaf-size points (or is at the depth limit), and its parent cell holds
  // more than leaf-size points (else it would not have split).
  const QueryCase c = queryCase();
  write("p.xyz", asText(c.points));
  write("q.xyz", asText(c.queries) + "100 100 100\n");
  ASSERT_EQ(run("octree " + path("p.xyz") + " --leaf-size 3 --query locate --queries " + path("q.xyz") + " -o " +
                path("l.txt") + " -q"),
            0)
      << err();
  const std::vector<std::string> got = lines(slurp(path("l.txt")));
  const size_t n = c.points.size() / 3, m = c.queries.size() / 3;
  ASSERT_EQ(got.size(), m + 1);
  EXPECT_EQ(got[m], "none") << "a query outside the root cube";
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], c.points[3 * i + a]);
      hi[a] = std::max(hi[a], c.points[3 * i + a]);
    }
  const double side = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  auto key = [&](const double* p) {
    uint64_t k = 0;
    for (int a = 0; a < 3; ++a) {
      const double t = std::min(std::floor((p[a] - lo[a]) / side * 2097152.0), 2097151.0);
      const uint64_t q = uint64_t(std::max(t, 0.0));
      for (int b = 0; b < 21; ++b) k |= ((q >> b) & 1) << (3 * b + a);
    }
    return k;
  };
  for (size_t j = 0; j < m; ++j) {
    const double* q = &c.queries[3 * j];
    bool inside = true;
    for (int a = 0; a < 3; ++a) inside = inside && q[a] >= lo[a] && q[a] < lo[a] + side;
    if (!inside) {
      EXPECT_EQ(got[j], "none");
      continue;
    }
    int level = -1;
    uint64_t prefix = 0;
    std::istringstream(got[j]) >> level >> prefix;
    ASSERT_GE(level, 0) << got[j];
    auto cellOf = [&](uint64_t k, int l) { return k >> (3 * (21 - l)); };
    EXPECT_EQ(cellOf(key(q), level), prefix) << "query " << j;
    size_t in_leaf = 0, in_parent = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t k = key(&c.points[3 * i]);
      in_leaf += cellOf(k, level) == prefix;
      if (level > 0) in_parent += cellOf(k, level - 1) == prefix >> 3;
    }
    EXPECT_LE(in_leaf, 3u) << "query " << j;
    if (level > 0) {
      EXPECT_GT(in_parent, 3u) << "query " << j;
    }
  }
}

TEST_F(CliOctree, OutputsAndTheTreeFileReadBack) {
  write("p.xyz", asText(queryCase().points));
  ASSERT_EQ(run("octree " + path("p.xyz") + " --leaf-size 5 -o " + path("t.octree") + " -o " + path("b.obj") + " -o " +
                path("b.ply") + " -o " + path("v.png") + " --image-size 64,64 --stats-json " + path("s.json") + " -q"),
            0)
      << err();
  EXPECT_EQ(files(), (std::vector<std::string>{"b.mtl", "b.obj", "b.ply", "p.xyz", "s.json", "t.octree", "v.png"}));
  const nlohmann::json j = nlohmann::json::parse(slurp(path("s.json")));
  const Octree back = readOctree(path("t.octree"));
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(octreeChecksum(back)));
  EXPECT_EQ(j["checksum"], sum);
  EXPECT_EQ(j["nodes"], back.stats.nodes);
  const std::string obj = slurp(path("b.obj"));
  size_t line_elements = 0;
  for (const std::string& l : lines(obj)) line_elements += l.rfind("l ", 0) == 0;
  EXPECT_EQ(line_elements, 12 * uint64_t(j["leaves"]));
  EXPECT_EQ(slurp(path("v.png")).substr(1, 3), "PNG");
}

TEST_F(CliOctree, SurfaceSamplesOfAMesh) {
  // A unit square in z = 0 (two triangles): every sample has z = 0.
  write("sq.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n");
  ASSERT_EQ(run("octree " + path("sq.obj") + " --sample-surface 500 --seed 3 --query box:-1,-1,-1,2,2,0 -o -"), 0)
      << err();
  const std::string result = out();
  EXPECT_EQ(lines(result).size(), 1u);
  EXPECT_EQ(std::count(result.begin(), result.end(), ' '), 499) << "all 500 samples lie in z <= 0";
}

TEST_F(CliOctree, BadOptionsAreExitOneAndWriteNothing) {
  write("p.xyz", "0 0 0\n1 1 1\n");
  const std::string p = path("p.xyz"), o = " -o " + path("x.txt") + " --stats-json " + path("s.json");
  for (const std::string& args :
       {"octree " + p + " --leaf-size 0" + o, "octree " + p + " --max-depth 22" + o,
        "octree " + p + " --query knn:0 --random-queries 3" + o, "octree " + p + " --query radius:-1 --random-queries 3" + o,
        "octree " + p + " --query radius:nan --random-queries 3" + o, "octree " + p + " --query box:1,1,1,0,0,0" + o,
        "octree " + p + " --query nearest --random-queries 3" + o, "octree " + p + " --query knn:2" + o,
        "octree " + p + " --split data" + o, "octree " + p + " --full" + o,
        "octree " + p + " --compressed --method top-down" + o, "octree " + p + " --method sideways" + o,
        "octree " + p + " --random 10" + o, "octree --random 10 --distribution cauchy" + o,
        "octree " + p + " -o " + path("x.doc"), "octree " + p + " --compressed --query locate --random-queries 2" + o,
        "octree " + p + " --method top-down --split data --query knn:1 --random-queries 2" + o,
        "octree " + p + " -o " + path("x.txt"), "octree " + path("p.las") + o, "octree --random -5" + o,
        "octree " + p + " --sample-surface 10" + o}) {
    EXPECT_EQ(run(args), 1) << args << "\n" << err();
    EXPECT_NE(err().find("error"), std::string::npos) << args;
    EXPECT_EQ(files(), std::vector<std::string>{"p.xyz"}) << args;
  }
}

TEST_F(CliOctree, BadFilesAreExitTwoWithTheLineAndWriteNothing) {
  write("nan.xyz", "0 0 0\n1 nan 1\n");
  write("bad.ply", "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
                   "end_header\n0 0 0\n1 1\n");
  write("empty.xyz", "# nothing\n");
  write("ok.xyz", "0 0 0\n1 1 1\n");
  write("q.xyz", "0 0 0\n0 inf 0\n");
  write("lines.obj", "v 0 0 0\nv 1 0 0\nl 1 2\n");
  const std::string o = " -o " + path("t.octree") + " --stats-json " + path("s.json");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"octree " + path("nan.xyz") + o, "nan.xyz:2:3: error: point 1: coordinate y is NaN"},
      {"octree " + path("bad.ply") + o, "bad.ply:9:4: error:"},
      {"octree " + path("empty.xyz") + o, "holds no points"},
      {"octree " + path("absent.ply") + o, "absent.ply"},
      {"octree " + path("ok.xyz") + " --query knn:1 --queries " + path("q.xyz") + o, "q.xyz:2:3: error:"},
      {"octree " + path("lines.obj") + " --sample-surface 10" + o, "lines.obj: the mesh has no faces"},
      {"octree --random 18446744073709551615" + o, "memory budget"}};
  for (const auto& [args, message] : cases) {
    EXPECT_EQ(run(args), 2) << args << "\n" << err();
    EXPECT_NE(err().find(message), std::string::npos) << args << "\n" << err();
    EXPECT_EQ(files(), (std::vector<std::string>{"bad.ply", "empty.xyz", "lines.obj", "nan.xyz", "ok.xyz", "q.xyz"}))
        << args;
  }
}

}  // namespace

namespace {

// --nbody: Barnes–Hut over the command's tree, reported against the direct
// sum. θ = 0 opens every cell, so it is the direct sum up to the order of the
// additions; a wider opening angle approximates more and errs more.
TEST_F(CliOctree, NbodyReportsErrorAgainstTheDirectSumThatGrowsWithTheOpeningAngle) {
  auto nbody = [&](const std::string& theta) {
    const int rc = run("octree --random 3000 --distribution plummer --seed 7 --nbody --theta " + theta +
                       " --stats-json - -q");
    EXPECT_EQ(rc, 0) << err();
    return nlohmann::json::parse(out())["nbody"];
  };
  const nlohmann::json exact = nbody("0"), coarse = nbody("1"), fine = nbody("0.3");
  for (const char* key : {"nbody_ms", "theta", "softening", "interactions", "rel_error_max", "rel_error_mean",
                          "error_samples", "direct_ms", "direct_ms_estimated", "speedup"})
    EXPECT_TRUE(coarse.contains(key)) << key;
  EXPECT_EQ(exact["theta"], 0.0);
  EXPECT_LT(exact["rel_error_max"].get<double>(), 1e-12);  // reassociation only
  EXPECT_GT(coarse["rel_error_mean"].get<double>(), fine["rel_error_mean"].get<double>());
  EXPECT_GT(fine["rel_error_mean"].get<double>(), exact["rel_error_mean"].get<double>());
  // All pairs at θ = 0: n(n − 1) pair terms, fewer when cells are accepted whole.
  EXPECT_EQ(exact["interactions"].get<uint64_t>(), 3000ull * 2999ull);
  EXPECT_LT(coarse["interactions"].get<uint64_t>(), exact["interactions"].get<uint64_t>());
}

TEST_F(CliOctree, NbodyOptionsAreCheckedBeforeAnyWork) {
  for (const std::string& args : {std::string("--theta 0.5"), std::string("--nbody --theta -1"),
                                   std::string("--nbody --theta nan"), std::string("--nbody --compressed")}) {
    EXPECT_EQ(run("octree --random 100 " + args + " -o " + path("t.octree")), 1) << args;
    EXPECT_NE(err().find("--"), std::string::npos) << err();
    EXPECT_TRUE(files().empty()) << args;
  }
}

}  // namespace

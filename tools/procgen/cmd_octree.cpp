// procgen octree: an octree over a point set (procgen/octree.hpp, seed
// shared/seeds/004_ce32dc12e32b896e.txt §3–§5) from a point file, random
// points or samples on a mesh's surface; queries against it; its boxes as
// line sets, a PNG preview and the tree itself as outputs. The command line
// is the contract of issue 18 point 8 (docs/octree.md, "procgen octree").
//
// Every option is checked in resolveOctreeArgs before any file is read
// (usage errors: exit 1); bad files are exit 2; every output is written
// inside main's OutputTransaction, so a failed run leaves no file.
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli.hpp"
#include "lsystem_options.hpp"
#include "nbody_stats.hpp"
#include "output_options.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"
#include "procgen/input.hpp"
#include "procgen/io.hpp"
#include "procgen/octree.hpp"
#include "procgen/octree_io.hpp"
#include "procgen/points.hpp"

namespace procgen::cli {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void usage(const std::string& message) { throw Error(message, ExitCode::kUsage); }

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// What CLI11 fills (added in addOctreeOptions, checked in resolveOctreeArgs).
struct OctreeArgs {
  std::string points;
  uint64_t random = 0;
  std::string distribution = "uniform";
  uint64_t seed = 1;
  uint64_t sample_surface = 0;
  std::string method = "bottom-up";
  uint32_t leaf_size = 16;
  int max_depth = kOctreeMaxLevel;
  bool compressed = false, full = false;
  std::string split = "cube";
  std::string query;
  std::string queries_file;
  uint64_t random_queries = 0;
  std::string boxes = "leaves";
  std::vector<int> image_size;
  std::string projection = "iso";
  uint64_t memory_budget = 0;
  bool nbody = false;
  double theta = 0.5;
  bool quiet = false;
  CommandOutputs outputs;
  ExecutionOptions execution;
};

enum class QueryKind { kNone, kLocate, kKnn, kRadius, kBox };

/// One -o, by extension.
struct OctreeOutput {
  enum class Kind { kResults, kLines, kPreview, kTree };
  std::string path;
  Kind kind = Kind::kResults;
};

/// The checked request.
struct OctreeJob {
  enum class Source { kFile, kRandom, kSurface } source = Source::kFile;
  PointDistribution distribution = PointDistribution::kUniform;
  OctreeOptions options;
  QueryKind query = QueryKind::kNone;
  uint32_t k = 0;
  double radius = 0;
  double box[6] = {0, 0, 0, 0, 0, 0};
  bool query_points = false;  ///< --queries or --random-queries given
  OctreeBoxSelection boxes = OctreeBoxSelection::kLeaves;
  WriteOptions write;
  std::vector<OctreeOutput> outputs;
};

const char* queryName(QueryKind kind) {
  switch (kind) {
    case QueryKind::kNone: return nullptr;
    case QueryKind::kLocate: return "locate";
    case QueryKind::kKnn: return "knn";
    case QueryKind::kRadius: return "radius";
    case QueryKind::kBox: return "box";
  }
  return nullptr;
}

double parseFinite(const std::string& text, const std::string& what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    usage(what + ": '" + text + "' is not a number");
  if (!std::isfinite(v)) usage(what + ": '" + text + "' is not finite");
  return v;
}

void parseQuery(const std::string& spec, OctreeJob& job) {
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon), value = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const bool has_value = colon != std::string::npos;
  if (kind == "locate" && !has_value) {
    job.query = QueryKind::kLocate;
  } else if (kind == "knn" && has_value) {
    uint32_t k = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), k);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || k == 0 || value[0] == '+')
      usage("--query knn:K: K must be a whole number in 1..4294967295, not '" + value + "'");
    job.query = QueryKind::kKnn;
    job.k = k;
  } else if (kind == "radius" && has_value) {
    job.radius = parseFinite(value, "--query radius:R");
    if (job.radius < 0) usage("--query radius:R: R must not be negative");
    job.query = QueryKind::kRadius;
  } else if (kind == "box" && has_value) {
    std::vector<std::string> parts;
    std::stringstream in(value);
    for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
    if (parts.size() != 6 || value.back() == ',') usage("--query box: needs six numbers X0,Y0,Z0,X1,Y1,Z1");
    for (int i = 0; i < 6; ++i) job.box[i] = parseFinite(parts[size_t(i)], "--query box");
    for (int a = 0; a < 3; ++a)
      if (job.box[a] > job.box[a + 3]) usage("--query box: X0,Y0,Z0 must not exceed X1,Y1,Z1");
    job.query = QueryKind::kBox;
  } else {
    usage("--query: '" + spec + "' is not locate, knn:K, radius:R or box:X0,Y0,Z0,X1,Y1,Z1");
  }
}

OctreeJob resolveOctreeArgs(const OctreeArgs& a, const CLI::App& cmd) {
  OctreeJob job;
  const bool random = cmd.count("--random") > 0;
  if (a.points.empty() == !random) usage("give a POINTS file or --random N (one of them)");
  if (random && a.random == 0) usage("--random: N must be at least 1");
  if (!random && cmd.count("--distribution")) usage("--distribution is for --random points");
  if (cmd.count("--sample-surface")) {
    if (random) usage("--sample-surface samples a mesh file's faces: give a mesh, not --random");
    if (a.sample_surface == 0) usage("--sample-surface: N must be at least 1");
    job.source = OctreeJob::Source::kSurface;
  } else {
    job.source = random ? OctreeJob::Source::kRandom : OctreeJob::Source::kFile;
  }
  if (!a.points.empty() && !pointFileFormat(a.points))
    usage("POINTS: cannot tell the format of '" + a.points + "': use .ply, .off, .xyz (.txt, .pts, .csv) or .obj");
  if (job.source == OctreeJob::Source::kSurface && pointFileFormat(a.points) == PointFileFormat::kXyz)
    usage("--sample-surface needs a mesh with faces (.ply, .off, .obj), not the points of '" + a.points + "'");
  if (a.distribution == "uniform") job.distribution = PointDistribution::kUniform;
  else if (a.distribution == "gaussian") job.distribution = PointDistribution::kGaussian;
  else if (a.distribution == "plummer") job.distribution = PointDistribution::kPlummer;
  else usage("--distribution: '" + a.distribution + "' is not uniform, gaussian or plummer");

  OctreeOptions& o = job.options;
  if (a.method == "bottom-up") o.method = OctreeMethod::kBottomUp;
  else if (a.method == "top-down") o.method = OctreeMethod::kTopDown;
  else usage("--method: '" + a.method + "' is not bottom-up or top-down");
  if (a.split == "cube") o.split = OctreeSplit::kCube;
  else if (a.split == "data") o.split = OctreeSplit::kData;
  else usage("--split: '" + a.split + "' is not cube or data");
  if (o.split == OctreeSplit::kData && o.method != OctreeMethod::kTopDown)
    usage("--split data partitions top-down: add --method top-down");
  if (a.compressed && o.method != OctreeMethod::kBottomUp) usage("--compressed is the bottom-up tree of seed §4: not with --method top-down");
  if (a.full && !a.compressed) usage("--full adds the chain nodes of a --compressed tree: add --compressed");
  if (cmd.count("--theta") && !a.nbody) usage("--theta is the opening angle of --nbody: add --nbody");
  if (a.nbody && a.compressed)
    usage("--nbody needs a tree whose children are stored together: not with --compressed");
  if (a.nbody && !(std::isfinite(a.theta) && a.theta >= 0)) usage("--theta must be finite and at least 0");
  o.compressed = a.compressed;
  o.full = a.full;
  o.leaf_size = a.leaf_size;
  o.max_depth = a.max_depth;
  o.memory_budget = a.memory_budget;

  if (!a.query.empty()) parseQuery(a.query, job);
  const bool queries_file = !a.queries_file.empty(), random_queries = cmd.count("--random-queries") > 0;
  if (queries_file && random_queries) usage("give --queries FILE or --random-queries M, not both");
  if (random_queries && a.random_queries == 0) usage("--random-queries: M must be at least 1");
  job.query_points = queries_file || random_queries;
  if (job.query_points && job.query == QueryKind::kNone) usage("query points need --query locate|knn:K|radius:R|box:...");
  if (job.query != QueryKind::kNone && job.query != QueryKind::kBox && !job.query_points)
    usage(std::string("--query ") + queryName(job.query) + " needs query points: --queries FILE or --random-queries M");
  if (job.query != QueryKind::kNone && o.compressed)
    usage("queries run on level-order trees: not with --compressed");
  if (job.query != QueryKind::kNone && job.query != QueryKind::kLocate && o.split == OctreeSplit::kData)
    usage(std::string("--query ") + queryName(job.query) + " runs on cube trees: not with --split data (locate does)");
  o.sorted_points = job.query == QueryKind::kKnn || job.query == QueryKind::kRadius || job.query == QueryKind::kBox;

  if (a.boxes == "leaves") job.boxes = OctreeBoxSelection::kLeaves;
  else if (a.boxes == "nonempty") job.boxes = OctreeBoxSelection::kNonEmptyLeaves;
  else if (a.boxes == "all") job.boxes = OctreeBoxSelection::kAllNodes;
  else if (a.boxes == "none") job.boxes = OctreeBoxSelection::kNone;
  else usage("--boxes: '" + a.boxes + "' is not leaves, nonempty, all or none");
  applyImageOptions(a.projection, a.image_size, job.write);
  job.write.memory_budget_bytes = a.memory_budget;

  for (const std::string& path : a.outputs.paths) {
    const std::string ext = extensionOf(path);
    OctreeOutput out{path};
    if (path == "-" || ext == ".txt") {
      out.kind = OctreeOutput::Kind::kResults;
      if (job.query == QueryKind::kNone) usage("-o " + path + ": query results need --query");
    } else if (ext == ".obj" || ext == ".ply" || ext == ".svg") {
      out.kind = OctreeOutput::Kind::kLines;
      if (job.boxes == OctreeBoxSelection::kNone) usage("-o " + path + ": a line set of no boxes (--boxes none)");
    } else if (ext == ".png") {
      out.kind = OctreeOutput::Kind::kPreview;
    } else if (ext == ".octree") {
      out.kind = OctreeOutput::Kind::kTree;
    } else {
      usage("unsupported output '" + path + "': use .txt (query results, or - for stdout), .obj .ply .svg (boxes), "
            ".png (preview) or .octree (the tree)");
    }
    job.outputs.push_back(out);
  }
  return job;
}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

/// The points the tree is built over, owned: a file's cloud (float or
/// double) or generated doubles.
struct LoadedPoints {
  PointCloud cloud;
  OctreePoints view() const {
    return cloud.xyz32.empty() ? OctreePoints::of(cloud.xyz64.data(), cloud.count)
                               : OctreePoints::of(cloud.xyz32.data(), cloud.count);
  }
};

void progress(const char* what) {
  if (stderrIsTerminal() && distributed::isRoot()) std::fprintf(stderr, "octree: %s...\n", what);
}

/// Under mpirun with a tree that spreads over the ranks (spreadsOverRanks):
/// --random generates only this rank's block; a file or a surface sample is
/// read whole by every rank (a shared file system), which keeps its block.
LoadedPoints loadPoints(const OctreeArgs& a, const OctreeJob& job, const Execution& execution,
                        const distributed::Block* block = nullptr) {
  LoadedPoints p;
  const PointReadOptions read{a.memory_budget};
  const uint64_t generated = job.source == OctreeJob::Source::kRandom ? a.random : a.sample_surface;
  if (block && job.source == OctreeJob::Source::kRandom) {
    const uint64_t count = block->end - block->begin;
    requireMemory(std::to_string(count) + " points", checkedMul(count, 24).value_or(UINT64_MAX), a.memory_budget);
    p.cloud.xyz64.resize(3 * count);
    generatePointRange(job.distribution, block->begin, count, a.seed, p.cloud.xyz64.data());
    p.cloud.count = count;
    return p;
  }
  if (job.source != OctreeJob::Source::kFile)
    requireMemory(std::to_string(generated) + " points", checkedMul(generated, 24).value_or(UINT64_MAX), a.memory_budget);
  switch (job.source) {
    case OctreeJob::Source::kFile: p.cloud = readPointFile(a.points, read); break;
    case OctreeJob::Source::kRandom:
      p.cloud.xyz64.resize(3 * generated);
      generatePoints(job.distribution, generated, a.seed, p.cloud.xyz64.data(), execution);
      break;
    case OctreeJob::Source::kSurface: {
      const TriangleMesh mesh = readMeshFile(a.points, read);
      p.cloud.xyz64.resize(3 * generated);
      sampleSurface(mesh, generated, a.seed, p.cloud.xyz64.data(), a.memory_budget);
      break;
    }
  }
  if (job.source != OctreeJob::Source::kFile) p.cloud.count = generated;
  return p;
}

/// Query points: x y z per line of --queries FILE (the XYZ reader), or
/// --random-queries M uniform in the root cube from a stream apart from the
/// points' (seed xor 0x9E3779B97F4A7C15, so --random N and the queries of the
/// same --seed differ).
std::vector<double> loadQueryPoints(const OctreeArgs& a, const OctreeJob& job, const OctreeCube& cube,
                                    const Execution& execution) {
  if (!job.query_points) return std::vector<double>(3, 0.0);  // one box query, absolute
  if (!a.queries_file.empty()) {
    const std::string bytes = readInputFile(a.queries_file, "query file", a.memory_budget);
    PointCloud cloud = parsePointFile(bytes, PointFileFormat::kXyz, a.queries_file, {a.memory_budget});
    return std::move(cloud.xyz64);
  }
  requireMemory(std::to_string(a.random_queries) + " query points", checkedMul(a.random_queries, 24).value_or(UINT64_MAX),
                a.memory_budget);
  std::vector<double> q(3 * a.random_queries);
  generatePoints(PointDistribution::kUniform, a.random_queries, a.seed ^ 0x9E3779B97F4A7C15ull, q.data(), execution);
  for (uint64_t i = 0; i < q.size(); ++i) q[i] = cube.min[i % 3] + q[i] * cube.side;
  return q;
}

/// The results file: one line per query. locate: "LEVEL PREFIX" of the leaf
/// (decimal), "none" outside the root cube; knn, radius, box: the point
/// indices (input order) separated by spaces, by distance then index (box:
/// by index); an empty line when there are none.
struct QueryResults {
  std::vector<uint32_t> fixed;  ///< locate: m, knn: m·k
  OctreeQueryResult variable;   ///< radius, box
  uint64_t count = 0;
};

/// The queries on one process's tree, or — `spread` given — routed over the
/// ranks of a distributed tree (octree.hpp), the results on rank 0.
QueryResults runQueries(const OctreeJob& job, const Octree& tree, const OctreePoints& points,
                        const std::vector<double>& q, const Execution& execution, uint64_t budget,
                        const DistributedOctree* spread = nullptr) {
  QueryResults r;
  const uint64_t m = q.size() / 3;
  r.count = m;
  const bool root = !spread || distributed::isRoot();
  switch (job.query) {
    case QueryKind::kNone: break;
    case QueryKind::kLocate:
      if (!root) break;  // a descent of the global tree's nodes: rank 0's
      requireMemory("locate results", m * 4, budget);
      r.fixed.resize(m);
      octreeLocate(tree, q.data(), m, r.fixed.data(), execution);
      break;
    case QueryKind::kKnn:
      requireMemory("knn results", checkedMul(m, uint64_t(job.k) * 4).value_or(UINT64_MAX), budget);
      r.fixed.resize(root ? m * job.k : 0);
      if (spread) octreeKnnDistributed(*spread, q.data(), m, job.k, r.fixed.data(), execution);
      else octreeKnn(tree, points, q.data(), m, job.k, r.fixed.data(), nullptr, execution);
      break;
    case QueryKind::kRadius:
      r.variable = spread ? octreeRadiusDistributed(*spread, q.data(), m, job.radius, execution)
                          : octreeRadius(tree, points, q.data(), m, job.radius, execution);
      break;
    case QueryKind::kBox: {
      std::vector<double> boxes(6 * m);
      for (uint64_t i = 0; i < m; ++i)
        for (int c = 0; c < 6; ++c) boxes[6 * i + uint64_t(c)] = q[3 * i + uint64_t(c % 3)] + job.box[c];
      r.variable = spread ? octreeBoxDistributed(*spread, boxes.data(), m, execution)
                          : octreeBox(tree, points, boxes.data(), m, execution);
      break;
    }
  }
  return r;
}

/// Under mpirun the bucketed bottom-up cube tree (the default) is built over
/// the ranks (buildOctreeDistributed); the other trees and --nbody run on
/// rank 0 alone, as in one process, while the other ranks wait.
bool spreadsOverRanks(const OctreeArgs& a, const OctreeJob& job) {
  const OctreeOptions& o = job.options;
  return distributed::active() && o.method == OctreeMethod::kBottomUp && !o.compressed &&
         o.split == OctreeSplit::kCube && !a.nbody;
}

void writeResults(const std::string& path, const OctreeJob& job, const Octree& tree, const QueryResults& r) {
  std::unique_ptr<ByteSink> sink = openOutput(path);
  std::string line;
  char buf[32];
  auto number = [&](uint64_t v) { line.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr); };
  for (uint64_t qi = 0; qi < r.count; ++qi) {
    line.clear();
    if (job.query == QueryKind::kLocate) {
      const uint32_t leaf = r.fixed[qi];
      if (leaf == kOctreeNone) {
        line += "none";
      } else {
        number(tree.level[leaf]);
        line += ' ';
        number(tree.prefix[leaf]);
      }
    } else if (job.query == QueryKind::kKnn) {
      for (uint32_t j = 0; j < job.k; ++j) {
        const uint32_t index = r.fixed[qi * job.k + j];
        if (index == kOctreeNone) break;
        if (j) line += ' ';
        number(index);
      }
    } else {
      for (uint64_t j = r.variable.offsets[qi]; j < r.variable.offsets[qi + 1]; ++j) {
        if (j != r.variable.offsets[qi]) line += ' ';
        number(r.variable.indices[j]);
      }
    }
    line += '\n';
    sink->write(line.data(), line.size());
  }
  sink->finish();
}

/// Peak resident memory: /proc/self/clear_refs "5" resets VmHWM (Linux ≥ 4.0);
/// nullopt where that is not possible.
bool resetPeakMemory() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return bool(out);
}

std::optional<uint64_t> statusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      uint64_t kib = 0;
      if (std::sscanf(line.c_str() + std::strlen(key), ": %" SCNu64, &kib) == 1) return kib * 1024;
    }
  return std::nullopt;
}

void runOctree(const OctreeArgs& a, const CLI::App& cmd) {
  const OctreeJob job = resolveOctreeArgs(a, cmd);
  const bool spread = spreadsOverRanks(a, job);
  if (distributed::active() && !spread && !distributed::isRoot()) return;
  const Execution execution = a.execution.resolve();
  const bool root = distributed::isRoot();

  progress("reading points");
  const auto t_read = Clock::now();
  // Spread: this rank's block of the points (global indices block.begin ..).
  distributed::Block block;
  if (spread && job.source == OctreeJob::Source::kRandom)
    block = distributed::blockOf(a.random, distributed::rank(), distributed::size());
  const LoadedPoints loaded = loadPoints(a, job, execution, spread ? &block : nullptr);
  const double read_ms = msSince(t_read);
  OctreePoints points = loaded.view();
  uint64_t total = points.count;
  if (spread && job.source != OctreeJob::Source::kRandom) {
    block = distributed::blockOf(total, distributed::rank(), distributed::size());
    if (points.xyz64) points.xyz64 += 3 * block.begin;
    else points.xyz32 += 3 * block.begin;
    points.count = block.end - block.begin;
  } else if (spread) {
    total = a.random;
  }

  progress("building");
  const uint64_t rss_before = resetPeakMemory() ? statusBytes("VmRSS").value_or(0) : 0;
  const auto t_build = Clock::now();
  DistributedOctree spread_tree;
  Octree own_tree;
  if (spread) {
    DistributedOctreeOptions wanted;
    wanted.local_tree = job.query == QueryKind::kKnn || job.query == QueryKind::kRadius || job.query == QueryKind::kBox;
    for (const OctreeOutput& out : job.outputs)
      wanted.gather_points |= out.kind == OctreeOutput::Kind::kPreview || extensionOf(out.path) == ".svg";
    spread_tree = buildOctreeDistributed(points, block.begin, total, job.options, wanted, execution);
  } else {
    own_tree = buildOctree(points, job.options, execution);
  }
  const Octree& tree = spread ? spread_tree.tree : own_tree;
  double build_ms = msSince(t_build);
  const uint64_t peak = rss_before ? statusBytes("VmHWM").value_or(0) : 0;
  const double bytes_per_point = peak ? double(peak > rss_before ? peak - rss_before : 0) / double(points.count) : -1;
  // Rank 0 draws every point (gathered) in the previews.
  const OctreePoints drawn =
      spread ? OctreePoints::of(spread_tree.points.data(), spread_tree.points.size() / 3) : points;

  QueryResults results;
  double query_ms = 0;
  if (job.query != QueryKind::kNone) {
    const std::vector<double> q = loadQueryPoints(a, job, spread ? spread_tree.cube : tree.cube, execution);
    progress("querying");
    const auto t_query = Clock::now();
    results = runQueries(job, tree, points, q, execution, a.memory_budget, spread ? &spread_tree : nullptr);
    query_ms = msSince(t_query);
  }
  if (spread) {  // the slowest rank's times
    double slowest[2] = {build_ms, query_ms};
    distributed::allReduce(std::span<double>(slowest, 2), distributed::ReduceOp::kMax);
    build_ms = slowest[0];
    query_ms = slowest[1];
  }
  if (!root) return;

  std::optional<NbodyRunStats> nbody;
  if (a.nbody) {
    progress("Barnes-Hut");
    nbody = runNbodyStats(tree, points, a.theta, execution);
  }

  for (const OctreeOutput& out : job.outputs) {
    switch (out.kind) {
      case OctreeOutput::Kind::kResults: writeResults(out.path, job, tree, results); break;
      case OctreeOutput::Kind::kTree: writeOctree(tree, out.path); break;
      case OctreeOutput::Kind::kLines:
      case OctreeOutput::Kind::kPreview: {
        OctreeGeometryOptions g;
        g.boxes = job.boxes;
        g.points = out.kind == OctreeOutput::Kind::kPreview || extensionOf(out.path) == ".svg" ? &drawn : nullptr;
        g.memory_budget_bytes = a.memory_budget;
        writeGeometry(octreeGeometry(tree, g), out.path, job.write);
        break;
      }
    }
  }

  const uint64_t n = total;
  const double mpts = build_ms > 0 ? double(n) / (build_ms * 1e3) : 0.0;
  const double mq = query_ms > 0 ? double(results.count) / (query_ms * 1e3) : 0.0;
  if (!a.outputs.stats_json.empty()) {
    Json j;
    j["points"] = n;
    j["method"] = a.method;
    j["split"] = a.split;
    j["compressed"] = job.options.compressed;
    j["full"] = job.options.full;
    j["leaf_size"] = job.options.leaf_size;
    j["max_depth"] = job.options.max_depth;
    j["nodes"] = tree.stats.nodes;
    j["internal"] = tree.stats.internal;
    j["leaves"] = tree.stats.leaves;
    j["empty_leaves"] = tree.stats.empty_leaves;
    j["chain_nodes"] = tree.stats.chain_nodes;
    j["depth"] = tree.stats.depth;
    j["read_ms"] = read_ms;
    j["build_ms"] = build_ms;
    j["mpts_per_s"] = mpts;
    j["checksum"] = hex64(octreeChecksum(tree));
    j["query"] = job.query == QueryKind::kNone ? Json(nullptr) : Json(queryName(job.query));
    j["queries"] = results.count;
    j["query_ms"] = query_ms;
    j["mq_per_s"] = mq;
    // Measured: the growth of resident memory during the build (peak minus
    // before) per point; null where /proc cannot reset the peak.
    j["bytes_per_point"] = bytes_per_point >= 0 ? Json(bytes_per_point) : Json(nullptr);
    j["backend"] = std::string(backendName(execution.backend));
    j["threads"] = effectiveThreads(execution);
    if (spread) j["ranks"] = distributed::size();
    if (nbody) j["nbody"] = nbodyStatsJson(*nbody);
    a.outputs.writeStats(j);
  }
  if (!a.quiet) {
    std::fprintf(stderr,
                 "octree: %" PRIu64 " points, %" PRIu64 " nodes (%" PRIu64 " leaves, %" PRIu64
                 " empty), depth %d, built in %.1f ms (%.2f M points/s), checksum %s",
                 n, tree.stats.nodes, tree.stats.leaves, tree.stats.empty_leaves, tree.stats.depth, build_ms, mpts,
                 hex64(octreeChecksum(tree)).c_str());
    if (job.query != QueryKind::kNone)
      std::fprintf(stderr, "; %" PRIu64 " %s queries in %.1f ms", results.count, queryName(job.query), query_ms);
    if (nbody)
      std::fprintf(stderr, "; Barnes-Hut theta %g in %.1f ms, %.1fx the direct sum, force error mean %.2g max %.2g",
                   nbody->theta, nbody->nbody_ms, nbody->speedup, nbody->rel_error_mean, nbody->rel_error_max);
    std::fprintf(stderr, "\n");
  }
}

void addOctreeOptions(CLI::App& cmd, OctreeArgs& a) {
  cmd.add_option("POINTS", a.points, "Point file: .ply (ascii, binary either endian), .off, .xyz/.txt/.pts/.csv "
                                     "(x y z per line), .obj (v lines)")
      ->group("Input");
  addInteger(cmd, "--random", a.random, "Build over N random points instead of a file (--distribution, --seed)")
      ->group("Input");
  cmd.add_option("--distribution", a.distribution, "--random points: uniform (unit cube), gaussian or plummer")
      ->capture_default_str()
      ->group("Input");
  addInteger(cmd, "--seed", a.seed, "Seed of --random, --sample-surface and --random-queries, 0 .. 2^64-1")
      ->capture_default_str()
      ->group("Input");
  addInteger(cmd, "--sample-surface", a.sample_surface,
             "Read POINTS as a mesh (.ply .off .obj faces) and build over N points sampled on its surface, "
             "area-weighted, from --seed")
      ->group("Input");
  cmd.add_option("--method", a.method, "bottom-up (Morton keys, seed §4) or top-down (partitioning, seed §5)")
      ->capture_default_str()
      ->group("Tree");
  addInteger(cmd, "--leaf-size", a.leaf_size, "A node with more points than this splits (ignored by --compressed)", 1u)
      ->capture_default_str()
      ->group("Tree");
  addInteger(cmd, "--max-depth", a.max_depth, "Deepest level, 0..21", 0, kOctreeMaxLevel)
      ->capture_default_str()
      ->group("Tree");
  cmd.add_flag("--compressed", a.compressed, "Seed §4's compressed octree: leaves = distinct cells at --max-depth, "
                                             "internal nodes = LCAs (post-order)")
      ->group("Tree");
  cmd.add_flag("--full", a.full, "With --compressed: add the chain nodes (every parent one level up)")->group("Tree");
  cmd.add_option("--split", a.split, "cube (mid-planes) or data (top-down: centre of the node's point bounds)")
      ->capture_default_str()
      ->group("Tree");
  cmd.add_option("--query", a.query, "locate, knn:K, radius:R or box:X0,Y0,Z0,X1,Y1,Z1 (offsets from each query "
                                     "point; without query points one absolute box)")
      ->group("Queries");
  cmd.add_option("--queries", a.queries_file, "Query points: x y z per line")->group("Queries");
  cmd.add_flag("--nbody", a.nbody,
               "Barnes-Hut gravity of every point (equal masses) over the tree; stats gain \"nbody\": time, force "
               "error and speed-up against the direct sum at 1000 points")
      ->group("Applications");
  cmd.add_option("--theta", a.theta, "Opening angle of --nbody (0 = the direct sum; default 0.5)")
      ->group("Applications");
  addInteger(cmd, "--random-queries", a.random_queries, "M query points uniform in the root cube, from --seed")
      ->group("Queries");
  a.outputs.addOutputs(cmd,
                       "Output, repeatable, by extension: .txt or - (query results, one line per query), .obj .ply "
                       ".svg (boxes as line sets), .png (preview of points and boxes), .octree (the tree, "
                       "docs/octree.md)");
  a.outputs.files_of = [](const std::string& path) {
    return isGeometryExtension(extensionOf(path)) ? geometryFiles(path)
                                                  : std::vector<std::filesystem::path>{path};
  };
  a.outputs.addStatsJson(cmd, "Write statistics as JSON to PATH, or - for stdout");
  cmd.add_option("--boxes", a.boxes, "Boxes of .obj/.ply/.svg/.png outputs: leaves, nonempty (leaves), all (nodes) or none")
      ->capture_default_str()
      ->group("Output");
  cmd.add_option("--image-size", a.image_size, "Size W,H of the .png preview (default 1024,1024)")
      ->expected(2)
      ->delimiter(',')
      ->group("Output");
  cmd.add_option("--projection", a.projection, "Preview view: front, side, top or iso")
      ->capture_default_str()
      ->group("Output");
  addMemoryBudgetOption(cmd, a.memory_budget);
  cmd.add_flag("-q,--quiet", a.quiet, "No summary on stderr")->group("Output");
}

void setupOctree(CLI::App& app) {
  auto args = std::make_shared<OctreeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "octree", "Octrees over point sets (seed §3-§5): bottom-up from Morton keys or top-down, queries, "
                "boxes, previews and the tree as a file");
  cmd->footer(
      "Keys: the root cube is the points' bounding box's min corner with side = its largest extent; 21 bits per "
      "axis, bit 3i = x bit i. docs/octree.md describes the trees, the stats and the files.\n"
      "Exit codes: 1 bad option, 2 bad or missing file (file:line), 3 backend unavailable, 4 output error.\n"
      "Under mpirun -n R the default tree and its knn/radius/box queries are split over the ranks, with the "
      "one-process outputs (docs/scaling.md, \"Octrees\").\n"
      "Examples:\n  procgen octree --random 1000000 --stats-json -\n"
      "  procgen octree scan.ply --query knn:8 --random-queries 1000 -o knn.txt\n"
      "  procgen octree mesh.ply --sample-surface 200000 --leaf-size 64 -o boxes.obj -o preview.png");
  addOctreeOptions(*cmd, *args);
  args->execution.add(*cmd);
  cmd->callback([args, cmd] { runOctree(*args, *cmd); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(27, setupOctree);

}  // namespace procgen::cli

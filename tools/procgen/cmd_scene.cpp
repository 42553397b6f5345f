// procgen scene FILE: many L-systems derived together in batched passes and
// drawn into one mesh (paper §6); docs/scenes.md describes the scene file.
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "lsystem_options.hpp"
#include "procgen/distributed.hpp"
#include "procgen/output.hpp"
#include "procgen/scene.hpp"

namespace procgen::cli {
namespace {

struct SceneArgs {
  std::string file;
  std::optional<int> iterations;
  uint64_t seed = 1;
  BudgetOptions budget;
  TurtleOptions turtle;
  ExecutionOptions execution;
  OutputOptions output;
  bool parts = false;
  bool quiet = false;
};

/// CPU time of this process (all its threads, user + system) in milliseconds.
double processCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

/// Per-rank phase timeline for --stats-json ("timeline_ms", "timeline_cpu_ms"):
/// the end of each phase on the steady clock, which on Linux is one clock for
/// every process of a node, so the ranks' marks line up, and the process's
/// CPU time at each mark (docs/scaling.md "Scenes").
struct Timeline {
  static constexpr const char* kPhases[] = {"parse",   "partition", "derive", "agree", "interpret",
                                            "figures", "gather",    "write",  "stats"};
  static constexpr size_t kCount = sizeof(kPhases) / sizeof(kPhases[0]);
  std::vector<double> wall{now()}, cpu{processCpuMs()};
  static double now() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void mark() {
    wall.push_back(now());
    cpu.push_back(processCpuMs());
  }
  /// A mark at given clocks (self-scheduled phases, summed over the instances).
  void markAt(double wall_ms, double cpu_ms) {
    wall.push_back(wall_ms);
    cpu.push_back(cpu_ms);
  }
  /// The marks by name: kStart, then the end of each phase (kPhases' order).
  enum Mark : size_t { kStart, kParse, kPartition, kDerive, kAgree, kInterpret, kFigures, kGather, kWrite, kStats };
  /// Wall and CPU milliseconds from mark `from` to mark `to`.
  double ms(Mark from, Mark to) const { return wall[to] - wall[from]; }
  double cpuMs(Mark from, Mark to) const { return cpu[to] - cpu[from]; }
};
static_assert(Timeline::kStats == Timeline::kCount, "a Mark per phase, after kStart");

/// One instance's figures, as a rank sends them to rank 0 (plain bytes: every rank runs this binary).
struct InstanceFigures {
  int32_t iterations = 0;
  int32_t unused = 0;
  uint64_t index = 0;       ///< its scene instance
  uint64_t text_bytes = 0;  ///< its string's text, when the run makes the text (self-scheduled)
  uint64_t modules = 0, modules_total = 0, segments = 0, polygons = 0, string_hash = 0;
  Bounds bounds;
};

/// Segments, polygons and bounds of geometry whose elements all belong to the
/// instances of `figures` (indexed by scene instance - `first`).
void addGeometryFigures(const Geometry& g, std::span<InstanceFigures> figures, size_t first) {
  for (const Segment& s : g.segments) {
    InstanceFigures& f = figures[size_t(s.instance) - first];
    f.segments += 1;
    f.bounds.add(s.start);
    f.bounds.add(s.end);
  }
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    InstanceFigures& f = figures[size_t(g.polygon_instances[p]) - first];
    f.polygons += 1;
    for (uint64_t v = g.polygon_offsets[p]; v < g.polygon_offsets[p + 1]; ++v) f.bounds.add(g.polygon_vertices[v]);
  }
}

template <typename Array>
std::span<const uint8_t> bytesOf(const Array& a) {
  return {reinterpret_cast<const uint8_t*>(a.data()), a.size() * sizeof(a[0])};
}

/// The arrays of a Geometry that travel to rank 0, in this order. Polygon
/// ends travel without the leading 0 and relative to their rank's vertices.
constexpr size_t kGeometryArrays = 5;

/// Every rank: starts sending its placed geometry to rank 0 (RootGather),
/// which joins it with joinGeometry; `local` stays alive until the gather
/// finishes (or, after a failure, until the process ends).
void sendGeometry(distributed::RootGather& gather, const std::shared_ptr<const Geometry>& local) {
  const Geometry& g = *local;
  const std::span<const uint64_t> ends(g.polygon_offsets.data() + 1, g.polygonCount());
  const std::span<const uint8_t> arrays[kGeometryArrays] = {bytesOf(g.segments), bytesOf(g.polygon_vertices),
                                                            bytesOf(ends), bytesOf(g.polygon_colors),
                                                            bytesOf(g.polygon_instances)};
  gather.send(arrays, local);
}

/// A part of the gathered geometry: part `part` of rank `rank` (RootGather).
struct PartRef {
  int rank = 0;
  size_t part = 0;
};

/// Rank 0: the parts joined in `order` (instance order: the static split
/// sends one part per rank, its contiguous range; self-scheduling one part
/// per instance), as placeAll joins instances in one process; `order` lists
/// every part sent. The joined arrays are sized once, unset (no zero-fill of
/// the segments), and every part lands in place: rank 0's by one copy, the
/// others' by MPI's transport, straight into the joined memory. `room` may
/// hold segments already allocated and touched (kept when they suffice).
Geometry joinGeometry(distributed::RootGather& gather, std::span<const PartRef> order, Geometry room = {}) {
  using Offsets = std::array<uint64_t, kGeometryArrays>;
  std::vector<std::vector<Offsets>> at(static_cast<size_t>(distributed::size()));  // per rank and part: where it goes
  Offsets total{};
  for (const PartRef& ref : order) {
    std::vector<Offsets>& parts = at[size_t(ref.rank)];
    if (parts.size() <= ref.part) parts.resize(ref.part + 1);
    parts[ref.part] = total;
    const std::vector<uint64_t>& sizes = gather.sizes(ref.rank, ref.part);
    for (size_t k = 0; k < kGeometryArrays; ++k) total[k] += sizes[k];
  }
  Geometry g = std::move(room);
  g.segments.resize(total[0] / sizeof(Segment));
  g.polygon_vertices.resize(total[1] / sizeof(Vec3));
  g.polygon_offsets.resize(1 + total[2] / sizeof(uint64_t));
  g.polygon_colors.resize(total[3] / sizeof(int32_t));
  g.polygon_instances.resize(total[4] / sizeof(int32_t));
  uint8_t* const into[kGeometryArrays] = {
      reinterpret_cast<uint8_t*>(g.segments.data()), reinterpret_cast<uint8_t*>(g.polygon_vertices.data()),
      reinterpret_cast<uint8_t*>(g.polygon_offsets.data() + 1), reinterpret_cast<uint8_t*>(g.polygon_colors.data()),
      reinterpret_cast<uint8_t*>(g.polygon_instances.data())};
  // Each rank's parts in the order it sent them (its messages arrive in that order).
  for (size_t r = 0; r < at.size(); ++r)
    for (size_t p = 0; p < at[r].size(); ++p)
      for (size_t k = 0; k < kGeometryArrays; ++k) gather.receive(int(r), p, k, into[k] + at[r][p][k]);
  gather.finish();
  // Each part's polygon ends count from its own first vertex: shifted by the vertices before it.
  for (const PartRef& ref : order) {
    const Offsets& o = at[size_t(ref.rank)][ref.part];
    const uint64_t first = o[2] / sizeof(uint64_t), count = gather.sizes(ref.rank, ref.part)[2] / sizeof(uint64_t);
    const uint64_t vertex_base = o[1] / sizeof(Vec3);
    for (uint64_t e = 0; e < count; ++e) g.polygon_offsets[1 + first + e] += vertex_base;
  }
  return g;
}

/// `-o NAME.gltf --parts`: rank r's binary buffer NAME.part-R.bin beside it.
std::filesystem::path partPath(const std::string& index, int rank) {
  std::filesystem::path p(index);
  p.replace_filename(p.stem().string() + ".part-" + std::to_string(rank) + ".bin");
  return p;
}

/// Writes `-o NAME.gltf` as parts (collective): every rank writes the binary
/// chunk of its geometry's glb as its part file, rank 0 joins the ranks' JSON
/// chunks into the index that references the parts (mergeGltfParts).
void writeGltfParts(const std::string& index, const Geometry& geometry, const WriteOptions& write) {
  const GlbChunks chunks = splitGlb(encodeGeometry(geometry, GeometryFormat::kGlb, write));
  if (!chunks.bin.empty()) {
    FileSink sink(partPath(index, distributed::rank()).string());
    sink.write(chunks.bin.data(), chunks.bin.size());
    sink.finish();
  }
  std::vector<uint64_t> sizes;
  const std::vector<uint8_t> jsons = distributed::gather(
      {reinterpret_cast<const uint8_t*>(chunks.json.data()), chunks.json.size()}, 0, &sizes);
  if (!distributed::isRoot()) return;
  std::vector<std::string> parts, uris;
  for (size_t r = 0, at = 0; r < sizes.size(); at += sizes[r++]) {
    parts.emplace_back(reinterpret_cast<const char*>(jsons.data() + at), sizes[r]);
    uris.push_back(partPath(index, int(r)).filename().string());
  }
  writeOutput(index, mergeGltfParts(parts, uris));
}

/// Under mpirun (procgen/distributed.hpp, docs/scaling.md "Scenes") the
/// ranks take the instances one by one from a shared counter (one thread
/// per rank), or else split them into contiguous ranges balanced by their
/// predicted time (predictSceneWork, predictSceneTimes, partitionByCost);
/// each rank derives and draws its instances with its own backend, and rank
/// 0 gathers the geometry in instance order (or, with --parts, every rank
/// writes its part of one glTF) and the per-instance figures, so every
/// output is the one-process output. One rank: the range is the whole scene.
void runScene(SceneArgs& a) {
  Timeline timeline;
  const Execution execution = a.execution.resolve();
  a.output.validate();
  a.output.memory_budget = a.budget.memory_budget;
  if (a.parts)
    for (const std::string& out : a.output.files.paths)
      if (!OutputOptions::isStringOutput(out) && extensionOf(out) != ".gltf")
        throw Error(
            "--parts writes a glTF index with one binary part per rank: use -o NAME.gltf, not '" + out + "'",
            ExitCode::kUsage);

  LSystemScene scene = LSystemScene::fromFile(a.file);
  for (LSystemInstance& inst : scene.instances) a.turtle.apply(inst.view);  // flags override every instance
  if (scene.instances.empty()) throw Error("the scene lists no L-system");
  timeline.mark();  // parse

  DeriveOptions options;
  options.iterations = a.iterations;
  options.seed = a.seed;
  a.budget.apply(options);
  options.execution = execution;
  const int ranks = distributed::size(), me = distributed::rank();
  const size_t n = scene.instances.size();
  const bool stats = !a.output.files.stats_json.empty();
  bool needs_geometry = false, needs_string = false;
  for (const std::string& out : a.output.files.paths)
    (OutputOptions::isStringOutput(out) ? needs_string : needs_geometry) = true;
  using T = Timeline;
  // With one thread per rank (and one output file) the ranks schedule
  // themselves: they take the instances, the longest predicted first, from
  // a shared counter until none are left, so each rank's share follows its
  // real speed on this machine (the prediction only orders them; the last,
  // smallest ones even out the finish). Otherwise (threads, --parts, opencl)
  // contiguous ranges balanced by predicted time.
  bool self_scheduled = false;
  std::vector<size_t> order;  // self-scheduled: the instances, the longest predicted first
  double predicted_segments = 0;
  if (ranks > 1 && !a.parts && execution.backend != Backend::kOpenCL) {
    const std::vector<SceneInstanceWork> work = predictSceneWork(scene, options);
    for (const SceneInstanceWork& w : work) predicted_segments += w.segments;
    const std::vector<uint64_t> predicted = predictSceneTimes(work, stats);
    order.resize(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return predicted[x] > predicted[y]; });
    // Every rank must choose alike (threads: 0 is the node's count); also the
    // checkpoint before the loop: a rank that failed before it cannot leave
    // the others waiting for its answers (SharedCounter).
    uint64_t wide[1] = {effectiveThreads(execution) > 1 ? 1u : 0u};
    distributed::allReduce(std::span<uint64_t>(wide, 1), distributed::ReduceOp::kMax);
    self_scheduled = wide[0] == 0;
  }
  // This rank's part of the work and what rank 0 gathers of it.
  std::vector<InstanceFigures> figures;  // this rank's instances, in the order it did them
  std::vector<InstanceFigures> all;      // rank 0: every instance's, in instance order
  std::vector<InstanceFigures> arrived;  // rank 0, self-scheduled: every rank's figures, in rank order
  std::vector<PartRef> where_all;        // rank 0, self-scheduled: who did each instance (its part)
  uint64_t rank_modules = 0, rank_modules_total = 0, rank_segments = 0, rank_polygons = 0;
  int derive_threads = 1;
  double work_cpu_ms = 0;
  Geometry gathered;                     // rank 0, several ranks: the joined geometry
  std::shared_ptr<const Geometry> drawn;  // contiguous ranges: this rank's geometry
  std::optional<LSystemSceneDerivation> derivation;  // contiguous ranges: this rank's strings
  std::string own_text, text;            // self-scheduled: this rank's instances' texts; the whole string's
  std::optional<uint64_t> string_hash;   // rank 0, self-scheduled: the whole string's, from the texts
  std::unique_ptr<distributed::RootGather> geometry_gather;
  std::vector<ModuleString> strings;  // self-scheduled, --stats-json without the string: this rank's, in its order

  // Self-scheduled: every rank's texts on rank 0, put in instance order —
  // the string output and the whole string's hash (the FNV-1a hash continued
  // over the instances' texts in instance order, as over one string's).
  auto gatherTexts = [&] {
    std::vector<uint64_t> counts;
    const std::vector<uint8_t> bytes =
        distributed::gather({reinterpret_cast<const uint8_t*>(own_text.data()), own_text.size()}, 0, &counts);
    if (!distributed::isRoot()) return;
    // The ranks' figures arrived in rank order, each rank's in the order it
    // did them: the order of the texts.
    std::vector<uint64_t> at(n);  // where instance k's text starts in `bytes`
    uint64_t cursor = 0;
    for (const InstanceFigures& f : arrived) {
      at[f.index] = cursor;
      cursor += f.text_bytes;
    }
    if (cursor != bytes.size()) throw Error("scene: the ranks' texts do not match their figures");
    uint64_t h = 1469598103934665603ull;  // FNV-1a's basis, as stringHash starts
    if (needs_string) text.reserve(bytes.size());
    for (size_t k = 0; k < n; ++k) {
      const std::string_view piece(reinterpret_cast<const char*>(bytes.data() + at[k]), all[k].text_bytes);
      if (stats) h = textHash(piece, h);
      if (needs_string) text.append(piece);
    }
    string_hash = h;
  };

  if (self_scheduled) {
    timeline.mark();  // partition
    // The gather is made by every rank together (no rank can have failed since the agreement above).
    distributed::SharedCounter counter(n);
    if (needs_geometry) geometry_gather = std::make_unique<distributed::RootGather>(kGeometryArrays);
    std::vector<std::shared_ptr<const Geometry>> kept;
    // Rank 0 allocates and first writes the joined segments (the predicted
    // count, up to 64 MiB) before its first instance, while the others work
    // on the two they start with: the page faults — and the host's, when the
    // guest touches memory for the first time (docs/scaling.md) — fall inside
    // the balanced loop instead of after it, when every other rank waits.
    Geometry room;
    if (geometry_gather && distributed::isRoot()) {
      constexpr double kMaxRoom = double(uint64_t{64} << 20) / sizeof(Segment);
      room.segments.resize(size_t(std::min(kMaxRoom, predicted_segments * 1.05 + 1024)));
      constexpr size_t kPage = 4096 / sizeof(Segment);
      for (size_t i = 0; i < room.segments.size(); i += kPage) room.segments[i] = Segment{};
    }
    double derive_wall = 0, derive_cpu = 0, draw_wall = 0, draw_cpu = 0;
    for (uint64_t i; (i = counter.next()) < n;) {
      const size_t k = order[size_t(i)];
      const double t0 = T::now(), c0 = processCpuMs();
      LSystemSceneDerivation d = deriveSceneRange(scene, {k, k + 1}, options);
      rank_modules += d.string.size();
      const double t1 = T::now(), c1 = processCpuMs();
      // One instance: its own string is the whole string of the range (the scene's total only
      // chooses between interpreters with several threads).
      auto g = std::make_shared<const Geometry>(interpretSceneRange(
          scene, d, d.string.size(), execution, a.seed, a.budget.max_modules, a.budget.memory_budget));
      derive_wall += t1 - t0;
      derive_cpu += c1 - c0;
      draw_wall += T::now() - t1;
      draw_cpu += processCpuMs() - c1;
      if (geometry_gather) sendGeometry(*geometry_gather, g);  // leaves at once; rank 0 places it later
      InstanceFigures& f = figures.emplace_back();
      f.index = k;
      f.iterations = d.stats[0].iterations;
      f.modules = d.stats[0].modules;
      f.modules_total = d.stats[0].modules_total;
      addGeometryFigures(*g, std::span(&f, 1), k);
      if (needs_string) {  // the text only for the string output; the hash alone is made without it
        const std::string piece = toText(d.string);
        f.text_bytes = piece.size();
        if (stats) f.string_hash = textHash(piece);
        own_text += piece;
      } else if (stats) {
        f.string_hash = stringHash(d.string);
        strings.push_back(std::move(d.string));  // for the whole string's hash, after the outputs
      }
      rank_modules_total += d.stats[0].modules_total;
      rank_segments += g->segments.size();
      rank_polygons += g->polygonCount();
      derive_threads = std::max(derive_threads, d.threads);
      if (geometry_gather) kept.push_back(std::move(g));  // rank 0 copies its own parts from them
    }
    // The phases summed over this rank's instances, placed one after the other.
    const double p_wall = timeline.wall.back(), p_cpu = timeline.cpu.back();
    timeline.markAt(p_wall + derive_wall, p_cpu + derive_cpu);  // derive
    timeline.markAt(p_wall + derive_wall, p_cpu + derive_cpu);  // agree: none
    timeline.markAt(p_wall + derive_wall + draw_wall, p_cpu + derive_cpu + draw_cpu);  // interpret
    work_cpu_ms = derive_cpu + draw_cpu;
    timeline.mark();  // figures (and the counter)
    // Who did which instance: every rank's figures on rank 0 (collective),
    // rank after rank, each rank's in the order it did them — the order of its parts.
    std::vector<uint64_t> counts;
    const std::vector<uint8_t> bytes = distributed::gather(
        {reinterpret_cast<const uint8_t*>(figures.data()), figures.size() * sizeof(InstanceFigures)}, 0, &counts);
    if (distributed::isRoot()) {
      arrived.resize(bytes.size() / sizeof(InstanceFigures));
      std::memcpy(arrived.data(), bytes.data(), bytes.size());
      all.resize(n);
      where_all.resize(n);
      std::vector<bool> seen(n, false);
      size_t f = 0;
      for (int r = 0; r < ranks; ++r)
        for (size_t p = 0; p < counts[size_t(r)] / sizeof(InstanceFigures); ++p, ++f) {
          const uint64_t k = arrived[f].index;
          if (k >= n || seen[k]) throw Error("scene: an instance was done twice or not at all");
          seen[k] = true;
          all[k] = arrived[f];
          where_all[k] = {r, p};
        }
      if (f != n) throw Error("scene: an instance was done twice or not at all");
    }
    if (geometry_gather) {
      if (distributed::isRoot())
        gathered = joinGeometry(*geometry_gather, where_all, std::move(room));
      else
        geometry_gather->finish();
    }
    if (needs_string) gatherTexts();
  } else {
    LSystemSceneRange range{0, n};
    if (ranks > 1) {
      // Balanced by predicted time (the string hashes only with --stats-json);
      // rank 0 also joins the geometry unless every rank writes its own part.
      const std::vector<SceneInstanceWork> work = predictSceneWork(scene, options);
      const uint64_t join = needs_geometry && !a.parts ? predictSceneJoinTime(work) : 0;
      range = partitionByCost(predictSceneTimes(work, stats), ranks, join)[size_t(me)];
    }
    timeline.mark();  // partition

    derivation = deriveSceneRange(scene, range, options);
    timeline.mark();  // derive
    uint64_t scene_modules[1] = {derivation->string.size()};
    distributed::allReduce(std::span<uint64_t>(scene_modules, 1), distributed::ReduceOp::kSum);
    timeline.mark();  // agree
    drawn = std::make_shared<const Geometry>(interpretSceneRange(
        scene, *derivation, scene_modules[0], execution, a.seed, a.budget.max_modules, a.budget.memory_budget));
    const Geometry& local = *drawn;
    timeline.mark();  // interpret
    // The geometry leaves for rank 0 now, while this rank computes its figures.
    if (ranks > 1 && needs_geometry && !a.parts) {
      geometry_gather = std::make_unique<distributed::RootGather>(kGeometryArrays);
      sendGeometry(*geometry_gather, drawn);
    }
    // CPU time of derive + interpret: no MPI waiting in it. (Its system part, page faults of the
    // large buffers, varies tenfold on a machine short of free memory: compare small scenes.)
    work_cpu_ms = timeline.cpuMs(T::kPartition, T::kDerive) + timeline.cpuMs(T::kAgree, T::kInterpret);

    // Per-instance figures from this rank's tagged geometry.
    figures.resize(range.size());
    for (size_t k = 0; k < range.size(); ++k) {
      const DeriveStats& st = derivation->stats[k];
      figures[k].index = range.first + k;
      figures[k].iterations = st.iterations;
      figures[k].modules = st.modules;
      figures[k].modules_total = st.modules_total;
      rank_modules_total += st.modules_total;
    }
    addGeometryFigures(local, figures, range.first);
    if (stats)
      for (size_t k = 0; k < range.size(); ++k)
        figures[k].string_hash = stringHash(derivation->instanceString(k, scene));
    rank_modules = derivation->string.size();
    rank_segments = local.segments.size();
    rank_polygons = local.polygonCount();
    derive_threads = derivation->threads;

    timeline.mark();  // figures
    // The outputs: the whole geometry and string on rank 0, or glTF parts on every rank.
    if (geometry_gather) {
      if (distributed::isRoot()) {
        std::vector<PartRef> where(static_cast<size_t>(ranks));
        for (int r = 0; r < ranks; ++r) where[size_t(r)] = {r, 0};
        gathered = joinGeometry(*geometry_gather, where);
      } else {
        geometry_gather->finish();
      }
    }
    if (needs_string) {
      if (ranks == 1) {
        text = toText(derivation->string);
      } else {
        const std::string own = toText(derivation->string);
        const std::vector<uint8_t> all_text =
            distributed::gather({reinterpret_cast<const uint8_t*>(own.data()), own.size()}, 0);
        text.assign(all_text.begin(), all_text.end());
      }
    }
  }
  const Geometry& geometry = ranks > 1 ? gathered : *drawn;
  timeline.mark();  // gather
  const double cpu_ms = timeline.cpuMs(T::kPartition, T::kGather);
  const WriteOptions write = a.output.writeOptions();
  for (const std::string& out : a.output.files.paths) {
    if (a.parts && !OutputOptions::isStringOutput(out))
      writeGltfParts(out, *drawn, write);
    else if (distributed::isRoot())
      OutputOptions::isStringOutput(out) ? writeOutput(out, text + "\n")
                                         : writeGeometry(geometry, out, write);
  }
  timeline.mark();  // write

  // The job's figures: sums, the slowest rank's times, the per-instance records in instance order.
  // CPU times over the ranks: the section's (MPI spins while it waits), and
  // derive + interpret alone (the work split; its largest rank bounds the speed-up).
  double cpu_sum[2] = {cpu_ms, work_cpu_ms}, cpu_max[1] = {work_cpu_ms};
  distributed::allReduce(std::span<double>(cpu_sum, 2), distributed::ReduceOp::kSum);
  distributed::allReduce(std::span<double>(cpu_max, 1), distributed::ReduceOp::kMax);
  double times[3] = {timeline.ms(T::kPartition, T::kDerive), timeline.ms(T::kAgree, T::kInterpret),
                     timeline.ms(T::kPartition, T::kDerive) + timeline.ms(T::kAgree, T::kGather)};
  distributed::allReduce(std::span<double>(times, 3), distributed::ReduceOp::kMax);
  uint64_t sums[4] = {rank_modules, rank_modules_total, rank_segments, rank_polygons};
  distributed::allReduce(std::span<uint64_t>(sums, 4), distributed::ReduceOp::kSum);
  // The work each rank did (modules written and read), for the balance: max / mean.
  const uint64_t work = rank_modules + rank_modules_total;
  double balance[2] = {double(work), double(work)};
  distributed::allReduce(std::span<double>(balance, 1), distributed::ReduceOp::kMax);
  distributed::allReduce(std::span<double>(balance + 1, 1), distributed::ReduceOp::kSum);
  uint64_t threads[1] = {uint64_t(derive_threads)};
  distributed::allReduce(std::span<uint64_t>(threads, 1), distributed::ReduceOp::kMax);
  const auto [derive_ms, interpret_ms, gen_ms] = std::tuple(times[0], times[1], times[2]);
  const uint64_t modules = sums[0], modules_total = sums[1], segment_count = sums[2], polygon_count = sums[3];

  if (stats) {
    if (self_scheduled) {
      if (!needs_string) {
        // The whole string's hash continued instance after instance in instance
        // order: each run of consecutive instances that one rank did is one turn
        // of that rank (a broadcast of the hash from it), as the ranges' chain.
        std::vector<uint8_t> owner_bytes(n * sizeof(uint32_t));
        std::vector<uint32_t> owner(n), local(n);  // local: the instance's place in its owner's order
        if (distributed::isRoot())
          for (size_t k = 0; k < n; ++k) owner[k] = uint32_t(where_all[k].rank);
        std::memcpy(owner_bytes.data(), owner.data(), owner_bytes.size());
        distributed::broadcast(owner_bytes, 0);
        std::memcpy(owner.data(), owner_bytes.data(), owner_bytes.size());
        for (size_t p = 0; p < figures.size(); ++p) local[figures[p].index] = uint32_t(p);
        uint64_t h = 1469598103934665603ull;  // FNV-1a's basis, as stringHash starts
        for (size_t k = 0; k < n;) {
          size_t end = k;
          while (end < n && owner[end] == owner[k]) ++end;
          std::vector<uint8_t> state(8);
          if (int(owner[k]) == me)
            for (size_t i = k; i < end; ++i) h = stringHash(strings[local[i]], h);
          std::memcpy(state.data(), &h, 8);
          distributed::broadcast(state, int(owner[k]));
          std::memcpy(&h, state.data(), 8);
          k = end;
        }
        string_hash = h;
      }
    } else {
      // The combined string's hash, continued rank after rank (ranges in instance order).
      std::vector<uint8_t> hash(8);
      const uint64_t basis = 1469598103934665603ull;  // FNV-1a's, as stringHash starts
      std::memcpy(hash.data(), &basis, 8);
      distributed::chain(hash, [&](std::vector<uint8_t>& state) {
        uint64_t h;
        std::memcpy(&h, state.data(), 8);
        h = stringHash(derivation->string, h);
        std::memcpy(state.data(), &h, 8);
      });
      uint64_t h;
      std::memcpy(&h, hash.data(), 8);
      string_hash = h;
    }
    timeline.mark();  // stats: the figures' reductions and the whole string's hash
    // Every rank's marks, wall relative to the earliest start, then CPU
    // relative to its own start, rank after rank.
    double origin[1] = {timeline.wall[0]};
    distributed::allReduce(std::span<double>(origin, 1), distributed::ReduceOp::kMin);
    std::vector<double> marks;
    for (double t : timeline.wall) marks.push_back(t - origin[0]);
    for (double t : timeline.cpu) marks.push_back(t - timeline.cpu[0]);
    const std::vector<uint8_t> mark_bytes = distributed::gather(
        {reinterpret_cast<const uint8_t*>(marks.data()), marks.size() * sizeof(double)}, 0);
    if (!self_scheduled) {  // contiguous ranges: the ranks' figures concatenate in instance order
      all = figures;
      if (ranks > 1) {
        const std::vector<uint8_t> bytes = distributed::gather(
            {reinterpret_cast<const uint8_t*>(figures.data()), figures.size() * sizeof(InstanceFigures)}, 0);
        all.resize(bytes.size() / sizeof(InstanceFigures));
        std::memcpy(all.data(), bytes.data(), bytes.size());
      }
    }
    if (distributed::isRoot()) {
      Bounds box;  // the union in instance order: the same bits as geometry.bounds() of the whole
      for (const InstanceFigures& f : all) {
        if (f.bounds.empty()) continue;
        box.add(f.bounds.min);
        box.add(f.bounds.max);
      }
      Json j;
      j["file"] = a.file;
      j["instances"] = n;
      j["modules"] = modules;
      j["modules_total"] = modules_total;
      j["derive_ms"] = derive_ms;
      j["interpret_ms"] = interpret_ms;
      j["gen_ms"] = gen_ms;
      j["cpu_ms"] = cpu_sum[0];
      j["work_cpu_ms"] = cpu_sum[1];
      j["work_cpu_max_ms"] = cpu_max[0];
      j["segments"] = segment_count;
      j["polygons"] = polygon_count;
      j["bbox"] = jsonBounds(box);
      j["string_hash"] = hex64(string_hash.value_or(0));
      j["seed"] = a.seed;
      j["backend"] = std::string(backendName(execution.backend));
      j["threads"] = threads[0];
      // Per rank: its start, then the end of each phase (ms from the earliest
      // rank's start), and its CPU time at the same marks.
      Json phases = Json::array({"start"});
      for (const char* name : Timeline::kPhases) phases.push_back(name);
      j["timeline_phases"] = std::move(phases);
      Json wall = Json::array(), cpu = Json::array();
      const size_t marks_per_rank = 2 * (Timeline::kCount + 1);
      for (size_t at = 0; at + sizeof(double) <= mark_bytes.size(); at += sizeof(double)) {
        double t;
        std::memcpy(&t, mark_bytes.data() + at, sizeof t);
        ((at / sizeof(double)) % marks_per_rank <= Timeline::kCount ? wall : cpu)
            .push_back(std::round(t * 1000.0) / 1000.0);
      }
      j["timeline_ms"] = std::move(wall);
      j["timeline_cpu_ms"] = std::move(cpu);
      if (distributed::active()) {
        j["ranks"] = ranks;
        j["rank_balance"] = balance[1] > 0 ? balance[0] / (balance[1] / ranks) : 1.0;
      }
      Json per_instance = Json::array();
      for (size_t k = 0; k < n; ++k) {
        const InstanceFigures& f = all[k];
        Json inst;
        inst["instance"] = k;
        inst["file"] = scene.instances[k].file.string();
        inst["line"] = scene.instances[k].line;
        inst["iterations"] = f.iterations;
        inst["modules"] = f.modules;
        inst["modules_total"] = f.modules_total;
        inst["segments"] = f.segments;
        inst["polygons"] = f.polygons;
        inst["bbox"] = jsonBounds(f.bounds);
        inst["string_hash"] = hex64(f.string_hash);
        per_instance.push_back(std::move(inst));
      }
      j["per_instance"] = std::move(per_instance);
      a.output.files.writeStats(j);
    }
  }
  if (!a.quiet && distributed::isRoot()) {
    std::fprintf(
        stderr,
        "%s: %zu instances, %" PRIu64 " modules (%" PRIu64 " over all steps), %" PRIu64 " segments, %" PRIu64
        " polygons; "
        "derive %.1f ms, interpret %.1f ms\n",
        a.file.c_str(), n, modules, modules_total, segment_count, polygon_count, derive_ms, interpret_ms);
  }
}

void setupScene(CLI::App& app) {
  auto args = std::make_shared<SceneArgs>();
  CLI::App* cmd =
      app.add_subcommand("scene", "Derive and draw many L-systems at once (scene file, docs/scenes.md)");
  cmd->footer(
      "Each line of the scene file places one L-system: MODEL.l [n=N] [seed=S] [at=X,Y,Z] "
      "[rotate=RX,RY,RZ] [scale=S] [angle=..] [NAME=VALUE overrides #define NAME].\n"
      "Meshes tag every element with its instance (OBJ groups, PLY/glTF attributes).\n"
      "Example: procgen scene examples/scenes/forest.scene -o forest.png -o forest.glb");
  cmd->add_option("FILE", args->file, "Scene file (one L-system per line)")->required()->group("Input");
  addInteger(*cmd, "-n,--iterations", args->iterations,
             "Derivation steps for every instance (default: each its own)", 0)
      ->group("Derivation");
  addInteger(*cmd, "--seed", args->seed, "Base seed: an instance without seed= uses seed + its index")
      ->capture_default_str()
      ->group("Derivation");
  args->budget.add(*cmd);
  args->turtle.add(*cmd);
  args->execution.add(*cmd);
  args->output.add(*cmd);
  cmd->add_flag("--parts", args->parts,
                "With -o NAME.gltf: write the geometry as one binary part per MPI rank (NAME.part-R.bin) "
                "and NAME.gltf as a small index referencing them, for scenes larger than one node's memory "
                "(docs/scaling.md)")
      ->group("Output");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary on stderr")->group("Output");
  cmd->callback([args] { runScene(*args); });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(15, setupScene);

}  // namespace procgen::cli

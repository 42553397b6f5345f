// A scene over the ranks of an MPI job (docs/scaling.md, "Scenes"): many
// L-systems (Lipp et al. §6) derived and drawn, every rank its share, with the
// outputs gathered so that each is the one-process output.
//
//  - share: with one thread per rank and the geometry on rank 0 (or none),
//    self-scheduling — the ranks take the instances, the longest predicted
//    first, from a shared counter (distributed::SharedCounter), so each
//    rank's share follows its real speed; otherwise contiguous ranges balanced
//    by predicted time (distributed_scene.cpp: the Parikh-vector prediction
//    and the optimal linear partition);
//  - gather: every rank hands its geometry to rank 0 as soon as it is drawn
//    (distributed::RootGather), and rank 0 places the parts in instance order
//    straight into the joined arrays;
//  - figures: per-instance counts, bounds and string hashes; the whole
//    string's hash continued rank after rank in instance order (FNV-1a is a
//    fold, so the ranks' parts chain into the one-process hash).
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "procgen/distributed.hpp"
#include "procgen/error.hpp"
#include "procgen/scene.hpp"

namespace procgen {

SceneClock SceneClock::now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  const double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return {wall, double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6};
}

namespace {

constexpr uint64_t kFnvBasis = 1469598103934665603ull;  // FNV-1a's, as stringHash starts

/// One rank's phase marks (SceneRun::kPhases): its start, then the end of each phase.
struct Timeline {
  std::vector<SceneClock> marks;
  explicit Timeline(SceneClock start) : marks{start} {}
  void mark() { marks.push_back(SceneClock::now()); }
  /// A mark at given clocks (self-scheduled phases, summed over the instances).
  void markAt(SceneClock at) { marks.push_back(at); }
  enum Mark : size_t { kStart, kParse, kPartition, kDerive, kAgree, kInterpret, kFigures, kGather, kWrite, kStats };
  double ms(Mark from, Mark to) const { return marks[to].wall_ms - marks[from].wall_ms; }
  double cpuMs(Mark from, Mark to) const { return marks[to].cpu_ms - marks[from].cpu_ms; }
};
static_assert(Timeline::kStats == SceneRun::kPhaseCount, "a Mark per phase, after kStart");

/// One instance's figures as a rank sends them to rank 0 (plain bytes: every rank runs this binary).
struct WireFigures {
  int32_t iterations = 0;
  int32_t unused = 0;
  uint64_t index = 0;       ///< its scene instance
  uint64_t text_bytes = 0;  ///< its string's text, when the run makes the text (self-scheduled)
  uint64_t modules = 0, modules_total = 0, segments = 0, polygons = 0, string_hash = 0;
  Bounds bounds;
};

/// Segments, polygons and bounds of geometry whose elements all belong to the
/// instances of `figures` (indexed by scene instance - `first`).
void addGeometryFigures(const Geometry& g, std::span<WireFigures> figures, size_t first) {
  for (const Segment& s : g.segments) {
    WireFigures& f = figures[size_t(s.instance) - first];
    f.segments += 1;
    f.bounds.add(s.start);
    f.bounds.add(s.end);
  }
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    WireFigures& f = figures[size_t(g.polygon_instances[p]) - first];
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

/// The ranks' WireFigures on rank 0, rank after rank (empty elsewhere); `counts`: bytes per rank.
std::vector<WireFigures> gatherFigures(std::span<const WireFigures> figures, std::vector<uint64_t>* counts = nullptr) {
  const std::vector<uint8_t> bytes = distributed::gather(
      {reinterpret_cast<const uint8_t*>(figures.data()), figures.size() * sizeof(WireFigures)}, 0, counts);
  std::vector<WireFigures> all(bytes.size() / sizeof(WireFigures));
  if (!bytes.empty()) std::memcpy(all.data(), bytes.data(), bytes.size());
  return all;
}

/// A 64-bit value passed along the ranks with `step` (distributed::chain).
uint64_t chainValue(uint64_t start, const std::function<uint64_t(uint64_t)>& step) {
  std::vector<uint8_t> state(8);
  std::memcpy(state.data(), &start, 8);
  distributed::chain(state, [&](std::vector<uint8_t>& s) {
    uint64_t h;
    std::memcpy(&h, s.data(), 8);
    h = step(h);
    std::memcpy(s.data(), &h, 8);
  });
  uint64_t h;
  std::memcpy(&h, state.data(), 8);
  return h;
}

}  // namespace

SceneRun runSceneOnRanks(const LSystemScene& scene, const SceneRunOptions& o) {
  Timeline timeline(o.started.value_or(SceneClock::now()));
  timeline.mark();  // parse: the caller's, before this call
  using T = Timeline;
  const DeriveOptions& options = o.derive;
  const Execution& execution = options.execution;
  const int ranks = distributed::size(), me = distributed::rank();
  const size_t n = scene.instances.size();
  const bool stats = o.statistics, needs_string = o.text;
  const bool needs_geometry = o.geometry != SceneGeometryTarget::kNone;
  const bool per_rank = o.geometry == SceneGeometryTarget::kPerRank;
  const auto drawRange = [&](const LSystemSceneDerivation& d, uint64_t scene_modules) {
    return interpretSceneRange(scene, d, scene_modules, execution, options.seed, options.max_modules,
                               options.memory_budget_bytes);
  };
  SceneRun run;
  run.instances = n;
  // Self-scheduling needs one thread per rank (every rank must choose alike:
  // threads 0 is the node's count) and an output joined in instance order.
  bool self_scheduled = false;
  std::vector<size_t> order;  // self-scheduled: the instances, the longest predicted first
  double predicted_segments = 0;
  if (ranks > 1 && !per_rank && execution.backend != Backend::kOpenCL) {
    const std::vector<SceneInstanceWork> work = predictSceneWork(scene, options);
    for (const SceneInstanceWork& w : work) predicted_segments += w.segments;
    const std::vector<uint64_t> predicted = predictSceneTimes(work, stats);
    order.resize(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return predicted[x] > predicted[y]; });
    // Also the checkpoint before the loop: a rank that failed before it
    // cannot leave the others waiting for its answers (SharedCounter).
    uint64_t wide[1] = {effectiveThreads(execution) > 1 ? 1u : 0u};
    distributed::allReduce(std::span<uint64_t>(wide, 1), distributed::ReduceOp::kMax);
    self_scheduled = wide[0] == 0;
  }
  // This rank's part of the work and what rank 0 gathers of it.
  std::vector<WireFigures> figures;  // this rank's instances, in the order it did them
  std::vector<WireFigures> all;      // rank 0: every instance's, in instance order
  std::vector<WireFigures> arrived;  // rank 0, self-scheduled: every rank's figures, in rank order
  std::vector<PartRef> where_all;    // rank 0, self-scheduled: who did each instance (its part)
  uint64_t rank_modules = 0, rank_modules_total = 0, rank_segments = 0, rank_polygons = 0;
  int derive_threads = 1;
  double work_cpu_ms = 0;
  std::shared_ptr<Geometry> drawn;                   // contiguous ranges: this rank's geometry
  std::optional<LSystemSceneDerivation> derivation;  // contiguous ranges: this rank's strings
  std::string own_text;                              // self-scheduled: this rank's instances' texts
  std::optional<uint64_t> string_hash;               // rank 0, self-scheduled: the whole string's, from the texts
  std::unique_ptr<distributed::RootGather> geometry_gather;
  std::vector<ModuleString> strings;  // self-scheduled, statistics without the text: this rank's, in its order

  // Self-scheduled: every rank's texts on rank 0, put in instance order —
  // the text output and the whole string's hash (textHash continued over
  // the instances' texts in instance order, as over one string's).
  auto gatherTexts = [&] {
    std::vector<uint64_t> counts;
    const std::vector<uint8_t> bytes =
        distributed::gather({reinterpret_cast<const uint8_t*>(own_text.data()), own_text.size()}, 0, &counts);
    if (!distributed::isRoot()) return;
    // The ranks' figures arrived in rank order, each rank's in the order it
    // did them: the order of the texts.
    std::vector<uint64_t> at(n);  // where instance k's text starts in `bytes`
    uint64_t cursor = 0;
    for (const WireFigures& f : arrived) {
      at[f.index] = cursor;
      cursor += f.text_bytes;
    }
    if (cursor != bytes.size()) throw Error("scene: the ranks' texts do not match their figures");
    uint64_t h = kFnvBasis;
    run.text.reserve(bytes.size());
    for (size_t k = 0; k < n; ++k) {
      const std::string_view piece(reinterpret_cast<const char*>(bytes.data() + at[k]), all[k].text_bytes);
      if (stats) h = textHash(piece, h);
      run.text.append(piece);
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
      const SceneClock c0 = SceneClock::now();
      LSystemSceneDerivation d = deriveSceneRange(scene, {k, k + 1}, options);
      rank_modules += d.string.size();
      const SceneClock c1 = SceneClock::now();
      // One instance: its own string is the whole string of the range (the
      // scene's total only chooses between interpreters with several threads).
      auto g = std::make_shared<const Geometry>(drawRange(d, d.string.size()));
      const SceneClock c2 = SceneClock::now();
      derive_wall += c1.wall_ms - c0.wall_ms, derive_cpu += c1.cpu_ms - c0.cpu_ms;
      draw_wall += c2.wall_ms - c1.wall_ms, draw_cpu += c2.cpu_ms - c1.cpu_ms;
      if (geometry_gather) sendGeometry(*geometry_gather, g);  // leaves at once; rank 0 places it later
      WireFigures& f = figures.emplace_back();
      f.index = k;
      f.iterations = d.stats[0].iterations;
      f.modules = d.stats[0].modules;
      f.modules_total = d.stats[0].modules_total;
      addGeometryFigures(*g, std::span(&f, 1), k);
      if (needs_string) {  // the text only for the text output; the hash alone is made without it
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
    const SceneClock p = timeline.marks.back();
    timeline.markAt({p.wall_ms + derive_wall, p.cpu_ms + derive_cpu});  // derive
    timeline.markAt({p.wall_ms + derive_wall, p.cpu_ms + derive_cpu});  // agree: none
    timeline.markAt({p.wall_ms + derive_wall + draw_wall, p.cpu_ms + derive_cpu + draw_cpu});  // interpret
    work_cpu_ms = derive_cpu + draw_cpu;
    timeline.mark();  // figures (and the counter)
    // Who did which instance: every rank's figures on rank 0 (collective),
    // rank after rank, each rank's in the order it did them — the order of its parts.
    std::vector<uint64_t> counts;
    arrived = gatherFigures(figures, &counts);
    if (distributed::isRoot()) {
      all.resize(n);
      where_all.resize(n);
      std::vector<bool> seen(n, false);
      size_t f = 0;
      for (int r = 0; r < ranks; ++r)
        for (size_t part = 0; part < counts[size_t(r)] / sizeof(WireFigures); ++part, ++f) {
          const uint64_t k = arrived[f].index;
          if (k >= n || seen[k]) throw Error("scene: an instance was done twice or not at all");
          seen[k] = true;
          all[k] = arrived[f];
          where_all[k] = {r, part};
        }
      if (f != n) throw Error("scene: an instance was done twice or not at all");
    }
    if (geometry_gather) {
      if (distributed::isRoot())
        run.geometry = joinGeometry(*geometry_gather, where_all, std::move(room));
      else
        geometry_gather->finish();
    }
    if (needs_string) gatherTexts();
  } else {
    LSystemSceneRange range{0, n};
    if (ranks > 1) {
      // Balanced by predicted time (the string hashes only with statistics);
      // rank 0 also joins the geometry unless every rank keeps its own.
      const std::vector<SceneInstanceWork> work = predictSceneWork(scene, options);
      const uint64_t join = needs_geometry && !per_rank ? predictSceneJoinTime(work) : 0;
      range = partitionByCost(predictSceneTimes(work, stats), ranks, join)[size_t(me)];
    }
    timeline.mark();  // partition

    derivation = deriveSceneRange(scene, range, options);
    timeline.mark();  // derive
    uint64_t scene_modules[1] = {derivation->string.size()};
    distributed::allReduce(std::span<uint64_t>(scene_modules, 1), distributed::ReduceOp::kSum);
    timeline.mark();  // agree
    drawn = std::make_shared<Geometry>(drawRange(*derivation, scene_modules[0]));
    const Geometry& local = *drawn;
    timeline.mark();  // interpret
    // The geometry leaves for rank 0 now, while this rank computes its figures.
    if (ranks > 1 && o.geometry == SceneGeometryTarget::kRoot) {
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
    // The outputs: the whole geometry and text on rank 0, or each rank's own geometry.
    if (geometry_gather) {
      if (distributed::isRoot()) {
        std::vector<PartRef> where(static_cast<size_t>(ranks));
        for (int r = 0; r < ranks; ++r) where[size_t(r)] = {r, 0};
        run.geometry = joinGeometry(*geometry_gather, where);
      } else {
        geometry_gather->finish();
      }
    } else if (needs_geometry) {
      run.geometry = std::move(*drawn);  // no transfer uses it: one rank, or every rank keeps its own
    }
    if (needs_string) {
      if (ranks == 1) {
        run.text = toText(derivation->string);
      } else {
        const std::string own = toText(derivation->string);
        const std::vector<uint8_t> all_text =
            distributed::gather({reinterpret_cast<const uint8_t*>(own.data()), own.size()}, 0);
        run.text.assign(all_text.begin(), all_text.end());
      }
    }
  }
  timeline.mark();  // gather
  const double cpu_ms = timeline.cpuMs(T::kPartition, T::kGather);
  if (o.write) o.write(run);
  timeline.mark();  // write

  // The job's figures: sums, the slowest rank's times, the balance of the work.
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
  run.derive_ms = times[0], run.interpret_ms = times[1], run.gen_ms = times[2];
  run.cpu_ms = cpu_sum[0], run.work_cpu_ms = cpu_sum[1], run.work_cpu_max_ms = cpu_max[0];
  run.modules = sums[0], run.modules_total = sums[1], run.segments = sums[2], run.polygons = sums[3];
  run.threads = int(threads[0]);
  run.rank_balance = balance[1] > 0 ? balance[0] / (balance[1] / ranks) : 1.0;
  if (!stats) return run;

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
      uint64_t h = kFnvBasis;
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
    string_hash = chainValue(kFnvBasis, [&](uint64_t h) { return stringHash(derivation->string, h); });
  }
  timeline.mark();  // stats: the figures' reductions and the whole string's hash
  // Every rank's marks, wall relative to the earliest start, then CPU
  // relative to its own start, rank after rank.
  double origin[1] = {timeline.marks[0].wall_ms};
  distributed::allReduce(std::span<double>(origin, 1), distributed::ReduceOp::kMin);
  std::vector<double> marks;
  for (const SceneClock& m : timeline.marks) marks.push_back(m.wall_ms - origin[0]);
  for (const SceneClock& m : timeline.marks) marks.push_back(m.cpu_ms - timeline.marks[0].cpu_ms);
  const std::vector<uint8_t> mark_bytes =
      distributed::gather({reinterpret_cast<const uint8_t*>(marks.data()), marks.size() * sizeof(double)}, 0);
  if (!self_scheduled) all = ranks > 1 ? gatherFigures(figures) : figures;  // ranges: concatenated in instance order
  if (!distributed::isRoot()) return run;
  run.string_hash = string_hash.value_or(0);
  run.per_instance.reserve(n);
  for (const WireFigures& f : all) {
    run.per_instance.push_back({f.iterations, f.modules, f.modules_total, f.segments, f.polygons, f.string_hash,
                                f.bounds});
    if (f.bounds.empty()) continue;  // the union in instance order: the same bits as Geometry::bounds()
    run.bounds.add(f.bounds.min);
    run.bounds.add(f.bounds.max);
  }
  const size_t per_rank_marks = SceneRun::kPhaseCount + 1;
  for (size_t at = 0; at + sizeof(double) <= mark_bytes.size(); at += sizeof(double)) {
    double t;
    std::memcpy(&t, mark_bytes.data() + at, sizeof t);
    ((at / sizeof(double)) % (2 * per_rank_marks) < per_rank_marks ? run.timeline_ms : run.timeline_cpu_ms)
        .push_back(t);
  }
  return run;
}

}  // namespace procgen

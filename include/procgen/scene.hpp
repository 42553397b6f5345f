// Many L-systems at once (Lipp et al. §6): a scene lists L-system instances —
// different grammars, constants, iteration counts, seeds and placements — that
// are derived together in batched passes over one combined module string and
// drawn into one Geometry whose elements carry their instance id.
// The scene file format is documented in docs/scenes.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/geometry.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {

/// One placed L-system of a scene.
struct LSystemInstance {
  std::filesystem::path file;     ///< the .l file, resolved against the scene's folder
  LSystem lsystem{nullptr};       ///< compiled with the instance's constant overrides
  std::optional<int> iterations;  ///< default: the file's derivation length
  std::optional<uint64_t> seed;   ///< default: the derivation seed + instance index
  ViewSettings view;              ///< the file's view settings with the instance's overrides
  Vec3 position{};                ///< where the turtle's origin lands
  Vec3 rotation_deg{};            ///< rotation about X, then Y, then Z (degrees)
  float scale = 1.0f;             ///< uniform scale of coordinates and widths
  int line = 0;                   ///< line in the scene file (for messages)
};

struct LSystemScene {
  std::vector<LSystemInstance> instances;

  /// Reads a scene file. Throws ParseError (file:line:col) on a malformed
  /// line, and the L-system's ParseError for a malformed model.
  static LSystemScene fromFile(const std::filesystem::path& path);
  /// `base` resolves relative model paths; `filename` is used in diagnostics.
  static LSystemScene fromText(std::string_view text, const std::string& filename,
                               const std::filesystem::path& base);
};

/// The derived scene: one combined module string in which instance k owns
/// modules [begin[k], begin[k+1]).
struct LSystemSceneDerivation {
  ModuleString string;
  std::vector<uint64_t> begin;     ///< instances()+1 entries
  std::vector<DeriveStats> stats;  ///< per instance, as derive() would report it
  int threads = 1;                 ///< threads actually used
  size_t first = 0;                ///< scene index of its instance 0 (deriveSceneRange)

  size_t instances() const { return stats.size(); }
  /// Its instance k's final string (scene instance first + k), exactly as
  /// derive() returns it for that instance alone (no param_offsets when the
  /// instance is not parametric).
  ModuleString instanceString(size_t k, const LSystemScene& scene) const;
};

/// Scene instances [first, last): the share of one rank in a distributed run
/// (docs/scaling.md, "Scenes").
struct LSystemSceneRange {
  size_t first = 0, last = 0;
  size_t size() const { return last - first; }
};

/// Derives every instance into one combined string. On serial and cpu each
/// instance is derived alone — the large ones (by predicted work) with every
/// thread, the many small ones side by side, one thread each — and copied
/// into it in instance order; on opencl (and whenever a limit or an error
/// needs the exact answer) in batched passes: each pass runs count → scan →
/// rewrite over the combined string, chunks of all instances balanced across
/// threads (not one thread per L-system). Instance k gets the same string as
/// derive() alone with iterations (options.iterations overrides every
/// instance) and seed (its own, else options.seed + k). Memory limits as in
/// derive(), over the combined string. options.progress, when set, is called
/// after every instance on serial and cpu with (instances done, instances,
/// modules so far), from one thread at a time; on opencl after every step.
LSystemSceneDerivation deriveScene(const LSystemScene& scene, const DeriveOptions& options);
/// The instances of `range` alone, each deriving exactly the string (and
/// statistics) it gets in deriveScene of the whole scene: its default seed is
/// still options.seed + its scene index. An empty range gives an empty
/// derivation (no error). Precondition: range.first <= range.last <= instances.
LSystemSceneDerivation deriveSceneRange(const LSystemScene& scene, LSystemSceneRange range,
                                        const DeriveOptions& options);

/// Draws every instance with its view settings and placement; segments and
/// polygons carry the instance index in `instance`, in instance order.
/// One budget for the whole scene: every instance's homomorphism expansion
/// and geometry are sized before any is drawn, and their sum (twice: the
/// parts and the placed whole) plus the combined string must fit the memory
/// budget (`memory_budget_bytes` 0: defaultMemoryBudget()), each
/// expansion within `max_modules` (0: no limit); else ResourceError, before
/// allocating. Throws Error when the geometry would hold a non-finite number.
Geometry interpretScene(const LSystemScene& scene, const LSystemSceneDerivation& derivation,
                        const Execution& execution, uint64_t seed = 1, uint64_t max_modules = 0,
                        uint64_t memory_budget_bytes = 0);
/// Draws the instances of a deriveSceneRange derivation: the same elements,
/// bit for bit and tagged with their scene indices, as interpretScene of the
/// whole scene gives for them, in instance order. `scene_modules` is the whole
/// scene's combined string length (the sum over every range): the choice of
/// the parallel interpreter for large instances depends on it, as in
/// interpretScene. The budget covers this range only.
Geometry interpretSceneRange(const LSystemScene& scene, const LSystemSceneDerivation& derivation,
                             uint64_t scene_modules, const Execution& execution, uint64_t seed = 1,
                             uint64_t max_modules = 0, uint64_t memory_budget_bytes = 0);

// ---- Distributed scenes (docs/scaling.md, "Scenes") ------------------------

/// The predicted cost of each instance, before anything is derived: the
/// modules its derivation writes over all its steps plus its final string
/// (which the turtle reads), from the Parikh vector of the axiom (symbol
/// counts) pushed through the production table step by step. Exact for D0L
/// systems (one context-free, unconditional successor per symbol); for other
/// symbols the expected successor counts (stochastic productions weighted by
/// probability, conditional or context productions averaged with equal
/// weights, plus the identity when none must apply). Decomposition, cuts
/// and homomorphism are not modelled. Saturates at 2^48 per instance.
/// Iterations as deriveScene: options.iterations, else the instance's, else
/// the file's. O(instances · steps · successor modules).
std::vector<uint64_t> predictSceneCosts(const LSystemScene& scene, const DeriveOptions& options);

/// The predicted work of one instance (predictSceneWork), in expectation:
/// the modules and parameters its derivation writes over all its steps, its
/// final string's modules and parameters, and the segments the turtle draws
/// from it (its F and G; no homomorphism, no polygons).
struct SceneInstanceWork {
  double modules_written = 0, params_written = 0;
  double modules = 0, params = 0;
  double segments = 0;
};
/// predictSceneCosts' Parikh vectors with the parameters carried along (each
/// successor module brings its parameter count, a kept module keeps its own):
/// exact for D0L systems, parametric or not, the expectation otherwise.
std::vector<SceneInstanceWork> predictSceneWork(const LSystemScene& scene, const DeriveOptions& options);
/// The same for the instances of `range` only: element k is instance range.first + k.
std::vector<SceneInstanceWork> predictSceneWork(const LSystemScene& scene, const DeriveOptions& options,
                                                LSystemSceneRange range);

/// The predicted time of each instance's work on one rank, in nanoseconds of
/// one cpu thread: derivation (modules and parameters written over all
/// steps), drawing (the final modules and parameters) and, with
/// `string_hashes` (--stats-json), the per-instance string hash (its text:
/// a parameter costs ten times a module). Weights fitted on the forest's
/// models (docs/scaling.md "Scenes"); only their ratios matter.
std::vector<uint64_t> predictSceneTimes(std::span<const SceneInstanceWork> work, bool string_hashes);
/// The predicted time, same units, for rank 0 to join every rank's geometry
/// into one (each predicted segment written once into the joined arrays).
uint64_t predictSceneJoinTime(std::span<const SceneInstanceWork> work);

/// Splits items 0..costs.size() into `ranks` contiguous ranges, rank r
/// getting the r-th, that minimise the largest range cost, rank 0's counted
/// with `root_extra` (the work only rank 0 does: joining and writing), by
/// the optimal linear partition (a binary search over the bottleneck with a
/// greedy check; `root_extra` is one more item in front that only rank 0
/// may take). Ranges are filled from the last rank down, so rank 0 gets the
/// remainder; ranges may be empty. Deterministic.
/// Bound (root_extra 0): the largest range cost <= the optimum over all (not
/// only contiguous) assignments + the largest item, and <= sum / ranks + the
/// largest item. Precondition: ranks >= 1. O(n log(sum)).
std::vector<LSystemSceneRange> partitionByCost(std::span<const uint64_t> costs, int ranks,
                                               uint64_t root_extra = 0);

/// Where runSceneOnRanks leaves the scene's geometry.
enum class SceneGeometryTarget : uint8_t {
  kNone,     ///< nowhere (the figures are still counted from it)
  kRoot,     ///< rank 0: the whole scene, the arrays one process draws
  kPerRank,  ///< every rank: its own contiguous range (the parts of one glTF)
};

/// A moment on one rank's clocks: the steady clock (one clock for every
/// process of a node on Linux, so the ranks' marks line up) and the
/// process's CPU time (all threads, user + system), in milliseconds.
struct SceneClock {
  double wall_ms = 0, cpu_ms = 0;
  static SceneClock now();
};

struct SceneRun;

struct SceneRunOptions {
  DeriveOptions derive;  ///< iterations, seed (also the turtle's), limits, execution
  SceneGeometryTarget geometry = SceneGeometryTarget::kRoot;
  bool text = false;        ///< rank 0 gets the whole combined string as text
  bool statistics = false;  ///< string hashes, per-instance figures and the ranks' timelines
  /// When the run began (before its scene was read): the timeline's start;
  /// absent, the call (the "parse" phase is then empty).
  std::optional<SceneClock> started;
  /// Called on every rank when the geometry and text are where the target
  /// says (a collective writer may use the other ranks), before the figures
  /// are reduced: the timeline's "write" phase. May be empty.
  std::function<void(const SceneRun&)> write;
};

/// One instance's figures, as one process reports them.
struct SceneInstanceFigures {
  int iterations = 0;
  uint64_t modules = 0, modules_total = 0, segments = 0, polygons = 0;
  uint64_t string_hash = 0;  ///< with statistics
  Bounds bounds;             ///< of its segments and polygon vertices
};

/// What runSceneOnRanks made. Totals and the slowest rank's times are on
/// every rank; the per-instance figures, bounds, hash and timelines on rank 0
/// with statistics.
struct SceneRun {
  static constexpr const char* kPhases[] = {"parse",   "partition", "derive", "agree", "interpret",
                                            "figures", "gather",    "write",  "stats"};
  static constexpr size_t kPhaseCount = sizeof(kPhases) / sizeof(kPhases[0]);

  Geometry geometry;  ///< as SceneRunOptions::geometry says (empty elsewhere)
  std::string text;   ///< rank 0 with SceneRunOptions::text
  size_t instances = 0;
  uint64_t modules = 0, modules_total = 0, segments = 0, polygons = 0;
  int threads = 1;  ///< the most threads a rank's derivation used
  /// The slowest rank's derivation, interpretation, and derive-to-gather time
  /// (ms); CPU ms over the ranks: the whole section (MPI spins while it
  /// waits), derive + interpret alone, and the largest rank's derive + interpret.
  double derive_ms = 0, interpret_ms = 0, gen_ms = 0;
  double cpu_ms = 0, work_cpu_ms = 0, work_cpu_max_ms = 0;
  double rank_balance = 1;  ///< the largest rank's modules written and read / the mean
  std::vector<SceneInstanceFigures> per_instance;  ///< instance order
  Bounds bounds;                                   ///< the union in instance order: Geometry::bounds() of the whole
  uint64_t string_hash = 0;                        ///< stringHash of the whole combined string
  /// Rank after rank: its start, then the end of each phase (kPhases), in ms
  /// from the earliest rank's start; and its CPU ms since its own start.
  std::vector<double> timeline_ms, timeline_cpu_ms;
};

/// Collective over the ranks of the job (procgen/distributed.hpp; one rank:
/// this process alone): derives and draws `scene`, every rank its share, and
/// gathers what `options` asks for, each output the one-process output.
/// With one thread per rank and the geometry on rank 0 (or none), the ranks
/// take the instances one by one from a shared counter, the longest
/// predicted first (each rank's share follows its real speed); otherwise
/// contiguous ranges balanced by predicted time (predictSceneWork,
/// predictSceneTimes, partitionByCost, rank 0's join counted). Errors as
/// deriveSceneRange and interpretSceneRange, on the rank that meets them (the
/// others stop with distributed::PeerFailure at their next collective).
SceneRun runSceneOnRanks(const LSystemScene& scene, const SceneRunOptions& options);

/// A glTF written as parts (`procgen scene --parts`): each rank encodes its
/// geometry as a .glb (encodeGeometry), keeps the binary chunk as its part
/// file and sends the JSON chunk; splitGlb separates the two. Throws Error
/// when `glb` is not a glTF 2.0 binary.
struct GlbChunks {
  std::string json;
  std::vector<uint8_t> bin;  ///< empty when the glb has no buffer
};
GlbChunks splitGlb(std::span<const uint8_t> glb);
/// The index glTF (JSON) joining the parts' JSON chunks in order: part p's
/// buffer becomes the external buffer `buffer_uris[p]` (parts without a
/// buffer reference none), its views, accessors, meshes and nodes are
/// renumbered after those of the parts before it, and the one scene lists
/// every part's nodes in order. The parts must share their materials (every
/// procgen glb has the same one). Throws Error on malformed part JSON.
std::string mergeGltfParts(std::span<const std::string> part_json, std::span<const std::string> buffer_uris);

}  // namespace procgen

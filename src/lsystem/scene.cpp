// Multiple L-systems at once (Lipp et al. §6). All instances live in one
// combined module string. On the host backends each instance is derived
// alone — the large ones with every thread, the small ones side by side, one
// thread each (§6's balance: not one thread per L-system, nor one batch that
// makes every instance as costly as the most general one) — and copied into
// it (deriveApart). On opencl, and whenever only the batch can answer (a
// budget or an error), the one derivation driver (derive.cpp) derives them
// together: every pass (productions, decomposition) is one count → scan →
// rewrite over the whole string (the runners' batched stages: chunks that
// never straddle two instances, spread over threads regardless of which
// instance they belong to); an instance that has finished its iterations is
// copied.
//
// Every instance sees its segment as a string of its own (positions, context
// search and bracket partners are relative to the segment, the stochastic
// stream is the instance's seed), so instance k derives exactly the string
// derive() gives it alone — the parity the tests check. The instances are then
// drawn, each with its view settings, and placed.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <vector>

#include "common/dispatch.hpp"
#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/lsystem_data.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/interpret.hpp"
#include "lsystem/pass_runner.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/scene.hpp"
#if PROCGEN_HAVE_TBB
#include "cpu/executor.hpp"
#endif

namespace procgen {
namespace {

/// p' = position + R(rotation) · (scale · p), R = Rz · Ry · Rx.
struct Placement {
  float m[3][3];
  Vec3 t;
  float scale;
  explicit Placement(const LSystemInstance& inst) : t(inst.position), scale(inst.scale) {
    const float d2r = 3.14159265358979323846f / 180.0f;
    const float cx = std::cos(inst.rotation_deg.x * d2r), sx = std::sin(inst.rotation_deg.x * d2r);
    const float cy = std::cos(inst.rotation_deg.y * d2r), sy = std::sin(inst.rotation_deg.y * d2r);
    const float cz = std::cos(inst.rotation_deg.z * d2r), sz = std::sin(inst.rotation_deg.z * d2r);
    const float rx[3][3] = {{1, 0, 0}, {0, cx, -sx}, {0, sx, cx}};
    const float ry[3][3] = {{cy, 0, sy}, {0, 1, 0}, {-sy, 0, cy}};
    const float rz[3][3] = {{cz, -sz, 0}, {sz, cz, 0}, {0, 0, 1}};
    float ryx[3][3];
    multiply(ry, rx, ryx);
    multiply(rz, ryx, m);
  }
  static void multiply(const float a[3][3], const float b[3][3], float out[3][3]) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) out[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
  }
  Vec3 apply(const Vec3& p) const {
    const float x = p.x * scale, y = p.y * scale, z = p.z * scale;
    return Vec3{t.x + m[0][0] * x + m[0][1] * y + m[0][2] * z, t.y + m[1][0] * x + m[1][1] * y + m[1][2] * z,
                t.z + m[2][0] * x + m[2][1] * y + m[2][2] * z};
  }
};

/// Appends `src` to `dst` placed by `placement`; returns whether everything it
/// appended is finite, tested as it is placed (a second pass over the placed
/// whole cost as much as placing it).
bool appendPlaced(Geometry& dst, const Geometry& src, const Placement& placement) {
  detail::NonFiniteLanes segments_bad = {};
  for (Segment s : src.segments) {
    s.start = placement.apply(s.start);
    s.end = placement.apply(s.end);
    s.width *= placement.scale;
    segments_bad |= detail::nonFiniteLanes(s);
    dst.segments.push_back(s);
  }
  uint32_t vertices_bad = 0;
  const uint64_t v0 = dst.polygon_vertices.size();
  for (const Vec3& v : src.polygon_vertices) {
    const Vec3 p = placement.apply(v);
    vertices_bad |= detail::nonFiniteBit(p);
    dst.polygon_vertices.push_back(p);
  }
  for (size_t p = 1; p < src.polygon_offsets.size(); ++p)
    dst.polygon_offsets.push_back(v0 + src.polygon_offsets[p]);
  dst.polygon_colors.insert(dst.polygon_colors.end(), src.polygon_colors.begin(), src.polygon_colors.end());
  dst.polygon_instances.insert(dst.polygon_instances.end(), src.polygon_instances.begin(),
                               src.polygon_instances.end());
  return detail::finiteLanes(segments_bad) && detail::finiteBits(vertices_bad);
}

/// The instances' geometry in instance order, each with its placement;
/// parts[k] is scene instance first + k. The parts are finite (the
/// interpreters checked them), so non-finite placed geometry is the
/// placement's doing: the first such instance is named.
Geometry placeAll(const LSystemScene& scene, size_t first, const std::vector<Geometry>& parts) {
  Geometry out;
  size_t segments = 0, vertices = 0;
  for (const Geometry& g : parts) {
    segments += g.segments.size();
    vertices += g.polygon_vertices.size();
  }
  detail::reserveLarge(out.segments, segments);
  detail::reserveLarge(out.polygon_vertices, vertices);
  for (size_t k = 0; k < parts.size(); ++k)
    if (!appendPlaced(out, parts[k], Placement(scene.instances[first + k])))
      throw Error("scene instance " + std::to_string(first + k) + " (line " +
                  std::to_string(scene.instances[first + k].line) +
                  "): its placement (position, rotation, scale) makes the geometry non-finite");
  return out;
}

/// Whether a test forces tiny cpu chunks (the batched passes are what it tests).
bool cpuChunksForced() {
#if PROCGEN_HAVE_TBB
  return detail::cpuChunkOverride() != 0;
#else
  return false;
#endif
}

/// §6's balance for the derivation on the host backends: every instance is
/// derived alone, exactly as derive() derives it, and the strings are then
/// copied into the combined string in instance order. Alone, a plant that is
/// D0L keeps its D0L table and jumps (in the batch, one parametric instance
/// makes every instance a parametric rewrite, and no batch jumps), and an
/// instance that has finished is not copied again at every later step. The
/// few large instances (a predicted share of the work past 1 / (2 · threads),
/// the rule interpretScene uses) are derived one after the other with every
/// thread; the many small ones side by side, one thread each, taken the
/// largest predicted first from a shared counter. The forest (38 plants, 12
/// parametric trees): 3.0-3.3 ms serial against 3.8-4.6 batched, 1.9-2.0
/// against 2.2-3.1 on cpu x2 (docs/scaling.md, "Like for like", 2026-12-02).
///
/// Returns nothing when only the batch can give the answer: the predicted
/// combined string is within an eighth of a limit; an instance failed (over
/// its share of the budget — the in-flight instances share what the finished
/// ones leave — or with an error two instances might both raise, of which
/// the batch names the first); the combined string would pass max_modules;
/// or the parts and their copy would not fit the budget together. The
/// batched derivation then runs from the axioms and gives the answer (e.g.
/// its error naming the step over the combined budget): a failing run at
/// most doubles its time.
std::optional<detail::Derivation> deriveApart(const LSystemScene& scene, LSystemSceneRange range,
                                              std::span<const detail::DerivedSystem> systems,
                                              const DeriveOptions& options) {
  const size_t n = systems.size();
  std::unique_ptr<detail::PassRunner> runner = detail::makePassRunner(options.execution);
  const int threads = std::max(1, runner->threads());
  const uint64_t budget = effectiveMemoryBudget(options.memory_budget_bytes);
  // Only far from the limits (by the prediction, which does not depend on
  // the thread count): near them, whether the derivation fits is the batch's
  // to say, so that it says the same on every backend and thread count.
  // (A grammar whose growth the prediction misses eightfold near a limit may
  // still pass here where the batch would stop.)
  const std::vector<SceneInstanceWork> work = predictSceneWork(scene, options, range);
  double final_modules = 0, final_params = 0;
  for (const SceneInstanceWork& w : work) {
    final_modules += w.modules;
    final_params += w.params;
  }
  const double batch_peak_bytes = 2.0 * (21.0 * final_modules + 4.0 * final_params);  // held + next, every array
  if (8.0 * batch_peak_bytes > double(budget)) return std::nullopt;
  if (options.max_modules && 8.0 * final_modules > double(options.max_modules)) return std::nullopt;
  // The order of the small instances (the largest predicted first) and which are large.
  std::vector<size_t> large, small(n);
  std::iota(small.begin(), small.end(), size_t{0});
  if (threads > 1) {
    std::vector<double> cost(n);
    double total = 0;
    for (size_t k = 0; k < n; ++k) total += cost[k] = work[k].modules_written + work[k].modules;
    std::stable_sort(small.begin(), small.end(), [&](size_t x, size_t y) { return cost[x] > cost[y]; });
    while (!small.empty() && cost[small.front()] >= total / (2.0 * threads)) {
      large.push_back(small.front());
      small.erase(small.begin());
    }
  }

  std::vector<detail::Derivation> parts(n);
  std::atomic<uint64_t> held_bytes{0}, held_modules{0};
  std::atomic<bool> failed{false};
  std::mutex progress_lock;
  size_t done = 0;
  std::exception_ptr progress_error;
  // Instance k with `exec`, within the budget the finished ones leave, shared by `sharers`.
  auto deriveOne = [&](size_t k, const Execution& exec, int sharers) {
    if (failed.load(std::memory_order_relaxed)) return;
    const uint64_t bytes = held_bytes.load(), modules = held_modules.load();
    DeriveOptions o;
    o.execution = exec;
    o.memory_budget_bytes = (budget - std::min(budget, bytes)) / uint64_t(sharers);
    if (options.max_modules) o.max_modules = options.max_modules - std::min(options.max_modules, modules);
    if (o.memory_budget_bytes == 0 || (options.max_modules && o.max_modules == 0)) {
      failed = true;
      return;
    }
    try {
      parts[k] = detail::deriveSystems(systems.subspan(k, 1), o);
    } catch (...) {  // the batch gives the answer
      failed = true;
      return;
    }
    const ModuleString& s = parts[k].string;
    held_bytes += detail::MemoryBudget::bytesOf(s);
    const uint64_t now_modules = held_modules += s.size();
    if (!options.progress) return;
    std::lock_guard<std::mutex> lock(progress_lock);
    if (progress_error) return;
    try {  // the caller's exception (a cancellation) is the caller's answer, not the batch's
      options.progress(static_cast<int>(++done), static_cast<int>(n), now_modules);
    } catch (...) {
      progress_error = std::current_exception();
      failed = true;
    }
  };
  for (size_t k : large) deriveOne(k, options.execution, 1);
  std::atomic<size_t> next{0};
  runner->forEach(static_cast<uint64_t>(std::min<size_t>(small.size(), size_t(threads))), [&](uint64_t) {
    for (size_t i; (i = next.fetch_add(1)) < small.size();)
      deriveOne(small[i], Execution{Backend::kSerial, 1}, threads);
  });
  if (progress_error) std::rethrow_exception(progress_error);
  if (failed) return std::nullopt;

  // The combined string (parametric when any instance is, as the batch's).
  bool parametric = false;
  uint64_t modules = 0, params = 0;
  for (size_t k = 0; k < n; ++k) {
    parametric = parametric || systems[k].data->parametric;
    modules += parts[k].string.size();
    params += parts[k].string.params.size();
  }
  if (options.max_modules && modules > options.max_modules) return std::nullopt;
  const uint64_t parts_bytes = held_bytes.load();
  const uint64_t combined_bytes = modules + (parametric ? 8 * (modules + 1) : 0) + 4 * params;
  if (combined_bytes + heldForBudget(combined_bytes, parts_bytes, options.memory_budget_bytes) > budget)
    return std::nullopt;
  detail::Derivation out;
  out.threads = threads;
  out.begin.assign(1, 0);
  detail::reserveLarge(out.string.symbols, modules);
  detail::reserveLarge(out.string.params, params);
  if (parametric) detail::reserveLarge(out.string.param_offsets, modules + 1);
  out.string.clear(parametric);
  for (size_t k = 0; k < n; ++k) {
    detail::appendModules(out.string, parts[k].string, parametric);
    out.begin.push_back(out.string.size());
    parts[k].string = ModuleString{};  // copied: its memory goes back now
  }
  out.stats.resize(n);
  for (size_t k = 0; k < n; ++k) out.stats[k] = std::move(parts[k].stats[0]);
  return out;
}

}  // namespace

ModuleString LSystemSceneDerivation::instanceString(size_t k, const LSystemScene& scene) const {
  return detail::sliceModules(string, begin[k], begin[k + 1],
                              scene.instances[first + k].lsystem.parametric());
}

LSystemSceneDerivation deriveScene(const LSystemScene& scene, const DeriveOptions& options) {
  if (scene.instances.empty()) throw Error("the scene lists no L-system");
  return deriveSceneRange(scene, {0, scene.instances.size()}, options);
}

LSystemSceneDerivation deriveSceneRange(const LSystemScene& scene, LSystemSceneRange range,
                                        const DeriveOptions& options) {
  LSystemSceneDerivation out;
  out.first = range.first;
  out.begin.assign(1, 0);
  if (range.size() == 0) return out;
  std::vector<detail::DerivedSystem> systems(range.size());
  for (size_t k = range.first; k < range.last; ++k) {
    const LSystemInstance& inst = scene.instances[k];
    detail::DerivedSystem& s = systems[k - range.first];
    s.data = &inst.lsystem.data();
    s.iterations =
        options.iterations ? *options.iterations : inst.iterations.value_or(s.data->derivation_length);
    if (s.iterations < 0) throw Error("the number of derivation steps must be non-negative");
    s.seed = inst.seed.value_or(options.seed + k);
    s.scene_index = static_cast<int64_t>(k);
  }
  // On the host the instances are derived alone, side by side (deriveApart);
  // else, or when only the batch can answer, by the one derivation driver
  // (derive.cpp), every pass batched over all instances — on opencl the
  // combined string stays on the device.
  std::optional<detail::Derivation> apart;
  if (range.size() > 1 && options.execution.backend != Backend::kOpenCL && !cpuChunksForced())
    apart = deriveApart(scene, range, systems, options);
  detail::Derivation d = apart ? std::move(*apart) : detail::deriveSystems(systems, options);
  out.string = std::move(d.string);
  out.begin = std::move(d.begin);
  out.stats = std::move(d.stats);
  out.threads = d.threads;
  return out;
}

Geometry interpretScene(const LSystemScene& scene, const LSystemSceneDerivation& derivation,
                        const Execution& execution, uint64_t seed, uint64_t max_modules,
                        uint64_t memory_budget_bytes) {
  return interpretSceneRange(scene, derivation, derivation.string.size(), execution, seed, max_modules,
                             memory_budget_bytes);
}

Geometry interpretSceneRange(const LSystemScene& scene, const LSystemSceneDerivation& derivation,
                             uint64_t scene_modules, const Execution& execution, uint64_t seed,
                             uint64_t max_modules, uint64_t memory_budget_bytes) {
  // Local index k is scene instance first + k: its tag, seed and placement.
  const size_t n = derivation.instances(), first = derivation.first;
  auto instance = [&](size_t k) -> const LSystemInstance& { return scene.instances[first + k]; };
  if (n == 0) return Geometry{};  // a rank without instances
  auto options = [&](size_t k, const Execution& exec) {
    InterpretOptions o;
    o.view = instance(k).view;
    o.execution = exec;
    o.instance = static_cast<int32_t>(first + k);
    o.seed = instance(k).seed.value_or(seed + first + k);
    o.max_modules = max_modules;
    o.memory_budget_bytes = memory_budget_bytes;
    return o;
  };
  // One budget over all instances (issue 16): every instance's drawing is
  // sized before any is drawn. The parts are then copied into the placed
  // whole, so the geometry counts twice; the combined string is held.
  const uint64_t held = detail::MemoryBudget::bytesOf(derivation.string);
  uint64_t parts_bytes = 0;
  for (size_t k = 0; k < n; ++k) {
    const LSystemInstance& inst = instance(k);
    const detail::InterpretSize size = detail::checkInterpretation(
        inst.lsystem.data(), derivation.string, derivation.begin[k], derivation.begin[k + 1],
        inst.seed.value_or(seed + first + k), max_modules, memory_budget_bytes,
        checkedAdd(held, checkedMul(parts_bytes, 2).value_or(UINT64_MAX)).value_or(UINT64_MAX),
        "scene interpretation, instance " + std::to_string(first + k) + " (line " +
            std::to_string(inst.line) + ")");
    parts_bytes = checkedAdd(parts_bytes, size.bytes).value_or(UINT64_MAX);
  }
  requireMemory("scene interpretation (" + std::to_string(n) + " instances, drawn and placed)",
                checkedMul(parts_bytes, 2).value_or(UINT64_MAX), memory_budget_bytes, held);
  // Balance (paper §6: not one thread per L-system): an instance holding a
  // large share of the string is drawn with the backend's own parallel
  // interpreter; the many small ones are drawn serially, side by side on the
  // backend's threads. Either way the output is in instance order.
  auto onDevice = [&] {
    // §6 on the device: the instances are drawn together, one root work item
    // each, in one pass over the combined string. Instances with a
    // homomorphism (their drawing string differs) and long non-branching ones
    // (better served by the matrix scan of a run of their own) are drawn alone.
    std::vector<InterpretOptions> opts(n);
    std::vector<bool> together(n);
    for (size_t k = 0; k < n; ++k) {
      opts[k] = options(k, execution);
      const auto first = derivation.string.symbols.begin() + static_cast<std::ptrdiff_t>(derivation.begin[k]);
      const auto last =
          derivation.string.symbols.begin() + static_cast<std::ptrdiff_t>(derivation.begin[k + 1]);
      const bool branching = std::any_of(first, last, [](uint8_t c) { return c == '[' || c == ']'; });
      together[k] = instance(k).lsystem.data().homomorphism.empty() &&
                    (branching || last - first < (std::ptrdiff_t{1} << 16));
    }
    std::vector<Geometry> parts =
        detail::interpretBatchOpenCL(derivation.string, derivation.begin, opts, together, execution.device);
    // The device does not test its output: the host scan interpret() makes
    // on opencl, here for the instances drawn together.
    for (size_t k = 0; k < n; ++k)
      if (together[k] && !detail::finiteGeometry(parts[k]))
        detail::throwNonFiniteGeometry(instance(k).lsystem.data(), derivation.instanceString(k, scene),
                                       opts[k]);
    for (size_t k = 0; k < n; ++k)
      if (!together[k])
        parts[k] = interpret(instance(k).lsystem, derivation.instanceString(k, scene), opts[k]);
    return placeAll(scene, first, parts);
  };
  auto onHost = [&] {
    std::vector<Geometry> parts(n);
    std::unique_ptr<detail::PassRunner> runner = detail::makePassRunner(execution);
    const uint64_t total = scene_modules;  // the whole scene's, so every range chooses as one process does
    const uint64_t large = total / (2 * static_cast<uint64_t>(std::max(1, runner->threads()))) + 1;
    std::vector<size_t> small;
    for (size_t k = 0; k < n; ++k) {
      const uint64_t modules = derivation.begin[k + 1] - derivation.begin[k];
      if (runner->threads() > 1 && modules >= large)
        parts[k] = interpret(instance(k).lsystem, derivation.instanceString(k, scene), options(k, execution));
      else
        small.push_back(k);
    }
    runner->forEach(small.size(), [&](uint64_t i) {
      const size_t k = small[i];
      parts[k] = interpret(instance(k).lsystem, derivation.instanceString(k, scene),
                           options(k, Execution{Backend::kSerial, 1}));
    });
    return placeAll(scene, first, parts);
  };
  return detail::dispatch(execution, "L-system scene interpretation", onHost, onHost, onDevice);
}

}  // namespace procgen

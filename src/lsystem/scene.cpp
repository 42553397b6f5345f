// Multiple L-systems at once (Lipp et al. §6). All instances live in one
// combined module string; every pass (productions, decomposition) is one
// count → scan → rewrite over the whole string, with the work cut into chunks
// that never straddle two instances and are spread over threads regardless of
// which instance they belong to — so one huge tree and fifty small plants keep
// every core busy. Each chunk reads its own instance's rule tables (the paper's
// per-system tables); an instance that has finished its iterations is copied.
//
// Every instance sees its segment as a string of its own (positions, context
// search and bracket partners are relative to the segment, the stochastic
// stream is the instance's seed), so instance k derives exactly the string
// derive() gives it alone — the parity the tests check.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "common/dispatch.hpp"
#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/lsystem_data.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/interpret.hpp"
#include "lsystem/opencl/scene.hpp"
#include "lsystem/pass_runner.hpp"
#include "procgen/error.hpp"
#include "procgen/scene.hpp"

namespace procgen {
namespace {

using detail::ChunkCount;
using detail::LSystemData;
using detail::RuleTable;

ModuleString emptyString(bool parametric) {
  ModuleString s;
  s.clear(parametric);
  return s;
}

/// Per-instance state of the batched derivation.
struct Slot {
  const LSystemData* data = nullptr;
  int iterations = 0;
  uint64_t seed = 1;
  bool cut_possible = false;
  detail::D0LTable d0l;
  bool decomposing = false;  ///< this step's decomposition still rewrites something
};

/// A chunk of the combined string: modules [begin, end) of `slot`'s segment,
/// in segment-relative positions.
struct Chunk {
  uint32_t slot;
  uint64_t begin, end;
};

class SceneDeriver {
 public:
  SceneDeriver(const LSystemScene& scene, const DeriveOptions& options)
      : options_(options),
        runner_(detail::makePassRunner(options.execution)),
        budget_(options.max_modules, options.memory_budget_bytes) {
    const size_t n = scene.instances.size();
    slots_.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const LSystemInstance& inst = scene.instances[k];
      Slot& s = slots_[k];
      s.data = &inst.lsystem.data();
      s.iterations =
          options.iterations ? *options.iterations : inst.iterations.value_or(s.data->derivation_length);
      if (s.iterations < 0) throw Error("the number of derivation steps must be non-negative");
      s.seed = inst.seed.value_or(options.seed + k);
      s.cut_possible = detail::symbolCanAppear(*s.data, '%');
      s.d0l = detail::makeD0LTable(*s.data, s.data->productions);
      parametric_ = parametric_ || s.data->parametric;
    }
  }

  LSystemSceneDerivation run() {
    LSystemSceneDerivation out;
    const size_t n = slots_.size();
    out.stats.resize(n);
    out.threads = runner_->threads();
    // The combined axiom.
    ModuleString& cur = out.string;
    cur = emptyString(parametric_);
    begin_.assign(n + 1, 0);
    for (size_t k = 0; k < n; ++k) {
      begin_[k] = cur.size();
      detail::appendModules(cur, slots_[k].data->axiom, parametric_);
    }
    begin_[n] = cur.size();

    int max_iterations = 0;
    for (size_t k = 0; k < n; ++k) {
      max_iterations = std::max(max_iterations, slots_[k].iterations);
      out.stats[k].threads = runner_->threads();
    }
    decompose(cur, 0, [](const Slot&) { return true; });
    cut(cur, [](const Slot& s) { return s.cut_possible; });
    for (int step = 1; step <= max_iterations; ++step) {
      auto active = [step](const Slot& s) { return step <= s.iterations; };
      pass(cur, step, detail::passPhase(step, 0), /*decomposition=*/false, active);
      decompose(cur, step, active);
      cut(cur, [&](const Slot& s) { return active(s) && s.cut_possible; });
      for (size_t k = 0; k < n; ++k) {
        if (!active(slots_[k])) continue;
        DeriveStats& st = out.stats[k];
        st.iterations = step;
        const uint64_t len = begin_[k + 1] - begin_[k];
        st.modules_total += len;
        st.step_modules.push_back(len);
      }
      if (options_.progress) options_.progress(step, max_iterations, cur.size());
    }
    for (size_t k = 0; k < n; ++k) out.stats[k].modules = begin_[k + 1] - begin_[k];
    out.begin = begin_;
    return out;
  }

 private:
  /// Segment k of `s` as a string of its own (parameter offsets stay absolute).
  PgStringView segment(const ModuleString& s, size_t k) const {
    PgStringView v = detail::stringView(s);
    v.symbols += begin_[k];
    if (v.param_offsets) v.param_offsets += begin_[k];
    v.length = begin_[k + 1] - begin_[k];
    return v;
  }

  template <typename Active>
  void decompose(ModuleString& s, int step, Active&& active) {
    int depth = 0;
    for (Slot& slot : slots_) {
      slot.decomposing = !slot.data->decomposition.empty() && active(slot);
      if (slot.decomposing) depth = std::max(depth, std::clamp(slot.data->decomposition.max_depth, 1, 255));
    }
    for (int p = 1; p <= depth; ++p) {
      auto decomposing = [p](const Slot& slot) {
        return slot.decomposing && p <= std::clamp(slot.data->decomposition.max_depth, 1, 255);
      };
      if (!pass(s, step, detail::passPhase(step, p), /*decomposition=*/true, decomposing)) break;
      // As derive() does, an instance stops decomposing after a pass that rewrote nothing.
      for (size_t k = 0; k < slots_.size(); ++k)
        if (rewritten_[k] == 0) slots_[k].decomposing = false;
    }
  }

  /// One batched rewriting pass over every slot for which active(slot) holds;
  /// the others are copied. Returns false when nothing was rewritten.
  template <typename Active>
  bool pass(ModuleString& s, int step, uint32_t phase_id, bool decomposition, Active&& active) {
    const size_t n = slots_.size();
    // Per-slot pass descriptions over the slot's segment.
    passes_.assign(n, detail::RewritePass{});
    use_d0l_.assign(n, false);
    bool any = false;
    detail::resizeForOverwrite(partner_, s.size());
    for (size_t k = 0; k < n; ++k) {
      Slot& slot = slots_[k];
      if (!active(slot)) continue;
      const RuleTable& table = decomposition ? slot.data->decomposition : slot.data->productions;
      if (table.empty()) continue;
      any = true;
      detail::RewritePass& p = passes_[k];
      p.data = slot.data;
      p.table = &table;
      p.rules = slot.data->rules(table);
      p.in = segment(s, k);
      p.seed = slot.seed;
      p.phase = phase_id;
      p.parametric = parametric_;
      use_d0l_[k] = !decomposition && !parametric_ && slot.d0l.usable;
      if (table.hasContext() && !use_d0l_[k]) {
        const auto* first = s.symbols.data() + begin_[k];
        if (std::any_of(first, first + p.in.length, [](uint8_t c) { return c == '[' || c == ']'; })) {
          runner_->bracketPartners(first, p.in.length, partner_.data() + begin_[k]);
          p.partner = partner_.data() + begin_[k];
        }
      }
    }
    if (!any) return false;

    // Chunks of every segment, one work list for all threads.
    const uint64_t size = runner_->chunkModules();
    chunks_.clear();
    for (size_t k = 0; k < n; ++k) {
      const uint64_t len = begin_[k + 1] - begin_[k];
      for (uint64_t b = 0; b < len; b += size)
        chunks_.push_back(Chunk{static_cast<uint32_t>(k), b, std::min(len, b + size)});
    }
    detail::resizeForOverwrite(choice_, s.size());
    counts_.assign(chunks_.size() + 1, ChunkCount{});
    runner_->forEach(chunks_.size(), [&](uint64_t c) { counts_[c] = countChunk(s, chunks_[c]); });
    rewritten_.assign(n, 0);
    for (size_t c = 0; c < chunks_.size(); ++c) rewritten_[chunks_[c].slot] += counts_[c].rewritten;

    // Exclusive scan: counts_[c] becomes chunk c's output offset.
    ChunkCount total;
    for (size_t c = 0; c < chunks_.size(); ++c) {
      const ChunkCount here = counts_[c];
      counts_[c] = total;
      total += here;
    }
    counts_[chunks_.size()] = total;
    if (total.rewritten == 0) return false;
    bool any_context = false;
    for (const detail::RewritePass& p : passes_) any_context = any_context || p.partner != nullptr;
    budget_.check(total, parametric_, any_context, step, detail::MemoryBudget::bytesOf(s));

    detail::resizeForOverwrite(next_.symbols, total.modules);
    if (parametric_) {
      detail::resizeForOverwrite(next_.param_offsets, total.modules + 1);
      detail::resizeForOverwrite(next_.params, total.params);
    }
    runner_->forEach(chunks_.size(), [&](uint64_t c) { rewriteChunk(s, chunks_[c], counts_[c]); });
    if (parametric_) next_.param_offsets[total.modules] = total.params;

    // New segment starts: the output offset of each segment's first chunk
    // (an empty segment starts where the next one does).
    size_t c = 0;
    for (size_t k = 0; k < n; ++k) {
      begin_[k] = c < chunks_.size() ? counts_[c].modules : total.modules;
      while (c < chunks_.size() && chunks_[c].slot == k) ++c;
    }
    begin_[n] = total.modules;
    std::swap(s, next_);
    return true;
  }

  ChunkCount countChunk(const ModuleString& s, const Chunk& ch) {
    const detail::RewritePass& p = passes_[ch.slot];
    const uint64_t base = begin_[ch.slot];
    if (p.table == nullptr) {  // inactive: copied unchanged
      ChunkCount c;
      c.modules = ch.end - ch.begin;
      if (parametric_) c.params = s.param_offsets[base + ch.end] - s.param_offsets[base + ch.begin];
      return c;
    }
    if (use_d0l_[ch.slot]) {
      const uint64_t m =
          detail::countChunkD0L(slots_[ch.slot].d0l, s.symbols.data() + base, ch.begin, ch.end);
      return ChunkCount{m, 0, ch.end - ch.begin};
    }
    return detail::countChunk(p, ch.begin, ch.end, choice_.data() + base);
  }

  void rewriteChunk(const ModuleString& s, const Chunk& ch, const ChunkCount& at) {
    const detail::RewritePass& p = passes_[ch.slot];
    const uint64_t base = begin_[ch.slot];
    if (p.table == nullptr) {
      const uint64_t m = ch.end - ch.begin;
      std::memcpy(next_.symbols.data() + at.modules, s.symbols.data() + base + ch.begin, m);
      if (parametric_) {
        const uint64_t p0 = s.param_offsets[base + ch.begin];
        const uint64_t p1 = s.param_offsets[base + ch.end];
        for (uint64_t i = 0; i < m; ++i)
          next_.param_offsets[at.modules + i] = s.param_offsets[base + ch.begin + i] - p0 + at.params;
        if (p1 > p0)
          std::memcpy(next_.params.data() + at.params, s.params.data() + p0, (p1 - p0) * sizeof(float));
      }
      return;
    }
    if (use_d0l_[ch.slot]) {
      detail::rewriteChunkD0L(slots_[ch.slot].d0l, s.symbols.data() + base, ch.begin, ch.end,
                              next_.symbols.data() + at.modules);
      return;
    }
    detail::rewriteChunk(p, ch.begin, ch.end, choice_.data() + base, at.modules, at.params, next_);
  }

  /// '%' pruning per segment (a cut at an instance's top level ends at its
  /// segment's end, never in the next instance).
  template <typename Active>
  void cut(ModuleString& s, Active&& active) {
    const size_t n = slots_.size();
    bool any = false;
    for (size_t k = 0; k < n; ++k) any = any || active(slots_[k]);
    if (!any) return;
    ModuleString rebuilt = emptyString(parametric_);
    std::vector<uint64_t> begin(n + 1, 0);
    for (size_t k = 0; k < n; ++k) {
      ModuleString seg = slice(s, k);
      if (active(slots_[k])) runner_->cut(seg);
      begin[k] = rebuilt.size();
      detail::appendModules(rebuilt, seg, parametric_);
    }
    begin[n] = rebuilt.size();
    begin_ = std::move(begin);
    s = std::move(rebuilt);
  }

  ModuleString slice(const ModuleString& s, size_t k) const {
    ModuleString out = emptyString(parametric_);
    const uint64_t b = begin_[k], e = begin_[k + 1];
    out.symbols.assign(s.symbols.begin() + static_cast<std::ptrdiff_t>(b),
                       s.symbols.begin() + static_cast<std::ptrdiff_t>(e));
    if (parametric_) {
      const uint64_t p0 = s.param_offsets[b];
      out.param_offsets.clear();
      for (uint64_t i = b; i <= e; ++i) out.param_offsets.push_back(s.param_offsets[i] - p0);
      out.params.assign(s.params.begin() + static_cast<std::ptrdiff_t>(p0),
                        s.params.begin() + static_cast<std::ptrdiff_t>(s.param_offsets[e]));
    }
    return out;
  }

  const DeriveOptions& options_;
  std::unique_ptr<detail::PassRunner> runner_;
  detail::MemoryBudget budget_;
  std::vector<Slot> slots_;
  bool parametric_ = false;
  std::vector<uint64_t> begin_;
  std::vector<detail::RewritePass> passes_;
  std::vector<bool> use_d0l_;
  std::vector<Chunk> chunks_;
  std::vector<ChunkCount> counts_;
  std::vector<uint64_t> rewritten_;  ///< per slot, in the last pass
  std::vector<int32_t> choice_;
  std::vector<int64_t> partner_;
  ModuleString next_;
};

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

void appendPlaced(Geometry& dst, const Geometry& src, const Placement& placement) {
  for (Segment s : src.segments) {
    s.start = placement.apply(s.start);
    s.end = placement.apply(s.end);
    s.width *= placement.scale;
    dst.segments.push_back(s);
  }
  const uint64_t v0 = dst.polygon_vertices.size();
  for (const Vec3& v : src.polygon_vertices) dst.polygon_vertices.push_back(placement.apply(v));
  for (size_t p = 1; p < src.polygon_offsets.size(); ++p)
    dst.polygon_offsets.push_back(v0 + src.polygon_offsets[p]);
  dst.polygon_colors.insert(dst.polygon_colors.end(), src.polygon_colors.begin(), src.polygon_colors.end());
  dst.polygon_instances.insert(dst.polygon_instances.end(), src.polygon_instances.begin(),
                               src.polygon_instances.end());
}

/// The instances' geometry in instance order, each with its placement.
Geometry placeAll(const LSystemScene& scene, const std::vector<Geometry>& parts) {
  Geometry out;
  size_t segments = 0, vertices = 0;
  for (const Geometry& g : parts) {
    segments += g.segments.size();
    vertices += g.polygon_vertices.size();
  }
  detail::reserveLarge(out.segments, segments);
  detail::reserveLarge(out.polygon_vertices, vertices);
  for (size_t k = 0; k < parts.size(); ++k) appendPlaced(out, parts[k], Placement(scene.instances[k]));
  return out;
}

}  // namespace

ModuleString LSystemSceneDerivation::instanceString(size_t k, const LSystemScene& scene) const {
  const bool parametric = scene.instances[k].lsystem.parametric();
  ModuleString out = emptyString(parametric);
  const uint64_t b = begin[k], e = begin[k + 1];
  out.symbols.assign(string.symbols.begin() + static_cast<std::ptrdiff_t>(b),
                     string.symbols.begin() + static_cast<std::ptrdiff_t>(e));
  if (parametric) {
    const uint64_t p0 = string.param_offsets[b];
    out.param_offsets.clear();
    for (uint64_t i = b; i <= e; ++i) out.param_offsets.push_back(string.param_offsets[i] - p0);
    out.params.assign(string.params.begin() + static_cast<std::ptrdiff_t>(p0),
                      string.params.begin() + static_cast<std::ptrdiff_t>(string.param_offsets[e]));
  }
  return out;
}

LSystemSceneDerivation deriveScene(const LSystemScene& scene, const DeriveOptions& options) {
  if (scene.instances.empty()) throw Error("the scene lists no L-system");
  auto onHost = [&] { return SceneDeriver(scene, options).run(); };
  // On opencl the combined string stays on the device between passes (issue 5 point 4).
  return detail::dispatch(options.execution, "L-system scene derivation", onHost, onHost,
                          [&] { return detail::deriveSceneOpenCL(scene, options); });
}

Geometry interpretScene(const LSystemScene& scene, const LSystemSceneDerivation& derivation,
                        const Execution& execution, uint64_t seed) {
  const size_t n = scene.instances.size();
  auto options = [&](size_t k, const Execution& exec) {
    InterpretOptions o;
    o.view = scene.instances[k].view;
    o.execution = exec;
    o.instance = static_cast<int32_t>(k);
    o.seed = scene.instances[k].seed.value_or(seed + k);
    return o;
  };
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
      const auto last = derivation.string.symbols.begin() + static_cast<std::ptrdiff_t>(derivation.begin[k + 1]);
      const bool branching = std::any_of(first, last, [](uint8_t c) { return c == '[' || c == ']'; });
      together[k] = scene.instances[k].lsystem.data().homomorphism.empty() &&
                    (branching || last - first < (std::ptrdiff_t{1} << 16));
    }
    std::vector<Geometry> parts =
        detail::interpretBatchOpenCL(derivation.string, derivation.begin, opts, together, execution.device);
    for (size_t k = 0; k < n; ++k)
      if (!together[k]) parts[k] = interpret(scene.instances[k].lsystem, derivation.instanceString(k, scene), opts[k]);
    return placeAll(scene, parts);
  };
  auto onHost = [&] {
    std::vector<Geometry> parts(n);
    std::unique_ptr<detail::PassRunner> runner = detail::makePassRunner(execution);
    const uint64_t total = derivation.string.size();
    const uint64_t large = total / (2 * static_cast<uint64_t>(std::max(1, runner->threads()))) + 1;
    std::vector<size_t> small;
    for (size_t k = 0; k < n; ++k) {
      const uint64_t modules = derivation.begin[k + 1] - derivation.begin[k];
      if (runner->threads() > 1 && modules >= large)
        parts[k] =
            interpret(scene.instances[k].lsystem, derivation.instanceString(k, scene), options(k, execution));
      else
        small.push_back(k);
    }
    runner->forEach(small.size(), [&](uint64_t i) {
      const size_t k = small[i];
      parts[k] = interpret(scene.instances[k].lsystem, derivation.instanceString(k, scene),
                           options(k, Execution{Backend::kSerial, 1}));
    });
    return placeAll(scene, parts);
  };
  return detail::dispatch(execution, "L-system scene interpretation", onHost, onHost, onDevice);
}

}  // namespace procgen

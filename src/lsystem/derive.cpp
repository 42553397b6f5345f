// Derivation driver (paper §4.2): n steps of parallel rewriting, each followed
// by decomposition (cpfg) and cutting ('%'), for one L-system (derive()) or
// many in one combined string, each with its own step count (§6,
// deriveScene()). Written once over PassRunner, whose runners hold the string
// (on the device for opencl) from the axiom to the result: every backend shares
// the step logic, the random-number phases, the memory-budget checks, the D0L
// jumps, statistics and progress, and differs only in how a pass's stages are
// executed.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

#include "common/dispatch.hpp"
#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/pass_runner.hpp"
#include "lsystem/pass_runner.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace detail {

std::unique_ptr<PassRunner> makePassRunner(const Execution& execution) {
  return dispatch(
      execution, "L-system derivation", []() -> std::unique_ptr<PassRunner> { return makeSerialPassRunner(); },
      [&]() -> std::unique_ptr<PassRunner> { return makeCpuPassRunner(execution.threads); },
      [&]() -> std::unique_ptr<PassRunner> { return makeOpenCLPassRunner(execution.device); });
}

bool symbolCanAppear(const LSystemData& d, uint8_t symbol) {
  if (std::find(d.axiom.symbols.begin(), d.axiom.symbols.end(), symbol) != d.axiom.symbols.end())
    return true;
  for (const RuleTable* t : {&d.productions, &d.decomposition})
    for (const PgSuccessorModule& m : t->successors)
      if (m.symbol == symbol) return true;
  return false;
}

namespace {

class Deriver {
 public:
  Deriver(std::span<const DerivedSystem> systems, const DeriveOptions& options)
      : options_(options),
        runner_(makePassRunner(options.execution)),
        budget_(options.max_modules, options.memory_budget_bytes) {
    slots_.resize(systems.size());
    for (size_t k = 0; k < systems.size(); ++k) {
      Slot& s = slots_[k];
      s.data = systems[k].data;
      s.iterations = systems[k].iterations;
      if (s.iterations < 0) throw Error("the number of derivation steps must be non-negative");
      s.seed = systems[k].seed;
      s.scene_index = systems[k].scene_index;
      s.d0l = makeD0LTable(*s.data, s.data->productions);
      s.cut_possible = symbolCanAppear(*s.data, '%');
      s.decomposition_depth = s.data->decomposition.empty() ? 0 : s.data->decomposition.max_depth;  // <= 255 (parser)
      parametric_ = parametric_ || s.data->parametric;
      max_iterations_ = std::max(max_iterations_, s.iterations);
    }
  }

  Derivation run() {
    const size_t n = slots_.size();
    Derivation out;
    out.threads = runner_->threads();
    out.stats.assign(n, DeriveStats{});
    for (DeriveStats& st : out.stats) st.threads = runner_->threads();
    // The (combined) axiom, loaded once: from here on the string lives in the runner.
    begin_.assign(n + 1, 0);
    if (single()) {
      const Slot& s = slots_[0];
      budget_.checkAxiom(s.data->axiom);
      runner_->load(std::span(&s.data, 1), s.data->axiom, parametric_);
      if (s.d0l.usable && s.data->decomposition.empty() && !s.cut_possible) buildJumps(s.iterations);
    } else {
      ModuleString axiom;
      axiom.clear(parametric_);
      for (size_t k = 0; k < n; ++k) {
        begin_[k] = axiom.size();
        appendModules(axiom, slots_[k].data->axiom, parametric_);
      }
      begin_[n] = axiom.size();
      budget_.checkAxiom(axiom);
      std::vector<const LSystemData*> datas(n);
      for (size_t k = 0; k < n; ++k) datas[k] = slots_[k].data;
      runner_->load(datas, axiom, parametric_);
    }

    auto all = [](const Slot&) { return true; };
    decompose(0, all);
    cut(all);
    for (int step = 1; step <= max_iterations_;) {
      const int jump = jumpLength(max_iterations_ - step + 1);
      if (jump > 1) {
        jumpD0L(jump, step, out.stats);
        step += jump;
        continue;
      }
      auto active = [step](const Slot& s) { return step <= s.iterations; };
      pass(step, 0, active);
      decompose(step, active);
      cut(active);
      for (size_t k = 0; k < n; ++k)
        if (active(slots_[k])) reportStep(k, step, length(k), out.stats);
      if (options_.progress) options_.progress(step, max_iterations_, runner_->modules());
      ++step;
    }
    for (size_t k = 0; k < n; ++k) out.stats[k].modules = length(k);
    if (single()) begin_[1] = runner_->modules();
    out.begin = begin_;  // a copy: checkFiniteParameters names the instance from begin_
    out.string = runner_->download();
    checkFiniteParameters(out.string);
    return out;
  }

 private:
  /// Per-system state.
  struct Slot {
    const LSystemData* data = nullptr;
    int iterations = 0;
    uint64_t seed = 1;
    int64_t scene_index = -1;
    D0LTable d0l;
    bool cut_possible = false;
    int decomposition_depth = 0;  ///< 0: no decomposition
    bool decomposing = false;     ///< this step's decomposition still rewrites something
  };

  /// Parameters reach the turtle, the geometry and the outputs (a NaN width
  /// once made the SVG writer loop; `.txt` wrote `F(-nan)`), so a final string
  /// with a non-finite parameter is an error naming the module (issue 16).
  void checkFiniteParameters(const ModuleString& s) const {
    uint32_t bad = 0;  // or-ing over the array vectorizes
    for (const float p : s.params) bad |= nonFiniteBit(p);
    if (finiteBits(bad)) return;
    for (uint64_t i = 0; i < s.size(); ++i) {
      for (uint64_t k = s.param_offsets[i]; k < s.param_offsets[i + 1]; ++k) {
        if (std::isfinite(s.params[k])) continue;
        size_t system = 0;
        while (!single() && system + 1 < slots_.size() && begin_[system + 1] <= i) ++system;
        const uint64_t position = i - (single() ? 0 : begin_[system]);
        char value[32];
        std::snprintf(value, sizeof value, "%g", std::isnan(s.params[k]) ? NAN : static_cast<double>(s.params[k]));
        const int64_t index = slots_[system].scene_index;
        std::string where = index < 0 ? std::string() : "instance " + std::to_string(index) + ": ";
        throw Error(where + "module " + std::to_string(position) + " '" + static_cast<char>(s.symbols[i]) +
                    "' of the string after step " + std::to_string(slots_[system].iterations) + " has parameter " +
                    std::to_string(k - s.param_offsets[i] + 1) + " = " + value +
                    "; parameters must stay finite (look for a division by zero, sqrt or log of a "
                    "negative number, or a value that overflows)");
      }
    }
  }

  bool single() const { return slots_.size() == 1; }
  uint64_t length(size_t k) const { return single() ? runner_->modules() : begin_[k + 1] - begin_[k]; }

  void reportStep(size_t k, int step, uint64_t modules, std::vector<DeriveStats>& stats) const {
    DeriveStats& st = stats[k];
    st.iterations = step;
    st.modules_total += modules;
    st.step_modules.push_back(modules);
  }

  /// Decomposition (pass 1, 2, ... of `step`) of the systems for which
  /// active(slot) holds; a system stops after a pass that rewrote none of its modules.
  template <typename Active>
  void decompose(int step, Active&& active) {
    int depth = 0;
    for (Slot& slot : slots_) {
      slot.decomposing = slot.decomposition_depth > 0 && active(slot);
      if (slot.decomposing) depth = std::max(depth, slot.decomposition_depth);
    }
    for (int p = 1; p <= depth; ++p) {
      if (!pass(step, p, [p](const Slot& slot) { return slot.decomposing && p <= slot.decomposition_depth; })) break;
      for (size_t k = 0; k < slots_.size(); ++k)
        if (rewritten_[k] == 0) slots_[k].decomposing = false;
    }
  }

  /// Stage cut of the systems for which active(slot) holds and '%' can appear.
  template <typename Active>
  void cut(Active&& active) {
    if (single()) {
      if (active(slots_[0]) && slots_[0].cut_possible) runner_->cutPass();
      return;
    }
    cuts_.assign(slots_.size(), 0);
    for (size_t k = 0; k < slots_.size(); ++k) cuts_[k] = active(slots_[k]) && slots_[k].cut_possible;
    runner_->cutSegments(cuts_, begin_);
  }

  /// Pass `pass_index` of `step` (0: productions; 1, 2, ...: decomposition)
  /// for the systems where active(slot) holds; the others are copied.
  /// Returns false when nothing was rewritten.
  template <typename Active>
  bool pass(int step, int pass_index, Active&& active) {
    const size_t n = slots_.size();
    const bool decomposition = pass_index > 0;
    passes_.assign(n, SegmentPass{});
    bool any = false, any_context = false;
    for (size_t k = 0; k < n; ++k) {
      const Slot& slot = slots_[k];
      if (!active(slot)) continue;
      const RuleTable& table = decomposition ? slot.data->decomposition : slot.data->productions;
      if (table.empty()) continue;
      any = true;
      SegmentPass& sp = passes_[k];
      RewritePass& p = sp.pass;
      p.data = slot.data;
      p.table = &table;
      p.rules = slot.data->rules(table);
      p.seed = slot.seed;
      p.phase = passPhase(step, pass_index);
      p.parametric = parametric_;
      if (!decomposition && !parametric_ && slot.d0l.usable) sp.d0l = &slot.d0l;
      sp.context = table.hasContext() && !sp.d0l;
      any_context = any_context || sp.context;
    }
    rewritten_.assign(n, 0);
    if (!any) return false;
    if (single()) {
      if (passes_[0].d0l) {
        stepD0L(step);
        rewritten_[0] = 1;
        return true;
      }
      const ChunkCount c = runner_->countPass(passes_[0].pass, passes_[0].context);
      rewritten_[0] = c.rewritten;
      if (c.rewritten == 0) return false;
      budget_.check(c, parametric_, passes_[0].context, step, runner_->bytes());
      runner_->rewritePass(passes_[0].pass, c);
      return true;
    }
    const ChunkCount total = runner_->countSegments(passes_, begin_, rewritten_);
    if (total.rewritten == 0) return false;
    budget_.check(total, parametric_, any_context, step, runner_->bytes());
    runner_->rewriteSegments(passes_, total, begin_);
    return true;
  }

  /// A D0L step of the one system.
  void stepD0L(int step) {
    const D0LTable& d0l = slots_[0].d0l;
    const uint64_t n = runner_->modules();
    const uint64_t held = runner_->bytes();
    // When even the longest possible output fits the budget, count and
    // rewrite in one go into room for it; else count first, so that an
    // over-budget step stops before allocating.
    const uint64_t bound = n * d0l.max_length;
    if (n <= ~uint64_t{0} / d0l.max_length && budget_.fits(ChunkCount{bound, 0, n}, false, false, held)) {
      // The previous D0L step's growth predicts this one's output.
      const uint64_t expected =
          d0l_growth_ > 0 ? static_cast<uint64_t>(static_cast<double>(n) * d0l_growth_) : bound;
      const uint64_t total = runner_->countRewritePassD0L(d0l, bound, expected);
      d0l_growth_ = n > 0 ? static_cast<double>(total) / static_cast<double>(n) : 0.0;
      return;
    }
    const uint64_t total = runner_->countPassD0L(d0l);
    budget_.check(ChunkCount{total, 0, n}, false, false, step, held);
    runner_->rewritePassD0L(d0l, total);
  }

  // -- D0L jumps ---------------------------------------------------------------
  // A D0L step is a homomorphism of strings, so k steps are one step whose
  // table maps every symbol to its k-step successor (composeD0L). Jumping
  // over the last steps writes only the final string, with long row copies,
  // and no intermediate string: in one pass over memory instead of k, and,
  // on the cpu backend, in one parallel region instead of k (each of which
  // waits for a sleeping worker to join). Only for one system without
  // decomposition and cut, which act between steps.
  static constexpr int kMaxJump = 8;
  static constexpr uint32_t kMaxJumpRow = 4096;            ///< longest k-step successor
  static constexpr uint64_t kMaxJumpTableBytes = 1 << 20;  ///< all rows of one table

  /// Tables of 1 .. min(kMaxJump, iterations) steps, while their rows stay short.
  void buildJumps(int iterations) {
    const D0LTable& d0l = slots_[0].d0l;
    jumps_.assign(1, d0l);
    while (static_cast<int>(jumps_.size()) < std::min(kMaxJump, iterations)) {
      D0LTable next = composeD0L(jumps_.back(), d0l, kMaxJumpRow, kMaxJumpTableBytes);
      if (!next.usable) break;
      jumps_.push_back(std::move(next));
    }
  }

  /// Steps to take at once with `remaining` steps left: the last jump is the
  /// longest (it writes the biggest string), the remainder goes first.
  int jumpLength(int remaining) const {
    const int longest = static_cast<int>(jumps_.size());
    if (longest <= 1 || remaining <= 1 || runner_->modules() < runner_->d0lJumpMinModules()) return 1;
    return (remaining - 1) % longest + 1;
  }

  /// Steps first_step .. first_step + k - 1 at once. The length after every
  /// one of them is counted first (statistics, progress, and the memory
  /// budget checked step by step as the single steps would be).
  void jumpD0L(int k, int first_step, std::vector<DeriveStats>& stats) {
    const uint64_t n = runner_->modules();
    const uint64_t held = runner_->bytes();
    uint64_t lengths[kMaxJump];
    const D0LTable* tables[kMaxJump];
    for (int m = 0; m < k; ++m) tables[m] = &jumps_[static_cast<size_t>(m)];
    // Each length is counted and checked before the next is counted (every
    // count is a pass over the string: on opencl, eight of them over 2^28
    // modules took seconds before the check refused the fourth).
    auto fits = [&](uint64_t modules) { return budget_.fits(ChunkCount{modules, 0, n}, false, false, held); };
    const int counted = runner_->countPassD0LSteps(tables, k, lengths, fits);
    if (const uint64_t last = lengths[counted - 1]; !fits(last)) {
      // As single steps would: the steps before this one are reported, then it fails.
      for (int q = 0; q + 1 < counted; ++q) report(first_step + q, lengths[q], stats);
      budget_.check(ChunkCount{last, 0, n}, false, false, first_step + counted - 1, held);
    }
    runner_->countRewritePassD0L(*tables[k - 1], lengths[k - 1], lengths[k - 1]);
    for (int m = 0; m < k; ++m) report(first_step + m, lengths[m], stats);
  }

  /// Statistics and progress of one step of the one system.
  void report(int step, uint64_t modules, std::vector<DeriveStats>& stats) const {
    reportStep(0, step, modules, stats);
    if (options_.progress) options_.progress(step, max_iterations_, modules);
  }

  const DeriveOptions& options_;
  std::unique_ptr<PassRunner> runner_;
  MemoryBudget budget_;
  std::vector<Slot> slots_;
  bool parametric_ = false;
  int max_iterations_ = 0;
  std::vector<uint64_t> begin_;     ///< segment starts (batched passes)
  std::vector<SegmentPass> passes_;
  std::vector<uint64_t> rewritten_;  ///< per system, in the last pass
  std::vector<uint8_t> cuts_;
  double d0l_growth_ = 0.0;          ///< output / input modules of the last one-pass D0L step
  std::vector<D0LTable> jumps_;      ///< jumps_[k-1]: the table of k D0L steps (empty: no jumps)
};

}  // namespace

Derivation deriveSystems(std::span<const DerivedSystem> systems, const DeriveOptions& options) {
  return Deriver(systems, options).run();
}

}  // namespace detail

ModuleString derive(const LSystem& lsystem, const DeriveOptions& options, DeriveStats* stats) {
  const detail::LSystemData& data = lsystem.data();
  const int iterations = options.iterations.value_or(data.derivation_length);
  if (iterations < 0) throw Error("the number of derivation steps must be non-negative");
  const detail::DerivedSystem system{&data, iterations, options.seed};
  detail::Derivation d = detail::deriveSystems(std::span(&system, 1), options);
  if (stats) *stats = std::move(d.stats[0]);
  return std::move(d.string);
}

}  // namespace procgen

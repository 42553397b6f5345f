// Derivation driver (paper §4.2): n steps of parallel rewriting, each followed
// by decomposition (cpfg) and cutting ('%'). Written once over PassRunner, so
// every backend shares the step logic, the random-number phases and the
// memory-budget checks, and differs only in how a pass's stages are executed.

#include <algorithm>
#include <string>

#include "common/dispatch.hpp"
#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/derive.hpp"
#include "lsystem/opencl/pass_runner.hpp"
#include "lsystem/pass_runner.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace detail {

std::unique_ptr<PassRunner> makePassRunner(const Execution& execution) {
  return dispatch(
      execution, "L-system derivation", [] { return makeSerialPassRunner(); },
      [&] { return makeCpuPassRunner(execution.threads); },
      [&] { return makeOpenCLPassRunner(execution.device); });
}

bool symbolCanAppear(const LSystemData& d, uint8_t symbol) {
  if (std::find(d.axiom.symbols.begin(), d.axiom.symbols.end(), symbol) != d.axiom.symbols.end())
    return true;
  for (const RuleTable* t : {&d.productions, &d.decomposition})
    for (const PgSuccessorModule& m : t->successors)
      if (m.symbol == symbol) return true;
  return false;
}

}  // namespace detail

namespace {

using detail::ChunkCount;
using detail::LSystemData;
using detail::RuleTable;

class Deriver {
 public:
  Deriver(const LSystemData& data, const DeriveOptions& options)
      : data_(data),
        options_(options),
        runner_(detail::makePassRunner(options.execution)),
        d0l_(detail::makeD0LTable(data, data.productions)),
        productions_have_context_(data.productions.hasContext()),
        decomposition_has_context_(data.decomposition.hasContext()),
        cut_possible_(detail::symbolCanAppear(data, '%')),
        budget_(options.max_modules, options.memory_budget_bytes) {}

  int threads() const { return runner_->threads(); }

  ModuleString run(int iterations, DeriveStats* stats) {
    if (d0l_.usable && data_.decomposition.empty() && !cut_possible_) buildJumps(iterations);
    ModuleString current = data_.axiom;
    decompose(current, 0);
    if (cut_possible_) runner_->cut(current);
    if (stats) {
      *stats = DeriveStats{};
      stats->threads = runner_->threads();
    }
    for (int step = 1; step <= iterations;) {
      const int jump = jumpLength(iterations - step + 1);
      if (jump > 1) {
        jumpD0L(current, jump, step, iterations, stats);
        step += jump;
        continue;
      }
      rewritePass(current, data_.productions, productions_have_context_, detail::passPhase(step, 0), step);
      decompose(current, step);
      if (cut_possible_) runner_->cut(current);
      reportStep(step, iterations, current.size(), stats);
      ++step;
    }
    if (stats) stats->modules = current.size();
    return current;
  }

 private:
  void reportStep(int step, int iterations, uint64_t modules, DeriveStats* stats) const {
    if (stats) {
      stats->iterations = step;
      stats->modules_total += modules;
      stats->step_modules.push_back(modules);
    }
    if (options_.progress) options_.progress(step, iterations, modules);
  }

  // -- D0L jumps ---------------------------------------------------------------
  // A D0L step is a homomorphism of strings, so k steps are one step whose
  // table maps every symbol to its k-step successor (composeD0L). Jumping
  // over the last steps writes only the final string, with long row copies,
  // and no intermediate string: in one pass over memory instead of k, and,
  // on the cpu backend, in one parallel region instead of k (each of which
  // waits for a sleeping worker to join). Only without decomposition and cut,
  // which act between steps.
  static constexpr int kMaxJump = 8;
  static constexpr uint32_t kMaxJumpRow = 4096;            ///< longest k-step successor
  static constexpr uint64_t kMaxJumpTableBytes = 1 << 20;  ///< all rows of one table

  /// Tables of 1 .. min(kMaxJump, iterations) steps, while their rows stay short.
  void buildJumps(int iterations) {
    jumps_.assign(1, d0l_);
    while (static_cast<int>(jumps_.size()) < std::min(kMaxJump, iterations)) {
      detail::D0LTable next = detail::composeD0L(jumps_.back(), d0l_, kMaxJumpRow, kMaxJumpTableBytes);
      if (!next.usable) break;
      jumps_.push_back(std::move(next));
    }
  }

  /// Steps to take at once with `remaining` steps left: the last jump is the
  /// longest (it writes the biggest string), the remainder goes first.
  int jumpLength(int remaining) const {
    const int longest = static_cast<int>(jumps_.size());
    if (longest <= 1 || remaining <= 1) return 1;
    return (remaining - 1) % longest + 1;
  }

  /// Steps first_step .. first_step + k - 1 at once. The length after every
  /// one of them is counted first (statistics, progress, and the memory
  /// budget checked step by step as the single steps would be).
  void jumpD0L(ModuleString& s, int k, int first_step, int iterations, DeriveStats* stats) {
    const uint64_t n = s.size();
    const uint64_t held = detail::MemoryBudget::bytesOf(s);
    uint64_t lengths[kMaxJump];
    for (int m = 0; m < k; ++m) {
      lengths[m] = detail::countChunkD0L(jumps_[static_cast<size_t>(m)], s.symbols.data(), 0, n);
      const ChunkCount next{lengths[m], 0, n};
      if (!budget_.fits(next, false, false, held)) {
        // As single steps would: the steps before this one are reported, then it fails.
        for (int q = 0; q < m; ++q) reportStep(first_step + q, iterations, lengths[q], stats);
        budget_.check(next, false, false, first_step + m, held);
      }
    }
    detail::resizeForOverwrite(next_.symbols, lengths[k - 1]);
    runner_->countRewriteD0L(jumps_[static_cast<size_t>(k - 1)], s.symbols.data(), n, next_.symbols.data(),
                             lengths[k - 1]);
    std::swap(s.symbols, next_.symbols);
    for (int m = 0; m < k; ++m) reportStep(first_step + m, iterations, lengths[m], stats);
  }

  void decompose(ModuleString& s, int step) {
    if (data_.decomposition.empty()) return;
    int depth = std::clamp(data_.decomposition.max_depth, 1, 255);
    for (int pass = 1; pass <= depth; ++pass)
      if (!rewritePass(s, data_.decomposition, decomposition_has_context_, detail::passPhase(step, pass), step))
        break;
  }

  /// One pass of parallel rewriting with `table`; returns false when no module was rewritten.
  bool rewritePass(ModuleString& s, const RuleTable& table, bool has_context, uint32_t phase_id,
                   int step) {
    if (table.empty()) return false;
    const uint64_t n = s.size();
    if (&table == &data_.productions && d0l_.usable) {
      // When even the longest possible output fits the budget, count and
      // rewrite in one pass into room for it (only the pages written are
      // touched: resize leaves the rest unset); else count first, so that an
      // over-budget step stops before allocating.
      const uint64_t bound = n * d0l_.max_length;
      const uint64_t held = detail::MemoryBudget::bytesOf(s);
      if (n <= ~uint64_t{0} / d0l_.max_length && budget_.fits(ChunkCount{bound, 0, n}, false, false, held)) {
        detail::resizeForOverwrite(next_.symbols, bound);
        // The previous D0L step's growth predicts this one's output.
        const uint64_t expected = d0l_growth_ > 0 ? static_cast<uint64_t>(static_cast<double>(n) * d0l_growth_) : bound;
        const uint64_t total =
            runner_->countRewriteD0L(d0l_, s.symbols.data(), n, next_.symbols.data(), expected);
        d0l_growth_ = n > 0 ? static_cast<double>(total) / static_cast<double>(n) : 0.0;
        next_.symbols.resize(total);
        std::swap(s.symbols, next_.symbols);
        return true;
      }
      uint64_t total = runner_->countD0L(d0l_, s.symbols.data(), n);
      budget_.check(ChunkCount{total, 0, n}, false, false, step, detail::MemoryBudget::bytesOf(s));
      detail::resizeForOverwrite(next_.symbols, total);
      runner_->rewriteD0L(d0l_, s.symbols.data(), n, next_.symbols.data());
      std::swap(s.symbols, next_.symbols);
      return true;
    }

    detail::RewritePass pass;
    pass.data = &data_;
    pass.table = &table;
    pass.rules = data_.rules(table);
    pass.in = detail::stringView(s);
    pass.seed = options_.seed;
    pass.phase = phase_id;
    pass.parametric = data_.parametric;
    if (has_context && std::find_if(s.symbols.begin(), s.symbols.end(), [](uint8_t c) {
                         return c == '[' || c == ']';
                       }) != s.symbols.end()) {
      detail::resizeForOverwrite(partner_, n);
      runner_->bracketPartners(s.symbols.data(), n, partner_.data());
      pass.partner = partner_.data();
    }
    detail::resizeForOverwrite(choice_, n);
    ChunkCount c = runner_->count(pass, choice_.data());
    if (c.rewritten == 0) return false;
    budget_.check(c, data_.parametric, has_context, step, detail::MemoryBudget::bytesOf(s));
    detail::resizeForOverwrite(next_.symbols, c.modules);
    if (data_.parametric) {
      detail::resizeForOverwrite(next_.param_offsets, c.modules + 1);
      detail::resizeForOverwrite(next_.params, c.params);
    } else {
      next_.param_offsets.clear();
      next_.params.clear();
    }
    runner_->rewrite(pass, choice_.data(), next_);
    if (data_.parametric) next_.param_offsets[c.modules] = c.params;
    std::swap(s, next_);
    return true;
  }

  const LSystemData& data_;
  const DeriveOptions& options_;
  std::unique_ptr<detail::PassRunner> runner_;
  detail::D0LTable d0l_;
  bool productions_have_context_;
  bool decomposition_has_context_;
  bool cut_possible_;
  detail::MemoryBudget budget_;
  ModuleString next_;
  std::vector<int32_t> choice_;
  std::vector<int64_t> partner_;
  double d0l_growth_ = 0.0;  ///< output / input modules of the last one-pass D0L step
  std::vector<detail::D0LTable> jumps_;  ///< jumps_[k-1]: the table of k D0L steps (empty: no jumps)
};

}  // namespace

ModuleString derive(const LSystem& lsystem, const DeriveOptions& options, DeriveStats* stats) {
  const LSystemData& data = lsystem.data();
  int iterations = options.iterations.value_or(data.derivation_length);
  if (iterations < 0) throw Error("the number of derivation steps must be non-negative");
  auto onHost = [&] { return Deriver(data, options).run(iterations, stats); };
  // On opencl the string stays on the device from the axiom to the result (issue 5).
  return detail::dispatch(options.execution, "L-system derivation", onHost, onHost,
                          [&] { return detail::deriveOpenCL(data, options, iterations, stats); });
}

}  // namespace procgen

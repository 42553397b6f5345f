// The derivation's memory budget (issue: "stops before allocating"): the count
// stage gives the exact size of the next string, so a step that would not fit
// is refused before anything is allocated, naming the step and the size.
#pragma once

#include <cstdint>

#include "lsystem/derive_stages.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::detail {

class MemoryBudget {
 public:
  /// `max_modules` 0: no module limit; `budget_bytes` 0: defaultMemoryBudget().
  MemoryBudget(uint64_t max_modules, uint64_t budget_bytes);

  /// Throws ResourceError when the next string (`next`, from the count stage)
  /// plus the per-module arrays of the pass after it would not fit beside the
  /// `current_bytes` already held, or would exceed max_modules. `step` 0 is
  /// the axiom's decomposition.
  void check(const ChunkCount& next, bool parametric, bool has_context, int step, uint64_t current_bytes) const;
  /// Throws ResourceError when the axiom (the combined axiom of a scene) alone
  /// exceeds max_modules or the budget.
  void checkAxiom(const ModuleString& axiom) const;
  /// Whether check() would pass.
  bool fits(const ChunkCount& next, bool parametric, bool has_context, uint64_t current_bytes) const;

  static uint64_t bytesOf(const ModuleString& s) {
    return s.symbols.size() + 8 * s.param_offsets.size() + 4 * s.params.size();
  }

 private:
  /// `current_bytes` as the budget counts it (procgen::heldForBudget).
  uint64_t held(double projected, uint64_t current_bytes) const;

  uint64_t max_modules_;
  uint64_t requested_budget_;  ///< as given: 0 means the default budget
  uint64_t budget_bytes_;
};

}  // namespace procgen::detail

#include "lsystem/memory_budget.hpp"

#include <string>

#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::detail {

MemoryBudget::MemoryBudget(uint64_t max_modules, uint64_t budget_bytes)
    : max_modules_(max_modules), requested_budget_(budget_bytes), budget_bytes_(effectiveMemoryBudget(budget_bytes)) {}

uint64_t MemoryBudget::held(double projected, uint64_t current_bytes) const {
  const uint64_t need = projected >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(projected);
  // budget_bytes_ is the default budget when none was requested: asked once, in the constructor.
  return procgen::detail::heldForBudget(need, current_bytes, requested_budget_, budget_bytes_);
}

namespace {
/// Bytes of the next string plus the choice and partner arrays of the pass after it.
double projectedBytes(const ChunkCount& next, bool parametric, bool has_context) {
  const double per_module = 1.0 + (parametric ? 8.0 : 0.0) + 4.0 + (has_context ? 8.0 : 0.0);
  return per_module * static_cast<double>(next.modules) + 4.0 * static_cast<double>(next.params);
}
}  // namespace

bool MemoryBudget::fits(const ChunkCount& next, bool parametric, bool has_context, uint64_t current_bytes) const {
  if (max_modules_ && next.modules > max_modules_) return false;
  const double projected = projectedBytes(next, parametric, has_context);
  return projected + static_cast<double>(held(projected, current_bytes)) <= static_cast<double>(budget_bytes_);
}

void MemoryBudget::check(const ChunkCount& next, bool parametric, bool has_context, int step,
                         uint64_t current_bytes) const {
  const std::string what = step == 0 ? std::string("the axiom and its decomposition")
                                     : "derivation step " + std::to_string(step);
  if (max_modules_ && next.modules > max_modules_) {
    throw ResourceError(what + " would produce " + std::to_string(next.modules) + " modules, over --max-modules " +
                        std::to_string(max_modules_) + "; stopped before allocating");
  }
  const double projected = projectedBytes(next, parametric, has_context);
  const uint64_t held_bytes = held(projected, current_bytes);
  if (projected + static_cast<double>(held_bytes) > static_cast<double>(budget_bytes_)) {
    const bool resident = held_bytes > current_bytes;
    // The string being rewritten stays allocated until the new one is
    // written, so it counts too; say so (a message naming only the new
    // string's bytes read as if a smaller size had been refused).
    throw ResourceError(what + " would produce " + std::to_string(next.modules) + " modules: " +
                        humanBytes(projected) + " plus the " + humanBytes(static_cast<double>(held_bytes)) +
                        (resident ? " resident (the current string, held until the step is written, the program and "
                                    "its runtimes), "
                                  : " of the current string, held until the step is written, ") +
                        humanBytes(projected + static_cast<double>(held_bytes)) +
                        " in all, over the memory budget of " + humanBytes(static_cast<double>(budget_bytes_)) +
                        "; stopped before allocating (lower -n, or see --max-modules)");
  }
}

void MemoryBudget::checkAxiom(const ModuleString& axiom) const {
  if (max_modules_ && axiom.size() > max_modules_)
    throw ResourceError("the axiom has " + std::to_string(axiom.size()) + " modules, over --max-modules " +
                        std::to_string(max_modules_));
  requireMemory("the axiom", bytesOf(axiom), budget_bytes_);
}

}  // namespace procgen::detail

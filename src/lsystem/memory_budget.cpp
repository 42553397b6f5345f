#include "lsystem/memory_budget.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "procgen/error.hpp"

namespace procgen::detail {
namespace {

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{8} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

std::string humanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace

MemoryBudget::MemoryBudget(uint64_t max_modules, uint64_t budget_bytes)
    : max_modules_(max_modules), budget_bytes_(budget_bytes ? budget_bytes : physicalMemoryBytes() / 2) {}

namespace {
/// Bytes of the next string plus the choice and partner arrays of the pass after it.
double projectedBytes(const ChunkCount& next, bool parametric, bool has_context) {
  const double per_module = 1.0 + (parametric ? 8.0 : 0.0) + 4.0 + (has_context ? 8.0 : 0.0);
  return per_module * static_cast<double>(next.modules) + 4.0 * static_cast<double>(next.params);
}
}  // namespace

bool MemoryBudget::fits(const ChunkCount& next, bool parametric, bool has_context, uint64_t current_bytes) const {
  if (max_modules_ && next.modules > max_modules_) return false;
  return projectedBytes(next, parametric, has_context) + static_cast<double>(current_bytes) <=
         static_cast<double>(budget_bytes_);
}

void MemoryBudget::check(const ChunkCount& next, bool parametric, bool has_context, int step,
                         uint64_t current_bytes) const {
  if (max_modules_ && next.modules > max_modules_) {
    throw ResourceError("derivation step " + std::to_string(step) + " would produce " +
                        std::to_string(next.modules) + " modules, over --max-modules " +
                        std::to_string(max_modules_) + "; stopped before allocating");
  }
  const double projected = projectedBytes(next, parametric, has_context);
  if (projected + static_cast<double>(current_bytes) > static_cast<double>(budget_bytes_)) {
    throw ResourceError("derivation step " + std::to_string(step) + " would produce " +
                        std::to_string(next.modules) + " modules (" + humanBytes(projected) +
                        "), over the memory budget of " + humanBytes(static_cast<double>(budget_bytes_)) +
                        "; stopped before allocating (lower -n, or see --max-modules)");
  }
}

}  // namespace procgen::detail

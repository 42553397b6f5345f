#include "procgen/budget.hpp"

#include <unistd.h>

#include <cstdio>

#include "procgen/error.hpp"

namespace procgen {

uint64_t physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{8} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

uint64_t defaultMemoryBudget() { return physicalMemoryBytes() / 2; }

uint64_t effectiveMemoryBudget(uint64_t budget_bytes) {
  return budget_bytes ? budget_bytes : defaultMemoryBudget();
}

std::string humanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

void requireMemory(std::string_view stage, uint64_t bytes, uint64_t budget_bytes, uint64_t held_bytes) {
  const uint64_t budget = effectiveMemoryBudget(budget_bytes);
  const auto total = checkedAdd(bytes, held_bytes);
  if (total && *total <= budget) return;
  std::string message(stage);
  message += ": needs " + humanBytes(static_cast<double>(bytes));
  // What the run already holds counts too; say so and give the sum, or a
  // refusal of a size below the budget reads as a mistake (issue 16, D9).
  if (held_bytes)
    message += ", plus " + humanBytes(static_cast<double>(held_bytes)) + " already held (" +
               humanBytes(static_cast<double>(bytes) + static_cast<double>(held_bytes)) + " in all)";
  message += ", over the memory budget of " + humanBytes(static_cast<double>(budget)) +
             "; stopped before allocating";
  throw ResourceError(message);
}

std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace procgen

#include "procgen/budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/cgroup_limit.hpp"
#include "procgen/error.hpp"

namespace procgen {

uint64_t physicalMemoryBytes() {
  // Once: sysconf(_SC_PHYS_PAGES) is a sysinfo() system call, and the default
  // budget is asked at every derivation step (12 calls, ~8 µs on this VM,
  // for a 12 µs derivation of the Koch curve).
  static const uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return uint64_t{8} << 30;
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  }();
  return bytes;
}

uint64_t addressSpaceLimitBytes() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<uint64_t>(limit.rlim_cur);
}

namespace {

/// smallest = the smaller of the two non-zero limits (0: no limit).
void keepSmallest(uint64_t& smallest, uint64_t limit) {
  if (limit && (!smallest || limit < smallest)) smallest = limit;
}

/// The number in a cgroup limit file; 0 for "max", a value of 2^62 or more
/// (v1's "no limit" is 2^63 rounded down to a page) or a file that is absent.
uint64_t readCgroupLimit(const std::string& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text.empty() || text.front() < '0' || text.front() > '9') return 0;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno != 0 || v >= (uint64_t{1} << 62)) return 0;
  return v;
}

/// The smallest limit named `file` in `root` + `path` and its ancestors up to
/// `root` (a limit applies to every cgroup below it). Inside a cgroup
/// namespace the path is "/" and only the root's file counts.
uint64_t smallestLimitAlong(const std::string& root, std::string path, const char* file) {
  uint64_t smallest = 0;
  for (;;) {
    keepSmallest(smallest, readCgroupLimit(root + path + (path.empty() || path.back() != '/' ? "/" : "") + file));
    const size_t slash = path.find_last_of('/');
    if (path.empty() || slash == std::string::npos) break;
    path.erase(slash);
  }
  return smallest;
}

}  // namespace

namespace detail {

uint64_t cgroupMemoryLimit(std::string_view proc_self_cgroup, const std::string& v2_root,
                           const std::string& v1_memory_root) {
  uint64_t smallest = 0;
  std::istringstream in{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(in, line);) {
    // hierarchy-id:controller,controller:path
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) keepSmallest(smallest, smallestLimitAlong(v2_root, path, "memory.max"));
    bool memory = false;
    for (size_t at = 0; at <= controllers.size();) {
      const size_t comma = std::min(controllers.find(',', at), controllers.size());
      memory = memory || controllers.compare(at, comma - at, "memory") == 0;
      at = comma + 1;
    }
    if (memory) keepSmallest(smallest, smallestLimitAlong(v1_memory_root, path, "memory.limit_in_bytes"));
  }
  return smallest;
}

}  // namespace detail

uint64_t cgroupMemoryLimitBytes() {
  std::ifstream in("/proc/self/cgroup");
  std::ostringstream text;
  text << in.rdbuf();
  return detail::cgroupMemoryLimit(text.str(), "/sys/fs/cgroup", "/sys/fs/cgroup/memory");
}

uint64_t defaultMemoryBudget() {
  // The cgroup limit is read once per process: it is a walk of a dozen sysfs
  // files, and a scene checks the budget per instance (924 opens for the
  // forest scene). The address-space limit is one cheap syscall and is asked
  // every time, since `ulimit -v` (and the tests' children) may lower it.
  static const uint64_t cgroup = cgroupMemoryLimitBytes();
  uint64_t limit = physicalMemoryBytes();
  keepSmallest(limit, addressSpaceLimitBytes());
  keepSmallest(limit, cgroup);
  return limit / 2;
}

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

uint64_t residentMemoryBytes() {
  // statm: size resident shared text lib data dt, in pages.
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (!statm) return 0;
  unsigned long long size_pages = 0, resident_pages = 0;
  const int fields = std::fscanf(statm, "%llu %llu", &size_pages, &resident_pages);
  std::fclose(statm);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (fields != 2 || page <= 0) return 0;
  return static_cast<uint64_t>(resident_pages) * static_cast<uint64_t>(page);
}

uint64_t detail::heldForBudget(uint64_t bytes, uint64_t held_bytes, uint64_t budget_bytes, uint64_t default_budget) {
  if (budget_bytes != 0) return held_bytes;
  const auto total = checkedAdd(bytes, held_bytes);
  // Far from the budget: no file read per call.
  if (total && *total <= default_budget / 2) return held_bytes;
  return std::max(held_bytes, residentMemoryBytes());
}

uint64_t heldForBudget(uint64_t bytes, uint64_t held_bytes, uint64_t budget_bytes) {
  return detail::heldForBudget(bytes, held_bytes, budget_bytes, budget_bytes != 0 ? 0 : defaultMemoryBudget());
}

void requireMemory(std::string_view stage, uint64_t bytes, uint64_t budget_bytes, uint64_t held_bytes) {
  const uint64_t budget = effectiveMemoryBudget(budget_bytes);
  const uint64_t counted = heldForBudget(bytes, held_bytes, budget_bytes);
  const bool counted_resident = counted > held_bytes;
  held_bytes = counted;
  const auto total = checkedAdd(bytes, held_bytes);
  if (total && *total <= budget) return;
  std::string message(stage);
  message += ": needs " + humanBytes(static_cast<double>(bytes));
  // What the run already holds counts too; say so and give the sum, or a
  // refusal of a size below the budget reads as a mistake (issue 16, D9).
  if (held_bytes)
    message += ", plus " + humanBytes(static_cast<double>(held_bytes)) +
               (counted_resident ? " already resident (" : " already held (") +
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

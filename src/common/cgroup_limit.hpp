// How the default memory budget reads a cgroup's memory limit, with the files'
// locations as arguments so that tests can point it at a directory of their own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace procgen::detail {

/// The smallest memory limit that applies to the process whose
/// /proc/self/cgroup reads `proc_self_cgroup`: for cgroup v2 ("0::/path") the
/// `memory.max` of `v2_root`/path and of each of its ancestors up to
/// `v2_root`; for v1 ("N:...memory...:/path") the `memory.limit_in_bytes`
/// along the same walk under `v1_memory_root`. 0 when none is set ("max", v1's
/// 2^63 − 4096, or no file).
uint64_t cgroupMemoryLimit(std::string_view proc_self_cgroup, const std::string& v2_root,
                           const std::string& v1_memory_root);

}  // namespace procgen::detail

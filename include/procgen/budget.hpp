// One memory budget for every stage of every command (issue 16): a stage that
// knows how many bytes it is about to allocate asks requireMemory() first, so
// a run that would exhaust the machine stops before allocating, names the
// stage and the sizes, and exits with ExitCode::kBadInput (2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace procgen {

/// The machine's physical memory in bytes (8 GiB when it cannot be read),
/// read once per process.
uint64_t physicalMemoryBytes();

/// The process's address-space limit (RLIMIT_AS, the soft limit `ulimit -v`
/// sets) in bytes, or 0 when there is none.
uint64_t addressSpaceLimitBytes();

/// The memory limit of the process's cgroup in bytes (v2 `memory.max`, v1
/// `memory.limit_in_bytes`, the smallest along the path to the root), or 0
/// when none is set or none can be read.
uint64_t cgroupMemoryLimitBytes();

/// The default budget of every command: half of the smallest memory limit the
/// process is under — the physical memory, the address-space limit, the
/// cgroup's memory limit. Half, because the budget counts only the large
/// arrays a stage allocates: the program, the OpenCL runtime, thread stacks and
/// the allocator's spare blocks come on top (they take hundreds of MiB of
/// address space), and a run that reached a limit would die of std::bad_alloc
/// (or inside the OpenCL runtime) instead of stopping with a message.
/// Read at every call (a process may lower its limits).
uint64_t defaultMemoryBudget();

/// `budget_bytes` 0 means defaultMemoryBudget().
uint64_t effectiveMemoryBudget(uint64_t budget_bytes);

/// The process's resident memory in bytes (/proc/self/statm), 0 when unknown.
uint64_t residentMemoryBytes();

/// What a run holds, as the budget counts it, when it is about to allocate
/// `bytes` beside the `held_bytes` it tracks: `held_bytes`, or — with the
/// default budget (`budget_bytes` 0) and the sum past half of it — the
/// process's resident memory when that is larger (the program, the runtimes
/// and the allocator's blocks count too). An explicit budget counts the
/// stages' arrays only.
uint64_t heldForBudget(uint64_t bytes, uint64_t held_bytes, uint64_t budget_bytes);

namespace detail {
/// heldForBudget when the caller already knows defaultMemoryBudget() (a
/// derivation asks at every step; the default costs a getrlimit each time).
uint64_t heldForBudget(uint64_t bytes, uint64_t held_bytes, uint64_t budget_bytes, uint64_t default_budget);
}  // namespace detail

/// Throws ResourceError when `bytes` (what `stage` is about to allocate) plus
/// `held_bytes` (what the run already holds and keeps) exceeds the budget.
/// What is held is counted by heldForBudget, so with the default budget a
/// run stays below it in RSS, not only in the bytes its stages asked for
/// (issue 16: the parametric explosion held 1.00 GiB of arrays and 1.02 GiB
/// resident under a 1 GiB budget).
/// The message names the stage, the new bytes, the held bytes and their sum
/// when held is non-zero, and the budget, e.g. "noise grid: needs 8.0 GiB,
/// plus 4.0 GiB already held (12.0 GiB in all), over the memory budget of
/// 11.8 GiB; stopped before allocating".
void requireMemory(std::string_view stage, uint64_t bytes, uint64_t budget_bytes = 0,
                   uint64_t held_bytes = 0);

/// "1.5 GiB", "512 B": binary units, one decimal.
std::string humanBytes(double bytes);

/// a × b, or nullopt when it overflows 64 bits (sizes from user input).
std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b);
/// a + b, or nullopt when it overflows 64 bits.
std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b);

}  // namespace procgen

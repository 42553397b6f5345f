// The default memory budget is half of the smallest memory limit the process
// is under: the physical memory, the address-space limit (RLIMIT_AS, `ulimit
// -v`), the cgroup's memory limit (include/procgen/budget.hpp). Checked
// against values read here (sysconf, getrlimit, a cgroup tree written by the
// test), in a child process whose RLIMIT_AS the test sets, and end to end: a
// CLI run with no --max-modules, whose refusal names that budget.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/backends.hpp"
#include "common/cgroup_limit.hpp"
#include "common/cli_run.hpp"
#include "common/sanitizer.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace {

namespace fs = std::filesystem;
constexpr uint64_t kGiB = uint64_t{1} << 30;

uint64_t physicalRam() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

uint64_t halfTheRam() { return physicalRam() / 2; }

bool addressSpaceLimited() {
  rlimit limit{};
  return getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
}

/// Why the machine's own limits make a test that expects half the RAM moot
/// (empty: they do not).
std::string machineLimits() {
  if (addressSpaceLimited()) return "this process runs under an address-space limit (ulimit -v)";
  const uint64_t cgroup = procgen::cgroupMemoryLimitBytes();
  if (cgroup && cgroup < physicalRam()) return "this process's cgroup limits its memory";
  return "";
}

/// The process's address space now (VmSize of /proc/self/status), in bytes.
uint64_t addressSpaceInUse() {
  std::ifstream in("/proc/self/status");
  for (std::string key; in >> key;) {
    if (key == "VmSize:") {
      uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

/// "11.8 GiB", "512.0 MiB": how the budget reads in messages (binary units, one decimal).
std::string human(uint64_t bytes) {
  char buf[32];
  if (bytes >= kGiB)
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

TEST(DefaultBudget, IsHalfThePhysicalMemoryWithoutOtherLimits) {
  ASSERT_GT(sysconf(_SC_PHYS_PAGES), 0);
  if (const std::string why = machineLimits(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(procgen::defaultMemoryBudget(), halfTheRam());
  EXPECT_EQ(procgen::effectiveMemoryBudget(0), halfTheRam());
  EXPECT_EQ(procgen::effectiveMemoryBudget(12345), 12345u);
}

// In a child that lowers its own RLIMIT_AS to what it uses now plus 1 GiB, and
// plus 2 GiB, the default budget is half of that limit: a budget that ignored
// the limit (half the RAM) or a constant fails one of the two.
TEST(DefaultBudget, FollowsTheAddressSpaceLimit) {
  if (procgen::test::kUnderSanitizer) GTEST_SKIP() << "a sanitizer's shadow memory rules out RLIMIT_AS";
  if (const std::string why = machineLimits(); !why.empty()) GTEST_SKIP() << why;
  for (const uint64_t extra : {1 * kGiB, 2 * kGiB}) {
    const uint64_t limit = addressSpaceInUse() + extra;
    if (limit >= physicalRam()) GTEST_SKIP() << "the machine has less than " << human(limit) << " of memory";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      rlimit as{};
      getrlimit(RLIMIT_AS, &as);
      as.rlim_cur = limit;
      uint64_t budget = 0;
      if (setrlimit(RLIMIT_AS, &as) == 0) budget = procgen::defaultMemoryBudget();
      (void)!write(fds[1], &budget, sizeof budget);
      _exit(0);
    }
    close(fds[1]);
    uint64_t budget = 0;
    EXPECT_EQ(read(fds[0], &budget, sizeof budget), static_cast<ssize_t>(sizeof budget));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_EQ(budget, limit / 2) << "RLIMIT_AS " << limit << " bytes; half the RAM would be " << halfTheRam();
  }
}

// cgroup files as the kernel writes them, in a tree of the test's own: v2
// limits apply to every cgroup below them ("max": none), v1's "no limit" is
// 2^63 - 4096, and v1's memory controller may share a line with others.
class CgroupLimit : public procgen::test::ScratchDirTest {
 protected:
  void limit(const fs::path& dir, const char* file, const std::string& value) {
    fs::create_directories(dir);
    std::ofstream(dir / file) << value << "\n";
  }
};

TEST_F(CgroupLimit, SmallestAlongThePathToTheRoot) {
  const fs::path v2 = dir_ / "v2", v1 = dir_ / "v1";
  limit(v2, "memory.max", "max");
  limit(v2 / "a", "memory.max", "3221225472");
  limit(v2 / "a" / "b", "memory.max", "max");
  limit(v1, "memory.limit_in_bytes", "9223372036854771712");
  limit(v1 / "x", "memory.limit_in_bytes", "2147483648");
  limit(v1 / "y", "memory.limit_in_bytes", "9223372036854771712");
  using procgen::detail::cgroupMemoryLimit;
  EXPECT_EQ(cgroupMemoryLimit("0::/a/b\n", v2.string(), v1.string()), 3 * kGiB);  // from the parent
  EXPECT_EQ(cgroupMemoryLimit("0::/\n", v2.string(), v1.string()), 0u);            // "max"
  EXPECT_EQ(cgroupMemoryLimit("0::/c\n", v2.string(), v1.string()), 0u);           // no file
  EXPECT_EQ(cgroupMemoryLimit("4:memory:/x\n", v2.string(), v1.string()), 2 * kGiB);
  EXPECT_EQ(cgroupMemoryLimit("4:memory:/y\n", v2.string(), v1.string()), 0u);     // v1's "no limit"
  EXPECT_EQ(cgroupMemoryLimit("7:cpu,memory:/x\n", v2.string(), v1.string()), 2 * kGiB);
  EXPECT_EQ(cgroupMemoryLimit("7:cpu,cpuacct:/x\n1:name=systemd:/x\n", v2.string(), v1.string()), 0u);
  EXPECT_EQ(cgroupMemoryLimit("4:memory:/x\n0::/a/b\n", v2.string(), v1.string()), 2 * kGiB);  // the smaller
}

// A derivation with no module limit (F --> FF, n = 60: 2^60 modules) is
// refused by the default budget, and the refusal names it.
TEST(DefaultBudget, UnlimitedDerivationStopsAtTheDefault) {
  if (const std::string why = machineLimits(); !why.empty()) GTEST_SKIP() << why;
  const procgen::LSystem l = procgen::LSystem::fromText("Axiom: F\nF --> FF\n", "double.l");
  procgen::DeriveOptions options;
  options.iterations = 60;
  try {
    (void)procgen::derive(l, options);
    FAIL() << "2^60 modules derived";
  } catch (const procgen::ResourceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(human(halfTheRam())), std::string::npos) << what << "\nwant the budget " << human(halfTheRam());
  }
}

class DefaultBudgetCli : public procgen::test::ScratchDirTest {};

TEST_F(DefaultBudgetCli, RefusalNamesHalfTheRam) {
  if (const std::string why = machineLimits(); !why.empty()) GTEST_SKIP() << why;
  const auto model = dir_ / "double.l";
  std::ofstream(model) << "Axiom: F\nF --> FF\n";
  const auto err = dir_ / "stderr.txt";
  const int rc = procgen::test::runProcgen("lsystem " + model.string() + " -n 60 --backend serial -o " +
                                               (dir_ / "x.txt").string(),
                                           err);
  const std::string text = procgen::test::slurp(err);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("memory budget of " + human(halfTheRam())), std::string::npos)
      << text << "\nwant the budget " << human(halfTheRam());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x.txt"));
}

// Under `ulimit -v` (1 GiB), an explosion with no module limit is refused by
// the budget, half of that limit, on every backend: with a message naming
// 512 MiB, not "out of memory" from a failed allocation (which is what a
// budget of half the RAM gave: the parametric derivation reached the limit
// first) nor a crash inside the OpenCL runtime.
TEST_F(DefaultBudgetCli, RefusalFollowsUlimit) {
  if (procgen::test::kUnderSanitizer) GTEST_SKIP() << "a sanitizer's shadow memory rules out ulimit -v";
  if (const std::string why = machineLimits(); !why.empty()) GTEST_SKIP() << why;
  const auto model = dir_ / "parametric.l";
  std::ofstream(model) << "Axiom: A(1)\nA(x) --> A(x+1)A(x*2)\n";
  for (const procgen::test::Variant& v : procgen::test::availableVariants(
           {procgen::test::makeVariant(procgen::Backend::kSerial, 1), procgen::test::makeVariant(procgen::Backend::kCpu, 2),
            procgen::test::makeVariant(procgen::Backend::kOpenCL, 1)})) {
    SCOPED_TRACE(v.name);
    const auto err = dir_ / "stderr.txt";
    const int rc = procgen::test::runProcgen("lsystem " + model.string() + " -n 60 --backend " +
                                                 std::string(procgen::backendName(v.backend)) + " -o " +
                                                 (dir_ / "x.txt").string(),
                                             err, {}, "ulimit -v 1048576;");
    const std::string text = procgen::test::slurp(err);
    EXPECT_EQ(rc, 2) << text;
    EXPECT_NE(text.find("over the memory budget of 512.0 MiB"), std::string::npos) << text;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "x.txt"));
  }
}

}  // namespace

namespace {
// VmRSS from /proc/self/status (kB): a second reading of the resident size,
// independent of residentMemoryBytes()'s statm.
uint64_t vmRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}
}  // namespace

TEST(DefaultBudget, ResidentMemoryAgreesWithProcStatus) {
  const uint64_t status = vmRssBytes();
  const uint64_t statm = procgen::residentMemoryBytes();
  ASSERT_GT(status, 0u);
  // Both read the same counter a moment apart: within 16 MiB of each other.
  EXPECT_LT(statm > status ? statm - status : status - statm, uint64_t{16} << 20);
}

TEST(DefaultBudget, CountsResidentMemoryOnlyNearTheDefaultBudget) {
  const uint64_t budget = procgen::defaultMemoryBudget();
  const uint64_t resident = procgen::residentMemoryBytes();
  ASSERT_GT(resident, 4096u);
  // An explicit budget counts the arrays only, however large the request.
  EXPECT_EQ(procgen::heldForBudget(budget, 1, uint64_t{1} << 30), 1u);
  // Far from the default budget: what the caller holds.
  EXPECT_EQ(procgen::heldForBudget(1024, 1, 0), 1u);
  // Past half of it: at least what is resident.
  EXPECT_GE(procgen::heldForBudget(budget / 2 + 1, 1, 0), resident / 2);
  EXPECT_GT(procgen::heldForBudget(budget / 2 + 1, 1, 0), 1u);
  // A caller that holds more than is resident keeps its own count.
  EXPECT_EQ(procgen::heldForBudget(budget / 2, budget, 0), budget);
}

TEST(DefaultBudget, RefusalNearTheDefaultBudgetCountsTheProgram) {
  // Asking for exactly the default budget with nothing held leaves no room
  // for the program itself: refused, and the message says what was resident.
  const uint64_t budget = procgen::defaultMemoryBudget();
  try {
    procgen::requireMemory("test stage", budget, 0, 0);
    FAIL() << "the whole budget was granted beside a resident program";
  } catch (const procgen::ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("already resident"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(procgen::requireMemory("test stage", budget, budget, 0));  // explicit: arrays only
}

// The default memory budget is half the physical memory (include/procgen/budget.hpp,
// docs: "limited by half the RAM"). Checked two ways, neither of which lets
// --max-modules fire first: the library's value against sysconf read here,
// and a CLI run with no --max-modules whose refusal names that budget.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/cli_run.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace {

uint64_t halfTheRam() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

/// "11.8 GiB": how the budget reads in messages (binary units, one decimal).
std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

TEST(DefaultBudget, IsHalfThePhysicalMemory) {
  ASSERT_GT(sysconf(_SC_PHYS_PAGES), 0);
  EXPECT_EQ(procgen::defaultMemoryBudget(), halfTheRam());
  EXPECT_EQ(procgen::effectiveMemoryBudget(0), halfTheRam());
  EXPECT_EQ(procgen::effectiveMemoryBudget(12345), 12345u);
}

// A derivation with no module limit (F --> FF, n = 60: 2^60 modules) is
// refused by the default budget, and the refusal names half the RAM.
TEST(DefaultBudget, UnlimitedDerivationStopsAtHalfTheRam) {
  const procgen::LSystem l = procgen::LSystem::fromText("Axiom: F\nF --> FF\n", "double.l");
  procgen::DeriveOptions options;
  options.iterations = 60;
  try {
    (void)procgen::derive(l, options);
    FAIL() << "2^60 modules derived";
  } catch (const procgen::ResourceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(gib(halfTheRam())), std::string::npos) << what << "\nwant the budget " << gib(halfTheRam());
  }
}

class DefaultBudgetCli : public procgen::test::ScratchDirTest {};

TEST_F(DefaultBudgetCli, RefusalNamesHalfTheRam) {
  const auto model = dir_ / "double.l";
  std::ofstream(model) << "Axiom: F\nF --> FF\n";
  const auto err = dir_ / "stderr.txt";
  const int rc = procgen::test::runProcgen("lsystem " + model.string() + " -n 60 --backend serial -o " +
                                               (dir_ / "x.txt").string(),
                                           err);
  const std::string text = procgen::test::slurp(err);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("memory budget of " + gib(halfTheRam())), std::string::npos)
      << text << "\nwant the budget " << gib(halfTheRam());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x.txt"));
}

}  // namespace

// The cpu backend's default thread count is the cores the process may run
// on — its affinity mask (taskset, mpirun's default binding of one core per
// rank, a cpuset) — in what every command reports as well as in what runs:
// the L-system stages (the executor's arena, oneTBB's count) and the
// parentheses command (effectiveThreads) agree, under a one-core mask and
// without one.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/cli_run.hpp"

namespace {

using procgen::test::runProcgen;
using procgen::test::slurp;
using CliThreads = procgen::test::ScratchDirTest;

int affinityCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

TEST_F(CliThreads, DefaultThreadsFollowTheAffinityMask) {
#if !PROCGEN_HAVE_TBB
  GTEST_SKIP() << "no cpu backend in this build";
#endif
  if (std::system("command -v taskset > /dev/null 2>&1") != 0) GTEST_SKIP() << "no taskset (util-linux)";
  const int cores = affinityCores();
  if (cores < 2) GTEST_SKIP() << "this process may use one core only";
  std::ofstream(dir_ / "m.l") << "Lsystem: 1\nderivation length: 6\nAxiom: F\nF --> F+F-F\nendlsystem\n";
  const std::string model = (dir_ / "m.l").string(), err = (dir_ / "err.txt").string();
  auto threads = [&](const std::string& args, const std::string& prefix) {
    const std::string out = (dir_ / "stats.json").string();
    EXPECT_EQ(runProcgen(args + " --backend cpu --stats-json " + out, err, {}, prefix), 0) << slurp(err);
    return nlohmann::json::parse(slurp(out)).at("threads").get<int>();
  };
  const std::string lsystem = "lsystem " + model + " -q -o " + (dir_ / "m.txt").string();
  const std::string parens = "parens --random 100000";
  EXPECT_EQ(threads(lsystem, ""), cores);
  EXPECT_EQ(threads(parens, ""), cores);
  EXPECT_EQ(threads(lsystem, "taskset -c 0"), 1);
  EXPECT_EQ(threads(parens, "taskset -c 0"), 1);  // was the machine's core count, while one core ran them
  // An explicit count is what the user asked for, mask or not.
  EXPECT_EQ(threads(parens + " --threads 3", "taskset -c 0"), 3);
}

}  // namespace

// Issue 16 at the command line: explosive and non-finite inputs end with exit
// 2 (or 1 for a bad option) and a message naming the stage, on every backend,
// and the process stays within the memory budget it was given
// (--memory-budget), measured as the peak resident size of the child
// (wait4's ru_maxrss) against the same command's baseline on a tiny model.
// A watchdog kills a run after 120 s, so a hang fails instead of blocking.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/backends.hpp"
#include "common/cli_run.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int rc = -1;            ///< exit code; -1 when killed (the watchdog)
  long max_rss_kib = 0;   ///< peak resident set of the process
  std::string err;
};

class HostileCli : public test::ScratchDirTest, public testing::WithParamInterface<test::Variant> {
 protected:
  void SetUp() override {
    test::ScratchDirTest::SetUp();
    PROCGEN_SKIP_UNLESS_RUNNABLE(GetParam());
  }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  std::string backendArgs() const {
    const test::Variant& v = GetParam();
    std::string a = " --backend " + std::string(backendName(v.backend));
    if (v.backend == Backend::kCpu) a += " --threads " + std::to_string(v.threads);
    return a;
  }

  /// `procgen ARGS --backend ...` with stderr captured and the peak RSS measured.
  CliRun run(const std::string& args) {
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = "exec timeout -s KILL 120 " + std::string(PROCGEN_CLI_PATH) + " " + args +
                            backendArgs() + " > /dev/null 2> " + err.string();
    CliRun r;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    struct rusage usage {};
    ::wait4(pid, &status, 0, &usage);  // timeout waited for procgen: its peak is in ours
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r.rc == 137 || r.rc == 124) r.rc = -1;  // killed by the watchdog
    r.max_rss_kib = usage.ru_maxrss;
    r.err = test::slurp(err);
    return r;
  }

  /// Peak RSS of the same command line on a one-module model (the process's fixed cost).
  long baselineKib(const std::string& subcommand_args = "") {
    const fs::path tiny = write("tiny.l", "Axiom: F\n");
    const CliRun r = run("lsystem " + tiny.string() + " -q " + subcommand_args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return r.max_rss_kib;
  }

  /// Exit 2, the message contains `what`, and the peak RSS stayed within
  /// `budget_mib` above the baseline.
  void expectRefused(const CliRun& r, const std::string& what, long budget_mib, long baseline_kib) {
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_LT(r.max_rss_kib, baseline_kib + budget_mib * 1024) << "peak RSS " << r.max_rss_kib / 1024 << " MiB";
  }
};

TEST_P(HostileCli, D2HomomorphismBeyondMaxModulesExitsTwo) {
  const long base = baselineKib();
  const fs::path spin = write("spin.l", "Axiom: B\nhomomorphism\nmaximum depth: 40\nB --> BB\n");
  expectRefused(run("lsystem " + spin.string() + " -n 0 --max-modules 1000 -o " + (dir_ / "x.png").string()),
                "over --max-modules 1000", 64, base);
  const fs::path grow = write("grow.l", "Axiom: B\nhomomorphism\nmaximum depth: 40\nB --> BFB\n");
  expectRefused(run("lsystem " + grow.string() + " -n 0 --memory-budget 64M -o " + (dir_ / "x.svg").string()),
                "homomorphism expansion", 64, base);
  // A depth beyond the documented limit is a parse error, not a silent cap.
  const fs::path deep = write("deep.l", "Axiom: B\nhomomorphism\nmaximum depth: 1048576\nB --> BB\n");
  const CliRun r = run("lsystem " + deep.string() + " -q");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("deep.l:3:"), std::string::npos) << r.err;
}

TEST_P(HostileCli, D3InterpretationOutsideTheBudgetExitsTwo) {
  const long base = baselineKib();
  // F --> FF, 22 steps: a 4 MiB string passes the derivation, 4 Mi segments (160 MiB) do not fit 64 MiB.
  const fs::path ff = write("ff.l", "Axiom: F\nF --> FF\n");
  expectRefused(run("lsystem " + ff.string() + " -n 22 --memory-budget 64M -o " + (dir_ / "x.png").string()),
                "interpretation (4194304 segments and polygon vertices)", 64, base);
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

TEST_P(HostileCli, D4SceneOutsideTheBudgetExitsTwo) {
  const long base = baselineKib();
  write("ff.l", "Axiom: F\nF --> FF\n");
  const fs::path scene = write("s.scene", "ff.l n=60\n");
  expectRefused(run("scene " + scene.string() + " -q --memory-budget 64M -o " + (dir_ / "x.png").string()),
                "over the memory budget of 64.0 MiB", 64, base);
  // Two instances that fit alone but not together (2 x 2^19 segments x 40 B, drawn and placed).
  const fs::path two = write("two.scene", "ff.l n=19\nff.l n=19 at=3,0,0\n");
  expectRefused(run("scene " + two.string() + " -q --memory-budget 64M -o " + (dir_ / "x.png").string()),
                "scene interpretation", 64, base);
}

TEST_P(HostileCli, D1NonFiniteWidthNeverReachesTheWriters) {
  const fs::path svg = dir_ / "x.svg";
  // A constant: a parse error with file:line:col.
  const fs::path axiom = write("nan.l", "Axiom: !(0/0)F\n");
  CliRun r = run("lsystem " + axiom.string() + " -q -o " + svg.string());
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("nan.l:1:"), std::string::npos) << r.err;
  // Derived: the module is named.
  const fs::path derived = write("derived.l", "Axiom: A\nA --> !(sqrt(-1))F\n");
  r = run("lsystem " + derived.string() + " -n 1 -q -o " + svg.string() + " --stats-json " +
          (dir_ / "s.json").string());
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("module 0 '!'"), std::string::npos) << r.err;
  // The option: a usage error.
  const fs::path plain = write("plain.l", "Axiom: F\n");
  r = run("lsystem " + plain.string() + " -q --width nan -o " + svg.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_FALSE(fs::exists(svg) && fs::file_size(svg) > 100000) << "the SVG writer looped";
}

TEST_P(HostileCli, D5NonFiniteParameterIsNotWrittenToText) {
  const fs::path inf = write("inf.l", "Axiom: F\nF --> F(1/0)\n");
  const fs::path txt = dir_ / "x.txt";
  const CliRun r = run("lsystem " + inf.string() + " -n 1 -q -o " + txt.string());
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("parameters must stay finite"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(txt) && test::slurp(txt).find("inf") != std::string::npos);
}

TEST_P(HostileCli, D9BudgetMessageSaysTheHeldStringCounts) {
  const fs::path ff = write("ff.l", "Axiom: F\nF --> FF\n");
  const CliRun r = run("lsystem " + ff.string() + " -n 40 -q --memory-budget 16M");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("of the current string, held until the step is written"), std::string::npos) << r.err;
}

TEST_P(HostileCli, MaxModulesZeroIsDocumentedAndTheAxiomCounts) {
  const fs::path five = write("five.l", "Axiom: FFFFF\n");
  CliRun r = run("lsystem " + five.string() + " -q --max-modules 4");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("the axiom has 5 modules"), std::string::npos) << r.err;
  r = run("lsystem " + five.string() + " -q --max-modules 0");
  EXPECT_EQ(r.rc, 0) << r.err;
  const fs::path out = dir_ / "help.txt";
  test::runProcgen("lsystem --help", dir_ / "e.txt", out);
  EXPECT_NE(test::slurp(out).find("0 (the default): no module limit"), std::string::npos) << test::slurp(out);
}

INSTANTIATE_TEST_SUITE_P(Backends, HostileCli,
                         testing::Values(test::makeVariant(Backend::kSerial, 1), test::makeVariant(Backend::kCpu, 2),
                                         test::makeVariant(Backend::kOpenCL, 1)),
                         test::variantName);

}  // namespace
}  // namespace procgen

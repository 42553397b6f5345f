// The parens and bbox commands end to end: output files, JSON statistics and
// exit codes of the CLI contract.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/cli_run.hpp"
#include "procgen/opencl.hpp"

namespace {

namespace fs = std::filesystem;

using procgen::test::runProcgen;
using procgen::test::slurp;

using CliTreebox = procgen::test::ScratchDirTest;

TEST_F(CliTreebox, ParensFileOutputAndStats) {
  std::ofstream(dir_ / "in.txt") << "(a(b)c))(";
  for (const char* backend : {"serial", "cpu"}) {
    fs::path out = dir_ / "out.txt", stats = dir_ / "stats.json", err = dir_ / "err.txt";
    int rc = runProcgen("parens " + (dir_ / "in.txt").string() + " --backend " + backend + " -o " +
                     out.string() + " --stats-json " + stats.string(),
                 err);
    ASSERT_EQ(rc, 0) << slurp(err);
    EXPECT_EQ(slurp(out), "-1\n0\n0\n2\n2\n0\n0\n-1\n-1\n");  // derived by hand
    std::string js = slurp(stats);
    EXPECT_NE(js.find("\"elements\": 9"), std::string::npos) << js;
    EXPECT_NE(js.find("\"unmatched_open\": 1"), std::string::npos) << js;
    EXPECT_NE(js.find("\"unmatched_close\": 1"), std::string::npos) << js;
    EXPECT_NE(js.find("\"max_depth\": 2"), std::string::npos) << js;
    EXPECT_NE(js.find("\"checksum\": \""), std::string::npos) << js;
  }
}

TEST_F(CliTreebox, LsystemBranchBounds) {
  // F[+F]F at n = 1 with a 90 degree turn and step 1: the branch is drawn
  // from (0,1) to (-1,1) — worked out by hand (y of the end point within
  // rounding of cos 90°).
  std::ofstream(dir_ / "p.l") << "angle increment: 90\nstep length: 1\nLsystem: 1\n"
                                 "derivation length: 1\nAxiom: X\nX --> F[+F]F\nendlsystem\n";
  fs::path stats = dir_ / "stats.json", err = dir_ / "err.txt";
  ASSERT_EQ(runProcgen("lsystem " + (dir_ / "p.l").string() + " -q --branch-bounds --stats-json " +
                    stats.string(),
                err),
            0)
      << slurp(err);
  std::string js = slurp(stats);
  EXPECT_NE(js.find("\"branches\": [\n    {\"begin\": 1, \"depth\": 1, \"bbox\": [-1, 0.99"),
            std::string::npos)
      << js;
  EXPECT_NE(js.find(", 0, 0, 1, 0]}\n  ],"), std::string::npos) << js;
  // --branch-bounds needs --stats-json; homomorphisms are refused (bad input).
  EXPECT_EQ(runProcgen("lsystem " + (dir_ / "p.l").string() + " -q --branch-bounds", err), 1);
  std::ofstream(dir_ / "h.l") << "Lsystem: 1\nderivation length: 1\nAxiom: A\nA --> A[A]\n"
                                 "homomorphism:\nA --> F\nendlsystem\n";
  EXPECT_EQ(runProcgen("lsystem " + (dir_ / "h.l").string() + " -q --branch-bounds --stats-json " +
                    stats.string(),
                err),
            2);
}

TEST_F(CliTreebox, ExitCodes) {
  fs::path err = dir_ / "err.txt";
  EXPECT_EQ(runProcgen("parens", err), 1);  // neither FILE nor --random
  EXPECT_EQ(runProcgen("parens " + (dir_ / "missing.txt").string(), err), 2);
  EXPECT_EQ(runProcgen("parens --random 10 --backend opencl", err), procgen::openclDevices().empty() ? 3 : 0);
  EXPECT_EQ(runProcgen("parens --random 10 -o " + (dir_ / "no/such/dir/out").string(), err), 4);

  std::ofstream(dir_ / "bad.boxtree") << "blend {\n  leaf 0 0 x 1\n}\n";
  EXPECT_EQ(runProcgen("bbox " + (dir_ / "bad.boxtree").string(), err), 2);
  std::string e = slurp(err);
  EXPECT_NE(e.find("bad.boxtree:2:12: error:"), std::string::npos) << e;
}

TEST_F(CliTreebox, BBoxOutput) {
  const std::string text = "clip 0 0 10 10 {\n  leaf 5 5 20 20\n}\nblend {\n}\n";
  // The format was called the treebox "scene" format before; files named
  // *.scene and the option --write-scene are still accepted.
  for (const std::string name : {"s.boxtree", "s.scene"}) {
    SCOPED_TRACE(name);
    std::ofstream(dir_ / name) << text;
    fs::path out = dir_ / "boxes.txt", err = dir_ / "err.txt", tree = dir_ / "tree.txt", old = dir_ / "old.txt";
    ASSERT_EQ(runProcgen("bbox " + (dir_ / name).string() + " -o " + out.string() + " --write-tree " +
                             tree.string(),
                         err),
              0)
        << slurp(err);
    EXPECT_EQ(slurp(out), "clip 0 0 10 10\nleaf 5 5 10 10\nend 0 0 10 10\nblend empty\nend empty\n");
    EXPECT_EQ(slurp(tree), "clip 0 0 10 10 {\n  leaf 5 5 20 20\n}\nblend {\n}\n");
    ASSERT_EQ(runProcgen("bbox " + (dir_ / name).string() + " -o " + out.string() + " --write-scene " + old.string(),
                         err),
              0)
        << slurp(err);
    EXPECT_EQ(slurp(old), slurp(tree));
  }
}

}  // namespace

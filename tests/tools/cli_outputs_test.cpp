// The output helper every subcommand shares (tools/procgen/output_options.hpp):
// several -o get the same bytes, '-' is stdout, --stats-json PATH|- is one
// parseable JSON object, and an unwritable path is exit code 4 everywhere.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::runProcgen;
using procgen::test::slurp;
using CliOutputs = procgen::test::ScratchDirTest;

TEST_F(CliOutputs, SeveralOutputsGetTheSameBytesAndDashIsStdout) {
  std::ofstream(dir_ / "in.txt") << "(()";
  const fs::path a = dir_ / "a.txt", b = dir_ / "b.out", out = dir_ / "stdout.txt", err = dir_ / "err.txt";
  ASSERT_EQ(runProcgen("parens " + (dir_ / "in.txt").string() + " -o " + a.string() + " -o " + b.string() +
                           " -o - --stats-json " + (dir_ / "s.json").string(),
                       err, out),
            0)
      << slurp(err);
  // By hand: '(' at top level -> -1, '(' inside index 0 -> 0, ')' closes index 1 -> 1.
  EXPECT_EQ(slurp(a), "-1\n0\n1\n");
  EXPECT_EQ(slurp(b), slurp(a));
  EXPECT_EQ(slurp(out), slurp(a));
  const nlohmann::json j = nlohmann::json::parse(slurp(dir_ / "s.json"));
  EXPECT_EQ(j["elements"], 3);
  EXPECT_EQ(j["unmatched_open"], 1);
  EXPECT_EQ(j["unmatched_close"], 0);
}

TEST_F(CliOutputs, StatsOnStdoutParseAsOneObject) {
  const fs::path out = dir_ / "stdout.txt", err = dir_ / "err.txt";
  ASSERT_EQ(runProcgen("parens --random 1000 --stats-json -", err, out), 0) << slurp(err);
  const nlohmann::json j = nlohmann::json::parse(slurp(out));  // throws on trailing text
  EXPECT_EQ(j["elements"], 1000);
  EXPECT_TRUE(j["ms"].is_number());
}

TEST_F(CliOutputs, BboxWritesStdoutByDefaultAndEveryOutputOtherwise) {
  std::ofstream(dir_ / "s.scene") << "blend {\n  leaf 0 0 1 2\n}\n";
  const fs::path out = dir_ / "stdout.txt", err = dir_ / "err.txt", a = dir_ / "a.txt";
  ASSERT_EQ(runProcgen("bbox " + (dir_ / "s.scene").string(), err, out), 0) << slurp(err);
  const std::string boxes = slurp(out);
  EXPECT_NE(boxes.find("leaf 0 0 1 2"), std::string::npos) << boxes;
  ASSERT_EQ(runProcgen("bbox " + (dir_ / "s.scene").string() + " -o " + a.string(), err, out), 0) << slurp(err);
  EXPECT_EQ(slurp(out), "");
  EXPECT_EQ(slurp(a), boxes);
}

TEST_F(CliOutputs, UnwritablePathsAreExitCode4InEveryCommand) {
  std::ofstream(dir_ / "s.scene") << "leaf 0 0 1 1\n";
  const std::string bad = (dir_ / "no" / "dir" / "x.txt").string();
  const fs::path err = dir_ / "err.txt";
  EXPECT_EQ(runProcgen("parens --random 10 --stats-json " + bad, err), 4) << slurp(err);
  EXPECT_EQ(runProcgen("bbox " + (dir_ / "s.scene").string() + " -o " + bad, err), 4) << slurp(err);
  EXPECT_NE(slurp(err).find("error: cannot open"), std::string::npos) << slurp(err);
}

}  // namespace

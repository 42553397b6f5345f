// Atomic outputs and output clashes through the `procgen` binary (issue 16,
// D8 and D10): when any output of a run fails — a missing directory, a full
// disk, standard output on /dev/full, an .mtl that cannot be written — none
// of the run's files is left and an older file of the same name keeps its
// contents; two outputs naming one file, or two streams on standard output,
// are refused with exit 1 before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::runProcgen;
using procgen::test::slurp;
using CliAtomicOutputs = procgen::test::ScratchDirTest;

/// Every name in `dir` but the test's own inputs and stderr/stdout captures
/// (temporaries included: they start with a dot).
std::vector<std::string> outputsIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != "err.txt" && name != "out.txt" && name != "m.l") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

const char* kModel =
    "Lsystem: 1\n"
    "derivation length: 3\n"
    "Axiom: F\n"
    "F --> F[+F]F[-;F]F\n"
    "endlsystem\n";

TEST_F(CliAtomicOutputs, AFailedOutputRemovesTheRunsEarlierOutputs) {
  const fs::path err = dir_ / "err.txt", a = dir_ / "a.txt";
  const std::string bad = (dir_ / "no" / "such" / "b.txt").string();
  EXPECT_EQ(runProcgen("parens --random 10 -o " + a.string() + " -o " + bad, err), 4) << slurp(err);
  EXPECT_TRUE(outputsIn(dir_).empty()) << "left: " << outputsIn(dir_).front();
  // An older file of the same name is not lost either.
  std::ofstream(a) << "old";
  EXPECT_EQ(runProcgen("parens --random 10 -o " + a.string() + " --stats-json " + bad, err), 4) << slurp(err);
  EXPECT_EQ(slurp(a), "old");
  EXPECT_EQ(outputsIn(dir_), std::vector<std::string>{"a.txt"});
}

TEST_F(CliAtomicOutputs, AnObjIsNotLeftPointingAtAMissingMtl) {
  std::ofstream(dir_ / "m.l") << kModel;
  fs::create_directory(dir_ / "x.mtl");  // the material library cannot be written
  const fs::path err = dir_ / "err.txt";
  EXPECT_EQ(runProcgen("lsystem " + (dir_ / "m.l").string() + " -q -o " + (dir_ / "a.txt").string() + " -o " +
                           (dir_ / "x.obj").string(),
                       err),
            4)
      << slurp(err);
  EXPECT_EQ(outputsIn(dir_), std::vector<std::string>{"x.mtl"});  // no a.txt, no x.obj, no temporary
}

TEST_F(CliAtomicOutputs, AFullDiskLeavesNoPartialFile) {
  // RLIMIT_FSIZE stands in for a full disk: past 64 KiB, writes fail with
  // EFBIG (SIGXFSZ ignored, which the child inherits). The output is ~600 KB.
  const fs::path err = dir_ / "err.txt", big = dir_ / "big.txt";
  EXPECT_EQ(runProcgen("parens --random 100000 -o " + big.string(), err, {}, "trap '' XFSZ; ulimit -f 64;"), 4)
      << slurp(err);
  EXPECT_NE(slurp(err).find("big.txt"), std::string::npos) << slurp(err);
  EXPECT_TRUE(outputsIn(dir_).empty()) << "left: " << outputsIn(dir_).front();
  // The same run without the limit writes the whole file.
  EXPECT_EQ(runProcgen("parens --random 100000 -o " + big.string(), err), 0) << slurp(err);
  EXPECT_GT(fs::file_size(big), 64u * 1024u);
}

TEST_F(CliAtomicOutputs, AFailedStandardOutputRemovesTheFiles) {
  const fs::path err = dir_ / "err.txt", a = dir_ / "a.txt";
  EXPECT_EQ(runProcgen("parens --random 10 -o " + a.string() + " -o -", err, "/dev/full"), 4) << slurp(err);
  EXPECT_NE(slurp(err).find("standard output"), std::string::npos) << slurp(err);
  EXPECT_TRUE(outputsIn(dir_).empty()) << "left: " << outputsIn(dir_).front();
}

TEST_F(CliAtomicOutputs, TheSameFileThroughTwoOptionsIsRefusedUpFront) {
  std::ofstream(dir_ / "m.l") << kModel;
  const fs::path err = dir_ / "err.txt";
  const std::string x = (dir_ / "x.txt").string(), model = (dir_ / "m.l").string();
  const std::vector<std::string> clashes = {
      "parens --random 10 -o " + x + " --stats-json " + x,
      "parens --random 10 -o " + x + " -o " + (dir_ / "." / "x.txt").string(),
      "lsystem " + model + " -o " + x + " --stats-json " + (dir_ / "sub" / ".." / "x.txt").string(),
      "lsystem " + model + " -o " + (dir_ / "x.obj").string() + " -o " + (dir_ / "x.mtl").string(),
      "scene " + (dir_ / "s.scene").string() + " -o " + (dir_ / "x.mtl").string() + " -o " +
          (dir_ / "x.obj").string(),
      "bbox --random 10 -o " + x + " --write-tree " + x,
  };
  std::ofstream(dir_ / "s.scene") << "m.l\n";
  fs::create_directory(dir_ / "sub");
  for (const std::string& args : clashes) {
    EXPECT_EQ(runProcgen(args, err), 1) << args << "\n" << slurp(err);
    EXPECT_NE(slurp(err).find("output clash"), std::string::npos) << args << "\n" << slurp(err);
    EXPECT_FALSE(fs::exists(dir_ / "x.txt") || fs::exists(dir_ / "x.obj")) << args;
  }
}

TEST_F(CliAtomicOutputs, TwoStreamsOnStandardOutputAreRefused) {
  std::ofstream(dir_ / "m.l") << kModel;
  const fs::path err = dir_ / "err.txt", out = dir_ / "out.txt";
  for (const std::string& args : {std::string("parens --random 10 -o - --stats-json -"),
                                 std::string("parens --random 10 -o - -o -"),
                                 "lsystem " + (dir_ / "m.l").string() + " -o - --stats-json -",
                                 std::string("bbox --random 10 --write-tree -")}) {  // bbox -o defaults to -
    EXPECT_EQ(runProcgen(args, err, out), 1) << args << "\n" << slurp(err);
    EXPECT_NE(slurp(err).find("standard output"), std::string::npos) << args << "\n" << slurp(err);
    EXPECT_EQ(slurp(out), "") << args;
  }
}

}  // namespace

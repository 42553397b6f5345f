// Strict integer options in every command (issue 16, D6): negatives and
// overflow are usage errors (exit 1) with short messages instead of wrapping
// (--seed -1 was 2^64-1) or saturating; decimal stays decimal ("010" is ten,
// not octal eight); counts that fit the type but not the machine stop at the
// memory budget (exit 2) instead of "internal: vector::_M_default_append".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::runProcgen;
using procgen::test::slurp;
using CliStrictOptions = procgen::test::ScratchDirTest;

TEST_F(CliStrictOptions, NegativeAndOverflowingIntegersAreUsageErrors) {
  std::ofstream(dir_ / "m.l") << "Lsystem: 1\nderivation length: 2\nAxiom: F\nF --> F+F\nendlsystem\n";
  const std::string model = (dir_ / "m.l").string();
  const fs::path err = dir_ / "err.txt";
  const std::vector<std::pair<std::string, std::string>> cases = {  // arguments, option named in the message
      {"parens --random 10 --seed -1", "--seed"},
      {"parens --random 10 --seed 12345678901234567890123", "--seed"},
      {"parens --random 10 --seed 18446744073709551616", "--seed"},
      {"parens --random 10 --seed 0x10", "--seed"},
      {"parens --random 10 --seed 1e3", "--seed"},
      {"parens --random -5", "--random"},
      {"bbox --random -1", "--random"},
      {"bbox --random 10 --dims 4", "--dims"},
      {"lsystem " + model + " --seed -1", "--seed"},
      {"lsystem " + model + " -n -1", "--iterations"},
      {"lsystem " + model + " --max-modules -3", "--max-modules"},
      {"lsystem " + model + " --threads -1", "--threads"},
      {"lsystem " + model + " --cylinder-sides 65", "--cylinder-sides"},
      {"lsystem " + model + " --image-size 100,-100", "--image-size"},
      {"scene x.scene --seed -1", "--seed"},
      {"bench parens --repeat 0", "--repeat"},
  };
  for (const auto& [args, option] : cases) {
    EXPECT_EQ(runProcgen(args, err), 1) << args << "\n" << slurp(err);
    const std::string message = slurp(err);
    EXPECT_NE(message.find(option), std::string::npos) << args << "\n" << message;
    EXPECT_LT(message.size(), 300u) << args << "\n" << message;  // no 309-digit bound
  }
}

TEST_F(CliStrictOptions, TheFullRangeIsAcceptedAndDecimalStaysDecimal) {
  const fs::path err = dir_ / "err.txt", out = dir_ / "out.txt";
  auto checksum = [&](const std::string& seed) {
    EXPECT_EQ(runProcgen("parens --random 1000 --stats-json - --seed " + seed, err, out), 0) << slurp(err);
    return nlohmann::json::parse(slurp(out))["checksum"].get<std::string>();
  };
  EXPECT_EQ(checksum("010"), checksum("10"));  // CLI11 alone reads "010" as octal 8
  EXPECT_NE(checksum("8"), checksum("10"));
  (void)checksum("18446744073709551615");  // the largest seed is a seed
  (void)checksum("0");
}

TEST_F(CliStrictOptions, CountsBeyondTheMachineStopAtTheBudget) {
  const fs::path err = dir_ / "err.txt";
  for (const std::string args : {"parens --random 18446744073709551615", "parens --random 9223372036854775807 -o -",
                                 "bbox --random 18446744073709551615"}) {
    EXPECT_EQ(runProcgen(args, err), 2) << args << "\n" << slurp(err);
    EXPECT_NE(slurp(err).find("memory budget"), std::string::npos) << args << "\n" << slurp(err);
    EXPECT_EQ(slurp(err).find("internal"), std::string::npos) << args << "\n" << slurp(err);
  }
}

}  // namespace

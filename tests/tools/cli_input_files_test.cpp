// Friendly input through the `procgen` binary (issue 16, D7 and the minor
// items): directories and devices are refused with exit 2 in every command
// that reads a file (they gave empty results, "the scene lists no L-system",
// or read /dev/zero without end); a UTF-8 byte-order mark is accepted by the
// .l and .scene readers; diagnostics quote a 10 MB token or binary bytes
// shortly and escaped.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::runProcgen;
using procgen::test::slurp;
using CliInputFiles = procgen::test::ScratchDirTest;

const char* kModel =
    "Lsystem: 1\n"
    "derivation length: 2\n"
    "Axiom: F\n"
    "F --> F+F\n"
    "endlsystem\n";

TEST_F(CliInputFiles, DirectoriesAndDevicesAreRefusedInEveryCommand) {
  const fs::path err = dir_ / "err.txt", out = dir_ / "out.txt";
  fs::create_directory(dir_ / "d");
  const std::string d = (dir_ / "d").string();
  std::ofstream(dir_ / "m.l") << kModel;
  const std::vector<std::string> cases = {
      "parens " + d, "bbox " + d, "scene " + d, "lsystem " + d,
      "parens /dev/zero", "bbox /dev/zero", "scene /dev/zero", "lsystem /dev/zero",
      "lsystem " + (dir_ / "m.l").string() + " --view /dev/zero",
  };
  for (const std::string& args : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(runProcgen(args, err, out), 2) << args << "\n" << slurp(err);
    const std::string message = slurp(err);
    EXPECT_TRUE(message.find("directory") != std::string::npos || message.find("device") != std::string::npos)
        << args << "\n" << message;
    EXPECT_EQ(slurp(out), "") << args;
    // Not a timing test of speed: /dev/zero used to be read until memory ran out.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << args;
  }
}

TEST_F(CliInputFiles, AUtf8ByteOrderMarkIsAccepted) {
  const fs::path err = dir_ / "err.txt", out = dir_ / "out.txt";
  std::ofstream(dir_ / "m.l", std::ios::binary) << "\xEF\xBB\xBF" << kModel;
  std::ofstream(dir_ / "plain.l", std::ios::binary) << kModel;
  ASSERT_EQ(runProcgen("lsystem " + (dir_ / "m.l").string() + " -q -o -", err, out), 0) << slurp(err);
  const std::string with_bom = slurp(out);
  ASSERT_EQ(runProcgen("lsystem " + (dir_ / "plain.l").string() + " -q -o -", err, out), 0) << slurp(err);
  EXPECT_EQ(with_bom, slurp(out));
  EXPECT_EQ(with_bom, "F+F+F+F\n");  // F -> F+F twice, by hand
  std::ofstream(dir_ / "s.scene", std::ios::binary) << "\xEF\xBB\xBF" << "m.l at=1,0,0\n";
  EXPECT_EQ(runProcgen("scene " + (dir_ / "s.scene").string() + " -q -o -", err, out), 0) << slurp(err);
  EXPECT_EQ(slurp(out), "F+F+F+F\n");
}

TEST_F(CliInputFiles, DiagnosticsQuoteHugeTokensShortlyAndEscapeBinaryBytes) {
  const fs::path err = dir_ / "err.txt";
  const std::string huge(10 << 20, 'q');  // a 10 MB name in an expression
  std::ofstream(dir_ / "big.l", std::ios::binary)
      << "Lsystem: 1\nderivation length: 1\nAxiom: F(" << huge << ")\nendlsystem\n";
  EXPECT_EQ(runProcgen("lsystem " + (dir_ / "big.l").string(), err), 2) << slurp(err).substr(0, 500);
  std::string message = slurp(err);
  EXPECT_LT(message.size(), 2000u) << message.substr(0, 500);
  EXPECT_NE(message.find("big.l:3:"), std::string::npos) << message.substr(0, 500);

  std::ofstream(dir_ / "bin.l", std::ios::binary)
      << "Lsystem: 1\nderivation length: 1\nAxiom: F\n\x01\x02\xff\xfe --> F\nendlsystem\n";
  EXPECT_EQ(runProcgen("lsystem " + (dir_ / "bin.l").string(), err), 2) << slurp(err);
  message = slurp(err);
  EXPECT_NE(message.find("bin.l:4:"), std::string::npos) << message;
  for (char c : message) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE((b >= 0x20 && b < 0x7f) || c == '\n' || c == '\t') << "raw byte " << int(b) << " in\n" << message;
  }
  EXPECT_NE(message.find("\\x01"), std::string::npos) << message;
}

}  // namespace

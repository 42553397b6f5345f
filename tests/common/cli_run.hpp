// What the end-to-end tests of the `procgen` command share: running the built
// binary with its output in files, reading a file whole, and a scratch
// directory per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace procgen::test {

namespace fs = std::filesystem;

/// The whole file (empty when it cannot be read).
inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `ENV procgen ARGS` through the shell with stderr in `err` and stdout
/// in `out` (left alone when empty). Returns the exit code, -1 when the
/// process did not exit normally.
inline int runProcgen(const std::string& args, const fs::path& err, const fs::path& out = {},
                      const std::string& env = "") {
  std::string cmd = env + " " + PROCGEN_CLI_PATH + " " + args;
  if (!out.empty()) cmd += " > " + out.string();
  cmd += " 2> " + err.string();
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A fixture with a fresh directory named after the test and the process,
/// removed after the test. (A subclass must not declare its own dir_.)
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';  // parameterized tests are named Prefix/Suite.Name/N
    dir_ = fs::temp_directory_path() / ("procgen_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace procgen::test

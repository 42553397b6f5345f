// `procgen bench lsystem`: the table and JSON report every requested column
// and the module counts of the models (checked against the library), and bad
// options are usage errors.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/cli_run.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/opencl.hpp"

namespace {

namespace fs = std::filesystem;

using procgen::test::runProcgen;
using procgen::test::slurp;

using CliBench = procgen::test::ScratchDirTest;

TEST_F(CliBench, ReportsEveryColumnAndTheModelSizes) {
  const fs::path model = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems" / "koch-island.l";
  procgen::DeriveStats stats;
  (void)procgen::derive(procgen::LSystem::fromFile(model), {}, &stats);

  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt", json = dir_ / "bench.json";
  ASSERT_EQ(runProcgen("bench lsystem " + model.string() + " --repeat 1 --threads 1,2 --json " + json.string(), err, out),
            0)
      << slurp(err);
  const std::string table = slurp(out);
  EXPECT_NE(table.find("| serial ms |"), std::string::npos) << table;
  if (procgen::backendAvailable(procgen::Backend::kCpu)) {
    EXPECT_NE(table.find("| cpu x1 ms | cpu x2 ms |"), std::string::npos) << table;
  }
  // One derive row and one interpret row for the model, with its size.
  const std::string row = "| koch-island | " + std::to_string(stats.iterations) + " | " +
                          std::to_string(stats.modules) + " | ";
  EXPECT_NE(table.find(row + "derive |"), std::string::npos) << table;
  EXPECT_NE(table.find(row + "interpret |"), std::string::npos) << table;

  const std::string js = slurp(json);
  EXPECT_NE(js.find("\"modules_total\": " + std::to_string(stats.modules_total)), std::string::npos) << js;
  EXPECT_NE(js.find("\"label\": \"serial\""), std::string::npos) << js;
  // Speedups per column against serial: none for serial itself.
  EXPECT_NE(js.find("\"derive_speedup\": [null"), std::string::npos) << js;
  EXPECT_NE(js.find("\"interpret_speedup\": [null"), std::string::npos) << js;
  if (procgen::backendAvailable(procgen::Backend::kCpu)) {
    EXPECT_NE(js.find("\"interpret_speedup\": [null, {\"median\": "), std::string::npos) << js;
    EXPECT_NE(table.find("× ("), std::string::npos) << table;  // the interquartile range
  }
}

// By default the table has an opencl column named after the device (issue 5)
// when a device exists, and says why it has none otherwise.
TEST_F(CliBench, OpenCLColumnIsLabelledWithTheDevice) {
  const fs::path model = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems" / "koch-island.l";
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt", json = dir_ / "bench.json";
  ASSERT_EQ(runProcgen("bench lsystem " + model.string() + " --repeat 1 --threads 1 --json " + json.string(), err, out), 0)
      << slurp(err);
  const std::string table = slurp(out);
  if (!procgen::backendAvailable(procgen::Backend::kOpenCL)) {
    EXPECT_EQ(table.find("opencl"), std::string::npos) << table;
    return;
  }
  if (procgen::openclDevices().empty()) {
    EXPECT_EQ(table.find("opencl"), std::string::npos) << table;
    EXPECT_NE(slurp(err).find("backend 'opencl' skipped: " + procgen::openclStatus()), std::string::npos)
        << slurp(err);
    return;
  }
  const std::string name = procgen::openclSelectedDevice().name;
  EXPECT_NE(table.find("| opencl " + name + " ms |"), std::string::npos) << table;
  // Both stages ran on it: no '-' (failed) cell in the opencl column.
  for (const char* stage : {"| derive |", "| interpret |"}) {
    const size_t at = table.find(stage);
    ASSERT_NE(at, std::string::npos) << table;
    const std::string line = table.substr(at, table.find('\n', at) - at);
    EXPECT_EQ(line.find("| - |"), std::string::npos) << line;
  }
  EXPECT_NE(slurp(json).find("\"device\": \"" + name + "\""), std::string::npos) << slurp(json);
}

TEST_F(CliBench, BadOptionsAreUsageErrors) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  EXPECT_EQ(runProcgen("bench lsystem --repeat 0", err, out), 1);
  EXPECT_EQ(runProcgen("bench lsystem --backends nonsense", err, out), 1);
  EXPECT_EQ(runProcgen("bench", err, out), 1);  // a benchmark must be named
  EXPECT_EQ(runProcgen("bench lsystem /nonexistent/model.l --repeat 1", err, out), 2);
}

}  // namespace

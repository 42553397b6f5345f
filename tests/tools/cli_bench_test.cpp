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
  ASSERT_EQ(runProcgen("bench lsystem " + model.string() + " --repeat 1 --threads 1,2 --cold-runs 0 --json " + json.string(), err, out),
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
  ASSERT_EQ(runProcgen("bench lsystem " + model.string() + " --repeat 1 --threads 1 --cold-runs 0 --json " + json.string(), err, out), 0)
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

// The one-shot columns (issue 15): cold figures from fresh CLI processes and
// the floor from the fault-in child, per stage, with the byte counts the
// floor faults in taken from the library's own string and geometry.
TEST_F(CliBench, ColdSteadyAndFloorColumns) {
  const fs::path model = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems" / "koch-island.l";
  const procgen::LSystem lsystem = procgen::LSystem::fromFile(model);
  const procgen::ModuleString string = procgen::derive(lsystem, {});
  procgen::InterpretOptions iopt;
  iopt.view = lsystem.view();
  const procgen::Geometry g = procgen::interpret(lsystem, string, iopt);
  const uint64_t string_bytes = string.symbols.size() + 8 * string.param_offsets.size() + 4 * string.params.size();
  const uint64_t geometry_bytes = sizeof(procgen::Segment) * g.segments.size() +
                                  sizeof(procgen::Vec3) * g.polygon_vertices.size() +
                                  8 * g.polygon_offsets.size() + 4 * g.polygon_colors.size() +
                                  4 * g.polygon_instances.size();

  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt", json = dir_ / "bench.json";
  ASSERT_EQ(runProcgen("bench lsystem " + model.string() + " --repeat 1 --threads 1 --backends cpu --cold-runs 1 --json " +
                           json.string(),
                       err, out),
            0)
      << slurp(err);
  const std::string table = slurp(out);
  EXPECT_NE(table.find("| model | stage | column | cold ms | steady ms | floor ms |"), std::string::npos) << table;
  EXPECT_NE(table.find("| koch-island | derive | serial | "), std::string::npos) << table;
  EXPECT_NE(table.find("| koch-island | interpret | serial | "), std::string::npos) << table;
  const std::string js = slurp(json);
  for (const char* stage : {"derive", "interpret"}) {
    const std::string name = stage;
    // One figure per column, all measured (a failed child would give -1).
    for (const std::string& field : {name + "_cold_ms", name + "_floor_ms"}) {
      const size_t at = js.find("\"" + field + "\": [");
      ASSERT_NE(at, std::string::npos) << field << "\n" << js;
      const std::string list = js.substr(at, js.find(']', at) - at);
      EXPECT_EQ(list.find("-1"), std::string::npos) << list;
    }
    EXPECT_NE(js.find("\"" + name + "_cold_target\": ["), std::string::npos) << js;
  }
  EXPECT_NE(js.find("\"derive_floor_bytes\": " + std::to_string(string_bytes)), std::string::npos) << js;
  EXPECT_NE(js.find("\"interpret_floor_bytes\": " + std::to_string(geometry_bytes)), std::string::npos) << js;
}

TEST_F(CliBench, ParensColumns) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt", json = dir_ / "bench.json";
  ASSERT_EQ(runProcgen("bench parens --elements 100000 --repeat 1 --threads 1 --backends cpu --cold-runs 1 --json " +
                           json.string(),
                       err, out),
            0)
      << slurp(err);
  const std::string table = slurp(out);
  EXPECT_NE(table.find("| parens | match | serial | "), std::string::npos) << table;
  const std::string js = slurp(json);
  EXPECT_NE(js.find("\"elements\": 100000"), std::string::npos) << js;
  EXPECT_NE(js.find("\"match_floor_bytes\": 400000"), std::string::npos) << js;  // int32 output
  for (const char* field : {"\"match_ms\": [", "\"match_cold_ms\": [", "\"match_floor_ms\": [", "\"match_cold_target\": ["})
    EXPECT_NE(js.find(field), std::string::npos) << field << "\n" << js;
  if (procgen::backendAvailable(procgen::Backend::kCpu)) {
    EXPECT_NE(table.find("| parens | match | cpu x1 | "), std::string::npos) << table;
  }
  EXPECT_EQ(runProcgen("bench parens --elements 0", err, out), 1);
}

// The floor child reports what it was asked to fault in.
TEST_F(CliBench, FloorChildReportsBytesAndThreads) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  ASSERT_EQ(runProcgen("bench floor --bytes 8388608 --threads 2", err, out), 0) << slurp(err);
  const std::string js = slurp(out);
  EXPECT_NE(js.find("\"bytes\": 8388608, \"threads\": 2, \"ms\": "), std::string::npos) << js;
  EXPECT_EQ(runProcgen("bench floor --bytes 0", err, out), 1);
}

TEST_F(CliBench, BadOptionsAreUsageErrors) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  EXPECT_EQ(runProcgen("bench lsystem --repeat 0", err, out), 1);
  EXPECT_EQ(runProcgen("bench lsystem --cold-runs -1", err, out), 1);
  EXPECT_EQ(runProcgen("bench lsystem --backends nonsense", err, out), 1);
  EXPECT_EQ(runProcgen("bench", err, out), 1);  // a benchmark must be named
  EXPECT_EQ(runProcgen("bench lsystem /nonexistent/model.l --repeat 1", err, out), 2);
}

}  // namespace

// The OpenCL runtime layer on whatever device this machine has (PoCL in CI):
//  - every shared C-subset header (src/**/*.h, embedded at build time) compiles
//    as OpenCL C 1.2 with no warnings — the claim that per-element logic is
//    written once for C++ and OpenCL C (STYLE.md practice 2);
//  - a deliberately broken kernel's exception names clBuildProgram and
//    carries the build log;
//  - device choice and allocation limits.
// With no OpenCL platform or device every test skips with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/backends.hpp"
#include "opencl/kernel_sources.hpp"
#include "opencl/runtime.hpp"
#include "procgen/opencl.hpp"

namespace {

using procgen::opencl::Context;

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(OpenCLRuntime, EveryCSubsetHeaderCompilesAsOpenCLC12WithoutWarnings) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  Context& ctx = Context::get();
  int headers = 0;
  for (std::size_t i = 0; i < procgen::opencl::kEmbeddedSourceCount; ++i) {
    const std::string name = procgen::opencl::kEmbeddedSources[i].name;
    if (!endsWith(name, ".h") || name.rfind("Random123/", 0) == 0) continue;
    SCOPED_TRACE(name);
    ++headers;
    // A kernel that references nothing: the header's inline functions must
    // still parse and type-check. -Werror turns any warning into a failure,
    // and the log must be free of warnings too.
    const std::string source = "#include \"" + name + "\"\n__kernel void probe(__global int* out) { out[0] = 1; }\n";
    std::string log;
    cl_program p = nullptr;
    try {
      p = ctx.buildSource(source, "-Werror", &log);
    } catch (const procgen::OpenCLError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    clReleaseProgram(p);
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
  EXPECT_GE(headers, 6);  // clc, random, tables, expr, match, turtle (+ treebox monoids)
}

// The header test above relies on -Werror reaching the device compiler.
TEST(OpenCLRuntime, WerrorTurnsWarningsIntoBuildFailures) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  Context& ctx = Context::get();
  const std::string source = "#warning procgen_probe_warning\n__kernel void probe(__global int* out) { out[0] = 1; }\n";
  std::string log;
  cl_program p = ctx.buildSource(source, "", &log);
  clReleaseProgram(p);
  EXPECT_NE(log.find("procgen_probe_warning"), std::string::npos) << log;
  EXPECT_THROW(ctx.buildSource(source, "-Werror"), procgen::OpenCLError);
}

TEST(OpenCLRuntime, EveryEmbeddedKernelBuilds) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  Context& ctx = Context::get();
  for (std::size_t i = 0; i < procgen::opencl::kEmbeddedSourceCount; ++i) {
    const std::string name = procgen::opencl::kEmbeddedSources[i].name;
    if (!endsWith(name, ".cl")) continue;
    SCOPED_TRACE(name);
    std::string log;
    cl_program p = nullptr;
    EXPECT_NO_THROW(p = ctx.buildSource("#include \"" + name + "\"\n", "-Werror", &log));
    if (p) clReleaseProgram(p);
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

TEST(OpenCLRuntime, BrokenKernelThrowsWithItsBuildLog) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  Context& ctx = Context::get();
  const std::string source =
      "#include \"common/clc.h\"\n"
      "__kernel void broken(__global pg_u32* out) { out[0] = undeclared_identifier_xyz; }\n";
  try {
    cl_program p = ctx.buildSource(source, "");
    clReleaseProgram(p);
    FAIL() << "the broken kernel built";
  } catch (const procgen::OpenCLError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.call(), "clBuildProgram");
    EXPECT_NE(what.find("clBuildProgram"), std::string::npos) << what;
    EXPECT_NE(what.find("build log"), std::string::npos) << what;
    EXPECT_NE(e.buildLog().find("undeclared_identifier_xyz"), std::string::npos) << e.buildLog();
    EXPECT_NE(what.find("undeclared_identifier_xyz"), std::string::npos) << what;
    EXPECT_EQ(e.exitCode(), procgen::ExitCode::kBackendUnavailable);
  }
}

TEST(OpenCLRuntime, IncludesResolveAgainstTheEmbeddedTable) {
  const std::string text = procgen::opencl::expandIncludes("lsystem/match.h");
  EXPECT_NE(text.find("pgFindProduction"), std::string::npos);
  EXPECT_NE(text.find("philox4x32"), std::string::npos);  // Random123, through common/random.h
  EXPECT_NE(text.find("#line 1 \"common/clc.h\""), std::string::npos);
  EXPECT_THROW(procgen::opencl::expandIncludes("no/such.cl"), std::out_of_range);
}

TEST(OpenCLRuntime, DeviceChoice) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const auto devices = procgen::openclDevices();
  EXPECT_EQ(procgen::openclSelectedDevice(0).index, 0);
  EXPECT_THROW(procgen::openclSelectedDevice(static_cast<int>(devices.size())),
               procgen::BackendUnavailableError);
  // Without a request the first GPU wins, else device 0 (unless the
  // environment picks one).
  if (!std::getenv("PROCGEN_OPENCL_DEVICE")) {
    int want = 0;
    for (const auto& d : devices)
      if (d.type == "gpu") {
        want = d.index;
        break;
      }
    EXPECT_EQ(procgen::openclSelectedDevice().index, want);
  }
  for (const auto& d : devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.compute_units, 0u);
    EXPECT_GT(d.global_memory, 0u);
    EXPECT_GT(d.max_allocation, 0u);
  }
}

TEST(OpenCLRuntime, AllocationsOverTheDeviceLimitFailBeforeAllocating) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  Context& ctx = Context::get();
  procgen::opencl::Buffer b(ctx, "test");
  EXPECT_THROW(b.reserve(ctx.info().max_allocation + 1), procgen::ResourceError);
  EXPECT_EQ(b.get(), nullptr);
  b.reserve(1024);
  EXPECT_NE(b.get(), nullptr);
  const uint32_t in[4] = {1, 2, 3, 4};
  uint32_t out[4] = {};
  b.write(in, sizeof in);
  b.read(out, sizeof out);
  EXPECT_EQ(out[3], 4u);
}

}  // namespace

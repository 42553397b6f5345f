// flam3's 99 variations compiled as OpenCL C (src/flame/xform.h, embedded
// at build time) and run on the device (PoCL in CI) against the same header
// compiled as C++ on the host: one xform per variation (pre_blur beside
// linear) with the shared test affine and non-default parameters
// (flame/variation_fixtures.hpp), at the five test points, four random
// streams each. The kernel is built with -Werror.
//
// Tolerance: OpenCL C's sin, cos, exp, pow… need not round like the host's
// libm (within a few ulp), so positions agree within kDeviceTol = 1e-5
// relative to the result (|dev − host|∞ ≤ kDeviceTol·max(‖host‖∞, 1e-3));
// arch and rays evaluate tan/sec near their pole (see variations_test.cpp)
// and get 10×. The bad-value verdict and the colour (only + and ×) must be
// identical. Skips without an OpenCL device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "flame/variation_fixtures.hpp"
#include "flame/xform.h"
#include "opencl/runtime.hpp"

namespace {

using namespace procgen;
using namespace procgen::test::flame;

constexpr double kDeviceTol = 1e-5;
constexpr int kStreams = 4;
constexpr pg_u64 kSeed = 0x0123456789abcdefULL;

// Item g applies xform g / (points·streams) to point (g / streams) % points
// on random stream g; out holds x, y, colour, verdict per item.
const char* const kKernel = R"CL(
#include "flame/xform.h"
__kernel void apply_variations(__global const PgFlameXform* xforms, __global const PgFlameTerm* terms,
                               __global const float* params, __global const float* points,
                               uint point_count, uint stream_count, uint item_count, ulong seed,
                               __global float* out) {
  uint g = get_global_id(0);
  if (g >= item_count) return;
  uint xi = g / (point_count * stream_count);
  uint pi = (g / stream_count) % point_count;
  PgFlameXform xf = xforms[xi];
  PgFlameRng rng;
  pgFlameRngInit(&rng, seed, g);
  PgFlamePoint p;
  p.x = points[2 * pi];
  p.y = points[2 * pi + 1];
  p.color = 0.25f;
  int ok = pgFlameApplyXform(&xf, terms, params, &p, &rng);
  out[4 * g] = p.x;
  out[4 * g + 1] = p.y;
  out[4 * g + 2] = p.color;
  out[4 * g + 3] = (float)ok;
}
)CL";

TEST(OpenCLFlameVariations, AllVariationsMatchTheHost) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  // One xform per variation, in index order.
  FlameGenome genome;
  for (int v = 0; v < kFlameVariationCount; ++v)
    genome.xforms.push_back(testXform(v == 67 ? std::vector<std::pair<int, double>>{{0, 0.9}, {67, 0.7}}
                                              : std::vector<std::pair<int, double>>{{v, 0.7}}));
  const flame::XformTable table = flame::compileXforms(genome);
  std::vector<float> points;
  for (const auto& t : testAffineOutputs()) {
    const std::array<float, 2> in = inputFor(t);
    points.insert(points.end(), in.begin(), in.end());
  }
  const auto point_count = static_cast<cl_uint>(points.size() / 2);
  const auto item_count = static_cast<cl_uint>(table.xforms.size()) * point_count * kStreams;

  opencl::Context& ctx = opencl::Context::get();
  std::string log;
  cl_program program = ctx.buildSource(kKernel, "-Werror", &log);
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  std::vector<float> out(4u * item_count, -12345.0f);  // poison
  {
    auto lock = ctx.lock();
    opencl::Kernel kernel(program, "apply_variations");
    opencl::Buffer xforms(ctx, "xforms"), terms(ctx, "terms"), params(ctx, "params"), pts(ctx, "points"),
        result(ctx, "out");
    xforms.upload(table.xforms.data(), table.xforms.size() * sizeof(PgFlameXform));
    terms.upload(table.terms.data(), table.terms.size() * sizeof(PgFlameTerm));
    params.upload(table.params.data(), table.params.size() * sizeof(float));
    pts.upload(points.data(), points.size() * sizeof(float));
    result.upload(out.data(), out.size() * sizeof(float));
    kernel.arg(0, xforms).arg(1, terms).arg(2, params).arg(3, pts);
    kernel.arg(4, point_count).arg(5, static_cast<cl_uint>(kStreams)).arg(6, item_count);
    kernel.arg(7, static_cast<cl_ulong>(kSeed)).arg(8, result);
    kernel.run(ctx, item_count, 64);
    result.read(out.data(), out.size() * sizeof(float));
  }
  clReleaseProgram(program);

  double worst = 0;
  int worst_v = -1;
  for (cl_uint g = 0; g < item_count; ++g) {
    const cl_uint xi = g / (point_count * kStreams), pi = (g / kStreams) % point_count;
    PgFlameRng rng;
    pgFlameRngInit(&rng, kSeed, g);
    PgFlamePoint p{points[2 * pi], points[2 * pi + 1], 0.25f};
    const int ok = pgFlameApplyXform(&table.xforms[xi], table.terms.data(), table.params.data(), &p, &rng);
    SCOPED_TRACE(std::string(flameVariationName(static_cast<int>(xi))) + " at point " + std::to_string(pi) +
                 ", stream " + std::to_string(g));
    const float* dev = &out[4u * g];
    ASSERT_EQ(dev[3], static_cast<float>(ok)) << "bad-value verdicts differ: host (" << p.x << ", " << p.y
                                              << "), device (" << dev[0] << ", " << dev[1] << ")";
    EXPECT_EQ(dev[2], p.color);
    if (!ok) continue;
    const double size = std::max({std::fabs(p.x), std::fabs(p.y), 1e-3f});
    const double err = std::max(std::fabs(dev[0] - p.x), std::fabs(dev[1] - p.y)) / size;
    const double tol = (xi == 41 || xi == 44 ? 10.0 : 1.0) * kDeviceTol;
    EXPECT_LE(err, tol) << "host (" << p.x << ", " << p.y << "), device (" << dev[0] << ", " << dev[1] << ")";
    if (err > worst) {
      worst = err;
      worst_v = static_cast<int>(xi);
    }
  }
  RecordProperty("worst_relative_error",
                 std::to_string(worst) + " (" + std::string(flameVariationName(worst_v)) + ")");
}

}  // namespace

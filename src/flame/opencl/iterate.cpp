// Stage iterate, opencl backend: host driver of iterate.cl — the chaos game
// of Schied et al., "High Performance Iterated Function Systems"
// (shared/seeds/003_*.txt §2–3): work-items assigned to xforms in proportion
// to their weights, the point buffer permuted between steps, one launch per
// step (the permutation needs a global barrier, §3.1); with flam3's semantics
// (flam3.c flam3_iterate, rect.c iter_thread). Stages per render:
//   1. upload the tables (xforms, terms, params, visibility, palette,
//      selection rows) and the per-xform work-item ranges: flam3's 16384-entry
//      weight row × P/16384, so each xform gets exactly flam3's quantised share;
//   2. P start points (flameInitPoints), then `fuse` unplotted steps and
//      ⌈samples / P⌉ plotted steps, the last plotting only the points below
//      the remainder (point numbers, not work-items: the work-items are sorted
//      by xform, the points are not); with xaos each step is draw, scan,
//      group, iterate;
//   3. plotting: on CPU devices banded — every 2^20 plotted records are
//      binned by histogram band (a stable counting sort) and added band by
//      band, one work-item per band with plain float adds in batch order, so
//      the sums are reproducible; elsewhere direct — 64-bit fixed-point
//      atomics from the step, exact in any order (float cmpxchg atomics where
//      the device lacks 64-bit atomics: order-dependent);
//   4. read the histogram back into FlameBuckets.
// P is a power of 4 (the Feistel permutation splits log2 P bits in halves).
// On a CPU device P is in [2^10, 2^16], chosen so that every orbit has about
// flam3's 10000 plotted steps (8192) when the samples allow; on a GPU it is in
// [2^14, 2^20] with ≥ 256 plotted steps per point (the fuse then costs ≤ 6%,
// but slowly converging flames carry more of their transient than in flam3).
//
// Measured on PoCL, 2 cores (DISABLED_Throughput in the test, M samples per
// CPU-second, the machine shared): a 4-xform spherical genome at 1280×720
// q10: banded floats 22, banded fixed point 17.6, banded with atomics 14,
// direct float cmpxchg atomics 11, direct 64-bit atomics 8; 38 with the
// camera off the attractor (the iteration alone); 30 M samples/s wall for the
// default when both cores were free for a moment. Atomics at random cells
// serialise on cache misses; the bands keep their cells in cache and need
// no atomics, and float buckets are half the bytes of fixed-point ones.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flame/flame_rng.h"
#include "flame/opencl/iterate.h"
#include "flame/opencl/iterate_opencl.hpp"
#include "opencl/runtime.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::flame {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

namespace {

constexpr int kMinPointsLog2 = 10;            // below 2^14 the ranges sample the grain row (stratified)
constexpr int kMinGpuPointsLog2 = 14;         // a GPU wants many work-items: one per grain entry at least
constexpr uint64_t kPlotStepsPerPoint = 256;  // GPU: wanted plotted steps per point before P grows
// CPU devices: orbits about as long as flam3's 10000-sample sub-batches, so
// the transient after the fuse weighs as little as in flam3 (orbits of a few
// hundred steps rendered examples/flames/mixed.flam3 flame 1 5 % brighter
// than serial at 160x90 q500; the presorted CPU path learned the same).
constexpr uint64_t kCpuPlotStepsPerPoint = 8192;
constexpr uint64_t kStepsPerSync = 64;  // steps between reads of the bad-value counter (< 2^32 / (5·2^22))
constexpr uint64_t kReadChunkCells = uint64_t{1} << 18;
constexpr uint32_t kBandBatchRecords = uint32_t{1} << 20;  // records binned at once (banded plotting)
constexpr int kMinBandShift = 13;  // 2^13 cells × 40 bytes: a band's cells fit in a core's L2
constexpr cl_uint kNoFinal = 0xffffffffu;

/// One build of iterate.cl (fixed-point or float accumulation, direct or
/// banded plotting) and its kernels.
struct IterateKernels {
  IterateKernels(Context& ctx, bool fixed_point, bool banded) {
    const std::string options = std::string("-DPG_FLAME_FIXED_POINT=") + (fixed_point ? "1" : "0") +
                                " -DPG_FLAME_BANDED=" + (banded ? "1" : "0");
    cl_program p = ctx.program("flame/opencl/iterate.cl", options);
    init = Kernel(p, "flameInitPoints");
    presorted = Kernel(p, "flameIteratePresorted");
    draw = Kernel(p, "flameDrawXforms");
    scan = Kernel(p, "flameScanCounts");
    group = Kernel(p, "flameGroupPoints");
    grouped = Kernel(p, "flameIterateGrouped");
    band_count = Kernel(p, "flameBandCount");
    band_scan = Kernel(p, "flameBandScan");
    band_scatter = Kernel(p, "flameBandScatter");
    band_accumulate = Kernel(p, "flameBandAccumulate");
  }
  Kernel init, presorted, draw, scan, group, grouped;
  Kernel band_count, band_scan, band_scatter, band_accumulate;
};

/// The stage's per-device state (opencl::withState): the kernels of both
/// builds, made on first use. Buffers live only for one call (the histogram
/// is large; it is not kept on the device between renders).
struct FlameIterateDevice {
  explicit FlameIterateDevice(Context& c) : ctx(c) {
    size_t size = 0;
    opencl::check(clGetDeviceInfo(c.device(), CL_DEVICE_EXTENSIONS, 0, nullptr, &size),
                  "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)");
    std::string extensions(size, '\0');
    opencl::check(clGetDeviceInfo(c.device(), CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr),
                  "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)");
    has_int64_atomics = extensions.find("cl_khr_int64_base_atomics") != std::string::npos;
  }
  IterateKernels& kernels(bool fixed_point, bool banded) {
    std::unique_ptr<IterateKernels>& k = kernels_[(fixed_point ? 1 : 0) + (banded ? 2 : 0)];
    if (!k) k = std::make_unique<IterateKernels>(ctx, fixed_point, banded);
    return *k;
  }
  Context& ctx;
  bool has_int64_atomics = false;

 private:
  std::unique_ptr<IterateKernels> kernels_[4];
};

int choosePointsLog2(uint64_t samples, const OpenCLDevice& device, uint32_t requested) {
  if (requested) {
    int log2 = 0;
    while ((uint64_t{1} << log2) < requested) ++log2;
    if ((uint64_t{1} << log2) != requested || log2 % 2 || log2 < kMinPointsLog2 ||
        log2 > PG_FLAME_MAX_POINTS_LOG2)
      throw Error("flame (opencl): the point count " + std::to_string(requested) +
                      " is not a power of 4 in [2^10, 2^22]",
                  ExitCode::kUsage);
    return log2;
  }
  const bool gpu = device.type == "gpu";
  const int cap = gpu ? 20 : 16;
  const uint64_t steps = gpu ? kPlotStepsPerPoint : kCpuPlotStepsPerPoint;
  int log2 = gpu ? kMinGpuPointsLog2 : kMinPointsLog2;
  while (log2 + 2 <= cap && (uint64_t{1} << (log2 + 2)) * steps <= samples) log2 += 2;
  return log2;
}

/// Units per 1.0 of the fixed-point accumulators: the largest power of two
/// ≤ 2^24 for which even every sample in one bucket cannot overflow 2^62.
float fixedPointScale(uint64_t samples, float max_add) {
  const double bound = static_cast<double>(samples) * std::max(1.0, static_cast<double>(max_add));
  const int exponent = std::min(24, static_cast<int>(std::floor(62.0 - std::log2(bound))));
  return std::ldexp(1.0f, exponent);
}

}  // namespace

FlameHistogram iterateOpenCLTuned(const ChaosProgram& program, const FlameHistogramLayout& layout,
                                  const FlameRenderOptions& options, const Execution& execution,
                                  const OpenCLIterateTuning& tuning, OpenCLIterateReport* report) {
  const XformTable& table = program.table;
  const cl_uint xform_count = static_cast<cl_uint>(table.iterated_count);
  const cl_uint final_index = table.has_final ? xform_count : kNoFinal;
  const uint64_t samples = layout.samples;
  const uint64_t cells = static_cast<uint64_t>(layout.width) * static_cast<uint64_t>(layout.height);

  const std::vector<float>& visibility = program.plot_weights;
  float max_visibility = 0.0f;
  for (float v : visibility) max_visibility = std::max(max_visibility, std::fabs(v));
  float max_colour = 255.0f;
  for (float c : program.palette) max_colour = std::max(max_colour, std::fabs(c));

  return opencl::withState<FlameIterateDevice>(execution.device, [&](FlameIterateDevice& d) {
    Context& ctx = d.ctx;
    const bool grouped = program.has_xaos || tuning.grouped;
    const bool cpu_device = ctx.info().type == "cpu";
    const bool banded = tuning.plotting == OpenCLPlotting::kBanded ||
                        (tuning.plotting == OpenCLPlotting::kAuto && cpu_device);
    const size_t wanted_band_wg = tuning.band_work_group ? tuning.band_work_group : (cpu_device ? 1 : 64);
    // One work-item per band adds the stably binned records in batch order:
    // floats are then as reproducible as fixed point, and half the size.
    const bool ordered_adds = banded && wanted_band_wg == 1;
    const bool fixed_point =
        tuning.accumulation == OpenCLAccumulation::kFixedPoint ||
        (tuning.accumulation == OpenCLAccumulation::kAuto && !ordered_adds && d.has_int64_atomics);
    if (fixed_point && !d.has_int64_atomics)
      throw BackendUnavailableError("flame (opencl): the device '" + ctx.info().name +
                                    "' has no 64-bit atomics (cl_khr_int64_base_atomics) for the "
                                    "fixed-point histogram");
    const int points_log2 = choosePointsLog2(samples, ctx.info(), tuning.points);
    const cl_uint points = cl_uint{1} << points_log2;
    const uint64_t fuse = options.earlyclip ? 100 : 15;  // rect.c FUSE_28 / FUSE_27
    const uint64_t plot_steps = (samples + points - 1) / points;
    const uint64_t steps = fuse + plot_steps;
    if (cells >= PG_FLAME_NO_CELL)
      throw Error("flame (opencl): a histogram of " + std::to_string(cells) +
                      " cells is more than 32-bit cell indices hold",
                  ExitCode::kUsage);
    if (steps >= (uint64_t{1} << 40))
      throw Error(
          "flame (opencl): " + std::to_string(samples) + " samples are more than the step counter holds",
          ExitCode::kUsage);

    // Everything the device holds for this call, asked of the budget before
    // anything is allocated (the host histogram the result keeps is held).
    const uint64_t accumulator_bytes = fixed_point ? sizeof(cl_long) : sizeof(cl_float);
    const uint64_t histogram_bytes = cells * 5 * accumulator_bytes;
    const uint64_t point_bytes = uint64_t{points} * (sizeof(PgFlamePoint) + 4 * sizeof(cl_uint));
    const uint64_t table_bytes =
        table.xforms.size() * sizeof(PgFlameXform) + table.terms.size() * sizeof(PgFlameTerm) +
        table.params.size() * sizeof(float) + program.selection.size() * sizeof(uint16_t) +
        program.palette.size() * sizeof(float) + (xform_count + 1) * 4 * sizeof(cl_uint);
    // Banded: a batch of records, binned, and the bands' counts.
    const uint32_t wanted_records = tuning.batch_records ? tuning.batch_records : kBandBatchRecords;
    const uint32_t batch_steps = banded ? static_cast<uint32_t>(std::min<uint64_t>(
                                              std::max<uint32_t>(1, wanted_records / points), plot_steps))
                                        : 0;
    const uint64_t batch_records = uint64_t{batch_steps} * points;
    int band_shift = tuning.band_shift > 0 ? std::min(tuning.band_shift, 31) : kMinBandShift;
    while (((cells - 1) >> band_shift) + 1 > PG_FLAME_MAX_BANDS) ++band_shift;
    const cl_uint band_count = static_cast<cl_uint>(((cells - 1) >> band_shift) + 1);
    const uint64_t max_chunks = (batch_records + PG_FLAME_BIN_CHUNK - 1) / PG_FLAME_BIN_CHUNK;
    const uint64_t record_bytes =
        banded ? 2 * batch_records * sizeof(PgFlameRecord) + (max_chunks * band_count + band_count + 1) * 4
               : 0;
    const uint64_t staging_bytes = fixed_point ? std::min(cells, kReadChunkCells) * 5 * sizeof(cl_long) : 0;
    requireMemory("flame histogram and points on the OpenCL device",
                  histogram_bytes + point_bytes + table_bytes + record_bytes + staging_bytes,
                  options.memory_budget, cells * sizeof(FlameBucket));

    Buffer xforms_buf(ctx, "flame xforms"), terms_buf(ctx, "flame variation terms"),
        params_buf(ctx, "flame variation parameters"), visibility_buf(ctx, "flame xform visibility"),
        palette_buf(ctx, "flame palette"), selection_buf(ctx, "flame selection rows"),
        start_buf(ctx, "flame xform ranges"), points_buf(ctx, "flame points"),
        last_buf(ctx, "flame last xforms"), next_buf(ctx, "flame next xforms"),
        order_buf(ctx, "flame grouped points"), counts_buf(ctx, "flame xform counts"),
        cursor_buf(ctx, "flame group cursors"), bad_buf(ctx, "flame bad values"),
        histogram_buf(ctx, "flame histogram"), records_buf(ctx, "flame plot records"),
        binned_buf(ctx, "flame binned plot records"), band_matrix_buf(ctx, "flame band counts per chunk"),
        band_start_buf(ctx, "flame band ranges");
    xforms_buf.upload(table.xforms.data(), table.xforms.size() * sizeof(PgFlameXform));
    terms_buf.upload(table.terms.data(), table.terms.size() * sizeof(PgFlameTerm));
    params_buf.upload(table.params.data(), table.params.size() * sizeof(float));
    visibility_buf.upload(visibility.data(), visibility.size() * sizeof(float));
    palette_buf.upload(program.palette.data(), program.palette.size() * sizeof(float));
    points_buf.reserve(uint64_t{points} * sizeof(PgFlamePoint));
    last_buf.reserve(uint64_t{points} * sizeof(cl_uint));
    start_buf.reserve((xform_count + 1) * sizeof(cl_uint));
    if (grouped) {
      selection_buf.upload(program.selection.data(), program.selection.size() * sizeof(uint16_t));
      next_buf.reserve(uint64_t{points} * sizeof(cl_uint));
      order_buf.reserve(uint64_t{points} * sizeof(cl_uint));
      const std::vector<cl_uint> zeros(xform_count, 0u);
      counts_buf.upload(zeros.data(), zeros.size() * sizeof(cl_uint));
      cursor_buf.reserve(xform_count * sizeof(cl_uint));
    } else {
      // The paper's ranges: flam3's weight row (monotone in the xform index)
      // stretched to P work-items, or sampled every grain/P entries when P
      // is smaller (quantising the weights to 1/P ≤ 1/1024).
      std::vector<cl_uint> start(xform_count + 1, 0u);
      if (points >= kSelectionGrain) {
        const cl_uint per_entry = points / kSelectionGrain;
        for (uint32_t e = 0; e < kSelectionGrain; ++e) start[program.selection[e] + 1] += per_entry;
      } else {
        const uint32_t stride = kSelectionGrain / points;
        for (uint32_t e = stride / 2; e < kSelectionGrain; e += stride) start[program.selection[e] + 1] += 1;
      }
      for (cl_uint j = 0; j < xform_count; ++j) start[j + 1] += start[j];
      start_buf.write(start.data(), start.size() * sizeof(cl_uint));
    }
    const cl_uint zero = 0;
    bad_buf.upload(&zero, sizeof zero);
    histogram_buf.reserve(histogram_bytes);
    opencl::check(clEnqueueFillBuffer(ctx.queue(), histogram_buf.get(), &zero, sizeof zero, 0,
                                      histogram_bytes, 0, nullptr, nullptr),
                  "clEnqueueFillBuffer(flame histogram)");

    PgFlameCamera cam{};
    cam.x0 = static_cast<float>(layout.bounds[0]);
    cam.y0 = static_cast<float>(layout.bounds[1]);
    cam.x1 = static_cast<float>(layout.bounds[2]);
    cam.y1 = static_cast<float>(layout.bounds[3]);
    cam.cells_per_x = static_cast<float>(layout.width / (layout.bounds[2] - layout.bounds[0]));
    cam.cells_per_y = static_cast<float>(layout.height / (layout.bounds[3] - layout.bounds[1]));
    cam.center_x = static_cast<float>(layout.center_x);
    cam.center_y = static_cast<float>(layout.center_y);
    cam.cos_rot = static_cast<float>(std::cos(layout.rotate_radians));
    cam.sin_rot = static_cast<float>(std::sin(layout.rotate_radians));
    cam.width = layout.width;
    cam.height = layout.height;
    cam.rotate = layout.rotate_radians != 0.0 ? 1u : 0u;
    const float fixed_scale = fixedPointScale(samples, max_visibility * max_colour);
    cam.fixed_scale = fixed_point ? fixed_scale : 1.0f;

    IterateKernels& k = d.kernels(fixed_point, banded);
    const size_t wg = ctx.workGroupSize(k.presorted.get(), tuning.work_group ? tuning.work_group : 64);
    const cl_ulong seed = options.seed;
    const cl_uint palette_linear = program.palette_mode == FlamePaletteMode::kLinear ? 1u : 0u;

    k.init.arg(0, points).arg(1, seed).arg(2, points_buf).arg(3, last_buf);
    k.init.run(ctx, points, ctx.workGroupSize(k.init.get(), 64));

    Kernel& step_kernel = grouped ? k.grouped : k.presorted;
    constexpr cl_uint kStepArgs = 6;
    step_kernel.arg(0, points);
    if (grouped) {
      step_kernel.arg(1, order_buf).arg(2, start_buf).arg(3, xform_count).arg(4, last_buf).arg(5, points_buf);
      k.draw.arg(0, points).arg(1, seed).arg(3, xform_count).arg(4, cl_uint{program.has_xaos ? 1u : 0u});
      k.draw.arg(5, selection_buf).arg(6, last_buf).arg(7, next_buf).arg(8, counts_buf);
      k.scan.arg(0, xform_count).arg(1, counts_buf).arg(2, start_buf).arg(3, cursor_buf);
      k.group.arg(0, points).arg(1, xform_count).arg(2, next_buf).arg(3, cursor_buf).arg(4, order_buf);
    } else {
      step_kernel.arg(1, static_cast<cl_uint>(points_log2 / 2)).arg(3, start_buf).arg(4, xform_count);
      step_kernel.arg(5, points_buf);
    }
    step_kernel.arg(kStepArgs + 0, xforms_buf).arg(kStepArgs + 1, terms_buf).arg(kStepArgs + 2, params_buf);
    step_kernel.arg(kStepArgs + 3, visibility_buf).arg(kStepArgs + 4, final_index).arg(kStepArgs + 5, seed);
    step_kernel.arg(kStepArgs + 8, palette_buf).arg(kStepArgs + 9, palette_linear).arg(kStepArgs + 10, cam);
    size_t band_wg = 1;
    if (banded) {
      records_buf.reserve(batch_records * sizeof(PgFlameRecord));
      binned_buf.reserve(batch_records * sizeof(PgFlameRecord));
      band_matrix_buf.reserve(max_chunks * band_count * sizeof(cl_uint));
      band_start_buf.reserve((band_count + 1) * sizeof(cl_uint));
      band_wg = ctx.workGroupSize(k.band_accumulate.get(), wanted_band_wg);
      for (Kernel* kernel : {&k.band_count, &k.band_scatter}) {
        kernel->arg(2, records_buf).arg(3, static_cast<cl_uint>(band_shift)).arg(4, band_count);
        kernel->arg(5, band_matrix_buf);
      }
      k.band_scatter.arg(6, binned_buf);
      k.band_scan.arg(0, band_count).arg(2, band_matrix_buf).arg(3, band_start_buf);
      k.band_accumulate.arg(0, band_start_buf).arg(1, binned_buf).arg(2, palette_buf).arg(3, palette_linear);
      k.band_accumulate.arg(4, cam.fixed_scale).arg(5, histogram_buf);
    }
    step_kernel.arg(kStepArgs + 11, banded ? records_buf : histogram_buf).arg(kStepArgs + 13, bad_buf);
    step_kernel.arg(kStepArgs + 12, cl_uint{0});
    // Bins and adds the first `records` records of the batch (banded).
    auto flushBatch = [&](uint64_t records) {
      const cl_uint n = static_cast<cl_uint>(records);
      const cl_uint chunks = static_cast<cl_uint>((records + PG_FLAME_BIN_CHUNK - 1) / PG_FLAME_BIN_CHUNK);
      k.band_count.arg(0, n).arg(1, chunks).run(ctx, chunks, 1);  // one work-item per chunk: stable
      k.band_scan.arg(1, chunks).run(ctx, 1, 1);
      k.band_scatter.arg(0, n).arg(1, chunks).run(ctx, chunks, 1);
      k.band_accumulate.run(ctx, uint64_t{band_count} * band_wg, band_wg);
    };
    uint32_t batch_used = 0;  // plotted steps in the current batch
    const size_t draw_wg = grouped ? ctx.workGroupSize(k.draw.get(), 256) : 1;
    const size_t group_wg = grouped ? ctx.workGroupSize(k.group.get(), 256) : 1;

    uint64_t bad_values = 0;
    for (uint64_t first = 1; first <= steps; first += kStepsPerSync) {
      const uint64_t last = std::min(steps, first + kStepsPerSync - 1);
      for (uint64_t step = first; step <= last; ++step) {
        // Steps 1..fuse plot nothing; then P points a step, the remainder last.
        const uint64_t plotted_before = step > fuse ? (step - fuse - 1) * points : 0;
        const cl_uint plot_limit =
            step > fuse ? static_cast<cl_uint>(std::min<uint64_t>(points, samples - plotted_before)) : 0u;
        step_kernel.arg(kStepArgs + 6, cl_ulong{step}).arg(kStepArgs + 7, plot_limit);
        if (banded && plot_limit) step_kernel.arg(kStepArgs + 12, static_cast<cl_uint>(batch_used * points));
        if (grouped) {
          k.draw.arg(2, cl_ulong{step});
          k.draw.run(ctx, points, draw_wg);
          k.scan.run(ctx, 1, 1);
          k.group.run(ctx, points, group_wg);
        } else {
          PgFlameRng rng;
          pgFlameRngInit(&rng, seed, pgFlameStepStream(step, PG_FLAME_PERMUTATION_STREAM));
          cl_uint4 keys;
          for (cl_uint& key : keys.s) key = pgFlameRandU32(&rng);
          step_kernel.arg(2, keys);
        }
        step_kernel.run(ctx, points, wg);
        if (banded && plot_limit && (++batch_used == batch_steps || step == steps)) {
          flushBatch(uint64_t{batch_used} * points);
          batch_used = 0;
        }
      }
      cl_uint bad = 0;
      bad_buf.read(&bad, sizeof bad);  // blocking: also the point where progress is known
      bad_buf.write(&zero, sizeof zero);
      bad_values += bad;
      if (options.progress) options.progress(static_cast<double>(last) / static_cast<double>(steps));
    }

    FlameHistogram out;
    out.layout = layout;
    out.buckets.resize(cells);
    out.samples = samples;
    out.bad_values = bad_values;
    out.iterations = static_cast<double>(points) * static_cast<double>(steps);
    if (fixed_point) {
      std::vector<cl_long> chunk(std::min(cells, kReadChunkCells) * 5);
      const double unit = 1.0 / static_cast<double>(fixed_scale);
      for (uint64_t begin = 0; begin < cells; begin += kReadChunkCells) {
        const uint64_t n = std::min(kReadChunkCells, cells - begin);
        histogram_buf.read(chunk.data(), n * 5 * sizeof(cl_long), begin * 5 * sizeof(cl_long));
        for (uint64_t c = 0; c < n; ++c) {
          const cl_long* v = &chunk[c * 5];
          out.buckets[begin + c] = {static_cast<float>(v[0] * unit), static_cast<float>(v[1] * unit),
                                    static_cast<float>(v[2] * unit), static_cast<float>(v[3] * unit),
                                    static_cast<float>(v[4] * unit)};
        }
      }
    } else {
      static_assert(sizeof(FlameBucket) == 5 * sizeof(float));
      histogram_buf.read(out.buckets.data(), cells * sizeof(FlameBucket));
    }
    if (report)
      *report = {points, steps, grouped, fixed_point, banded, fixed_point || (banded && band_wg == 1)};
    return out;
  });
}

FlameHistogram iterateOpenCL(const ChaosProgram& program, const FlameHistogramLayout& layout,
                             const FlameRenderOptions& options, const Execution& execution) {
  return iterateOpenCLTuned(program, layout, options, execution, OpenCLIterateTuning{});
}

}  // namespace procgen::flame

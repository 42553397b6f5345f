// Stage match_parens, opencl backend: host driver of match_parens.cl (Levien
// §7–§8 plus one level: stackSlice per partition, scanPartitions + minLevel
// over the partitions, matchLeaf per partition; see the .cl file). Four
// launches and the tree levels per call; only the output, the total and the
// per-partition maximum depths come back to the host.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "treebox/monoids.h"
#include "treebox/opencl/matcher.hpp"

namespace procgen::treebox_detail {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

namespace {

// 4096-element partitions: 32 elements per item keep PoCL's work-item loops
// long (2^24 random input: 190 ms at k = 32 vs 250 ms at k = 8 on 2 cores),
// and 128 items need ~22 KiB of local memory, within every GPU's 32 KiB.
constexpr uint32_t kDefaultWorkGroup = 128;
constexpr uint32_t kDefaultPerItem = 32;
constexpr uint64_t kMinBlock = 32;  // PG_MIN_BLOCK in opencl/min_tree.h

struct HostBic {
  cl_ulong a, b;
};
static_assert(sizeof(HostBic) == sizeof(PgBic));

uint64_t leafLocalBytes(uint64_t wg, uint64_t k) {
  return wg * sizeof(HostBic) + 2 * wg * sizeof(cl_long) + wg * k * sizeof(cl_uint) +
         wg * sizeof(cl_ulong);
}

}  // namespace

namespace {
/// The device's matchers, one per (index size, shape) that was asked for.
struct DeviceMatchers {
  explicit DeviceMatchers(Context&) {}
  std::map<std::tuple<int, uint32_t, uint32_t>, std::unique_ptr<DeviceMatcher>> by_shape;
};
}  // namespace

DeviceMatcher& DeviceMatcher::get(Context& ctx, int index_bytes, OpenCLMatchShape shape) {
  auto lock = ctx.lock();
  auto& slot = ctx.state<DeviceMatchers>().by_shape[{index_bytes, shape.work_group, shape.per_item}];
  if (!slot) slot = std::make_unique<DeviceMatcher>(ctx, index_bytes, shape);
  return *slot;
}

DeviceMatcher::DeviceMatcher(Context& ctx, int index_bytes, OpenCLMatchShape shape)
    : ctx_(ctx),
      index_bytes_(index_bytes),
      slices_(ctx, "stack slices"),
      part_bic_(ctx, "partition values"),
      part_prefix_(ctx, "partition prefixes"),
      tree_(ctx, "partition minimum tree"),
      level_info_(ctx, "minimum tree levels"),
      part_max_(ctx, "partition maximum depths"),
      host_in_(ctx, "parentheses input"),
      host_out_(ctx, "match output") {
  k_ = shape.per_item ? shape.per_item : kDefaultPerItem;
  const std::string options = std::string("-DPG_INDEX_T=") + (index_bytes == 4 ? "int" : "long") +
                              " -DPG_K=" + std::to_string(k_);
  cl_program program = ctx.program("treebox/opencl/match_parens.cl", options);
  slice_ = Kernel(program, "stackSlice");
  scan_ = Kernel(program, "scanPartitions");
  min_level_ = Kernel(program, "minLevel");
  leaf_ = Kernel(program, "matchLeaf");
  const uint32_t want = shape.work_group ? shape.work_group : kDefaultWorkGroup;
  wg_ = static_cast<uint32_t>(
      std::min(ctx.workGroupSize(slice_.get(), want), ctx.workGroupSize(leaf_.get(), want)));
  while (wg_ > 1 && leafLocalBytes(wg_, k_) > ctx.info().local_memory) wg_ /= 2;
  if (shape.work_group && wg_ != shape.work_group)
    throw ResourceError("matchParentheses: work-group size " + std::to_string(shape.work_group) +
                        " is not available on " + ctx.info().name);
  scan_wg_ = static_cast<uint32_t>(ctx.workGroupSize(scan_.get(), 256));
}

MatchStats DeviceMatcher::run(cl_mem symbols, uint64_t n, uint8_t open_a, uint8_t open_b,
                              uint8_t close, Buffer& out, bool stats) {
  MatchStats st;
  st.elements = n;
  if (n == 0) return st;
  const uint64_t part = partitionSize();
  const uint64_t m = (n + part - 1) / part;
  out.reserve(n * static_cast<uint64_t>(index_bytes_));
  slices_.reserve(m * part * static_cast<uint64_t>(index_bytes_));
  part_bic_.reserve(m * sizeof(HostBic));
  part_prefix_.reserve((m + 1) * sizeof(HostBic));
  part_max_.reserve(m * sizeof(cl_ulong));

  // Levels of the tree of partition minima: m, ceil(m/32), ..., 1.
  std::vector<cl_ulong> off, len;
  for (uint64_t l = m, o = 0;; l = (l + kMinBlock - 1) / kMinBlock) {
    off.push_back(o);
    len.push_back(l);
    o += l;
    if (l <= 1) break;
  }
  const cl_int levels = static_cast<cl_int>(off.size());
  std::vector<cl_ulong> info(off);
  info.insert(info.end(), len.begin(), len.end());
  tree_.reserve((off.back() + len.back()) * sizeof(cl_long));
  level_info_.upload(info.data(), info.size() * sizeof(cl_ulong));

  const cl_ulong n_arg = n;
  slice_.arg(0, symbols).arg(1, n_arg).arg(2, cl_uchar{open_a}).arg(3, cl_uchar{open_b});
  slice_.arg(4, cl_uchar{close}).arg(5, slices_).arg(6, part_bic_);
  slice_.localArg(7, wg_ * sizeof(HostBic));
  slice_.run(ctx_, m * wg_, wg_);

  scan_.arg(0, part_bic_).arg(1, cl_ulong{m}).arg(2, part_prefix_).arg(3, tree_);
  scan_.localArg(4, scan_wg_ * sizeof(HostBic));
  scan_.run(ctx_, scan_wg_, scan_wg_);
  for (size_t l = 1; l < off.size(); ++l) {
    min_level_.arg(0, tree_).arg(1, off[l - 1]).arg(2, len[l - 1]).arg(3, off[l]);
    min_level_.run(ctx_, len[l], std::min<size_t>(64, ctx_.info().max_work_group));
  }

  leaf_.arg(0, symbols).arg(1, n_arg).arg(2, cl_uchar{open_a}).arg(3, cl_uchar{open_b});
  leaf_.arg(4, cl_uchar{close}).arg(5, slices_).arg(6, part_prefix_).arg(7, tree_);
  leaf_.arg(8, level_info_).arg(9, levels).arg(10, out).arg(11, part_max_);
  leaf_.localArg(12, wg_ * sizeof(HostBic));
  leaf_.localArg(13, 2 * wg_ * sizeof(cl_long));
  leaf_.localArg(14, uint64_t{wg_} * k_ * sizeof(cl_uint));
  leaf_.localArg(15, wg_ * sizeof(cl_ulong));
  leaf_.run(ctx_, m * wg_, wg_);

  HostBic total{};
  part_prefix_.read(&total, sizeof total, m * sizeof(HostBic));
  st.unmatched_close = total.a;
  st.unmatched_open = total.b;
  if (stats) {
    std::vector<cl_ulong> maxima(m);
    part_max_.read(maxima.data(), m * sizeof(cl_ulong));
    st.max_depth = *std::max_element(maxima.begin(), maxima.end());
  }
  return st;
}

uint64_t openclPartitionSize(int device, OpenCLMatchShape shape) {
  return DeviceMatcher::get(Context::get(device), 8, shape).partitionSize();
}

namespace {

template <typename Index>
MatchStats matchOpenCLImpl(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                           Index* out, int device, bool stats, OpenCLMatchShape shape) {
  Context& ctx = Context::get(device);
  auto lock = ctx.lock();
  DeviceMatcher& matcher = DeviceMatcher::get(ctx, sizeof(Index), shape);
  Buffer& in = matcher.hostInput();
  Buffer& result = matcher.hostOutput();
  in.upload(symbols, n);
  MatchStats st = matcher.run(in.get(), n, open, open, close, result, stats);
  if (n) result.read(out, n * sizeof(Index));
  return st;
}

}  // namespace

MatchStats matchParensOpenCL(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int32_t* out, int device, bool stats, OpenCLMatchShape shape) {
  return matchOpenCLImpl(symbols, n, open, close, out, device, stats, shape);
}

MatchStats matchParensOpenCL(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int64_t* out, int device, bool stats, OpenCLMatchShape shape) {
  return matchOpenCLImpl(symbols, n, open, close, out, device, stats, shape);
}

}  // namespace procgen::treebox_detail

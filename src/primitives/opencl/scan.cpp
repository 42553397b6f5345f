// Primitives scan and reduce, opencl backend: host driver of scan.cl (see
// there for the reduce-then-scan scheme), and the host-array twins.
#include <algorithm>
#include <string>

#include "primitives/opencl/device.hpp"

namespace procgen::primitives::opencl {

DeviceScan::DeviceScan(Context& ctx, const MonoidInfo& monoid, bool segmented)
    : ctx_(ctx), segmented_(segmented) {
  const std::string options = "-DPG_MONOID=" + monoid.cl_name + " -DPG_MONOID_T=" + monoid.cl_type +
                              " -DPG_SEGMENTED=" + (segmented ? "1" : "0");
  cl_program p = ctx.program("primitives/opencl/scan.cl", options);
  reduce_runs_ = Kernel(p, "reduceRuns");
  reduce_lifted_ = Kernel(p, "reduceLifted");
  scan_blocks_ = Kernel(p, "scanBlocks");
  add_offsets_ = Kernel(p, "addBlockOffsets");
  scan_runs_ = Kernel(p, "scanRuns");
  {
    Kernel size(p, "elementSize");
    Buffer out(ctx, "scan element size");
    out.reserve(sizeof(cl_uint));
    size.arg(0, out);
    size.run(ctx, 1, 1);
    cl_uint bytes = 0;
    out.read(&bytes, sizeof bytes);
    elem_bytes_ = bytes;
  }
  value_bytes_ = segmented ? 0 : elem_bytes_;
  runs_ = Buffer(ctx, "scan run totals");
  reduce_tmp_[0] = Buffer(ctx, "reduce partial totals");
  reduce_tmp_[1] = Buffer(ctx, "reduce partial totals");
  // CPU devices (PoCL): long runs per work item, few barriers; GPUs: short runs.
  per_ = ctx.info().type == "cpu" ? 64 : 4;
  // Two elements per work item in local memory; leave half the local memory free.
  size_t want = 256;
  while (want > 1 && 2 * want * elem_bytes_ > ctx.info().local_memory / 2) want /= 2;
  wg_ = ctx.workGroupSize(scan_blocks_.get(), want);
  sums_.resize(40);  // one per level: enough for 2^64 elements, never reallocated
}

void DeviceScan::scan(ScanKind kind, cl_mem in, cl_mem heads, cl_mem out, uint64_t n) {
  if (n == 0) return;
  const bool plain = !segmented_ && kind == ScanKind::kExclusive && in == out;
  if (plain && n < 4 * per_) {  // one work-group level, as few launches as possible
    scanLevel(in, n, 0);
    return;
  }
  const uint64_t runs = (n + per_ - 1) / per_;
  runs_.reserve(runs * elem_bytes_);
  const size_t local = std::min<size_t>(wg_, 64);
  reduce_runs_.arg(0, in).arg(1, heads).arg(2, cl_ulong{n}).arg(3, cl_ulong{per_}).arg(4, runs_);
  reduce_runs_.run(ctx_, runs, local);
  scanLevel(runs_.get(), runs, 0);
  scan_runs_.arg(0, in).arg(1, heads).arg(2, out).arg(3, cl_ulong{n}).arg(4, cl_ulong{per_}).arg(5, runs_);
  scan_runs_.arg(6, cl_int{kind == ScanKind::kInclusive ? 1 : 0});
  scan_runs_.run(ctx_, runs, local);
}

void DeviceScan::scanLevel(cl_mem data, uint64_t n, size_t level) {
  const uint64_t block_elems = 2 * static_cast<uint64_t>(wg_);
  const uint64_t blocks = (n + block_elems - 1) / block_elems;
  const cl_ulong count = n;
  if (blocks == 1) {
    scan_blocks_.arg(0, data).arg(1, count).arg(2, data).arg(3, cl_int{0}).localArg(4, 2 * wg_ * elem_bytes_);
    scan_blocks_.run(ctx_, wg_, wg_);
    return;
  }
  Buffer& sums = sums_[level];
  if (!sums.get()) sums = Buffer(ctx_, "scan block sums");
  sums.reserve(blocks * elem_bytes_);
  scan_blocks_.arg(0, data).arg(1, count).arg(2, sums).arg(3, cl_int{1}).localArg(4, 2 * wg_ * elem_bytes_);
  scan_blocks_.run(ctx_, blocks * wg_, wg_);
  scanLevel(sums.get(), blocks, level + 1);
  add_offsets_.arg(0, data).arg(1, count).arg(2, sums).arg(3, cl_ulong{block_elems});
  add_offsets_.run(ctx_, n, wg_);
}

void DeviceScan::reduce(cl_mem in, uint64_t n, cl_mem result) {
  // Levels of run totals until one remains; the last level writes `result`
  // (reduceLifted writes the identity for n = 0).
  const size_t local = std::min<size_t>(wg_, 64);
  constexpr uint64_t kPer = 64;
  if (n <= kPer) {
    reduce_lifted_.arg(0, in).arg(1, cl_ulong{n}).arg(2, cl_ulong{kPer}).arg(3, result);
    reduce_lifted_.run(ctx_, 1, 1);
    return;
  }
  uint64_t count = (n + kPer - 1) / kPer;
  reduce_tmp_[0].reserve(count * elem_bytes_);
  reduce_runs_.arg(0, in).arg(1, cl_mem{nullptr}).arg(2, cl_ulong{n}).arg(3, cl_ulong{kPer}).arg(4, reduce_tmp_[0]);
  reduce_runs_.run(ctx_, count, local);
  int cur = 0;
  while (count > kPer) {
    const uint64_t next = (count + kPer - 1) / kPer;
    reduce_tmp_[1 - cur].reserve(next * elem_bytes_);
    reduce_lifted_.arg(0, reduce_tmp_[cur]).arg(1, cl_ulong{count}).arg(2, cl_ulong{kPer}).arg(3, reduce_tmp_[1 - cur]);
    reduce_lifted_.run(ctx_, next, local);
    count = next;
    cur = 1 - cur;
  }
  reduce_lifted_.arg(0, reduce_tmp_[cur]).arg(1, cl_ulong{count}).arg(2, cl_ulong{kPer}).arg(3, result);
  reduce_lifted_.run(ctx_, 1, 1);
}

// ---- host-array twins ------------------------------------------------------

namespace {
/// The host descriptor's Value and the device type must have one layout.
template <typename M>
void checkLayout(const DeviceScan& s) {
  if (s.valueBytes() != sizeof(typename M::Value))
    throw Error(std::string("primitives: monoid ") + M::kClName + " is " + std::to_string(s.valueBytes()) +
                " bytes on the device and " + std::to_string(sizeof(typename M::Value)) + " on the host");
}
}  // namespace

template <typename M>
void scan(int device, ScanKind kind, const typename M::Value* in, const uint8_t* heads, typename M::Value* out,
          uint64_t n) {
  if (n == 0) return;
  Context& ctx = Context::get(device);
  DeviceScan s(ctx, monoidInfo<M>(), heads != nullptr);
  if (!heads) checkLayout<M>(s);
  const uint64_t bytes = n * sizeof(typename M::Value);
  Buffer data(ctx, "scan data"), head_buf(ctx, "scan heads");
  data.upload(in, bytes);
  if (heads) head_buf.upload(heads, n);
  s.scan(kind, data.get(), head_buf.get(), data.get(), n);
  data.read(out, bytes);
}

template <typename M>
typename M::Value reduce(int device, const typename M::Value* in, uint64_t n) {
  Context& ctx = Context::get(device);
  DeviceScan s(ctx, monoidInfo<M>());
  checkLayout<M>(s);
  Buffer data(ctx, "reduce data"), result(ctx, "reduce result");
  data.upload(in, n * sizeof(typename M::Value));
  result.reserve(sizeof(typename M::Value));
  s.reduce(data.get(), n, result.get());
  typename M::Value r;
  result.read(&r, sizeof r);
  return r;
}

#define PROCGEN_INSTANTIATE_MONOID(M)                                                                    \
  template void scan<M>(int, ScanKind, const M::Value*, const uint8_t*, M::Value*, uint64_t); \
  template M::Value reduce<M>(int, const M::Value*, uint64_t);
PROCGEN_PRIMITIVES_MONOIDS(PROCGEN_INSTANTIATE_MONOID)
#undef PROCGEN_INSTANTIATE_MONOID

}  // namespace procgen::primitives::opencl

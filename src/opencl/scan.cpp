// Host driver of scan.cl (paper §4.2 step 2): see scan.hpp.
#include "opencl/scan.hpp"

#include <algorithm>

namespace procgen::opencl {

Scanner::Scanner(Context& ctx, const std::string& type, size_t elem_bytes)
    : ctx_(ctx), elem_bytes_(elem_bytes) {
  cl_program p = ctx.program("opencl/scan.cl", "-DPG_SCAN_T=" + type);
  scan_ = Kernel(p, "scanBlocks");
  add_ = Kernel(p, "addBlockOffsets");
  chunk_reduce_ = Kernel(p, "chunkReduce");
  chunk_scan_ = Kernel(p, "chunkScan");
  runs_ = Buffer(ctx, "scan run sums");
  // CPU devices: runs of consecutive elements per work item (see scan.cl).
  if (ctx.info().type == "cpu") per_ = 64;
  // Two elements per work item in local memory; leave half the local memory free.
  size_t want = 256;
  while (want > 1 && 2 * want * elem_bytes > ctx.info().local_memory / 2) want /= 2;
  wg_ = ctx.workGroupSize(scan_.get(), want);
  sums_.resize(40);  // one per level: enough for 2^64 elements, never reallocated
}

void Scanner::exclusiveScan(cl_mem data, uint64_t n) {
  if (n == 0) return;
  if (per_ == 0 || n < 4 * per_) {
    scanLevel(data, n, 0);
    return;
  }
  const uint64_t runs = (n + per_ - 1) / per_;
  runs_.reserve(runs * elem_bytes_);
  const size_t local = std::min<size_t>(wg_, 64);
  chunk_reduce_.arg(0, data).arg(1, cl_ulong{n}).arg(2, cl_ulong{per_}).arg(3, runs_);
  chunk_reduce_.run(ctx_, runs, local);
  scanLevel(runs_.get(), runs, 0);
  chunk_scan_.arg(0, data).arg(1, cl_ulong{n}).arg(2, cl_ulong{per_}).arg(3, runs_);
  chunk_scan_.run(ctx_, runs, local);
}

void Scanner::scanLevel(cl_mem data, uint64_t n, size_t level) {
  const uint64_t block_elems = 2 * static_cast<uint64_t>(wg_);
  const uint64_t blocks = (n + block_elems - 1) / block_elems;
  const cl_ulong count = n;
  if (blocks == 1) {
    scan_.arg(0, data).arg(1, count).arg(2, data).arg(3, cl_int{0}).localArg(4, 2 * wg_ * elem_bytes_);
    scan_.run(ctx_, wg_, wg_);
    return;
  }
  Buffer& sums = sums_[level];
  if (!sums.get()) sums = Buffer(ctx_, "scan block sums");
  sums.reserve(blocks * elem_bytes_);
  scan_.arg(0, data).arg(1, count).arg(2, sums).arg(3, cl_int{1}).localArg(4, 2 * wg_ * elem_bytes_);
  scan_.run(ctx_, blocks * wg_, wg_);
  scanLevel(sums.get(), blocks, level + 1);
  add_.arg(0, data).arg(1, count).arg(2, sums).arg(3, cl_ulong{block_elems});
  add_.run(ctx_, n, wg_);
}

}  // namespace procgen::opencl

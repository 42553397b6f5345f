// Host driver of scan.cl: an in-place exclusive prefix sum on the device for
// any n (paper §4.2 step 2; see scan.cl for the multi-level Blelloch scheme).
#pragma once

#include <string>
#include <vector>

#include "opencl/runtime.hpp"

namespace procgen::opencl {

class Scanner {
 public:
  /// `type` is the OpenCL C element type ("ulong4", "long", ...), `elem_bytes`
  /// its size on the host.
  Scanner(Context& ctx, const std::string& type, size_t elem_bytes);
  /// Exclusive scan of data[0..n) in place (n may be 0). Enqueued on ctx's
  /// queue; nothing is read back.
  void exclusiveScan(cl_mem data, uint64_t n);

 private:
  void scanLevel(cl_mem data, uint64_t n, size_t level);
  Context& ctx_;
  Kernel scan_;
  Kernel add_;
  Kernel chunk_reduce_, chunk_scan_;
  uint64_t per_ = 0;  ///< elements per work item in the CPU-device first level; 0 = off
  Buffer runs_;       ///< run sums of that level
  size_t elem_bytes_;
  size_t wg_;
  std::vector<Buffer> sums_;  ///< block totals per level, reused across calls
};

}  // namespace procgen::opencl

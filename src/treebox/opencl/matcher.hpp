// The device side of stage match_parens (match_parens.cl): a matcher that
// keeps its kernels and buffers for reuse, and matches symbols already on the
// device into a device buffer, so tree_bbox.cpp builds on it without a round
// trip through the host.
#pragma once

#include <cstdint>

#include "opencl/runtime.hpp"
#include "treebox/opencl/device_match.hpp"

namespace procgen::treebox_detail {

class DeviceMatcher {
 public:
  /// index_bytes: 4 (int) or 8 (long) output elements.
  DeviceMatcher(opencl::Context& ctx, int index_bytes, OpenCLMatchShape shape);

  uint64_t partitionSize() const { return uint64_t{wg_} * k_; }

  /// Matches symbols[0..n) (a device buffer): elements equal to open_a or
  /// open_b open, close closes. Writes the match array into `out` (grown as
  /// needed). The unmatched counts are always read back; max_depth only when
  /// `stats` is set (else 0). Callers hold the context's lock().
  MatchStats run(cl_mem symbols, uint64_t n, uint8_t open_a, uint8_t open_b, uint8_t close,
                 opencl::Buffer& out, bool stats);

  /// The matcher of `ctx` for (index size, shape), kept in the context's state.
  static DeviceMatcher& get(opencl::Context& ctx, int index_bytes, OpenCLMatchShape shape);

  /// Buffers the host entry points upload into and read back from, kept so
  /// repeated calls reuse them.
  opencl::Buffer& hostInput() { return host_in_; }
  opencl::Buffer& hostOutput() { return host_out_; }

 private:
  opencl::Context& ctx_;
  int index_bytes_;
  uint32_t wg_ = 0, k_ = 0, scan_wg_ = 0;
  opencl::Kernel slice_, scan_, min_level_, leaf_;
  opencl::Buffer slices_, part_bic_, part_prefix_, tree_, level_info_, part_max_, host_in_, host_out_;
};

}  // namespace procgen::treebox_detail

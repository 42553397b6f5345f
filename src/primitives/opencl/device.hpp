// The opencl primitives over device buffers (cl_mem in, cl_mem out): data
// stays on the device between stages. Each object builds its kernels once
// (programs are cached per context), keeps its scratch buffers across calls,
// and enqueues on the context's in-order queue; only the calls that return a
// host value (DeviceCompact::compact's count, the sort's key-bit probe) wait.
// Not thread-safe: one object per thread (the queue is shared, see runtime.hpp).
// Contracts as in primitives.hpp; kernels in scan.cl, compact.cl, radix_sort.cl.
#pragma once

#include <string>
#include <vector>

#include "opencl/runtime.hpp"
#include "primitives/primitives.hpp"

namespace procgen::primitives::opencl {

using procgen::opencl::Buffer;
using procgen::opencl::Context;
using procgen::opencl::Kernel;

/// What the kernels need to know of a monoid descriptor (primitives.hpp).
struct MonoidInfo {
  std::string cl_name;  ///< prefix in monoids.h, e.g. "pgSumU64"
  std::string cl_type;  ///< OpenCL C value type, e.g. "ulong"
};
template <typename M>
MonoidInfo monoidInfo() {
  return {M::kClName, M::kClType};
}

/// Scan and reduce of one monoid; `segmented` fixes whether scans take heads.
class DeviceScan {
 public:
  DeviceScan(Context& ctx, const MonoidInfo& monoid, bool segmented = false);

  /// Scan of in[0..n) (values of the monoid's type) into out[0..n); out may
  /// be in. heads: n bytes, nonzero = segment head; only when segmented.
  void scan(ScanKind kind, cl_mem in, cl_mem heads, cl_mem out, uint64_t n);
  /// In-place exclusive scan (the L-system stages' offsets).
  void exclusiveScan(cl_mem data, uint64_t n) { scan(ScanKind::kExclusive, data, nullptr, data, n); }
  /// result[0] = in[0] ⊕ ... ⊕ in[n-1] (identity when n = 0); unsegmented only.
  void reduce(cl_mem in, uint64_t n, cl_mem result);
  /// sizeof the value type on the device (0 when segmented); the host-array
  /// twins check it against sizeof(M::Value).
  size_t valueBytes() const { return value_bytes_; }

 private:
  void scanLevel(cl_mem data, uint64_t n, size_t level);
  Context& ctx_;
  bool segmented_;
  Kernel reduce_runs_, reduce_lifted_, scan_blocks_, add_offsets_, scan_runs_;
  size_t value_bytes_ = 0;
  size_t elem_bytes_ = 0;  ///< lifted element (value + head when segmented)
  uint64_t per_;           ///< elements per work item in the run levels
  size_t wg_;
  Buffer runs_, reduce_tmp_[2];
  std::vector<Buffer> sums_;  ///< block totals per level, reused across calls
};

/// Stream compaction of 4- or 8-byte elements.
class DeviceCompact {
 public:
  DeviceCompact(Context& ctx, size_t elem_bytes);
  /// Copies the in[i] with flags[i] != 0 (n bytes) to out in order; returns
  /// how many (waits for the queue).
  uint64_t compact(cl_mem in, cl_mem flags, uint64_t n, cl_mem out);

 private:
  Context& ctx_;
  Kernel count_, scatter_;
  DeviceScan offsets_;
  Buffer counts_;
};

/// Stable LSD radix sort of uint32 or uint64 keys, with or without uint32 values.
class DeviceRadixSort {
 public:
  DeviceRadixSort(Context& ctx, size_t key_bytes, bool values);
  /// Sorts keys[0..n) in place, values (when constructed with values) along.
  void sort(cl_mem keys, cl_mem values, uint64_t n);

 private:
  Context& ctx_;
  size_t key_bytes_;
  bool values_;
  Kernel key_bits_, histogram_, scatter_;
  DeviceScan and_or_, count_scan_;
  Buffer bits_, bits_total_, counts_, keys_tmp_, values_tmp_;
};

}  // namespace procgen::primitives::opencl

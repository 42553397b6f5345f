// Host driver of treebox/opencl/match_parens.cl (stage match_parens, opencl
// backend) and the entry points behind Backend::kOpenCL for matching and tree
// bounding boxes. Not part of the public API.
#pragma once

#include <cstdint>

#include "procgen/treebox.hpp"

namespace procgen::treebox_detail {

/// Launch shape of the matching kernels: work-group size (a power of two) and
/// elements per work item; a partition is work_group·per_item elements.
/// 0 = the defaults (tests force tiny partitions to exercise every level).
struct OpenCLMatchShape {
  uint32_t work_group = 0;
  uint32_t per_item = 0;
};

/// Elements per partition for `shape` on `device` (what the tests call the
/// work-group size of the paper's §7).
uint64_t openclPartitionSize(int device, OpenCLMatchShape shape = {});

/// Same output and statistics as matchParensSerial. With stats = false,
/// max_depth is left 0. Throws BackendUnavailableError without a device,
/// OpenCLError / ResourceError on device failures.
MatchStats matchParensOpenCL(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int32_t* out, int device, bool stats, OpenCLMatchShape shape = {});
MatchStats matchParensOpenCL(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                             int64_t* out, int device, bool stats, OpenCLMatchShape shape = {});

/// Same output as treeBBoxSerial (bit-exact), including its exceptions for
/// unbalanced scenes and bad node kinds.
void treeBBoxOpenCL(const BoxTree& scene, Box3* out, int device, OpenCLMatchShape shape = {});

}  // namespace procgen::treebox_detail

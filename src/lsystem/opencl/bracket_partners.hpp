// Host driver of bracket_partners.cl (paper §4.2 last paragraph, §5.2.1: the
// branch hierarchy) for strings already on the device: the derivation's
// context search and the interpretation's work queue share it.
#pragma once

#include <cstdint>
#include <vector>

#include "opencl/runtime.hpp"
#include "primitives/opencl/device.hpp"

namespace procgen::detail {

class DeviceBracketPartners {
 public:
  explicit DeviceBracketPartners(opencl::Context& ctx);
  /// partner[i] for every i < n of the device string `symbols` (match.h's
  /// convention: the matching bracket's index, -1 when unmatched; other
  /// modules get -1 too). Enqueued; nothing is read back.
  void run(cl_mem symbols, uint64_t n, opencl::Buffer& partner);

  /// The first half of run(): the depths e[0..n] (e[k] = '[' minus ']' before
  /// k) and the tree of their block minima, for other nearest-smaller queries
  /// (the cut pass). Valid until the next call.
  void buildTree(cl_mem symbols, uint64_t n);
  const opencl::Buffer& tree() const { return tree_; }
  const opencl::Buffer& levelInfo() const { return level_info_; }
  cl_int levels() const { return levels_; }

 private:
  opencl::Context& ctx_;
  primitives::opencl::DeviceScan scan_;
  opencl::Kernel delta_, min_level_, partners_;
  opencl::Buffer tree_, level_info_;
  size_t wg_;
  cl_int levels_ = 0;
};

}  // namespace procgen::detail

// The batched passes of many L-systems in one combined string on the device
// (paper §6; kernels in scene.cl): the opencl PassRunner's countSegments,
// rewriteSegments and cutSegments (pass_runner.hpp) run here.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lsystem/opencl/bracket_partners.hpp"
#include "lsystem/opencl/device_string.hpp"
#include "lsystem/pass_runner.hpp"
#include "opencl/runtime.hpp"
#include "primitives/opencl/device.hpp"

namespace procgen::detail {

/// Per-device state (opencl::Context::state): used under the device's lock.
class DeviceSceneStages {
 public:
  explicit DeviceSceneStages(opencl::Context& ctx);

  /// Uploads the rule tables of `systems` (segment k uses systems[k]'s), concatenated.
  void load(std::span<const LSystemData* const> systems);
  /// Stage count of a batched pass over the current string of `strings`.
  ChunkCount count(DeviceStrings& strings, const std::vector<SegmentPass>& passes,
                   const std::vector<uint64_t>& begin, std::vector<uint64_t>& rewritten, bool parametric);
  /// Stage rewrite after count(); the output becomes current, `begin` its segment starts.
  void rewrite(DeviceStrings& strings, const ChunkCount& total, std::vector<uint64_t>& begin, bool parametric);
  /// Stage cut in the segments k with cuts[k].
  void cut(DeviceStrings& strings, const std::vector<uint8_t>& cuts, std::vector<uint64_t>& begin, bool parametric);

 private:
  /// Element offsets of one rule table in the concatenated buffers.
  struct TableAt {
    int32_t first_by_symbol = 0, productions = 0, patterns = 0, successors = 0, successor_exprs = 0;
  };
  struct Slot {
    const LSystemData* data = nullptr;
    TableAt productions, decomposition;
    int32_t code = 0, constants = 0, globals = 0, ignored = 0;
  };
  template <typename TableOf, typename CutsOf>
  uint64_t writeSlots(const std::vector<uint64_t>& begin, const std::vector<SegmentPass>* passes, TableOf&& table,
                      CutsOf&& cuts, uint64_t chunk, bool* any_context);
  void gather(uint64_t chunks);
  void setTables(opencl::Kernel& k, uint32_t& a);
  const opencl::Buffer& orDummy(const opencl::Buffer& b, bool use) const { return use ? b : dummy_; }

  opencl::Context& ctx_;
  primitives::opencl::DeviceScan scan4_, scan_int_;
  DeviceBracketPartners partners_;
  opencl::Kernel count_, rewrite_, partner_k_, cut_mark_, cut_count_, cut_write_, gather_, zero_;
  size_t wg_ = 64;
  opencl::Buffer first_by_symbol_, productions_, patterns_, successors_, successor_exprs_, code_, constants_,
      globals_, ignored_, slots_buf_, choice_, counts_, partner_, marks_, gathered_, dummy_;
  std::vector<Slot> slots_;
  // count() → rewrite()
  std::vector<cl_ulong4> gathered_host_;
  uint64_t chunks_ = 0, chunk_ = 0;
  uint32_t phase_ = 0;
  bool any_context_ = false;
};

}  // namespace procgen::detail

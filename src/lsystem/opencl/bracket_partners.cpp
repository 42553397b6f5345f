// Host driver of bracket_partners.cl: depth deltas, their exclusive scan, a
// tree of block minima, then one nearest-smaller query per bracket (see the
// kernel file for the method; no depth limit).
#include "lsystem/opencl/bracket_partners.hpp"

namespace procgen::detail {

DeviceBracketPartners::DeviceBracketPartners(opencl::Context& ctx)
    : ctx_(ctx), scan_(ctx, primitives::opencl::monoidInfo<primitives::SumI64>()), tree_(ctx, "bracket depths"), level_info_(ctx, "bracket depths") {
  cl_program p = ctx.program("lsystem/opencl/bracket_partners.cl");
  delta_ = opencl::Kernel(p, "bracketDelta");
  min_level_ = opencl::Kernel(p, "minLevel");
  partners_ = opencl::Kernel(p, "bracketPartners");
  wg_ = ctx.workGroupSize(partners_.get(), 64);
}

void DeviceBracketPartners::run(cl_mem symbols, uint64_t n, opencl::Buffer& partner) {
  if (n == 0) return;
  buildTree(symbols, n);
  partner.reserve(n * sizeof(int64_t));
  partners_.arg(0, symbols).arg(1, cl_ulong{n}).arg(2, tree_).arg(3, level_info_);
  partners_.arg(4, levels_).arg(5, partner);
  partners_.run(ctx_, n, wg_);
}

void DeviceBracketPartners::buildTree(cl_mem symbols, uint64_t n) {
  // Level 0: e[0..n] (depths before each element, e[n] the total); then block minima.
  std::vector<cl_ulong> off{0}, len{n + 1};
  while (len.back() > 1) {
    off.push_back(off.back() + len.back());
    len.push_back((len.back() + 31) / 32);
  }
  tree_.reserve((off.back() + len.back()) * sizeof(int64_t));
  delta_.arg(0, symbols).arg(1, cl_ulong{n}).arg(2, tree_);
  delta_.run(ctx_, n + 1, wg_);
  scan_.exclusiveScan(tree_.get(), n + 1);
  for (size_t l = 1; l < off.size(); ++l) {
    min_level_.arg(0, tree_).arg(1, off[l - 1]).arg(2, len[l - 1]).arg(3, off[l]);
    min_level_.run(ctx_, len[l], wg_);
  }
  // Level offsets then level lengths, in one small buffer.
  std::vector<cl_ulong> info(off);
  info.insert(info.end(), len.begin(), len.end());
  level_info_.upload(info.data(), info.size() * sizeof(cl_ulong));
  levels_ = static_cast<cl_int>(off.size());
}

}  // namespace procgen::detail

// The batched passes of many L-systems on the device (Lipp, Wonka, Wimmer §6;
// kernels in scene.cl), called by the opencl PassRunner for the derivation
// driver (derive.cpp), which owns the step logic. All instances' rule tables
// are concatenated once per derivation; per pass a small slot array (segment,
// first chunk, table offsets, flags) is written, and only the scanned sizes at
// the segment starts come back (one value per instance), which give the new
// segment starts and which instances rewrote anything.
#include "lsystem/opencl/scene.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "lsystem/opencl/pass_runner.hpp"
#include "lsystem/opencl/scene_types.h"

namespace procgen::detail {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

static_assert(sizeof(PgSceneSlot) == 80);

DeviceSceneStages::DeviceSceneStages(Context& ctx)
    : ctx_(ctx), scan4_(ctx, primitives::opencl::monoidInfo<primitives::SumU64x4>()), scan_int_(ctx, primitives::opencl::monoidInfo<primitives::SumI32>()), partners_(ctx) {
  cl_program p = ctx.program("lsystem/opencl/scene.cl");
  cl_program cut = ctx.program("lsystem/opencl/cut.cl");
  count_ = Kernel(p, "sceneCount");
  rewrite_ = Kernel(p, "sceneRewrite");
  partner_k_ = Kernel(p, "scenePartners");
  cut_mark_ = Kernel(p, "sceneCutMark");
  cut_count_ = Kernel(p, "sceneCutCount");
  cut_write_ = Kernel(p, "sceneCutWrite");
  gather_ = Kernel(p, "gatherSlots");
  zero_ = Kernel(cut, "zeroInts");
  wg_ = ctx.workGroupSize(rewrite_.get(), 64);
  for (Buffer* b : {&first_by_symbol_, &productions_, &patterns_, &successors_, &successor_exprs_, &code_,
                    &constants_, &globals_, &ignored_, &slots_buf_, &choice_, &counts_, &partner_, &marks_,
                    &gathered_, &dummy_})
    *b = Buffer(ctx, "scene derivation");
  dummy_.reserve(256);
}

void DeviceSceneStages::load(std::span<const LSystemData* const> systems) {
  std::vector<int32_t> first, exprs;
  std::vector<PgProduction> prods;
  std::vector<PgPatternModule> pats;
  std::vector<PgSuccessorModule> succs;
  std::vector<uint32_t> code;
  std::vector<float> constants, globals;
  std::vector<uint8_t> ignored;
  auto addTable = [&](const RuleTable& t) {
    TableAt at{static_cast<int32_t>(first.size()), static_cast<int32_t>(prods.size()),
               static_cast<int32_t>(pats.size()), static_cast<int32_t>(succs.size()),
               static_cast<int32_t>(exprs.size())};
    first.insert(first.end(), t.first_by_symbol.begin(), t.first_by_symbol.end());
    prods.insert(prods.end(), t.productions.begin(), t.productions.end());
    pats.insert(pats.end(), t.patterns.begin(), t.patterns.end());
    succs.insert(succs.end(), t.successors.begin(), t.successors.end());
    exprs.insert(exprs.end(), t.successor_exprs.begin(), t.successor_exprs.end());
    return at;
  };
  slots_.assign(systems.size(), Slot{});
  for (size_t k = 0; k < systems.size(); ++k) {
    Slot& s = slots_[k];
    const LSystemData& d = *systems[k];
    s.data = &d;
    s.productions = addTable(d.productions);
    s.decomposition = addTable(d.decomposition);
    s.code = static_cast<int32_t>(code.size());
    code.insert(code.end(), d.code.begin(), d.code.end());
    s.constants = static_cast<int32_t>(constants.size());
    constants.insert(constants.end(), d.constants.begin(), d.constants.end());
    s.globals = static_cast<int32_t>(globals.size());
    globals.insert(globals.end(), d.globals.begin(), d.globals.end());
    s.ignored = static_cast<int32_t>(ignored.size());
    ignored.insert(ignored.end(), d.ignored.begin(), d.ignored.end());
  }
  first_by_symbol_.upload(first.data(), first.size() * sizeof(int32_t));
  productions_.upload(prods.data(), prods.size() * sizeof(PgProduction));
  patterns_.upload(pats.data(), pats.size() * sizeof(PgPatternModule));
  successors_.upload(succs.data(), succs.size() * sizeof(PgSuccessorModule));
  successor_exprs_.upload(exprs.data(), exprs.size() * sizeof(int32_t));
  code_.upload(code.data(), code.size() * sizeof(uint32_t));
  constants_.upload(constants.data(), constants.size() * sizeof(float));
  globals_.upload(globals.data(), globals.size() * sizeof(float));
  ignored_.upload(ignored.data(), ignored.size());
}

/// Writes the slot array for a pass; returns the number of chunks. `table(k)`
/// is slot k's table for this pass or null (copied); `cuts(k)` whether the
/// cut pass applies to slot k.
template <typename TableOf, typename CutsOf>
uint64_t DeviceSceneStages::writeSlots(const std::vector<uint64_t>& begin, const std::vector<SegmentPass>* passes,
                                       TableOf&& table, CutsOf&& cuts, uint64_t chunk, bool* any_context) {
  const size_t n = slots_.size();
  std::vector<PgSceneSlot> v(n);
  uint64_t chunks = 0;
  *any_context = false;
  for (size_t k = 0; k < n; ++k) {
    PgSceneSlot& d = v[k];
    const Slot& s = slots_[k];
    d.seg_begin = begin[k];
    d.seg_end = begin[k + 1];
    d.first_chunk = chunks;
    chunks += (d.seg_end - d.seg_begin + chunk - 1) / chunk;
    d.seed = passes ? (*passes)[k].pass.seed : 0;
    d.code = s.code;
    d.constants = s.constants;
    d.globals = s.globals;
    d.ignored = s.ignored;
    const RuleTable* t = table(k);
    d.rewrite = t != nullptr;
    d.has_partner = t != nullptr && (*passes)[k].context;
    *any_context = *any_context || d.has_partner;
    d.cut = cuts(k) ? 1 : 0;
    if (t) {
      const TableAt& at = t == &s.data->productions ? s.productions : s.decomposition;
      d.first_by_symbol = at.first_by_symbol;
      d.productions = at.productions;
      d.patterns = at.patterns;
      d.successors = at.successors;
      d.successor_exprs = at.successor_exprs;
    }
  }
  slots_buf_.upload(v.data(), v.size() * sizeof(PgSceneSlot));
  return chunks;
}

/// Scanned offsets at every segment's first chunk (and the total), read back.
void DeviceSceneStages::gather(uint64_t chunks) {
  const cl_uint nslots = static_cast<cl_uint>(slots_.size());
  gathered_.reserve((nslots + 1) * sizeof(cl_ulong4));
  gather_.arg(0, counts_).arg(1, slots_buf_).arg(2, nslots).arg(3, cl_ulong{chunks}).arg(4, gathered_);
  gather_.run(ctx_, nslots + 1, wg_);
  gathered_host_.resize(nslots + 1);
  gathered_.read(gathered_host_.data(), gathered_host_.size() * sizeof(cl_ulong4));
}

void DeviceSceneStages::setTables(Kernel& k, uint32_t& a) {
  setArgs(k, a, first_by_symbol_, productions_, patterns_, successors_, successor_exprs_, code_, constants_,
          globals_, ignored_);
}

ChunkCount DeviceSceneStages::count(DeviceStrings& strings, const std::vector<SegmentPass>& passes,
                                    const std::vector<uint64_t>& begin, std::vector<uint64_t>& rewritten,
                                    bool parametric) {
  const size_t n = slots_.size();
  chunk_ = openclChunkModules();
  phase_ = 0;
  for (const SegmentPass& sp : passes)
    if (sp.pass.table) phase_ = sp.pass.phase;
  chunks_ = writeSlots(
      begin, &passes, [&](size_t k) { return passes[k].pass.table; }, [](size_t) { return false; }, chunk_,
      &any_context_);
  DeviceString& in = strings.current();
  const cl_uint nslots = static_cast<cl_uint>(n);
  if (any_context_) {
    partners_.buildTree(in.symbols.get(), in.n);
    partner_.reserve(std::max<uint64_t>(in.n, 1) * sizeof(int64_t));
    partner_k_.arg(0, in.symbols).arg(1, cl_ulong{in.n}).arg(2, partners_.tree()).arg(3, partners_.levelInfo());
    partner_k_.arg(4, partners_.levels()).arg(5, slots_buf_).arg(6, nslots).arg(7, partner_);
    partner_k_.run(ctx_, in.n, wg_);
  }
  choice_.reserve(std::max<uint64_t>(in.n, 1) * sizeof(int32_t));
  counts_.reserve((chunks_ + 1) * sizeof(cl_ulong4));
  uint32_t a = 0;
  setTables(count_, a);
  setArgs(count_, a, in.symbols, orDummy(in.offsets, parametric), orDummy(in.params, parametric),
          cl_int{parametric}, orDummy(partner_, any_context_), slots_buf_, nslots, cl_ulong{chunks_},
          cl_ulong{chunk_}, cl_uint{phase_}, choice_, counts_);
  count_.run(ctx_, chunks_ + 1, wg_);
  scan4_.exclusiveScan(counts_.get(), chunks_ + 1);
  gather(chunks_);
  const std::vector<cl_ulong4>& g = gathered_host_;
  rewritten.assign(n, 0);
  for (size_t k = 0; k < n; ++k) rewritten[k] = g[k + 1].s[2] - g[k].s[2];
  return ChunkCount{g[n].s[0], g[n].s[1], g[n].s[2]};
}

void DeviceSceneStages::rewrite(DeviceStrings& strings, const ChunkCount& total, std::vector<uint64_t>& begin,
                                bool parametric) {
  DeviceString& in = strings.current();
  DeviceString& out = strings.next();
  out.reserveOutput(total.modules, total.params, parametric);
  const cl_uint nslots = static_cast<cl_uint>(slots_.size());
  uint32_t a = 0;
  setTables(rewrite_, a);
  setArgs(rewrite_, a, in.symbols, orDummy(in.offsets, parametric), orDummy(in.params, parametric),
          cl_int{parametric}, orDummy(partner_, any_context_), slots_buf_, nslots, cl_ulong{chunks_},
          cl_ulong{chunk_}, cl_uint{phase_}, choice_, counts_, out.symbols, orDummy(out.offsets, parametric),
          orDummy(out.params, parametric));
  rewrite_.run(ctx_, chunks_, wg_);
  strings.advance(total.modules, total.params, parametric);
  for (size_t k = 0; k <= slots_.size(); ++k) begin[k] = gathered_host_[k].s[0];
}

void DeviceSceneStages::cut(DeviceStrings& strings, const std::vector<uint8_t>& cuts, std::vector<uint64_t>& begin,
                            bool parametric) {
  const size_t n = slots_.size();
  DeviceString& in = strings.current();
  if (std::find(cuts.begin(), cuts.end(), 1) == cuts.end() || in.n == 0) return;
  const uint64_t chunk = 64;
  bool unused = false;
  const uint64_t chunks = writeSlots(
      begin, nullptr, [](size_t) -> const RuleTable* { return nullptr; }, [&](size_t k) { return cuts[k] != 0; },
      chunk, &unused);
  const cl_uint nslots = static_cast<cl_uint>(n);
  partners_.buildTree(in.symbols.get(), in.n);
  marks_.reserve((in.n + 1) * sizeof(cl_int));
  zero_.arg(0, marks_).arg(1, cl_ulong{in.n + 1});
  zero_.run(ctx_, in.n + 1, wg_);
  cut_mark_.arg(0, in.symbols).arg(1, cl_ulong{in.n}).arg(2, partners_.tree()).arg(3, partners_.levelInfo());
  cut_mark_.arg(4, partners_.levels()).arg(5, slots_buf_).arg(6, nslots).arg(7, marks_);
  cut_mark_.run(ctx_, in.n, wg_);
  scan_int_.exclusiveScan(marks_.get(), in.n + 1);
  counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
  uint32_t a = 0;
  setArgs(cut_count_, a, orDummy(in.offsets, parametric), cl_int{parametric}, marks_, slots_buf_, nslots,
          cl_ulong{chunks}, cl_ulong{chunk}, counts_);
  cut_count_.run(ctx_, chunks + 1, wg_);
  scan4_.exclusiveScan(counts_.get(), chunks + 1);
  gather(chunks);
  const uint64_t kept = gathered_host_[n].s[0], kept_params = gathered_host_[n].s[1];
  if (kept == in.n) return;  // no '%' in a cutting segment
  DeviceString& out = strings.next();
  out.reserveOutput(kept, kept_params, parametric);
  a = 0;
  setArgs(cut_write_, a, in.symbols, orDummy(in.offsets, parametric), orDummy(in.params, parametric),
          cl_int{parametric}, marks_, slots_buf_, nslots, cl_ulong{chunks}, cl_ulong{chunk}, counts_, out.symbols,
          orDummy(out.offsets, parametric), orDummy(out.params, parametric));
  cut_write_.run(ctx_, chunks, wg_);
  strings.advance(kept, kept_params, parametric);
  for (size_t k = 0; k <= n; ++k) begin[k] = gathered_host_[k].s[0];
}

}  // namespace procgen::detail

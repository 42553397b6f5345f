// Host driver of the batched scene derivation on the device (Lipp, Wonka,
// Wimmer §6; kernels in scene.cl). The step logic is scene.cpp's
// SceneDeriver — every instance's steps, decomposition passes (an instance
// stops decomposing after a pass that rewrote none of its modules), cut, random
// phases, memory checks and statistics — with the combined string resident on
// the device between passes. All instances' rule tables are concatenated once;
// per pass a small slot array (segment, first chunk, table offsets, flags) is
// written, and only the scanned sizes at the segment starts come back (one
// value per instance), which give the new segment starts and which instances
// rewrote anything. The combined string is read back once at the end.
#include "lsystem/opencl/scene.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/bracket_partners.hpp"
#include "lsystem/opencl/device_string.hpp"
#include "lsystem/opencl/pass_runner.hpp"
#include "lsystem/opencl/scene_types.h"
#include "opencl/runtime.hpp"
#include "primitives/opencl/device.hpp"
#include "procgen/error.hpp"

namespace procgen::detail {
namespace {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

static_assert(sizeof(PgSceneSlot) == 80);

/// Element offsets of one rule table in the concatenated buffers.
struct TableAt {
  int32_t first_by_symbol = 0, productions = 0, patterns = 0, successors = 0, successor_exprs = 0;
};

struct Slot {
  const LSystemData* data = nullptr;
  int iterations = 0;
  uint64_t seed = 1;
  bool cut_possible = false;
  bool decomposing = false;
  TableAt productions, decomposition;
  int32_t code = 0, constants = 0, globals = 0, ignored = 0;
};

class DeviceSceneDeriver {
 public:
  explicit DeviceSceneDeriver(Context& ctx)
      : ctx_(ctx),
        scan4_(ctx, primitives::opencl::monoidInfo<primitives::SumU64x4>()),
        scan_int_(ctx, primitives::opencl::monoidInfo<primitives::SumI32>()),
        partners_(ctx),
        strings_(ctx, "scene string", "scene string", "scene string") {
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

  LSystemSceneDerivation run(const LSystemScene& scene, const DeriveOptions& options) {
    options_ = &options;
    budget_ = std::make_unique<MemoryBudget>(options.max_modules, options.memory_budget_bytes);
    const size_t n = scene.instances.size();
    slots_.assign(n, Slot{});
    parametric_ = false;
    for (size_t k = 0; k < n; ++k) {
      const LSystemInstance& inst = scene.instances[k];
      Slot& s = slots_[k];
      s.data = &inst.lsystem.data();
      s.iterations = options.iterations ? *options.iterations : inst.iterations.value_or(s.data->derivation_length);
      if (s.iterations < 0) throw Error("the number of derivation steps must be non-negative");
      s.seed = inst.seed.value_or(options.seed + k);
      s.cut_possible = symbolCanAppear(*s.data, '%');
      parametric_ = parametric_ || s.data->parametric;
    }
    uploadTables();

    LSystemSceneDerivation out;
    out.stats.resize(n);
    out.threads = 1;
    uploadAxioms();
    int max_iterations = 0;
    for (size_t k = 0; k < n; ++k) {
      max_iterations = std::max(max_iterations, slots_[k].iterations);
      out.stats[k].threads = 1;
    }
    decompose(0, [](const Slot&) { return true; });
    cut([](const Slot& s) { return s.cut_possible; });
    for (int step = 1; step <= max_iterations; ++step) {
      auto active = [step](const Slot& s) { return step <= s.iterations; };
      pass(step, passPhase(step, 0), false, active);
      decompose(step, active);
      cut([&](const Slot& s) { return active(s) && s.cut_possible; });
      for (size_t k = 0; k < n; ++k) {
        if (!active(slots_[k])) continue;
        DeriveStats& st = out.stats[k];
        st.iterations = step;
        const uint64_t len = begin_[k + 1] - begin_[k];
        st.modules_total += len;
        st.step_modules.push_back(len);
      }
      if (options.progress) options.progress(step, max_iterations, cur().n);
    }
    for (size_t k = 0; k < n; ++k) out.stats[k].modules = begin_[k + 1] - begin_[k];
    out.begin = begin_;
    out.string = cur().download(parametric_);
    return out;
  }

 private:
  DeviceString& cur() { return strings_.current(); }
  const Buffer& orDummy(const Buffer& b, bool use) const { return use ? b : dummy_; }

  void uploadTables() {
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
    for (Slot& s : slots_) {
      s.productions = addTable(s.data->productions);
      s.decomposition = addTable(s.data->decomposition);
      s.code = static_cast<int32_t>(code.size());
      code.insert(code.end(), s.data->code.begin(), s.data->code.end());
      s.constants = static_cast<int32_t>(constants.size());
      constants.insert(constants.end(), s.data->constants.begin(), s.data->constants.end());
      s.globals = static_cast<int32_t>(globals.size());
      globals.insert(globals.end(), s.data->globals.begin(), s.data->globals.end());
      s.ignored = static_cast<int32_t>(ignored.size());
      ignored.insert(ignored.end(), s.data->ignored.begin(), s.data->ignored.end());
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

  void uploadAxioms() {
    ModuleString axioms;
    axioms.clear(parametric_);
    const size_t n = slots_.size();
    begin_.assign(n + 1, 0);
    for (size_t k = 0; k < n; ++k) {
      begin_[k] = axioms.size();
      appendModules(axioms, slots_[k].data->axiom, parametric_);
    }
    begin_[n] = axioms.size();
    strings_.restart();
    DeviceString& d = cur();
    d.n = axioms.size();
    d.symbols.upload(axioms.symbols.data(), d.n);
    d.params_n = parametric_ ? axioms.params.size() : 0;
    if (parametric_) {
      d.offsets.upload(axioms.param_offsets.data(), (d.n + 1) * sizeof(uint64_t));
      d.params.reserve(std::max<uint64_t>(d.params_n, 1) * sizeof(float));
      d.params.write(axioms.params.data(), d.params_n * sizeof(float));
    }
  }

  /// Writes the slot array for a pass; returns the number of chunks.
  /// `table(k)` is slot k's table for this pass or null (copied); `cuts(k)`
  /// whether the cut pass applies to slot k.
  template <typename TableOf, typename CutsOf>
  uint64_t writeSlots(TableOf&& table, CutsOf&& cuts, uint64_t chunk, bool* any_context) {
    const size_t n = slots_.size();
    std::vector<PgSceneSlot> v(n);
    uint64_t chunks = 0;
    *any_context = false;
    for (size_t k = 0; k < n; ++k) {
      PgSceneSlot& d = v[k];
      const Slot& s = slots_[k];
      d.seg_begin = begin_[k];
      d.seg_end = begin_[k + 1];
      d.first_chunk = chunks;
      chunks += (d.seg_end - d.seg_begin + chunk - 1) / chunk;
      d.seed = s.seed;
      d.code = s.code;
      d.constants = s.constants;
      d.globals = s.globals;
      d.ignored = s.ignored;
      const RuleTable* t = table(k);
      d.rewrite = t != nullptr;
      d.has_partner = t != nullptr && t->hasContext();
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
  std::vector<cl_ulong4> gather(uint64_t chunks) {
    const cl_uint nslots = static_cast<cl_uint>(slots_.size());
    gathered_.reserve((nslots + 1) * sizeof(cl_ulong4));
    gather_.arg(0, counts_).arg(1, slots_buf_).arg(2, nslots).arg(3, cl_ulong{chunks}).arg(4, gathered_);
    gather_.run(ctx_, nslots + 1, wg_);
    std::vector<cl_ulong4> g(nslots + 1);
    gathered_.read(g.data(), g.size() * sizeof(cl_ulong4));
    return g;
  }

  template <typename Active>
  void decompose(int step, Active&& active) {
    int depth = 0;
    for (Slot& slot : slots_) {
      slot.decomposing = !slot.data->decomposition.empty() && active(slot);
      if (slot.decomposing) depth = std::max(depth, std::clamp(slot.data->decomposition.max_depth, 1, 255));
    }
    for (int p = 1; p <= depth; ++p) {
      auto decomposing = [p](const Slot& slot) {
        return slot.decomposing && p <= std::clamp(slot.data->decomposition.max_depth, 1, 255);
      };
      if (!pass(step, passPhase(step, p), true, decomposing)) break;
      for (size_t k = 0; k < slots_.size(); ++k)
        if (rewritten_[k] == 0) slots_[k].decomposing = false;
    }
  }

  /// One batched rewriting pass (scene.cpp's SceneDeriver::pass on the device).
  template <typename Active>
  bool pass(int step, uint32_t phase_id, bool decomposition, Active&& active) {
    const size_t n = slots_.size();
    bool any = false;
    auto table = [&](size_t k) -> const RuleTable* {
      const Slot& s = slots_[k];
      if (!active(s)) return nullptr;
      const RuleTable& t = decomposition ? s.data->decomposition : s.data->productions;
      return t.empty() ? nullptr : &t;
    };
    for (size_t k = 0; k < n; ++k) any = any || table(k) != nullptr;
    if (!any) return false;
    const uint64_t chunk = openclChunkModules();
    bool any_context = false;
    const uint64_t chunks = writeSlots(table, [](size_t) { return false; }, chunk, &any_context);
    DeviceString& in = cur();
    const cl_uint nslots = static_cast<cl_uint>(n);
    if (any_context) {
      partners_.buildTree(in.symbols.get(), in.n);
      partner_.reserve(std::max<uint64_t>(in.n, 1) * sizeof(int64_t));
      partner_k_.arg(0, in.symbols).arg(1, cl_ulong{in.n}).arg(2, partners_.tree()).arg(3, partners_.levelInfo());
      partner_k_.arg(4, partners_.levels()).arg(5, slots_buf_).arg(6, nslots).arg(7, partner_);
      partner_k_.run(ctx_, in.n, wg_);
    }
    choice_.reserve(std::max<uint64_t>(in.n, 1) * sizeof(int32_t));
    counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
    uint32_t a = 0;
    setTables(count_, a);
    setArgs(count_, a, in.symbols, orDummy(in.offsets, parametric_), orDummy(in.params, parametric_),
         cl_int{parametric_}, orDummy(partner_, any_context), slots_buf_, nslots, cl_ulong{chunks},
         cl_ulong{chunk}, cl_uint{phase_id}, choice_, counts_);
    count_.run(ctx_, chunks + 1, wg_);
    scan4_.exclusiveScan(counts_.get(), chunks + 1);
    const std::vector<cl_ulong4> g = gather(chunks);
    rewritten_.assign(n, 0);
    for (size_t k = 0; k < n; ++k) rewritten_[k] = g[k + 1].s[2] - g[k].s[2];
    const ChunkCount total{g[n].s[0], g[n].s[1], g[n].s[2]};
    if (total.rewritten == 0) return false;
    budget_->check(total, parametric_, any_context, step, in.bytes(parametric_));

    DeviceString& out = strings_.next();
    out.reserveOutput(total.modules, total.params, parametric_);
    a = 0;
    setTables(rewrite_, a);
    setArgs(rewrite_, a, in.symbols, orDummy(in.offsets, parametric_), orDummy(in.params, parametric_),
         cl_int{parametric_}, orDummy(partner_, any_context), slots_buf_, nslots, cl_ulong{chunks},
         cl_ulong{chunk}, cl_uint{phase_id}, choice_, counts_, out.symbols, orDummy(out.offsets, parametric_),
         orDummy(out.params, parametric_));
    rewrite_.run(ctx_, chunks, wg_);
    finish(total.modules, total.params, g);
    return true;
  }

  /// The output of a pass becomes current; segment starts from the gathered offsets.
  void finish(uint64_t modules, uint64_t params, const std::vector<cl_ulong4>& g) {
    strings_.advance(modules, params, parametric_);
    for (size_t k = 0; k <= slots_.size(); ++k) begin_[k] = g[k].s[0];
  }

  void setTables(Kernel& k, uint32_t& a) {
    setArgs(k, a, first_by_symbol_, productions_, patterns_, successors_, successor_exprs_, code_, constants_,
         globals_, ignored_);
  }

  /// '%' pruning per segment, for the slots where cuts(slot) holds.
  template <typename Cuts>
  void cut(Cuts&& cuts) {
    const size_t n = slots_.size();
    bool any = false;
    for (size_t k = 0; k < n; ++k) any = any || cuts(slots_[k]);
    DeviceString& in = cur();
    if (!any || in.n == 0) return;
    const uint64_t chunk = 64;
    bool unused = false;
    const uint64_t chunks = writeSlots([](size_t) -> const RuleTable* { return nullptr; },
                                       [&](size_t k) { return cuts(slots_[k]); }, chunk, &unused);
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
    setArgs(cut_count_, a, orDummy(in.offsets, parametric_), cl_int{parametric_}, marks_, slots_buf_, nslots,
         cl_ulong{chunks}, cl_ulong{chunk}, counts_);
    cut_count_.run(ctx_, chunks + 1, wg_);
    scan4_.exclusiveScan(counts_.get(), chunks + 1);
    const std::vector<cl_ulong4> g = gather(chunks);
    const uint64_t kept = g[n].s[0], kept_params = g[n].s[1];
    if (kept == in.n) return;  // no '%' in a cutting segment
    DeviceString& out = strings_.next();
    out.reserveOutput(kept, kept_params, parametric_);
    a = 0;
    setArgs(cut_write_, a, in.symbols, orDummy(in.offsets, parametric_), orDummy(in.params, parametric_),
         cl_int{parametric_}, marks_, slots_buf_, nslots, cl_ulong{chunks}, cl_ulong{chunk}, counts_, out.symbols,
         orDummy(out.offsets, parametric_), orDummy(out.params, parametric_));
    cut_write_.run(ctx_, chunks, wg_);
    finish(kept, kept_params, g);
  }

  Context& ctx_;
  primitives::opencl::DeviceScan scan4_, scan_int_;
  DeviceBracketPartners partners_;
  Kernel count_, rewrite_, partner_k_, cut_mark_, cut_count_, cut_write_, gather_, zero_;
  size_t wg_ = 64;
  DeviceStrings strings_;
  Buffer first_by_symbol_, productions_, patterns_, successors_, successor_exprs_, code_, constants_, globals_,
      ignored_, slots_buf_, choice_, counts_, partner_, marks_, gathered_, dummy_;
  const DeriveOptions* options_ = nullptr;
  std::unique_ptr<MemoryBudget> budget_;
  std::vector<Slot> slots_;
  std::vector<uint64_t> begin_;
  std::vector<uint64_t> rewritten_;
  bool parametric_ = false;
};

}  // namespace

LSystemSceneDerivation deriveSceneOpenCL(const LSystemScene& scene, const DeriveOptions& options) {
  return opencl::withState<DeviceSceneDeriver>(options.execution.device,
                                               [&](DeviceSceneDeriver& d) { return d.run(scene, options); });
}

}  // namespace procgen::detail

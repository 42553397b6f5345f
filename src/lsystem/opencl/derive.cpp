// Derivation on the opencl backend with the module string resident on the
// device (Lipp, Wonka, Wimmer §4.2, Figure 4; issue 5 point 2). The step
// logic is that of the host driver (derive.cpp) — n steps, each one
// productions pass, up to `maximum depth` decomposition passes and the cut —
// with the same random phases (step·256 + pass) and memory checks, but every
// pass runs on two device strings ping-ponged between passes:
//   count.cl → scan.cl → (size read back, memory check) → rewrite.cl,
// bracket partners for context search from bracket_partners.cl, the D0L fast
// path from the same files, and the cut pass from cut.cl. Nothing but sizes
// (the scanned totals) returns to the host between passes; the final string is
// read back once. The rule tables are uploaded once per derivation.
#include "lsystem/opencl/derive.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/opencl/bracket_partners.hpp"
#include "lsystem/opencl/device_string.hpp"
#include "lsystem/opencl/pass_runner.hpp"
#include "opencl/runtime.hpp"
#include "primitives/opencl/device.hpp"

namespace procgen::detail {
namespace {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

struct TableBuffers {
  Buffer first_by_symbol, productions, patterns, successors, successor_exprs;
};

class DeviceDeriver {
 public:
  explicit DeviceDeriver(Context& ctx)
      : ctx_(ctx),
        scan4_(ctx, primitives::opencl::monoidInfo<primitives::SumU64x4>()),
        scan_int_(ctx, primitives::opencl::monoidInfo<primitives::SumI32>()),
        partners_(ctx),
        strings_(ctx, "module symbols", "parameter offsets", "parameters") {
    cl_program count = ctx.program("lsystem/opencl/count.cl");
    cl_program rewrite = ctx.program("lsystem/opencl/rewrite.cl");
    cl_program cut = ctx.program("lsystem/opencl/cut.cl");
    count_ = Kernel(count, "count");
    count_d0l_ = Kernel(count, "countD0L");
    rewrite_ = Kernel(rewrite, "rewrite");
    rewrite_d0l_ = Kernel(rewrite, "rewriteD0L");
    zero_ = Kernel(cut, "zeroInts");
    cut_mark_ = Kernel(cut, "cutMark");
    cut_count_ = Kernel(cut, "cutCount");
    cut_write_ = Kernel(cut, "cutWrite");
    wg_ = ctx.workGroupSize(rewrite_.get(), 64);
    for (Buffer* b : {&code_, &constants_, &globals_, &ignored_, &choice_, &counts_, &partner_, &marks_,
                      &d0l_length_, &d0l_start_, &d0l_bytes_, &dummy_})
      *b = Buffer(ctx, "derivation");
    for (TableBuffers* t : {&productions_, &decomposition_})
      for (Buffer* b : {&t->first_by_symbol, &t->productions, &t->patterns, &t->successors, &t->successor_exprs})
        *b = Buffer(ctx, "rule table");
    dummy_.reserve(256);
  }

  ModuleString derive(const LSystemData& data, const DeriveOptions& options, int iterations, DeriveStats* stats) {
    data_ = &data;
    options_ = &options;
    parametric_ = data.parametric;
    budget_ = std::make_unique<MemoryBudget>(options.max_modules, options.memory_budget_bytes);
    d0l_ = makeD0LTable(data, data.productions);
    uploadTables(data);
    const bool cut_possible = symbolCanAppear(data, '%');
    strings_.restart();
    upload(data.axiom, cur());

    decompose(0);
    if (cut_possible) cut(cur());
    if (stats) {
      *stats = DeriveStats{};
      stats->threads = 1;
    }
    for (int step = 1; step <= iterations; ++step) {
      rewritePass(data.productions, productions_, data.productions.hasContext(), passPhase(step, 0), step);
      decompose(step);
      if (cut_possible) cut(cur());
      if (stats) {
        stats->iterations = step;
        stats->modules_total += cur().n;
        stats->step_modules.push_back(cur().n);
      }
      if (options.progress) options.progress(step, iterations, cur().n);
    }
    if (stats) stats->modules = cur().n;
    return cur().download(parametric_);
  }

  bool cutHost(ModuleString& s) {
    parametric_ = s.parametric();
    strings_.restart();
    upload(s, cur());
    const uint64_t before = cur().n;
    cut(cur());
    if (cur().n == before) return false;
    s = cur().download(parametric_);
    return true;
  }

 private:
  DeviceString& cur() { return strings_.current(); }

  void upload(const ModuleString& in, DeviceString& d) {
    d.n = in.size();
    d.symbols.upload(in.symbols.data(), in.size());
    d.params_n = 0;
    if (!parametric_) return;
    std::vector<uint64_t> zeros;
    const uint64_t* offsets = in.param_offsets.data();
    if (in.param_offsets.empty()) {  // a parametric L-system's string without parameters
      zeros.assign(in.size() + 1, 0);
      offsets = zeros.data();
    }
    d.params_n = offsets[in.size()];
    d.offsets.upload(offsets, (in.size() + 1) * sizeof(uint64_t));
    d.params.reserve(std::max<uint64_t>(d.params_n, 1) * sizeof(float));
    d.params.write(in.params.data(), d.params_n * sizeof(float));
  }

  void uploadTables(const LSystemData& data) {
    code_.upload(data.code.data(), data.code.size() * sizeof(uint32_t));
    constants_.upload(data.constants.data(), data.constants.size() * sizeof(float));
    globals_.upload(data.globals.data(), data.globals.size() * sizeof(float));
    ignored_.upload(data.ignored.data(), data.ignored.size());
    const std::pair<const RuleTable*, TableBuffers*> tables[] = {{&data.productions, &productions_},
                                                                 {&data.decomposition, &decomposition_}};
    for (const auto& [t, b] : tables) {
      b->first_by_symbol.upload(t->first_by_symbol.data(), t->first_by_symbol.size() * sizeof(int32_t));
      b->productions.upload(t->productions.data(), t->productions.size() * sizeof(PgProduction));
      b->patterns.upload(t->patterns.data(), t->patterns.size() * sizeof(PgPatternModule));
      b->successors.upload(t->successors.data(), t->successors.size() * sizeof(PgSuccessorModule));
      b->successor_exprs.upload(t->successor_exprs.data(), t->successor_exprs.size() * sizeof(int32_t));
    }
    if (d0l_.usable) {
      d0l_length_.upload(d0l_.length, sizeof d0l_.length);
      d0l_start_.upload(d0l_.start, sizeof d0l_.start);
      d0l_bytes_.upload(d0l_.rows.data(), d0l_.rows.size());
    }
  }

  void decompose(int step) {
    if (data_->decomposition.empty()) return;
    const int depth = std::clamp(data_->decomposition.max_depth, 1, 255);
    for (int pass = 1; pass <= depth; ++pass)
      if (!rewritePass(data_->decomposition, decomposition_, data_->decomposition.hasContext(), passPhase(step, pass),
                       step))
        break;
  }

  void setString(Kernel& k, uint32_t& a, const DeviceString& s) {
    setArgs(k, a, s.symbols, parametric_ ? s.offsets : dummy_, parametric_ ? s.params : dummy_, cl_ulong{s.n},
         cl_int{parametric_});
  }

  cl_ulong4 scanTotal(uint64_t chunks) {
    scan4_.exclusiveScan(counts_.get(), chunks + 1);
    cl_ulong4 total;
    counts_.read(&total, sizeof total, chunks * sizeof(cl_ulong4));
    return total;
  }

  /// One pass of parallel rewriting with `table`; false when nothing was rewritten.
  bool rewritePass(const RuleTable& table, TableBuffers& t, bool has_context, uint32_t phase_id, int step) {
    if (table.empty()) return false;
    DeviceString& in = cur();
    DeviceString& out = strings_.next();
    const uint64_t n = in.n;
    const uint64_t chunk = openclChunkModules();
    const uint64_t chunks = (n + chunk - 1) / chunk;
    counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
    if (&table == &data_->productions && d0l_.usable) {
      count_d0l_.arg(0, in.symbols).arg(1, cl_ulong{n}).arg(2, d0l_length_).arg(3, cl_ulong{chunk}).arg(4, counts_);
      count_d0l_.run(ctx_, chunks + 1, wg_);
      const uint64_t total = scanTotal(chunks).s[0];
      budget_->check(ChunkCount{total, 0, n}, false, false, step, in.bytes(parametric_));
      out.symbols.reserve(std::max<uint64_t>(total, 1));
      rewrite_d0l_.arg(0, in.symbols).arg(1, cl_ulong{n}).arg(2, d0l_length_).arg(3, d0l_start_);
      rewrite_d0l_.arg(4, d0l_bytes_).arg(5, cl_ulong{chunk}).arg(6, counts_).arg(7, out.symbols);
      rewrite_d0l_.run(ctx_, chunks, wg_);
      strings_.advance(total, 0, /*parametric=*/false);
      return true;
    }
    if (has_context) partners_.run(in.symbols.get(), n, partner_);
    choice_.reserve(std::max<uint64_t>(n, 1) * sizeof(int32_t));
    uint32_t a = 0;
    setRules(count_, a, t);
    setString(count_, a, in);
    setArgs(count_, a, has_context ? partner_ : dummy_, cl_int{has_context}, cl_ulong{options_->seed},
         cl_uint{phase_id}, cl_ulong{chunk}, choice_, counts_);
    count_.run(ctx_, chunks + 1, wg_);
    const cl_ulong4 total = scanTotal(chunks);
    const ChunkCount c{total.s[0], total.s[1], total.s[2]};
    if (c.rewritten == 0) return false;
    budget_->check(c, parametric_, has_context, step, in.bytes(parametric_));
    out.reserveOutput(c.modules, c.params, parametric_);
    a = 0;
    setRules(rewrite_, a, t);
    setString(rewrite_, a, in);
    setArgs(rewrite_, a, has_context ? partner_ : dummy_, cl_int{has_context}, cl_ulong{options_->seed},
         cl_uint{phase_id}, cl_ulong{chunk}, choice_, counts_, cl_int{parametric_}, out.symbols,
         parametric_ ? out.offsets : dummy_, parametric_ ? out.params : dummy_);
    rewrite_.run(ctx_, chunks, wg_);
    strings_.advance(c.modules, c.params, parametric_);
    return true;
  }

  void setRules(Kernel& k, uint32_t& a, TableBuffers& t) {
    setArgs(k, a, t.first_by_symbol, t.productions, t.patterns, t.successors, t.successor_exprs, code_, constants_,
         globals_, ignored_);
  }

  /// Stage cut (cut.cl) on the current string.
  void cut(DeviceString& in) {
    const uint64_t n = in.n;
    if (n == 0) return;
    partners_.buildTree(in.symbols.get(), n);
    marks_.reserve((n + 1) * sizeof(cl_int));
    zero_.arg(0, marks_).arg(1, cl_ulong{n + 1});
    zero_.run(ctx_, n + 1, wg_);
    cut_mark_.arg(0, in.symbols).arg(1, cl_ulong{n}).arg(2, partners_.tree()).arg(3, partners_.levelInfo());
    cut_mark_.arg(4, partners_.levels()).arg(5, marks_);
    cut_mark_.run(ctx_, n, wg_);
    scan_int_.exclusiveScan(marks_.get(), n + 1);
    const uint64_t chunk = 64;
    const uint64_t chunks = (n + chunk - 1) / chunk;
    counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
    cut_count_.arg(0, parametric_ ? in.offsets : dummy_).arg(1, cl_int{parametric_}).arg(2, cl_ulong{n});
    cut_count_.arg(3, marks_).arg(4, cl_ulong{chunk}).arg(5, counts_);
    cut_count_.run(ctx_, chunks + 1, wg_);
    const cl_ulong4 total = scanTotal(chunks);
    const uint64_t kept = total.s[0], kept_params = total.s[1];
    if (kept == n) return;  // no '%'
    DeviceString& out = strings_.next();
    out.reserveOutput(kept, kept_params, parametric_);
    uint32_t a = 0;
    setArgs(cut_write_, a, in.symbols, parametric_ ? in.offsets : dummy_, parametric_ ? in.params : dummy_,
         cl_int{parametric_}, cl_ulong{n}, marks_, cl_ulong{chunk}, counts_, out.symbols,
         parametric_ ? out.offsets : dummy_, parametric_ ? out.params : dummy_);
    cut_write_.run(ctx_, chunks, wg_);
    strings_.advance(kept, kept_params, parametric_);
  }

  Context& ctx_;
  primitives::opencl::DeviceScan scan4_, scan_int_;
  DeviceBracketPartners partners_;
  Kernel count_, count_d0l_, rewrite_, rewrite_d0l_, zero_, cut_mark_, cut_count_, cut_write_;
  size_t wg_ = 64;
  DeviceStrings strings_;
  TableBuffers productions_, decomposition_;
  Buffer code_, constants_, globals_, ignored_, choice_, counts_, partner_, marks_, d0l_length_, d0l_start_,
      d0l_bytes_, dummy_;
  const LSystemData* data_ = nullptr;
  const DeriveOptions* options_ = nullptr;
  bool parametric_ = false;
  std::unique_ptr<MemoryBudget> budget_;
  D0LTable d0l_;
};

}  // namespace

ModuleString deriveOpenCL(const LSystemData& data, const DeriveOptions& options, int iterations,
                          DeriveStats* stats) {
  return opencl::withState<DeviceDeriver>(options.execution.device,
                     [&](DeviceDeriver& d) { return d.derive(data, options, iterations, stats); });
}

bool cutBranchesOpenCL(ModuleString& s, int device) {
  return opencl::withState<DeviceDeriver>(device, [&](DeviceDeriver& d) { return d.cutHost(s); });
}

}  // namespace procgen::detail

// The opencl backend's PassRunner (Lipp, Wonka, Wimmer §4.2, Figure 4; issue 5
// point 2): the module string stays on the device from the axiom to the
// result, two device strings ping-ponged between passes. Every pass is
//   count.cl → scan → (size read back, the driver's memory check) → rewrite.cl,
// with the same per-module logic (match.h, expr.h, random.h) as the serial
// twin, so strings are bit-identical; bracket partners for context search come
// from bracket_partners.cl, the D0L fast path (and the driver's D0L jumps,
// whose composed tables are uploaded once each) from the same files, the cut
// pass from cut.cl, and the batched passes of many L-systems (§6) from
// scene.cl (scene.cpp). Nothing but sizes returns to the host between passes;
// the rule tables are uploaded once per derivation, the string read back once.
//
// The kernels and buffers are per-device state (opencl::Context::state); a
// runner holds the device's lock for its life, one derivation.
#include "lsystem/opencl/pass_runner.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "lsystem/opencl/bracket_partners.hpp"
#include "lsystem/opencl/device_string.hpp"
#include "lsystem/opencl/scene.hpp"
#include "opencl/runtime.hpp"
#include "primitives/opencl/device.hpp"

namespace procgen::detail {
namespace {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

/// Modules per work item in count/rewrite (tests may force other sizes).
uint64_t g_chunk_override = 0;
constexpr uint64_t kDefaultChunk = 16;
/// See d0lJumpMinModules.
constexpr uint64_t kJumpMinModules = 4096;

struct TableBuffers {
  Buffer first_by_symbol, productions, patterns, successors, successor_exprs;
};

/// A D0L table on the device (countD0L / rewriteD0L arguments).
struct DeviceD0L {
  Buffer length, start, bytes;
};

/// The per-device kernels and buffers of one-string derivation, kept between
/// derivations.
struct DeviceStages {
  explicit DeviceStages(Context& ctx)
      : scan4(ctx, primitives::opencl::monoidInfo<primitives::SumU64x4>()),
        scan_int(ctx, primitives::opencl::monoidInfo<primitives::SumI32>()),
        partners(ctx),
        strings(ctx, "module symbols", "parameter offsets", "parameters") {
    cl_program count_p = ctx.program("lsystem/opencl/count.cl");
    cl_program rewrite_p = ctx.program("lsystem/opencl/rewrite.cl");
    cl_program cut_p = ctx.program("lsystem/opencl/cut.cl");
    count = Kernel(count_p, "count");
    count_d0l = Kernel(count_p, "countD0L");
    rewrite = Kernel(rewrite_p, "rewrite");
    rewrite_d0l = Kernel(rewrite_p, "rewriteD0L");
    zero = Kernel(cut_p, "zeroInts");
    cut_mark = Kernel(cut_p, "cutMark");
    cut_count = Kernel(cut_p, "cutCount");
    cut_write = Kernel(cut_p, "cutWrite");
    wg = ctx.workGroupSize(rewrite.get(), 64);
    for (Buffer* b : {&code, &constants, &globals, &ignored, &choice, &counts, &partner, &marks, &dummy})
      *b = Buffer(ctx, "derivation");
    for (TableBuffers* t : {&productions, &decomposition})
      for (Buffer* b : {&t->first_by_symbol, &t->productions, &t->patterns, &t->successors, &t->successor_exprs})
        *b = Buffer(ctx, "rule table");
    dummy.reserve(256);
  }

  primitives::opencl::DeviceScan scan4, scan_int;
  DeviceBracketPartners partners;
  Kernel count, count_d0l, rewrite, rewrite_d0l, zero, cut_mark, cut_count, cut_write;
  size_t wg = 64;
  DeviceStrings strings;
  TableBuffers productions, decomposition;
  Buffer code, constants, globals, ignored, choice, counts, partner, marks, dummy;
  std::vector<DeviceD0L> d0l;  ///< the D0L tables of the current derivation, reused
};

class OpenCLPassRunner final : public PassRunner {
 public:
  explicit OpenCLPassRunner(Context& ctx) : ctx_(ctx), lock_(ctx.lock()), s_(ctx.state<DeviceStages>()) {}

  int threads() const override { return 1; }

  void load(std::span<const LSystemData* const> systems, const ModuleString& in, bool parametric) override {
    parametric_ = parametric;
    data_ = systems.size() == 1 ? systems[0] : nullptr;
    d0l_of_.clear();
    counted_ = nullptr;
    if (data_) uploadTables(*data_);
    if (systems.size() > 1) scene().load(systems);
    s_.strings.restart();
    DeviceString& d = cur();
    d.n = in.size();
    d.symbols.upload(in.symbols.data(), in.size());
    d.params_n = 0;
    if (!parametric_) return;
    std::vector<uint64_t> zeros;
    const uint64_t* offsets = in.param_offsets.data();
    if (in.param_offsets.empty()) {  // a parametric derivation's string without parameters
      zeros.assign(in.size() + 1, 0);
      offsets = zeros.data();
    }
    d.params_n = offsets[in.size()];
    d.offsets.upload(offsets, (in.size() + 1) * sizeof(uint64_t));
    d.params.reserve(std::max<uint64_t>(d.params_n, 1) * sizeof(float));
    d.params.write(in.params.data(), d.params_n * sizeof(float));
  }

  uint64_t modules() const override { return s_.strings.current().n; }
  uint64_t bytes() const override { return s_.strings.current().bytes(parametric_); }
  ModuleString download() override { return cur().download(parametric_); }

  ChunkCount countPass(const RewritePass& pass, bool context) override {
    counted_ = nullptr;
    DeviceString& in = cur();
    const uint64_t n = in.n;
    const uint64_t chunks = chunksOf(n);
    context_ = context;
    if (context) s_.partners.run(in.symbols.get(), n, s_.partner);
    s_.choice.reserve(std::max<uint64_t>(n, 1) * sizeof(int32_t));
    s_.counts.reserve((chunks + 1) * sizeof(cl_ulong4));
    uint32_t a = 0;
    setRules(s_.count, a, tablesOf(pass));
    setString(s_.count, a, in);
    setArgs(s_.count, a, context ? s_.partner : s_.dummy, cl_int{context}, cl_ulong{pass.seed}, cl_uint{pass.phase},
            cl_ulong{openclChunkModules()}, s_.choice, s_.counts);
    s_.count.run(ctx_, chunks + 1, s_.wg);
    const cl_ulong4 total = scanTotal(chunks);
    return ChunkCount{total.s[0], total.s[1], total.s[2]};
  }

  void rewritePass(const RewritePass& pass, const ChunkCount& total) override {
    DeviceString& in = cur();
    DeviceString& out = s_.strings.next();
    out.reserveOutput(total.modules, total.params, parametric_);
    uint32_t a = 0;
    setRules(s_.rewrite, a, tablesOf(pass));
    setString(s_.rewrite, a, in);
    setArgs(s_.rewrite, a, context_ ? s_.partner : s_.dummy, cl_int{context_}, cl_ulong{pass.seed},
            cl_uint{pass.phase}, cl_ulong{openclChunkModules()}, s_.choice, s_.counts, cl_int{parametric_},
            out.symbols, orDummy(out.offsets), orDummy(out.params));
    s_.rewrite.run(ctx_, chunksOf(in.n), s_.wg);
    s_.strings.advance(total.modules, total.params, parametric_);
  }

  uint64_t countPassD0L(const D0LTable& t) override {
    const DeviceString& in = cur();
    const uint64_t chunks = chunksOf(in.n);
    s_.counts.reserve((chunks + 1) * sizeof(cl_ulong4));
    s_.count_d0l.arg(0, in.symbols).arg(1, cl_ulong{in.n}).arg(2, device(t).length);
    s_.count_d0l.arg(3, cl_ulong{openclChunkModules()}).arg(4, s_.counts);
    s_.count_d0l.run(ctx_, chunks + 1, s_.wg);
    counted_ = &t;
    counted_total_ = scanTotal(chunks).s[0];
    return counted_total_;
  }

  void rewritePassD0L(const D0LTable& t, uint64_t total) override {
    const DeviceString& in = cur();
    DeviceString& out = s_.strings.next();
    out.symbols.reserve(std::max<uint64_t>(total, 1));
    const DeviceD0L& d = device(t);
    s_.rewrite_d0l.arg(0, in.symbols).arg(1, cl_ulong{in.n}).arg(2, d.length).arg(3, d.start).arg(4, d.bytes);
    s_.rewrite_d0l.arg(5, cl_ulong{openclChunkModules()}).arg(6, s_.counts).arg(7, out.symbols);
    s_.rewrite_d0l.run(ctx_, chunksOf(in.n), s_.wg);
    counted_ = nullptr;
    s_.strings.advance(total, 0, /*parametric=*/false);
  }

  uint64_t countRewritePassD0L(const D0LTable& t, uint64_t room, uint64_t expected_output) override {
    // The offsets of the last count serve when it was this table's on this
    // string (a D0L jump counts its last table last).
    const uint64_t total = counted_ == &t ? counted_total_ : countPassD0L(t);
    rewritePassD0L(t, total);
    return total;
  }

  /// Every jump table costs its uploads (three writes) and a count launch,
  /// which outweigh the launches a jump saves over short strings: jumps from
  /// the axiom made dragon-curve n=10 (3,070 modules) slower, 1.8 against 1.4
  /// ms, and sierpinski-gasket n=6 1.7 against 0.9 ms; from 4,096 modules on,
  /// plant-2d n=7 took 1.8 ms against 10.8 without jumps, hilbert3d n=6 1.3
  /// against 2.0 (PoCL, 2 shared cores, bench lsystem, medians of rounds).
  uint64_t d0lJumpMinModules() const override { return kJumpMinModules; }

  bool cutPass() override {
    counted_ = nullptr;
    DeviceString& in = cur();
    const uint64_t n = in.n;
    if (n == 0) return false;
    s_.partners.buildTree(in.symbols.get(), n);
    s_.marks.reserve((n + 1) * sizeof(cl_int));
    s_.zero.arg(0, s_.marks).arg(1, cl_ulong{n + 1});
    s_.zero.run(ctx_, n + 1, s_.wg);
    s_.cut_mark.arg(0, in.symbols).arg(1, cl_ulong{n}).arg(2, s_.partners.tree()).arg(3, s_.partners.levelInfo());
    s_.cut_mark.arg(4, s_.partners.levels()).arg(5, s_.marks);
    s_.cut_mark.run(ctx_, n, s_.wg);
    s_.scan_int.exclusiveScan(s_.marks.get(), n + 1);
    const uint64_t chunk = 64;
    const uint64_t chunks = (n + chunk - 1) / chunk;
    s_.counts.reserve((chunks + 1) * sizeof(cl_ulong4));
    s_.cut_count.arg(0, orDummy(in.offsets)).arg(1, cl_int{parametric_}).arg(2, cl_ulong{n});
    s_.cut_count.arg(3, s_.marks).arg(4, cl_ulong{chunk}).arg(5, s_.counts);
    s_.cut_count.run(ctx_, chunks + 1, s_.wg);
    const cl_ulong4 total = scanTotal(chunks);
    const uint64_t kept = total.s[0], kept_params = total.s[1];
    if (kept == n) return false;  // no '%'
    DeviceString& out = s_.strings.next();
    out.reserveOutput(kept, kept_params, parametric_);
    uint32_t a = 0;
    setArgs(s_.cut_write, a, in.symbols, orDummy(in.offsets), orDummy(in.params), cl_int{parametric_}, cl_ulong{n},
            s_.marks, cl_ulong{chunk}, s_.counts, out.symbols, orDummy(out.offsets), orDummy(out.params));
    s_.cut_write.run(ctx_, chunks, s_.wg);
    s_.strings.advance(kept, kept_params, parametric_);
    return true;
  }

  ChunkCount countSegments(const std::vector<SegmentPass>& passes, const std::vector<uint64_t>& begin,
                           std::vector<uint64_t>& rewritten) override {
    counted_ = nullptr;
    return scene().count(s_.strings, passes, begin, rewritten, parametric_);
  }
  void rewriteSegments(const std::vector<SegmentPass>& passes, const ChunkCount& total,
                       std::vector<uint64_t>& begin) override {
    scene().rewrite(s_.strings, total, begin, parametric_);
  }
  void cutSegments(const std::vector<uint8_t>& cuts, std::vector<uint64_t>& begin) override {
    counted_ = nullptr;
    scene().cut(s_.strings, cuts, begin, parametric_);
  }

  /// Bracket partners of a host string (the stage test).
  void bracketPartners(const uint8_t* symbols, uint64_t n, int64_t* partner) {
    if (n == 0) return;
    DeviceString& d = cur();
    d.symbols.upload(symbols, n);
    s_.partners.run(d.symbols.get(), n, s_.partner);
    s_.partner.read(partner, n * sizeof(int64_t));
  }

 private:
  DeviceString& cur() { return s_.strings.current(); }
  const Buffer& orDummy(const Buffer& b) const { return parametric_ ? b : s_.dummy; }
  uint64_t chunksOf(uint64_t n) const {
    const uint64_t chunk = openclChunkModules();
    return (n + chunk - 1) / chunk;
  }
  /// The batched stages (scene.cl), built on first use.
  DeviceSceneStages& scene() { return ctx_.state<DeviceSceneStages>(); }

  void uploadTables(const LSystemData& data) {
    s_.code.upload(data.code.data(), data.code.size() * sizeof(uint32_t));
    s_.constants.upload(data.constants.data(), data.constants.size() * sizeof(float));
    s_.globals.upload(data.globals.data(), data.globals.size() * sizeof(float));
    s_.ignored.upload(data.ignored.data(), data.ignored.size());
    const std::pair<const RuleTable*, TableBuffers*> tables[] = {{&data.productions, &s_.productions},
                                                                 {&data.decomposition, &s_.decomposition}};
    for (const auto& [t, b] : tables) {
      b->first_by_symbol.upload(t->first_by_symbol.data(), t->first_by_symbol.size() * sizeof(int32_t));
      b->productions.upload(t->productions.data(), t->productions.size() * sizeof(PgProduction));
      b->patterns.upload(t->patterns.data(), t->patterns.size() * sizeof(PgPatternModule));
      b->successors.upload(t->successors.data(), t->successors.size() * sizeof(PgSuccessorModule));
      b->successor_exprs.upload(t->successor_exprs.data(), t->successor_exprs.size() * sizeof(int32_t));
    }
  }

  const TableBuffers& tablesOf(const RewritePass& pass) const {
    return pass.table == &data_->productions ? s_.productions : s_.decomposition;
  }

  /// The device copy of D0L table `t`, uploaded on its first use in this derivation.
  const DeviceD0L& device(const D0LTable& t) {
    for (size_t i = 0; i < d0l_of_.size(); ++i)
      if (d0l_of_[i] == &t) return s_.d0l[i];
    const size_t i = d0l_of_.size();
    d0l_of_.push_back(&t);
    if (s_.d0l.size() <= i) {
      s_.d0l.emplace_back();
      s_.d0l[i].length = Buffer(ctx_, "D0L table");
      s_.d0l[i].start = Buffer(ctx_, "D0L table");
      s_.d0l[i].bytes = Buffer(ctx_, "D0L table");
    }
    DeviceD0L& d = s_.d0l[i];
    d.length.upload(t.length, sizeof t.length);
    d.start.upload(t.start, sizeof t.start);
    d.bytes.upload(t.rows.data(), std::max<size_t>(t.rows.size(), 1));
    return d;
  }

  void setRules(Kernel& k, uint32_t& a, const TableBuffers& t) {
    setArgs(k, a, t.first_by_symbol, t.productions, t.patterns, t.successors, t.successor_exprs, s_.code,
            s_.constants, s_.globals, s_.ignored);
  }

  void setString(Kernel& k, uint32_t& a, const DeviceString& s) {
    setArgs(k, a, s.symbols, orDummy(s.offsets), orDummy(s.params), cl_ulong{s.n}, cl_int{parametric_});
  }

  cl_ulong4 scanTotal(uint64_t chunks) {
    s_.scan4.exclusiveScan(s_.counts.get(), chunks + 1);
    cl_ulong4 total;
    s_.counts.read(&total, sizeof total, chunks * sizeof(cl_ulong4));
    return total;
  }

  Context& ctx_;
  std::unique_lock<std::recursive_mutex> lock_;
  DeviceStages& s_;
  const LSystemData* data_ = nullptr;  ///< the one L-system of one-string passes
  bool parametric_ = false;
  bool context_ = false;                ///< countPass → rewritePass
  std::vector<const D0LTable*> d0l_of_;  ///< d0l_of_[i] is on the device as s_.d0l[i]
  const D0LTable* counted_ = nullptr;    ///< the table whose scanned counts are in s_.counts
  uint64_t counted_total_ = 0;
};

}  // namespace

std::unique_ptr<PassRunner> makeOpenCLPassRunner(int device) {
  return std::make_unique<OpenCLPassRunner>(Context::get(device));
}

void bracketPartnersOpenCL(const uint8_t* symbols, uint64_t n, int64_t* partner, int device) {
  OpenCLPassRunner runner(Context::get(device));
  runner.bracketPartners(symbols, n, partner);
}

bool cutBranchesOpenCL(ModuleString& s, int device) {
  OpenCLPassRunner runner(Context::get(device));
  runner.load({}, s, s.parametric());
  if (!runner.cutPass()) return false;
  s = runner.download();
  return true;
}

void setOpenCLChunkOverrideForTesting(uint64_t chunk) { g_chunk_override = chunk; }

uint64_t openclChunkModules() { return g_chunk_override ? g_chunk_override : kDefaultChunk; }

}  // namespace procgen::detail

// The opencl backend's pass runner. Paper §4.2, Figure 4: every rewriting pass
// is count → scan → rewrite, here three kernel launches (count.cl, scan.cl,
// rewrite.cl) over chunks of `chunk` modules per work item, with the same
// per-module logic (match.h, expr.h, random.h) as the serial twin, so strings
// are bit-identical. Bracket partners for context search come from
// bracket_partners.cl (depth scan + tree of block minima, no depth limit).
//
// derive() on opencl does not use this runner: opencl/derive.cpp keeps the
// string on the device from the axiom to the result. This runner serves the
// drivers written against PassRunner's host strings (the scene driver, §6, and
// the stage tests), so it reads every pass's output string back to the host
// (and the choice and partner arrays, which the interface fills). It avoids
// the uploads: the output of a pass stays on the device (ping-pong buffers)
// and the next pass reuses it when its input is the very host string this
// runner wrote.
#include <array>
#include <map>
#include <memory>
#include <vector>

#include "lsystem/opencl/bracket_partners.hpp"
#include "lsystem/opencl/pass_runner.hpp"
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

struct TableBuffers {
  Buffer first_by_symbol, productions, patterns, successors, successor_exprs;
};

/// One module string on the device.
struct DeviceString {
  Buffer symbols, offsets, params;
};

/// What the device copy of a host string was made from, to skip re-uploads.
struct Residency {
  const void* symbols = nullptr;
  const void* offsets = nullptr;
  const void* params = nullptr;
  uint64_t n = 0;
  uint64_t params_n = 0;
  bool valid = false;
  bool matches(const PgStringView& v, uint64_t params_count) const {
    return valid && v.symbols == symbols && v.length == n && v.param_offsets == offsets &&
           (!v.param_offsets || (v.params == params && params_count == params_n));
  }
};

class OpenCLPassRunner final : public PassRunner {
 public:
  explicit OpenCLPassRunner(int device)
      : ctx_(Context::get(device)),
        scan4_(ctx_, primitives::opencl::monoidInfo<primitives::SumU64x4>()),
        partners_(ctx_) {
    cl_program count = ctx_.program("lsystem/opencl/count.cl");
    cl_program rewrite = ctx_.program("lsystem/opencl/rewrite.cl");
    count_ = Kernel(count, "count");
    count_d0l_ = Kernel(count, "countD0L");
    rewrite_ = Kernel(rewrite, "rewrite");
    rewrite_d0l_ = Kernel(rewrite, "rewriteD0L");
    wg_ = ctx_.workGroupSize(rewrite_.get(), 64);
    for (DeviceString* s : {&strings_[0], &strings_[1]}) {
      s->symbols = Buffer(ctx_, "module symbols");
      s->offsets = Buffer(ctx_, "parameter offsets");
      s->params = Buffer(ctx_, "parameters");
    }
    for (Buffer* b : {&code_, &constants_, &globals_, &ignored_, &choice_, &counts_, &partner_, &d0l_length_, &d0l_start_, &d0l_bytes_, &scratch_symbols_})
      *b = Buffer(ctx_, "derivation");
    dummy_ = Buffer(ctx_, "placeholder");
    dummy_.reserve(256);
  }

  int threads() const override { return 1; }

  ChunkCount count(const RewritePass& pass, int32_t* choice) override {
    const uint64_t n = pass.in.length;
    uploadShared(*pass.data);
    const TableBuffers& t = table(*pass.table);
    const uint64_t params_n = pass.in.param_offsets ? pass.in.param_offsets[n] : 0;
    DeviceString& in = input(pass.in, params_n);
    const bool has_partner = pass.partner != nullptr;
    if (has_partner && !(partner_host_ == pass.partner && partner_n_ == n && partner_valid_)) {
      partner_.upload(pass.partner, n * sizeof(int64_t));
      partner_host_ = pass.partner;
      partner_n_ = n;
      partner_valid_ = true;
    }
    chunk_ = g_chunk_override ? g_chunk_override : kDefaultChunk;
    const uint64_t chunks = (n + chunk_ - 1) / chunk_;
    choice_.reserve(std::max<uint64_t>(n, 1) * sizeof(int32_t));
    counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
    uint32_t a = 0;
    setRules(count_, a, t);
    setString(count_, a, in, n, pass.in.param_offsets != nullptr);
    count_.arg(a++, has_partner ? partner_ : dummy_);
    count_.arg(a++, cl_int{has_partner});
    count_.arg(a++, cl_ulong{pass.seed});
    count_.arg(a++, cl_uint{pass.phase});
    count_.arg(a++, cl_ulong{chunk_});
    count_.arg(a++, choice_);
    count_.arg(a++, counts_);
    count_.run(ctx_, chunks + 1, wg_);
    scan4_.exclusiveScan(counts_.get(), chunks + 1);
    cl_ulong4 total;
    counts_.read(&total, sizeof total, chunks * sizeof(cl_ulong4));
    choice_.read(choice, n * sizeof(int32_t));
    choice_host_ = choice;
    return ChunkCount{total.s[0], total.s[1], total.s[2]};
  }

  void rewrite(const RewritePass& pass, const int32_t* choice, ModuleString& out) override {
    const uint64_t n = pass.in.length;
    const TableBuffers& t = table(*pass.table);
    const uint64_t params_n = pass.in.param_offsets ? pass.in.param_offsets[n] : 0;
    DeviceString& in = input(pass.in, params_n);
    if (choice != choice_host_) choice_.upload(choice, n * sizeof(int32_t));
    const bool has_partner = pass.partner != nullptr;
    const uint64_t modules = out.symbols.size();
    const uint64_t out_params = pass.parametric ? out.params.size() : 0;
    DeviceString& o = strings_[1 - current_];
    o.symbols.reserve(std::max<uint64_t>(modules, 1));
    if (pass.parametric) {
      o.offsets.reserve((modules + 1) * sizeof(uint64_t));
      o.params.reserve(std::max<uint64_t>(out_params, 1) * sizeof(float));
    }
    const uint64_t chunks = (n + chunk_ - 1) / chunk_;
    uint32_t a = 0;
    setRules(rewrite_, a, t);
    setString(rewrite_, a, in, n, pass.in.param_offsets != nullptr);
    rewrite_.arg(a++, has_partner ? partner_ : dummy_);
    rewrite_.arg(a++, cl_int{has_partner});
    rewrite_.arg(a++, cl_ulong{pass.seed});
    rewrite_.arg(a++, cl_uint{pass.phase});
    rewrite_.arg(a++, cl_ulong{chunk_});
    rewrite_.arg(a++, choice_);
    rewrite_.arg(a++, counts_);
    rewrite_.arg(a++, cl_int{pass.parametric});
    rewrite_.arg(a++, o.symbols);
    rewrite_.arg(a++, pass.parametric ? o.offsets : dummy_);
    rewrite_.arg(a++, pass.parametric ? o.params : dummy_);
    rewrite_.run(ctx_, chunks, wg_);
    o.symbols.read(out.symbols.data(), modules);
    if (pass.parametric) {
      // The driver writes the closing offset; keep the device copy complete too.
      const uint64_t closing = out_params;
      o.offsets.write(&closing, sizeof closing, modules * sizeof(uint64_t));
      o.offsets.read(out.param_offsets.data(), modules * sizeof(uint64_t));
      o.params.read(out.params.data(), out_params * sizeof(float));
    }
    current_ = 1 - current_;
    resident_ = Residency{out.symbols.data(), pass.parametric ? out.param_offsets.data() : nullptr,
                          pass.parametric ? out.params.data() : nullptr, modules, out_params, true};
    partner_valid_ = false;
  }

  uint64_t countD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n) override {
    uploadD0L(t);
    PgStringView v{};
    v.symbols = symbols;
    v.length = n;
    DeviceString& in = input(v, 0);
    chunk_ = g_chunk_override ? g_chunk_override : kDefaultChunk;
    const uint64_t chunks = (n + chunk_ - 1) / chunk_;
    counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
    count_d0l_.arg(0, in.symbols).arg(1, cl_ulong{n}).arg(2, d0l_length_).arg(3, cl_ulong{chunk_}).arg(4, counts_);
    count_d0l_.run(ctx_, chunks + 1, wg_);
    scan4_.exclusiveScan(counts_.get(), chunks + 1);
    cl_ulong4 total;
    counts_.read(&total, sizeof total, chunks * sizeof(cl_ulong4));
    d0l_total_ = total.s[0];
    return d0l_total_;
  }

  void rewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out) override {
    PgStringView v{};
    v.symbols = symbols;
    v.length = n;
    DeviceString& in = input(v, 0);
    // The output size is the scanned total of the countD0L call of this pass.
    const uint64_t chunks = (n + chunk_ - 1) / chunk_;
    const uint64_t modules = d0l_total_;
    DeviceString& o = strings_[1 - current_];
    o.symbols.reserve(std::max<uint64_t>(modules, 1));
    rewrite_d0l_.arg(0, in.symbols).arg(1, cl_ulong{n}).arg(2, d0l_length_).arg(3, d0l_start_);
    rewrite_d0l_.arg(4, d0l_bytes_).arg(5, cl_ulong{chunk_}).arg(6, counts_).arg(7, o.symbols);
    rewrite_d0l_.run(ctx_, chunks, wg_);
    o.symbols.read(out, modules);
    current_ = 1 - current_;
    resident_ = Residency{out, nullptr, nullptr, modules, 0, true};
    partner_valid_ = false;
  }

  void bracketPartners(const uint8_t* symbols, uint64_t n, int64_t* partner) override {
    if (n == 0) return;
    // Only the symbols are needed; upload them alone when the string is not resident.
    const Buffer* sym;
    if (resident_.valid && resident_.symbols == symbols && resident_.n == n) {
      sym = &strings_[current_].symbols;
    } else {
      scratch_symbols_.reserve(n);
      scratch_symbols_.write(symbols, n);
      sym = &scratch_symbols_;
    }
    partners_.run(sym->get(), n, partner_);
    partner_.read(partner, n * sizeof(int64_t));
    partner_host_ = partner;
    partner_n_ = n;
    partner_valid_ = true;
  }

 private:
  /// The device copy of `v`, uploading it unless it is the resident output of the last pass.
  DeviceString& input(const PgStringView& v, uint64_t params_n) {
    DeviceString& d = strings_[current_];
    if (resident_.matches(v, params_n)) return d;
    d.symbols.upload(v.symbols, v.length);
    if (v.param_offsets) {
      d.offsets.upload(v.param_offsets, (v.length + 1) * sizeof(uint64_t));
      d.params.upload(v.params, params_n * sizeof(float));
    }
    resident_ = Residency{v.symbols, v.param_offsets, v.param_offsets ? v.params : nullptr, v.length, params_n, true};
    return d;
  }

  void uploadShared(const LSystemData& data) {
    if (shared_for_ == &data) return;
    code_.upload(data.code.data(), data.code.size() * sizeof(uint32_t));
    constants_.upload(data.constants.data(), data.constants.size() * sizeof(float));
    globals_.upload(data.globals.data(), data.globals.size() * sizeof(float));
    ignored_.upload(data.ignored.data(), data.ignored.size());
    shared_for_ = &data;
  }

  const TableBuffers& table(const RuleTable& t) {
    auto it = tables_.find(&t);
    if (it != tables_.end()) return it->second;
    TableBuffers& b = tables_[&t];
    b.first_by_symbol = Buffer(ctx_, "rule table");
    b.productions = Buffer(ctx_, "rule table");
    b.patterns = Buffer(ctx_, "rule table");
    b.successors = Buffer(ctx_, "rule table");
    b.successor_exprs = Buffer(ctx_, "rule table");
    b.first_by_symbol.upload(t.first_by_symbol.data(), t.first_by_symbol.size() * sizeof(int32_t));
    b.productions.upload(t.productions.data(), t.productions.size() * sizeof(PgProduction));
    b.patterns.upload(t.patterns.data(), t.patterns.size() * sizeof(PgPatternModule));
    b.successors.upload(t.successors.data(), t.successors.size() * sizeof(PgSuccessorModule));
    b.successor_exprs.upload(t.successor_exprs.data(), t.successor_exprs.size() * sizeof(int32_t));
    return b;
  }

  void uploadD0L(const D0LTable& t) {
    if (d0l_for_ == &t) return;
    d0l_length_.upload(t.length, sizeof t.length);
    d0l_start_.upload(t.start, sizeof t.start);
    d0l_bytes_.upload(t.rows.data(), t.rows.size());
    d0l_for_ = &t;
  }

  void setRules(Kernel& k, uint32_t& a, const TableBuffers& t) {
    k.arg(a++, t.first_by_symbol);
    k.arg(a++, t.productions);
    k.arg(a++, t.patterns);
    k.arg(a++, t.successors);
    k.arg(a++, t.successor_exprs);
    k.arg(a++, code_);
    k.arg(a++, constants_);
    k.arg(a++, globals_);
    k.arg(a++, ignored_);
  }

  void setString(Kernel& k, uint32_t& a, DeviceString& s, uint64_t n, bool parametric) {
    k.arg(a++, s.symbols);
    k.arg(a++, parametric ? s.offsets : dummy_);
    k.arg(a++, parametric ? s.params : dummy_);
    k.arg(a++, cl_ulong{n});
    k.arg(a++, cl_int{parametric});
  }

  Context& ctx_;
  primitives::opencl::DeviceScan scan4_;  ///< (modules, params, rewritten) offsets
  DeviceBracketPartners partners_;
  Kernel count_, count_d0l_, rewrite_, rewrite_d0l_;
  size_t wg_ = 64;
  uint64_t chunk_ = kDefaultChunk;
  uint64_t d0l_total_ = 0;
  DeviceString strings_[2];
  int current_ = 0;  ///< strings_[current_] holds the resident input
  Residency resident_;
  Buffer code_, constants_, globals_, ignored_, choice_, counts_, partner_;
  Buffer d0l_length_, d0l_start_, d0l_bytes_, dummy_, scratch_symbols_;
  const LSystemData* shared_for_ = nullptr;
  const D0LTable* d0l_for_ = nullptr;
  std::map<const RuleTable*, TableBuffers> tables_;
  const int32_t* choice_host_ = nullptr;
  const int64_t* partner_host_ = nullptr;
  uint64_t partner_n_ = 0;
  bool partner_valid_ = false;
};

}  // namespace

std::unique_ptr<PassRunner> makeOpenCLPassRunner(int device) {
  return std::make_unique<OpenCLPassRunner>(device);
}

void setOpenCLChunkOverrideForTesting(uint64_t chunk) { g_chunk_override = chunk; }

uint64_t openclChunkModules() { return g_chunk_override ? g_chunk_override : kDefaultChunk; }

}  // namespace procgen::detail

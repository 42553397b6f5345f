// Host driver of the opencl interpretation (Lipp, Wonka, Wimmer §5; the
// kernels and their stages are described in interpret.cl and
// homomorphism.cl). Mirrors cpu/interpret.cpp stage for stage:
//  0. homomorphism expansion, level by level (homomorphism.cl), into the
//     drawing string — on the device;
//  1. count + scan of the output offsets (interpret.cl, scan.cl);
//  2a. non-branching: matrix accumulation → matrix scan → geometry generation;
//  2b. branching: bracket partners (bracket_partners.cl), then rounds of the
//     §5.2.2 work queue, compacted with a scan between rounds;
//  3. polygons: vertices and closing colours are scattered on the device; the
//     host assembles them from the '{' / '}' event list exactly as the serial
//     polygon stack does (a sequential pass over the events only).
// The input string is uploaded once; between stages only sizes come back
// (totals, flags, the number of work items of the next round); the geometry
// is read back at the end.
#include "lsystem/interpret_cancel.hpp"
#include "lsystem/opencl/interpret.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/interpret_module.hpp"
#include "lsystem/opencl/bracket_partners.hpp"
#include "lsystem/opencl/interpret_types.h"
#include "opencl/runtime.hpp"
#include "primitives/opencl/device.hpp"

namespace procgen::detail {
namespace {

using opencl::Buffer;
using opencl::Context;
using opencl::Kernel;

static_assert(sizeof(PgSegment) == sizeof(Segment) && offsetof(Segment, width) == offsetof(PgSegment, width) &&
              offsetof(Segment, instance) == offsetof(PgSegment, instance));
static_assert(sizeof(Vec3) == 3 * sizeof(float));
static_assert(sizeof(PgWorkItem) == 88 && sizeof(PgLocalTransform) == 96);

/// Spawn slots per work item at most, and per round in all (80 bytes each)
/// before the per-item share shrinks to its minimum of 2.
constexpr uint64_t kMaxSlots = uint64_t{1} << 16;
constexpr uint64_t kSlotBudget = uint64_t{1} << 18;
/// Modules per work item in the homomorphism passes.
constexpr uint64_t kHomChunk = 16;

/// Sets consecutive kernel arguments from index `a` on.
template <typename... T>
void args(Kernel& k, uint32_t& a, const T&... values) {
  (k.arg(a++, values), ...);
}

/// A buffer over caller-owned host memory (CL_MEM_USE_HOST_PTR), released at
/// scope exit; sync() makes the device's writes visible in the host memory.
class HostBuffer {
 public:
  HostBuffer(Context& ctx, void* host, uint64_t bytes) : ctx_(ctx), bytes_(bytes) {
    if (!host || bytes == 0) return;
    ctx.checkAllocation(bytes, "segments");
    cl_int st = CL_SUCCESS;
    mem_ = clCreateBuffer(ctx.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &st);
    opencl::check(st, "clCreateBuffer(segments)");
  }
  ~HostBuffer() {
    if (mem_) clReleaseMemObject(mem_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  cl_mem get() const { return mem_; }
  void sync() {
    if (!mem_) return;
    cl_int st = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(ctx_.queue(), mem_, CL_TRUE, CL_MAP_READ, 0, bytes_, 0, nullptr, nullptr, &st);
    opencl::check(st, "clEnqueueMapBuffer(segments)");
    opencl::check(clEnqueueUnmapMemObject(ctx_.queue(), mem_, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    opencl::check(clFinish(ctx_.queue()), "clFinish");
  }

 private:
  Context& ctx_;
  uint64_t bytes_;
  cl_mem mem_ = nullptr;
};

struct DeviceTable {
  Buffer first_by_symbol, productions, patterns, successors, successor_exprs, code, constants, globals, ignored;
};

/// One string level of the homomorphism expansion (or the drawing string).
struct DeviceString {
  Buffer symbols, offsets, params, final_flags, group_begin, group_length;
  uint64_t n = 0;
  bool parametric = false;
};

class OpenCLInterpreter {
 public:
  explicit OpenCLInterpreter(Context& ctx)
      : ctx_(ctx), scan4_(ctx, primitives::opencl::monoidInfo<primitives::SumU64x4>()), scan1_(ctx, primitives::opencl::monoidInfo<primitives::SumI64>()), partners_(ctx) {
    cl_program p = ctx.program("lsystem/opencl/interpret.cl");
    cl_program h = ctx.program("lsystem/opencl/homomorphism.cl");
    summary_ = Kernel(p, "blockSummary");
    starts_ = Kernel(p, "blockStarts");
    count_ = Kernel(p, "blockCount");
    events_k_ = Kernel(p, "polygonEvents");
    local_ = Kernel(p, "linearLocal");
    lscan_ = Kernel(p, "linearScan");
    map_ = Kernel(p, "linearMap");
    walk_ = Kernel(p, "walkItems");
    compact_ = Kernel(p, "compactItems");
    cursors_k_ = Kernel(p, "cursorsAt");
    clamp_ = Kernel(p, "clampPartners");
    hom_count_ = Kernel(h, "homCount");
    hom_write_ = Kernel(h, "homWrite");
    wg_ = ctx.workGroupSize(walk_.get(), 64);
    for (DeviceString* s : {&strings_[0], &strings_[1]}) {
      for (Buffer* b : {&s->symbols, &s->offsets, &s->params, &s->final_flags, &s->group_begin, &s->group_length})
        *b = Buffer(ctx, "drawing string");
    }
    for (Buffer* b : {&table_, &config_, &maps_, &flags_, &depth_, &summary_flags_, &counts_, &events_,
                      &records_, &closes_, &local_tf_, &start_, &partner_, &items_, &items_next_, &spawned_, &spawn_counts_,
                      &choice_, &hom_counts_, &acts_, &dummy_, &starts_buf_, &positions_, &cursors_})
      *b = Buffer(ctx, "interpretation");
    dummy_.reserve(256);
  }

  void run(const LSystemData& data, const ModuleString& input, const InterpretOptions& options, uint64_t seed,
           Geometry& out) {
    if (input.size() == 0) return;
    InterpretCancel cancel(options);
    cancel_ = &cancel;
    struct Reset {
      const InterpretCancel*& c;
      ~Reset() { c = nullptr; }
    } reset{cancel_};
    uploadActions(options.view);
    DeviceString* s = &strings_[0];
    upload(input, *s);
    cancel.check();
    if (homomorphismDepth(data) > 0) s = expandHomomorphism(data, *s, seed);
    if (s->n == 0) return;
    cancel.check();
    std::vector<Part> parts{{0, s->n, config(options), true}};
    draw(*s, parts, options.view.elasticity != 0.0f, out);
  }

  /// Paper §6: instances [begin[k], begin[k+1]) of one combined string drawn
  /// in one pass, each with options[k] (same width factor and angles need
  /// not hold across instances; the symbol action table must agree, which it
  /// does: it depends on no view setting). Only instances with draw[k] are
  /// drawn; parts[k] receives instance k's geometry.
  void runBatch(const ModuleString& combined, const std::vector<uint64_t>& begin,
                const std::vector<InterpretOptions>& options, const std::vector<bool>& draw_k,
                std::vector<Geometry>& parts) {
    const size_t n = options.size();
    parts.assign(n, Geometry{});
    if (combined.size() == 0 || n == 0) return;
    uploadActions(options[0].view);
    upload(combined, strings_[0]);
    std::vector<Part> list;
    for (size_t k = 0; k < n; ++k) list.push_back({begin[k], begin[k + 1], config(options[k]), bool(draw_k[k])});
    Geometry all;
    const std::vector<cl_ulong4> at = draw(strings_[0], list, true, all);
    // Split the combined output by the cursors at the instance starts.
    for (size_t k = 0; k < n; ++k) {
      if (!draw_k[k]) continue;
      Geometry& g = parts[k];
      g.segments.assign(all.segments.begin() + static_cast<std::ptrdiff_t>(at[k].s[0]),
                        all.segments.begin() + static_cast<std::ptrdiff_t>(at[k + 1].s[0]));
      for (size_t p = polygon_part_[k]; p < polygon_part_[k + 1]; ++p) {
        g.polygon_vertices.insert(g.polygon_vertices.end(),
                                  all.polygon_vertices.begin() + static_cast<std::ptrdiff_t>(all.polygon_offsets[p]),
                                  all.polygon_vertices.begin() + static_cast<std::ptrdiff_t>(all.polygon_offsets[p + 1]));
        g.polygon_offsets.push_back(g.polygon_vertices.size());
        g.polygon_colors.push_back(all.polygon_colors[p]);
        g.polygon_instances.push_back(all.polygon_instances[p]);
      }
    }
  }

 private:
  void upload(const ModuleString& in, DeviceString& d) {
    d.n = in.size();
    d.parametric = in.parametric();
    d.symbols.upload(in.symbols.data(), in.size());
    if (d.parametric) {
      d.offsets.upload(in.param_offsets.data(), in.param_offsets.size() * sizeof(uint64_t));
      d.params.reserve(std::max<size_t>(in.params.size(), 1) * sizeof(float));
      d.params.write(in.params.data(), in.params.size() * sizeof(float));
    }
  }

  const Buffer& orDummy(const Buffer& b, bool use) const { return use ? b : dummy_; }

  /// One instance of the drawing string: modules [begin, end) with `cfg`.
  struct Part {
    uint64_t begin, end;
    PgInterpretConfig cfg;
    bool draw;
  };

  static PgInterpretConfig config(const InterpretOptions& options) {
    PgInterpretConfig cfg{};
    initTurtle(options.view, &cfg.view, &cfg.initial);
    cfg.instance = options.instance;
    return cfg;
  }

  /// The action table: what pgTurtleApply returns per symbol, and whether it acts.
  void uploadActions(const ViewSettings& v) {
    PgInterpretConfig cfg{};
    initTurtle(v, &cfg.view, &cfg.initial);
    const TurtleActions actions(cfg.view);
    uint8_t table[2 * PG_SYMBOL_COUNT];
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
      table[c] = actions.action[c];
      table[PG_SYMBOL_COUNT + c] = pgTurtleActs(static_cast<uint8_t>(c)) ? 1 : 0;
    }
    table_.upload(table, sizeof table);
    acts_.upload(table + PG_SYMBOL_COUNT, PG_SYMBOL_COUNT);
  }

  // -- 0. homomorphism ---------------------------------------------------------
  void uploadTable(const LSystemData& data) {
    const RuleTable& t = data.homomorphism;
    DeviceTable& b = hom_;
    for (Buffer* x : {&b.first_by_symbol, &b.productions, &b.patterns, &b.successors, &b.successor_exprs, &b.code,
                      &b.constants, &b.globals, &b.ignored})
      if (!x->get()) *x = Buffer(ctx_, "homomorphism table");
    auto up = [](Buffer& buf, const void* p, size_t bytes) { buf.upload(p, bytes); };  // empty: a placeholder
    up(b.first_by_symbol, t.first_by_symbol.data(), t.first_by_symbol.size() * sizeof(int32_t));
    up(b.productions, t.productions.data(), t.productions.size() * sizeof(PgProduction));
    up(b.patterns, t.patterns.data(), t.patterns.size() * sizeof(PgPatternModule));
    up(b.successors, t.successors.data(), t.successors.size() * sizeof(PgSuccessorModule));
    up(b.successor_exprs, t.successor_exprs.data(), t.successor_exprs.size() * sizeof(int32_t));
    up(b.code, data.code.data(), data.code.size() * sizeof(uint32_t));
    up(b.constants, data.constants.data(), data.constants.size() * sizeof(float));
    up(b.globals, data.globals.data(), data.globals.size() * sizeof(float));
    up(b.ignored, data.ignored.data(), data.ignored.size());
  }

  void setRules(Kernel& k, uint32_t& a) {
    args(k, a, hom_.first_by_symbol, hom_.productions, hom_.patterns, hom_.successors, hom_.successor_exprs,
         hom_.code, hom_.constants, hom_.globals, hom_.ignored);
  }

  void setString(Kernel& k, uint32_t& a, const DeviceString& s) {
    args(k, a, s.symbols, orDummy(s.offsets, s.parametric), orDummy(s.params, s.parametric), cl_ulong{s.n},
         cl_int{s.parametric});
  }

  DeviceString* expandHomomorphism(const LSystemData& data, DeviceString& level0, uint64_t seed) {
    uploadTable(data);
    const int max_depth = homomorphismDepth(data);
    const bool has_partner = data.homomorphism.hasContext();
    if (has_partner) partners_.run(level0.symbols.get(), level0.n, partner_);
    DeviceString* in = &level0;
    for (int level = 0;; ++level) {
      const bool expand = level < max_depth;
      DeviceString* o = in == &strings_[0] ? &strings_[1] : &strings_[0];
      const uint64_t n = in->n;
      const uint64_t chunks = (n + kHomChunk - 1) / kHomChunk;
      choice_.reserve(std::max<uint64_t>(n, 1) * sizeof(int32_t));
      hom_counts_.reserve((chunks + 1) * sizeof(cl_ulong4));
      uint32_t a = 0;
      setRules(hom_count_, a);
      setString(hom_count_, a, *in);
      args(hom_count_, a, orDummy(partner_, has_partner), cl_int{has_partner}, orDummy(in->final_flags, level > 0),
           orDummy(in->group_begin, level > 0), orDummy(in->group_length, level > 0), acts_, cl_int{level},
           cl_int{expand}, cl_ulong{seed}, cl_ulong{kHomChunk}, choice_, hom_counts_);
      hom_count_.run(ctx_, chunks + 1, wg_);
      scan4_.exclusiveScan(hom_counts_.get(), chunks + 1);
      cl_ulong4 total;
      hom_counts_.read(&total, sizeof total, chunks * sizeof(cl_ulong4));
      askKeepGoing();
      const uint64_t modules = total.s[0], params = total.s[1];
      o->n = modules;
      o->parametric = true;
      o->symbols.reserve(std::max<uint64_t>(modules, 1));
      o->offsets.reserve((modules + 1) * sizeof(uint64_t));
      o->params.reserve(std::max<uint64_t>(params, 1) * sizeof(float));
      o->final_flags.reserve(std::max<uint64_t>(modules, 1));
      o->group_begin.reserve(std::max<uint64_t>(modules, 1) * sizeof(uint64_t));
      o->group_length.reserve(std::max<uint64_t>(modules, 1) * sizeof(uint32_t));
      a = 0;
      setRules(hom_write_, a);
      setString(hom_write_, a, *in);
      args(hom_write_, a, orDummy(partner_, has_partner), cl_int{has_partner}, orDummy(in->group_begin, level > 0),
           orDummy(in->group_length, level > 0), acts_, cl_int{level}, cl_ulong{seed}, cl_ulong{kHomChunk},
           choice_, hom_counts_, o->symbols, o->offsets, o->params, o->final_flags, o->group_begin,
           o->group_length);
      hom_write_.run(ctx_, chunks, wg_);
      const uint64_t closing = params;
      o->offsets.write(&closing, sizeof closing, modules * sizeof(uint64_t));
      in = o;
      if (!expand || total.s[2] == 0 || modules == 0) return in;
    }
  }

  // -- 1. count, 2. walk, 3. polygons -------------------------------------------
  /// Draws `parts` of `s` into `out` (appended); returns the output cursors
  /// (segments, records, closes, events) at every part's start and the total.
  std::vector<cl_ulong4> draw(DeviceString& s, const std::vector<Part>& parts, bool tropism, Geometry& out) {
    const uint64_t n = s.n;
    const uint64_t B = PG_INTERPRET_BLOCK;
    const uint64_t blocks = (n + B - 1) / B;
    std::vector<uint64_t> starts;
    std::vector<PgInterpretConfig> configs;
    for (const Part& p : parts) {
      starts.push_back(p.begin);
      configs.push_back(p.cfg);
    }
    starts_buf_.upload(starts.data(), starts.size() * sizeof(uint64_t));
    const cl_ulong nstarts = starts.size();
    config_.upload(configs.data(), configs.size() * sizeof(PgInterpretConfig));
    maps_.reserve(blocks * sizeof(cl_long4));
    flags_.reserve(blocks * sizeof(cl_uint));
    depth_.reserve((blocks + 1) * sizeof(cl_long));
    summary_flags_.reserve(sizeof(cl_uint));
    counts_.reserve((blocks + 1) * sizeof(cl_ulong4));
    summary_.arg(0, s.symbols).arg(1, cl_ulong{n}).arg(2, table_).arg(3, starts_buf_).arg(4, nstarts);
    summary_.arg(5, maps_).arg(6, flags_);
    summary_.run(ctx_, blocks, wg_);
    starts_.arg(0, maps_).arg(1, flags_).arg(2, cl_ulong{blocks}).arg(3, depth_).arg(4, summary_flags_);
    starts_.run(ctx_, 1, 1);
    count_.arg(0, s.symbols).arg(1, cl_ulong{n}).arg(2, table_).arg(3, starts_buf_).arg(4, nstarts);
    count_.arg(5, depth_).arg(6, counts_);
    count_.run(ctx_, blocks + 1, wg_);
    scan4_.exclusiveScan(counts_.get(), blocks + 1);
    cl_ulong4 total;
    counts_.read(&total, sizeof total, blocks * sizeof(cl_ulong4));
    cl_uint flags = 0;
    summary_flags_.read(&flags, sizeof flags);
    askKeepGoing();
    const uint64_t segments = total.s[0], records = total.s[1], closes = total.s[2], events = total.s[3];
    records_.reserve(std::max<uint64_t>(records, 1) * 3 * sizeof(float));
    closes_.reserve(std::max<uint64_t>(closes, 1) * sizeof(int32_t));
    // Segments are written straight into the caller's array (CL_MEM_USE_HOST_PTR):
    // on a CPU device (PoCL) the kernels fill it in place, in parallel, instead of
    // a device buffer copied afterwards; elsewhere the driver copies at the map.
    const uint64_t seg_base = out.segments.size();
    out.segments.resize(seg_base + segments);
    HostBuffer seg(ctx_, segments ? out.segments.data() + seg_base : nullptr, segments * sizeof(PgSegment));
    segments_out_ = segments ? seg.get() : dummy_.get();

    const bool branching = (flags & 1u) || (flags & 2u) || tropism || parts.size() > 1;
    if (!branching) interpretLinear(s);
    else interpretBranching(s, parts);
    seg.sync();

    // Output cursors at the part starts (the offsets of each instance's output).
    std::vector<cl_ulong4> at(parts.size() + 1);
    if (parts.size() > 1) {
      positions_.upload(starts.data(), starts.size() * sizeof(uint64_t));
      cursors_.reserve(parts.size() * sizeof(cl_ulong4));
      uint32_t a = 0;
      args(cursors_k_, a, s.symbols, table_, counts_, depth_, starts_buf_, nstarts, positions_, cl_ulong{nstarts},
           cursors_);
      cursors_k_.run(ctx_, nstarts, wg_);
      cursors_.read(at.data(), parts.size() * sizeof(cl_ulong4));
    } else {
      at[0] = cl_ulong4{};
    }
    at[parts.size()] = total;
    for (cl_ulong4& c : at) c.s[0] += seg_base;

    // Polygons: assembled from the vertex records and the event list, per part.
    polygon_part_.assign(parts.size() + 1, out.polygonCount());
    if (events == 0) return at;
    std::vector<Vec3> rec(records);
    std::vector<int32_t> close_colors(closes);
    std::vector<uint64_t> ev(events);
    events_.reserve(events * sizeof(uint64_t));
    uint32_t a = 0;
    args(events_k_, a, s.symbols, cl_ulong{n}, table_, starts_buf_, nstarts, depth_, counts_, events_);
    events_k_.run(ctx_, blocks, wg_);
    records_.read(rec.data(), records * sizeof(Vec3));
    closes_.read(close_colors.data(), closes * sizeof(int32_t));
    events_.read(ev.data(), events * sizeof(uint64_t));
    for (size_t k = 0; k < parts.size(); ++k) {
      polygon_part_[k] = out.polygonCount();
      if (parts[k].draw)
        assemblePolygons(rec, close_colors, ev, at[k], at[k + 1], parts[k].cfg.instance, out);
    }
    polygon_part_[parts.size()] = out.polygonCount();
    return at;
  }

  void interpretLinear(DeviceString& s) {
    const uint64_t n = s.n;
    const uint64_t chunk = uint64_t{PG_INTERPRET_BLOCK} * PG_LINEAR_CHUNK_BLOCKS;
    const uint64_t chunks = (n + chunk - 1) / chunk;
    local_tf_.reserve(chunks * sizeof(PgLocalTransform));
    start_.reserve(chunks * sizeof(PgTurtle));
    uint32_t a = 0;
    setDrawString(local_, a, s);
    args(local_, a, table_, depth_, counts_, config_, local_tf_, segments_out_, records_, closes_);
    local_.run(ctx_, chunks, std::min<size_t>(wg_, 16));
    if (chunks < 2) return;
    lscan_.arg(0, local_tf_).arg(1, cl_ulong{chunks}).arg(2, config_).arg(3, start_);
    lscan_.run(ctx_, 1, 1);
    map_.arg(0, cl_ulong{n}).arg(1, counts_).arg(2, local_tf_).arg(3, start_).arg(4, segments_out_);
    map_.arg(5, records_).arg(6, closes_);
    map_.run(ctx_, chunks, std::min<size_t>(wg_, 16));
  }

  void setDrawString(Kernel& k, uint32_t& a, DeviceString& s) {
    args(k, a, s.symbols, orDummy(s.offsets, s.parametric), orDummy(s.params, s.parametric), cl_int{s.parametric},
         cl_ulong{s.n});
  }

  void interpretBranching(DeviceString& s, const std::vector<Part>& parts) {
    partners_.run(s.symbols.get(), s.n, partner_);
    const cl_ulong nstarts = parts.size();
    if (parts.size() > 1) {  // brackets never match across instances
      clamp_.arg(0, partner_).arg(1, cl_ulong{s.n}).arg(2, starts_buf_).arg(3, nstarts);
      clamp_.run(ctx_, s.n, wg_);
    }
    // One root item per instance (§6: "a work item for every delimiter symbol").
    std::vector<PgWorkItem> roots;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (!parts[k].draw || parts[k].begin == parts[k].end) continue;
      PgWorkItem root{};
      root.state = parts[k].cfg.initial;
      root.begin = parts[k].begin;
      root.end = parts[k].end;
      root.config = static_cast<uint32_t>(k);
      roots.push_back(root);
    }
    if (roots.empty()) return;
    items_.upload(roots.data(), roots.size() * sizeof(PgWorkItem));
    uint64_t count = roots.size();
    while (count > 0) {
      // Few items: many slots each, so an item is not stopped after a handful
      // of splits (a trunk with thousands of long branches is walked in one
      // round); many items: at least 2 (one split plus the continuation).
      const uint64_t slots = std::max<uint64_t>(2, std::min<uint64_t>(kMaxSlots, kSlotBudget / count));
      spawned_.reserve(count * slots * sizeof(PgWorkItem));
      spawn_counts_.reserve((count + 1) * sizeof(cl_long));
      uint32_t a = 0;
      setDrawString(walk_, a, s);
      args(walk_, a, table_, partner_, depth_, counts_, starts_buf_, nstarts, config_, items_, cl_ulong{count},
           cl_ulong{slots},
           spawned_, spawn_counts_, segments_out_, records_, closes_);
      walk_.run(ctx_, count + 1, std::min<size_t>(wg_, 16));
      scan1_.exclusiveScan(spawn_counts_.get(), count + 1);
      cl_long next = 0;
      spawn_counts_.read(&next, sizeof next, count * sizeof(cl_long));
      askKeepGoing();
      if (next == 0) break;
      // Items are compacted into a second buffer (the current one is still read).
      items_next_.reserve(static_cast<uint64_t>(next) * sizeof(PgWorkItem));
      compact_.arg(0, spawned_).arg(1, cl_ulong{count}).arg(2, cl_ulong{slots}).arg(3, spawn_counts_);
      compact_.arg(4, items_next_);
      compact_.run(ctx_, count, wg_);
      std::swap(items_, items_next_);
      count = static_cast<uint64_t>(next);
    }
  }

  /// The serial polygon stack over events [from.w, to.w) of one part.
  static void assemblePolygons(const std::vector<Vec3>& records, const std::vector<int32_t>& close_colors,
                               const std::vector<uint64_t>& events, const cl_ulong4& from, const cl_ulong4& to,
                               int32_t instance, Geometry& out) {
    std::vector<uint64_t> work;  // record indices of the open polygons' vertices
    std::vector<size_t> starts;  // where each open polygon's vertices begin in `work`
    uint64_t next_record = from.s[1], close = from.s[2];
    for (uint64_t k = from.s[3]; k < to.s[3]; ++k) {
      const uint64_t e = events[k];
      const uint64_t record = e >> 1;
      for (; next_record < record; ++next_record) work.push_back(next_record);
      if (e & 1u) {
        starts.push_back(work.size());
        continue;
      }
      const size_t first = starts.back();
      starts.pop_back();
      if (work.size() - first >= 3) {
        for (size_t v = first; v < work.size(); ++v) out.polygon_vertices.push_back(records[work[v]]);
        out.polygon_offsets.push_back(out.polygon_vertices.size());
        out.polygon_colors.push_back(close_colors[close]);
        out.polygon_instances.push_back(instance);
      }
      ++close;
      work.resize(first);
    }
  }

  Context& ctx_;
  primitives::opencl::DeviceScan scan4_, scan1_;
  DeviceBracketPartners partners_;
  Kernel summary_, starts_, count_, events_k_, local_, lscan_, map_, walk_, compact_, hom_count_, hom_write_,
      cursors_k_, clamp_;
  size_t wg_ = 64;
  DeviceString strings_[2];
  DeviceTable hom_;
  Buffer table_, config_, maps_, flags_, depth_, summary_flags_, counts_, events_, records_, closes_;
  cl_mem segments_out_ = nullptr;  ///< this call's segment array (a HostBuffer)
  Buffer local_tf_, start_, partner_, items_, items_next_, spawned_, spawn_counts_, choice_, hom_counts_, acts_,
      dummy_, starts_buf_, positions_, cursors_;
  std::vector<size_t> polygon_part_;  ///< first polygon of each part in the output
  const InterpretCancel* cancel_ = nullptr;  ///< run()'s keep_going (none for batches)

  /// Between kernel launches, after a blocking read (the in-order queue has
  /// finished every kernel that writes into the caller's memory): throws
  /// InterpretCancelled when asked to stop.
  void askKeepGoing() const {
    if (cancel_) cancel_->check();
  }
};

}  // namespace

void interpretOpenCL(const LSystemData& data, const ModuleString& string, const InterpretOptions& options,
                     uint64_t seed, Geometry& out) {
  opencl::withState<OpenCLInterpreter>(options.execution.device, [&](OpenCLInterpreter& i) { i.run(data, string, options, seed, out); });
}

std::vector<Geometry> interpretBatchOpenCL(const ModuleString& combined, const std::vector<uint64_t>& begin,
                                           const std::vector<InterpretOptions>& options,
                                           const std::vector<bool>& draw, int device) {
  std::vector<Geometry> parts;
  opencl::withState<OpenCLInterpreter>(device, [&](OpenCLInterpreter& i) { i.runBatch(combined, begin, options, draw, parts); });
  return parts;
}

}  // namespace procgen::detail

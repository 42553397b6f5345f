// Parallel turtle interpretation on the cpu (oneTBB). Paper §5:
//  0. homomorphism (if any): every chunk expands its modules on the fly as the
//     serial interpreter does (same random keys) into a local buffer, keeping
//     only modules the turtle acts on; a scan of the chunk sizes places them in
//     one flat drawing string;
//  1. count: per block of modules, segments, polygon-vertex records and polygon
//     closes, which depend only on the symbols and the polygon depth (a
//     max-plus scan of '{' / '}' over blocks when the string has polygons);
//     an exclusive scan gives every block its output offsets, so geometry is
//     written in place and lands in serial order; the same pass records each
//     block's unmatched brackets (block_brackets.hpp);
//  2a. non-branching strings (§5.2.1), when every command is a linear map of
//     the turtle frame (no tropism, no '$'): *matrix accumulation* — each chunk
//     walks from the identity frame, writing geometry in chunk-local
//     coordinates, and ends with its transform; *matrix scan* over chunks;
//     *geometry generation* maps each chunk's local geometry with its start
//     state. Chunk 0 starts from the real state and needs no mapping;
//  2b. branching strings (§5.2.2): the work queue. A work item is (turtle
//     state, range of modules, output cursor). Brackets are matched with the
//     treebox parentheses primitive (no depth limit, replacing the paper's
//     depth-bucket hierarchy extraction); a '[' whose branch is long spawns the
//     branch as a new item (tbb::task_group) and the current item continues
//     after the matching ']' with the state it had at '[', its cursor
//     recounted from the block offsets. Short branches are walked inline with
//     a stack. Every item starts from an exact copy of the serial state, so
//     this path is bit-identical to the serial interpreter;
//  3. polygons: vertices are written to their record slots in parallel; a
//     short sequential pass over the '{' / '}' events assembles them exactly as
//     the serial polygon stack does.
// Determinism: counts and order always equal the serial interpreter's; 2b is
// bit-exact; 2a differs from serial by float rounding of the composed frames
// (coordinates within 1e-4 of the model size, see procgen/lsystem.hpp).
#include "common/large_buffer.hpp"
#include "lsystem/cpu/interpret.hpp"

#include <atomic>
#include <cstring>
#include <vector>

#include "common/assert.hpp"
#include "lsystem/cpu/block_brackets.hpp"
#include "cpu/executor.hpp"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/interpret_cancel.hpp"
#include "lsystem/interpret_module.hpp"
#include "lsystem/pass_runner.hpp"
#include "lsystem/serial/interpret.hpp"

namespace procgen::detail {
namespace {

/// Modules per count block (the granularity of output offsets).
constexpr uint64_t kCountBlock = 4096;
/// Blocks per chunk of the non-branching path.
constexpr uint64_t kBlocksPerChunk = 8;
/// Branches at least this long become their own work item.
constexpr uint64_t kSpawnBranch = 8192;
/// Input modules per chunk of the homomorphism expansion.
constexpr uint64_t kExpandChunk = uint64_t{1} << 14;

/// d -> max(d + add, floor): the effect of a run of '{' / '}' on the polygon
/// depth ('}' at depth 0 does nothing). Composes associatively.
struct PolygonMap {
  int64_t add = 0;
  int64_t floor = 0;
  int64_t apply(int64_t d) const { return std::max(d + add, floor); }
  PolygonMap then(const PolygonMap& g) const { return {add + g.add, std::max(floor + g.add, g.floor)}; }
};

struct PolygonEvent {
  bool open;        ///< '{' (else an acting '}')
  uint64_t record;  ///< records before it
};

struct Block {
  bool brackets = false, dollar = false, polygons = false;
  PolygonMap polygon;
  EmitCursor count;  ///< output of the block (polygon_depth unused)
  EmitCursor start;  ///< output offsets and polygon depth at the block's first module
  std::vector<PolygonEvent> events;
  // The block's stack-monoid value (Levien §4): brackets not matched inside it.
  std::vector<uint64_t> open_brackets;   ///< '[' still open at the block end, bottom first
  std::vector<uint64_t> close_brackets;  ///< ']' that close a '[' of an earlier block
};

/// A matched bracket pair whose branch is long enough to be its own work item.
struct LongBranch {
  uint64_t open;
  uint64_t close;
};

/// Turtle state at a chunk end relative to the chunk start (non-branching path).
struct LocalTransform {
  PgTurtle end{};
  bool width_set = false, color_set = false;
  uint64_t width_exact_segment = UINT64_MAX;  ///< segments from here on carry exact widths
  uint64_t color_exact_segment = UINT64_MAX;
  uint64_t color_exact_close = UINT64_MAX;
};

class CpuInterpreter {
 public:
  CpuInterpreter(const LSystemData& data, const InterpretOptions& options, uint64_t seed, int threads)
      : data_(data), options_(options), seed_(seed), exec_(threads), cancel_(options) {
    initTurtle(options.view, &view_, &initial_);
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) acts_[c] = pgTurtleActs(static_cast<uint8_t>(c)) != 0;
  }

  /// Whether every segment run() wrote is finite: each walk tests the
  /// segments it writes in world coordinates (chunk-local ones once mapped),
  /// so no pass reads the output again.
  bool segmentsFinite() const { return !segments_non_finite_.load(std::memory_order_relaxed); }

  void run(const ModuleString& input, Geometry& out) {
    if (input.size() == 0) return;
    PgStringView s = stringView(input);
    if (homomorphismDepth(data_) > 0) {
      expandHomomorphism(input);
      s = stringView(expanded_);
    }
    cancel_.check();
    const TurtleActions actions(view_);
    action_ = actions.action;
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
      const int a = action_[c];
      // countDrawSymbols and blockBrackets name the drawing and polygon symbols.
      PROCGEN_ASSERT((a == PG_TURTLE_DRAW || a == PG_TURTLE_DRAW_SILENT) == (c == 'F' || c == 'G'),
                     "only F and G draw (countDrawSymbols)");
      PROCGEN_ASSERT((a == PG_TURTLE_POLYGON_BEGIN || a == PG_TURTLE_POLYGON_END) == (c == '{' || c == '}'),
                     "only { and } open and close polygons (blockBrackets)");
      (void)a;
    }
    count(s);
    cancel_.checkWorkers();
    cancel_.check();
    if (s.length == 0) return;

    // Output arrays, appended after what `out` already holds.
    const EmitCursor& total = total_;
    const uint64_t seg_base = out.segments.size();
    reserveLarge(out.segments, seg_base + total.segment);
    out.segments.resize(seg_base + total.segment);
    resizeForOverwrite(records_, total.record);
    resizeForOverwrite(close_colors_, total.close);
    slots_.segments = out.segments.data() + seg_base;
    slots_.records = records_.data();
    slots_.close_colors = close_colors_.data();
    slots_.instance = options_.instance;

    bool brackets = false, dollar = false;
    for (const Block& b : blocks_) {
      brackets |= b.brackets;
      dollar |= b.dollar;
    }
    if (!brackets && !dollar && view_.elasticity == 0.0f) {
      interpretLinear(s);
    } else {
      interpretBranching(s);
    }
    cancel_.checkWorkers();
    if (has_polygons_) assemblePolygons(out);
  }

 private:
  // -- 0. homomorphism -------------------------------------------------------
  void expandHomomorphism(const ModuleString& input) {
    const uint64_t n = input.size();
    const PgStringView s = stringView(input);
    OverwriteVector<int64_t> partner;
    if (data_.homomorphism.hasContext() &&
        std::find_if(input.symbols.begin(), input.symbols.end(), [](uint8_t c) { return c == '[' || c == ']'; }) !=
            input.symbols.end()) {
      resizeForOverwrite(partner, n);
      bracketPartnersCpu(exec_, input.symbols.data(), n, partner.data());
    }
    HomomorphismExpander probe(data_, seed_, nullptr);
    bool relevant[PG_SYMBOL_COUNT];
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) relevant[c] = acts_[c] || probe.expands(static_cast<uint8_t>(c));

    struct Piece {
      std::vector<uint8_t> symbols;
      std::vector<uint32_t> param_counts;
      std::vector<float> params;
    };
    const ChunkPlan plan = exec_.plan(n, kExpandChunk);
    std::vector<Piece> pieces(plan.count);
    exec_.forEachChunk(plan, [&](uint64_t c) {
      if (cancel_.stopped()) return;
      HomomorphismExpander expander(data_, seed_, partner.empty() ? nullptr : partner.data());
      Piece& p = pieces[c];
      expander.walk(s, plan.begin(c), plan.end(c), 0, relevant, [&](uint8_t symbol, const float* params, int32_t np) {
        if (!acts_[symbol]) return;
        p.symbols.push_back(symbol);
        p.param_counts.push_back(static_cast<uint32_t>(np));
        p.params.insert(p.params.end(), params, params + np);
      });
    });
    cancel_.checkWorkers();
    std::vector<uint64_t> module_at(plan.count + 1, 0), param_at(plan.count + 1, 0);
    for (uint64_t c = 0; c < plan.count; ++c) {
      module_at[c + 1] = module_at[c] + pieces[c].symbols.size();
      param_at[c + 1] = param_at[c] + pieces[c].params.size();
    }
    resizeForOverwrite(expanded_.symbols, module_at[plan.count]);
    resizeForOverwrite(expanded_.param_offsets, module_at[plan.count] + 1);
    resizeForOverwrite(expanded_.params, param_at[plan.count]);
    expanded_.param_offsets[module_at[plan.count]] = param_at[plan.count];
    exec_.forEachChunk(plan, [&](uint64_t c) {
      const Piece& p = pieces[c];
      std::copy(p.symbols.begin(), p.symbols.end(), expanded_.symbols.begin() + static_cast<std::ptrdiff_t>(module_at[c]));
      std::copy(p.params.begin(), p.params.end(), expanded_.params.begin() + static_cast<std::ptrdiff_t>(param_at[c]));
      uint64_t offset = param_at[c];
      for (uint64_t k = 0; k < p.symbols.size(); ++k) {
        expanded_.param_offsets[module_at[c] + k] = offset;
        offset += p.param_counts[k];
      }
    });
  }

  // -- 1. count ----------------------------------------------------------------
  uint64_t blockSize() const {
    const uint64_t forced = cpuChunkOverride();
    return forced ? forced : kCountBlock;
  }

  void count(const PgStringView& s) {
    const uint64_t n = s.length;
    const uint64_t bs = blockSize();
    block_plan_.n = n;
    block_plan_.size = bs;
    block_plan_.count = (n + bs - 1) / bs;
    blocks_.assign(block_plan_.count, Block{});
    const uint8_t* sym = s.symbols;
    // Pass A: flags, the polygon map, and the counts at polygon depth 0.
    exec_.forEachChunk(block_plan_, [&](uint64_t b) {
      if (cancel_.stopped()) return;
      Block& blk = blocks_[b];
      // The segments at polygon depth 0 (recounted below when there are
      // polygons); only blocks with a special symbol need more.
      const uint64_t begin = block_plan_.begin(b), end = block_plan_.end(b);
      bool special = false;
      blk.count.segment = countDrawSymbols(sym + begin, end - begin, &special);
      if (!special) return;
      static thread_local std::vector<uint32_t> scratch;
      const BlockSymbols seen = blockBrackets(sym, begin, end - begin, blk.open_brackets, blk.close_brackets, scratch);
      blk.brackets = seen.brackets;
      blk.dollar = seen.dollar;
      if (!seen.polygons) return;
      // The polygon map: '{' and '}' in order (brackets do not change the
      // polygon depth, so the bracket summary above stands).
      blk.polygons = true;
      for (uint64_t i = begin; i < end; ++i) {
        const int a = action_[sym[i]];
        if (a == PG_TURTLE_POLYGON_BEGIN) blk.polygon = blk.polygon.then(PolygonMap{1, 1});
        else if (a == PG_TURTLE_POLYGON_END) blk.polygon = blk.polygon.then(PolygonMap{-1, 0});
      }
    });
    cancel_.checkWorkers();
    has_polygons_ = false;
    for (const Block& b : blocks_) has_polygons_ |= b.polygons;
    if (has_polygons_) {
      // Polygon depth at every block start, then the counts again at that depth.
      int64_t d = 0;
      for (Block& b : blocks_) {
        b.start.polygon_depth = d;
        d = b.polygon.apply(d);
      }
      exec_.forEachChunk(block_plan_, [&](uint64_t b) {
        Block& blk = blocks_[b];
        EmitCursor c;
        c.polygon_depth = blk.start.polygon_depth;
        for (uint64_t i = block_plan_.begin(b), e = block_plan_.end(b); i < e; ++i) {
          const int a = action_[sym[i]];
          if (a == PG_TURTLE_POLYGON_BEGIN) blk.events.push_back({true, c.record});
          else if (a == PG_TURTLE_POLYGON_END && c.polygon_depth > 0) blk.events.push_back({false, c.record});
          countAction(a, c);
        }
        c.polygon_depth = 0;
        blk.count = c;
      });
    }
    // Exclusive scan of the block counts; event records become global.
    EmitCursor at;
    for (Block& b : blocks_) {
      b.start.segment = at.segment;
      b.start.record = at.record;
      b.start.close = at.close;
      for (PolygonEvent& e : b.events) e.record += at.record;
      at.segment += b.count.segment;
      at.record += b.count.record;
      at.close += b.count.close;
    }
    total_ = at;
    symbols_ = sym;
  }

  /// The output cursor at module `pos`: the block's offsets plus a recount.
  EmitCursor cursorAt(uint64_t pos) const {
    const uint64_t b = std::min(pos / block_plan_.size, block_plan_.count - 1);
    EmitCursor c = blocks_[b].start;
    for (uint64_t i = block_plan_.begin(b); i < pos; ++i) countAction(action_[symbols_[i]], c);
    return c;
  }

  // -- 2a. non-branching: matrix accumulation, scan, geometry generation -----
  void interpretLinear(const PgStringView& s) {
    // Chunk 0 starts from the real state, so it needs neither a local frame
    // nor the mapping pass: make it about 1/threads of the work (modules plus
    // segments written) and let the other threads share the rest in chunks of
    // kBlocksPerChunk blocks. The mapping pass then touches (threads-1)/threads
    // of the geometry instead of all of it; with one thread nothing is mapped.
    const uint64_t bpc = cpuChunkOverride() ? 1 : kBlocksPerChunk;
    auto blockCost = [&](uint64_t b) {
      return (block_plan_.end(b) - block_plan_.begin(b)) + 2 * blocks_[b].count.segment;
    };
    uint64_t total_cost = 0;
    for (uint64_t b = 0; b < block_plan_.count; ++b) total_cost += blockCost(b);
    const uint64_t front_cost = total_cost / static_cast<uint64_t>(exec_.threads());
    std::vector<uint64_t> first_block{0};  // chunk c = blocks [first_block[c], first_block[c + 1])
    uint64_t b = 0;
    for (uint64_t cost = 0; b < block_plan_.count && (b == 0 || cost < front_cost); ++b) cost += blockCost(b);
    first_block.push_back(b);
    while (b < block_plan_.count) {
      b = std::min(block_plan_.count, b + bpc);
      first_block.push_back(b);
    }
    ChunkPlan chunks;  // an index space over the chunks above
    chunks.count = first_block.size() - 1;
    chunks.n = chunks.count;
    chunks.size = 1;
    std::vector<LocalTransform> local(chunks.count);
    auto range = [&](uint64_t c) {
      return std::pair<uint64_t, uint64_t>{block_plan_.begin(first_block[c]),
                                           block_plan_.end(first_block[c + 1] - 1)};
    };
    exec_.forEachChunk(chunks, [&](uint64_t c) {
      if (cancel_.stopped()) return;
      LocalTransform& L = local[c];
      PgTurtle t = initial_;
      if (c > 0) {
        // The identity frame in the turtle's own basis: H, L, U = e1, e2, e3.
        pgTurtleInit(&t, 1.0f);
        const float e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        for (int k = 0; k < 3; ++k) {
          t.h[k] = e[0][k];
          t.l[k] = e[1][k];
          t.u[k] = e[2][k];
        }
      }
      const auto [begin, end] = range(c);
      const EmitCursor& at = blocks_[first_block[c]].start;
      BranchStack stack;
      if (c == 0) {  // the real state: drawn as the serial interpreter draws, tested as it writes
        StackSlotSink<true> sink{{slots_, at}, &stack};
        walkRun(s, begin, end, acts_, view_, t, sink);
        reportSegments(sink.non_finite);
      } else {  // chunk-local coordinates: tested once mapped
        StackSlotSink<false> sink{{slots_, at}, &stack};
        walkLocalChunk(s, begin, end, t, sink, L);
      }
      L.end = t;
    });

    cancel_.checkWorkers();
    // Matrix scan: the world state at every chunk start (double precision).
    std::vector<PgTurtle> start(chunks.count);
    start[0] = initial_;
    for (uint64_t c = 1; c < chunks.count; ++c)
      start[c] = c == 1 ? local[0].end : compose(start[c - 1], local[c - 1]);

    // Geometry generation: map chunk-local geometry with the chunk's start state.
    exec_.forEachChunk(chunks, [&](uint64_t c) {
      if (c == 0 || cancel_.stopped()) return;
      const PgTurtle& S = start[c];
      const LocalTransform& L = local[c];
      const EmitCursor first = blocks_[first_block[c]].start;
      const uint64_t last_block = first_block[c + 1] - 1;
      const EmitCursor& lb = blocks_[last_block].start;
      const EmitCursor& lc = blocks_[last_block].count;
      const uint64_t seg_end = lb.segment + lc.segment, rec_end = lb.record + lc.record,
                     close_end = lb.close + lc.close;
      NonFiniteLanes non_finite = {};
      for (uint64_t k = first.segment; k < seg_end; ++k) {
        Segment& g = slots_.segments[k];
        g.start = mapPoint(S, g.start);
        g.end = mapPoint(S, g.end);
        if (k < L.width_exact_segment) g.width *= S.width;
        if (k < L.color_exact_segment) g.color += S.color;
        g.depth += S.depth;
        non_finite |= nonFiniteLanes(g);
      }
      reportSegments(non_finite);
      for (uint64_t k = first.record; k < rec_end; ++k) slots_.records[k] = mapPoint(S, slots_.records[k]);
      for (uint64_t k = first.close; k < close_end && k < L.color_exact_close; ++k) slots_.close_colors[k] += S.color;
    });
  }

  /// walkRun's sink on both paths: a slot sink (testing segments as it
  /// writes them in world coordinates, with kTestFinite) and a branch stack.
  /// On the linear path no bracket reaches it (interpretLinear is taken only
  /// without them), but as the serial walk's twin it handles them alike: with
  /// '[' and ']' as no-ops GCC lowered the turtle's switch to chains of bit
  /// tests instead of one jump table, 10 % more instructions in the walk.
  template <bool kTestFinite>
  struct StackSlotSink : BasicSlotSink<kTestFinite> {
    BranchStack* stack;
    void push(PgTurtle& t) { stack->push(t); }
    void pop(PgTurtle& t) { stack->pop(t); }
  };

  /// Matrix accumulation of chunk c > 0: walks modules [begin, end) from the
  /// identity frame `t` (walkRun, as chunk 0 and the serial interpreter) and
  /// notes in `L` where the first '!' and '\'' with a parameter set the width
  /// and colour: from there on the chunk's values do not depend on its start
  /// state (turtle.h). The walk is split at those two modules, found by
  /// memchr, so its loop carries no test for them. (Chunk 0 needs no notes:
  /// it starts from the real state and is never mapped.)
  void walkLocalChunk(const PgStringView& s, uint64_t begin, uint64_t end, PgTurtle& t, StackSlotSink<false>& sink,
                      LocalTransform& L) const {
    const uint64_t width_at = firstWithParameter(s, begin, end, '!');
    const uint64_t color_at = firstWithParameter(s, begin, end, '\'');
    uint64_t i = begin;
    for (const uint64_t stop : {std::min(width_at, color_at), std::max(width_at, color_at)}) {
      if (stop >= end) break;
      walkRun(s, i, stop + 1, acts_, view_, t, sink);
      i = stop + 1;
      const EmitCursor at = sink.cursor(slots_);
      if (stop == width_at) {
        L.width_set = true;
        L.width_exact_segment = at.segment;
      } else {
        L.color_set = true;
        L.color_exact_segment = at.segment;
        L.color_exact_close = at.close;
      }
    }
    walkRun(s, i, end, acts_, view_, t, sink);
  }

  /// The first module in [begin, end) of `s` with symbol `x` and a parameter; `end` if none.
  static uint64_t firstWithParameter(const PgStringView& s, uint64_t begin, uint64_t end, uint8_t x) {
    if (!s.param_offsets) return end;  // no module has parameters
    const uint8_t* const last = s.symbols + end;
    for (const uint8_t* p = s.symbols + begin; p < last; ++p) {
      p = static_cast<const uint8_t*>(std::memchr(p, x, static_cast<size_t>(last - p)));
      if (!p) break;
      const uint64_t i = static_cast<uint64_t>(p - s.symbols);
      if (pgParamCount(&s, i) > 0) return i;
    }
    return end;
  }

  /// Records the non-finite lanes of a walk or a mapping (any thread).
  void reportSegments(NonFiniteLanes non_finite) {
    if (!finiteLanes(non_finite)) segments_non_finite_.store(true, std::memory_order_relaxed);
  }

  // Float, not double: the mapping pass is compute-bound in double (a
  // quarter of the two-thread Hilbert interpretation); float adds at most a
  // rounding of the point's magnitude, far inside the stated tolerance.
  static Vec3 mapPoint(const PgTurtle& S, const Vec3& p) {
    Vec3 r;
    r.x = S.pos[0] + S.h[0] * p.x + S.l[0] * p.y + S.u[0] * p.z;
    r.y = S.pos[1] + S.h[1] * p.x + S.l[1] * p.y + S.u[1] * p.z;
    r.z = S.pos[2] + S.h[2] * p.x + S.l[2] * p.y + S.u[2] * p.z;
    return r;
  }

  /// State after a chunk with local transform L entered in state S.
  static PgTurtle compose(const PgTurtle& S, const LocalTransform& L) {
    PgTurtle r = S;
    auto mapVector = [&](const float* v, float* out) {
      for (int k = 0; k < 3; ++k)
        out[k] = static_cast<float>(double(S.h[k]) * v[0] + double(S.l[k]) * v[1] + double(S.u[k]) * v[2]);
    };
    for (int k = 0; k < 3; ++k)
      r.pos[k] = static_cast<float>(S.pos[k] + double(S.h[k]) * L.end.pos[0] + double(S.l[k]) * L.end.pos[1] +
                                    double(S.u[k]) * L.end.pos[2]);
    mapVector(L.end.h, r.h);
    mapVector(L.end.l, r.l);
    mapVector(L.end.u, r.u);
    r.width = L.width_set ? L.end.width : S.width * L.end.width;
    r.color = L.color_set ? L.end.color : S.color + L.end.color;
    r.depth = S.depth;
    return r;
  }

  // -- 2b. branching: the work queue ------------------------------------------
  void interpretBranching(const PgStringView& s) {
    const uint64_t forced = cpuChunkOverride();
    const uint64_t threshold = forced ? forced : kSpawnBranch;
    // Match the brackets left open by each block in block order (the scan of
    // the blocks' stack-monoid values). Pairs inside one block are shorter
    // than a block and always walked inline, so only these can be long.
    long_branches_.clear();
    std::vector<uint64_t> stack;
    for (const Block& b : blocks_) {
      for (uint64_t close : b.close_brackets) {
        if (stack.empty()) continue;  // unmatched ']' at top level: the turtle ignores it
        const uint64_t open = stack.back();
        stack.pop_back();
        if (close - open >= threshold) long_branches_.push_back({open, close});
      }
      stack.insert(stack.end(), b.open_brackets.begin(), b.open_brackets.end());
    }
    std::sort(long_branches_.begin(), long_branches_.end(),
              [](const LongBranch& a, const LongBranch& b) { return a.open < b.open; });
    // Item 0 is the whole string; item j+1 is long branch j, written by the
    // item that reaches its '[' before it is spawned.
    items_.assign(long_branches_.size() + 1, WorkItem{});
    items_[0] = {initial_, 0, s.length, blocks_[0].start};
    if (exec_.threads() == 1 || long_branches_.empty()) {
      walkItem(s, 0, nullptr);
      return;
    }
    WorkQueue queue(exec_, [&](uint64_t k) { walkItem(s, k, &queue); });
    queue.runAll(0);
  }

  /// One work item: modules [begin, end) from `state` with output cursor
  /// `cur`. The modules between the long branches that open in it are walked
  /// by walkRun, the serial interpreter's flattened walk, in runs of
  /// kKeepGoingModules with keep_going asked between them (as a loop around
  /// applyModule here the turtle lived in memory: cpu x1 took 1.5x the serial
  /// time on bracketed strings, docs/performance.md 2026-12-04). At a long
  /// branch's '[' the branch is spawned as its own item and the walk goes on
  /// after its ']' with the state it had at '[' (the pop would restore it).
  void walkItem(const PgStringView& s, uint64_t item, WorkQueue* queue) {
    const WorkItem& w = items_[item];
    PgTurtle state = w.state;
    const uint64_t end = w.end;
    BranchStack stack;
    StackSlotSink<true> sink{{slots_, w.cursor}, &stack};
    // A long branch opening inside this item is never inside one of its short
    // branches (the enclosing pair would be longer), so its '[' is met at the
    // item's top level; those nested in a branch spawned here are skipped
    // (that branch's item spawns them).
    auto next_long = queue ? std::lower_bound(long_branches_.begin(), long_branches_.end(), w.begin,
                                              [](const LongBranch& b, uint64_t pos) { return b.open < pos; })
                           : long_branches_.end();
    for (uint64_t i = w.begin; i < end;) {
      while (next_long != long_branches_.end() && next_long->open < i) ++next_long;
      const bool spawn = next_long != long_branches_.end() && next_long->open < end;
      const uint64_t stop = spawn ? next_long->open : end;
      while (i < stop) {
        if (i != w.begin && cancel_.stopped()) return;
        const uint64_t run_end = std::min(stop, i + kKeepGoingModules);
        walkRun(s, i, run_end, acts_, view_, state, sink);
        i = run_end;
      }
      if (!spawn) break;
      WorkItem& branch = items_[static_cast<size_t>(next_long - long_branches_.begin()) + 1];
      branch = {state, stop + 1, next_long->close, sink.cursor(slots_)};
      branch.state.depth += 1;
      queue->spawn(static_cast<uint64_t>(&branch - items_.data()));
      i = next_long->close + 1;
      sink.moveTo(slots_, cursorAt(i));
    }
    reportSegments(sink.non_finite);
  }

  // -- 3. polygons -------------------------------------------------------------
  void assemblePolygons(Geometry& out) {
    std::vector<uint64_t> work;   // record indices of the open polygons' vertices
    std::vector<size_t> starts;   // where each open polygon's vertices begin in `work`
    uint64_t next_record = 0, close = 0;
    for (const Block& b : blocks_) {
      for (const PolygonEvent& e : b.events) {
        for (; next_record < e.record; ++next_record) work.push_back(next_record);
        if (e.open) {
          starts.push_back(work.size());
          continue;
        }
        const size_t first = starts.back();
        starts.pop_back();
        if (work.size() - first >= 3) {
          for (size_t k = first; k < work.size(); ++k) out.polygon_vertices.push_back(records_[work[k]]);
          out.polygon_offsets.push_back(out.polygon_vertices.size());
          out.polygon_colors.push_back(close_colors_[close]);
          out.polygon_instances.push_back(options_.instance);
        }
        ++close;
        work.resize(first);
      }
    }
  }

  const LSystemData& data_;
  const InterpretOptions& options_;
  uint64_t seed_;
  CpuExecutor exec_;
  InterpretCancel cancel_;
  PgTurtleView view_{};
  PgTurtle initial_{};
  bool acts_[PG_SYMBOL_COUNT] = {};
  const uint8_t* action_ = nullptr;

  ModuleString expanded_;
  ChunkPlan block_plan_;
  std::vector<Block> blocks_;
  EmitCursor total_;
  const uint8_t* symbols_ = nullptr;
  bool has_polygons_ = false;
  OverwriteVector<Vec3> records_;
  OverwriteVector<int32_t> close_colors_;
  EmitSlots slots_;
  std::vector<LongBranch> long_branches_;
  struct WorkItem {
    PgTurtle state;
    uint64_t begin, end;
    EmitCursor cursor;
  };
  std::vector<WorkItem> items_;
  std::atomic<bool> segments_non_finite_{false};  ///< set by any walk that wrote a non-finite segment
};

}  // namespace

/// Strings shorter than this (without a homomorphism, which may expand a
/// short string into a long one) are walked by the serial interpreter, the
/// reference every path here equals: below ~0.1 ms of walking, the count pass
/// and waking a sleeping worker (50-80 us on the KVM guests measured) cost
/// more than a second thread saves — plant-context, 19 k modules, took
/// 0.057 ms serial, 0.088 on cpu x1 and 0.114 on cpu x2 (docs/performance.md,
/// 2026-12-02). One thread has no work to share, so it walks serially too:
/// the count pass (and, under a homomorphism, the expanded copy) only cost it
/// time (plant-stochastic: 17.9 ms on cpu x1 against 16.7 serial, 2026-12-04).
/// Tests that force tiny chunks still take the parallel path.
constexpr uint64_t kParallelMinModules = uint64_t{1} << 15;

bool interpretCpu(const LSystemData& data, const ModuleString& string, const InterpretOptions& options,
                  uint64_t seed, Geometry& out) {
  const bool small = string.size() < kParallelMinModules && homomorphismDepth(data) == 0;
  if ((small || CpuExecutor::resolveThreads(options.execution.threads) == 1) && cpuChunkOverride() == 0)
    return interpretSerial(data, string, options, seed, out);
  CpuInterpreter interpreter(data, options, seed, options.execution.threads);
  interpreter.run(string, out);
  return interpreter.segmentsFinite();
}

}  // namespace procgen::detail

// Per-module interpretation logic shared by the interpreters (paper §5; ABOP
// §1.5): the turtle set up from the view settings, what each symbol makes the
// caller emit, the emission of one module into geometry slots, and the
// on-the-fly homomorphism expansion (cpfg), and the plain walk of a run of
// modules (walkRun). The serial interpreter walks the string once with these;
// the cpu interpreter runs the same code per chunk and per branch, writing to
// offsets from a prefix sum of the counts below.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "lsystem/emit.h"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/lsystem_data.hpp"
#include "lsystem/match.h"
#include "lsystem/turtle.h"
#include "procgen/geometry.hpp"

namespace procgen::detail {

/// The turtle's view and initial state from the view settings.
inline void initTurtle(const ViewSettings& v, PgTurtleView* view, PgTurtle* turtle) {
  pgTurtleViewInit(view, v.step, v.angle_deg, v.width_factor, v.width_scale, v.tropism.x, v.tropism.y,
                   v.tropism.z, v.elasticity);
  pgTurtleInit(turtle, v.initial_width * v.width_scale);
}

/// Homomorphism recursion depth of `data` (0: no homomorphism).
inline int homomorphismDepth(const LSystemData& data) {
  return data.homomorphism.empty() ? 0 : data.homomorphism.max_depth;  // [1, kMaxHomomorphismDepth] (parser)
}

/// What pgTurtleApply returns for each symbol (it depends on the symbol only).
struct TurtleActions {
  uint8_t action[PG_SYMBOL_COUNT];
  explicit TurtleActions(const PgTurtleView& view) {
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
      PgTurtle t;
      pgTurtleInit(&t, 1.0f);
      action[c] = static_cast<uint8_t>(pgTurtleApply(&t, static_cast<pg_u8>(c), nullptr, 0, &view));
    }
  }
};

/// Counts 'F' and 'G' in [p, p + n) (the symbols that draw a segment outside
/// polygons: an exact upper bound on the segments) and sets *special when any
/// of '[', ']', '$', '{', '}' occurs, 16 modules at a time (GCC/Clang vector
/// extensions, so the same source builds on any target). The serial
/// interpreter sizes its output with it; the cpu count pass needs no
/// per-module walk for a block without special symbols.
inline uint64_t countDrawSymbols(const uint8_t* p, uint64_t n, bool* special) {
  typedef int8_t V __attribute__((vector_size(16)));
  uint64_t draws = 0, i = 0;
  V any = {};
  while (i + 16 <= n) {
    V acc = {};  // per-lane counts, flushed before they can overflow
    for (int k = 0; k < 120 && i + 16 <= n; ++k, i += 16) {
      V v;
      std::memcpy(&v, p + i, 16);
      acc -= (v == 'F') | (v == 'G');
      any |= (v == '[') | (v == ']') | (v == '$') | (v == '{') | (v == '}');
    }
    for (int lane = 0; lane < 16; ++lane) draws += static_cast<uint8_t>(acc[lane]);
  }
  bool found = false;
  for (int lane = 0; lane < 16; ++lane) found |= any[lane] != 0;
  for (; i < n; ++i) {
    const uint8_t x = p[i];
    draws += x == 'F' || x == 'G';
    found |= x == '[' || x == ']' || x == '$' || x == '{' || x == '}';
  }
  *special = found;
  return draws;
}

/// Output position of the walk: next segment, polygon-vertex record and
/// polygon close, and the polygon nesting depth ('{' pushes, '}' pops when
/// open; brackets do not affect it, as in cpfg).
struct EmitCursor {
  uint64_t segment = 0;
  uint64_t record = 0;
  uint64_t close = 0;
  int64_t polygon_depth = 0;
};

/// Counts one module's output (no turtle needed: what is emitted depends only
/// on the action and the polygon depth; emit.h holds the rules).
inline void countAction(int action, EmitCursor& c) {
  switch (pgEmitKind(action, c.polygon_depth > 0)) {
    case PG_EMIT_SEGMENT: ++c.segment; break;
    case PG_EMIT_VERTEX: ++c.record; break;
    case PG_EMIT_BEGIN: ++c.polygon_depth; break;
    case PG_EMIT_END:
      ++c.close;
      --c.polygon_depth;
      break;
    default: break;
  }
}

/// Applies one module to the turtle and tells `sink` what it emits, the one
/// definition of cpfg's drawing rules every interpreter shares: F and G draw a
/// segment outside polygons; inside one, F, f and '.' record a vertex (G and g
/// only move); '{' opens a polygon, '}' closes the innermost open one. Push and
/// pop are returned to the caller, which owns the branch stack.
/// Sink: bool inPolygon(); segment(prev, t); vertex(t); beginPolygon(); endPolygon(t).
template <typename Sink>
inline int applyModule(PgTurtle& t, const PgTurtleView& view, uint8_t symbol, const float* params,
                       int32_t nparams, Sink& sink) {
  const float prev[3] = {t.pos[0], t.pos[1], t.pos[2]};
  const int action = pgTurtleApply(&t, symbol, params, nparams, &view);
  switch (pgEmitKind(action, sink.inPolygon())) {  // the rules: emit.h, shared with the kernels
    case PG_EMIT_SEGMENT: sink.segment(prev, t); break;
    case PG_EMIT_VERTEX: sink.vertex(t); break;
    case PG_EMIT_BEGIN: sink.beginPolygon(); break;
    case PG_EMIT_END: sink.endPolygon(t); break;
    default: break;
  }
  return action;
}

inline Segment makeSegment(const float* prev, const PgTurtle& t, int32_t instance) {
  Segment s;
  s.start = {prev[0], prev[1], prev[2]};
  s.end = {t.pos[0], t.pos[1], t.pos[2]};
  s.width = t.width;
  s.color = t.color;
  s.depth = t.depth;
  s.instance = instance;
  return s;
}

/// Destination arrays, sized by the count: segments in string order, polygon
/// vertex records in string order, and the turtle colour at every closing '}'.
struct EmitSlots {
  Segment* segments = nullptr;
  Vec3* records = nullptr;
  int32_t* close_colors = nullptr;
  int32_t instance = 0;
};

/// Sink writing through raw cursors into pre-sized slots (the cpu
/// interpreter; counts from countAction place every module's output), OR-ing
/// the nonFiniteDrawnLanes of every segment into `non_finite` as it writes it
/// (with kTestFinite; without, for geometry tested later, no test is made).
/// Cursors and bits by value, not indices from a base through references: in
/// a walk's locals nothing is reloaded after a store through a cursor.
template <bool kTestFinite>
struct BasicSlotSink {
  Segment* next_segment;
  Vec3* next_record;
  int32_t* next_close;
  int64_t polygon_depth;
  int32_t instance;
  NonFiniteLanes non_finite = {};

  BasicSlotSink(const EmitSlots& out, const EmitCursor& c) : instance(out.instance) { moveTo(out, c); }
  /// Continues writing at `c` in `out` (the non-finite bits are kept).
  void moveTo(const EmitSlots& out, const EmitCursor& c) {
    next_segment = out.segments + c.segment;
    next_record = out.records + c.record;
    next_close = out.close_colors + c.close;
    polygon_depth = c.polygon_depth;
  }
  /// The cursor as offsets into `out` (the slots it was made from).
  EmitCursor cursor(const EmitSlots& out) const {
    return {static_cast<uint64_t>(next_segment - out.segments), static_cast<uint64_t>(next_record - out.records),
            static_cast<uint64_t>(next_close - out.close_colors), polygon_depth};
  }

  bool inPolygon() const { return polygon_depth > 0; }
  void segment(const float* prev, const PgTurtle& t) {
    if constexpr (kTestFinite) non_finite |= nonFiniteDrawnLanes(t);
    *next_segment++ = makeSegment(prev, t, instance);
  }
  void vertex(const PgTurtle& t) { *next_record++ = {t.pos[0], t.pos[1], t.pos[2]}; }
  void beginPolygon() { ++polygon_depth; }
  void endPolygon(const PgTurtle& t) {
    *next_close++ = t.color;
    --polygon_depth;
  }
};
using SlotSink = BasicSlotSink<true>;

/// The branch stack of a walk: '[' saves the turtle and the branch is drawn
/// one level deeper; ']' restores the saved turtle (with none saved, at the
/// top level, it does nothing).
struct BranchStack {
  std::vector<PgTurtle> saved;
  void push(PgTurtle& t) {
    saved.push_back(t);
    t.depth += 1;
  }
  void pop(PgTurtle& t) {
    if (!saved.empty()) {
      t = saved.back();
      saved.pop_back();
    }
  }
};

/// Modules [begin, end) of `view` applied to `t` in order, the output told to
/// `sink` (applyModule) and '[' / ']' to sink.push(t) / sink.pop(t), which own
/// the branch stack; modules the turtle ignores (`acts` false: A, X, ...) are
/// skipped without a call or a mispredicted dispatch.
template <typename Sink>
[[gnu::always_inline]] inline void walkModules(const PgStringView& view, uint64_t begin, uint64_t end,
                                               const bool* acts, const PgTurtleView& turtle_view, PgTurtle& t,
                                               Sink& sink) {
  for (uint64_t i = begin; i < end; ++i) {
    const uint8_t symbol = view.symbols[i];
    if (!acts[symbol]) continue;
    const int32_t nparams = pgParamCount(&view, i);
    const float* params = nparams ? view.params + view.param_offsets[i] : nullptr;
    switch (applyModule(t, turtle_view, symbol, params, nparams, sink)) {
      case PG_TURTLE_PUSH: sink.push(t); break;
      case PG_TURTLE_POP: sink.pop(t); break;
      default: break;
    }
  }
}

/// The one plain walk (no homomorphism) of the serial and cpu interpreters:
/// walkModules over [begin, end) with the string view, the turtle view, the
/// turtle and the sink copied into locals and back, so nothing the loop keeps
/// in registers is reloaded after a store through the sink's cursors.
/// Flattened (everything it calls inlined into its loop): as a call per module
/// the turtle lived in memory, 10-30 % of the whole interpretation. Not
/// inlined into its callers: a call there (keep_going clobbers every xmm
/// register) put the turtle back in memory, 17 % of plant-2d's interpretation.
template <typename Sink>
[[gnu::flatten, gnu::noinline]] void walkRun(const PgStringView& string_view, uint64_t begin, uint64_t end,
                                             const bool* acts, const PgTurtleView& turtle_view, PgTurtle& turtle,
                                             Sink& sink_io) {
  const PgStringView view = string_view;
  const PgTurtleView tv = turtle_view;
  PgTurtle t = turtle;
  Sink sink = sink_io;
  walkModules(view, begin, end, acts, tv, t, sink);
  turtle = t;
  sink_io = sink;
}

/// Applies homomorphism productions on the fly: visit(symbol, params, nparams)
/// is called for every module the turtle sees, in order, a module with an
/// applicable production being replaced by its successor, recursively up to
/// the table's maximum depth. Random draws are keyed (seed, position at depth
/// 0, phase 0xffffff00 | depth); context search uses `partner` at depth 0 only.
/// One expander per thread (it owns the successor buffers).
class HomomorphismExpander {
 public:
  HomomorphismExpander(const LSystemData& data, uint64_t seed, const int64_t* partner)
      : rules_(data.rules(data.homomorphism)), max_depth_(homomorphismDepth(data)), seed_(seed),
        partner_(partner), levels_(static_cast<size_t>(max_depth_) + 1) {}

  bool expands(uint8_t symbol) const {
    return max_depth_ > 0 && rules_.first_by_symbol[symbol] != PG_NO_PRODUCTION;
  }

  /// Visits modules [begin, end) of `s` at recursion depth `depth`.
  /// `relevant[c]` false means the module can be skipped (no production, no turtle action).
  template <typename Visit>
  void walk(const PgStringView& s, uint64_t begin, uint64_t end, int depth, const bool* relevant, Visit&& visit) {
    const bool expand = depth < max_depth_;
    for (uint64_t i = begin; i < end; ++i) {
      const uint8_t symbol = s.symbols[i];
      if (!relevant[symbol]) continue;
      const int32_t nparams = pgParamCount(&s, i);
      const float* params = nparams ? s.params + s.param_offsets[i] : nullptr;
      if (expand && rules_.first_by_symbol[symbol] != PG_NO_PRODUCTION) {
        float slots[PG_MAX_FORMALS];
        PgRandomStream rng{seed_, depth == 0 ? i : 0, 0xffffff00u | static_cast<uint32_t>(depth), 0};
        const int64_t* partner = depth == 0 ? partner_ : nullptr;
        const int32_t j = pgFindProduction(&rules_, &s, partner, i, slots, &rng);
        if (j != PG_NO_PRODUCTION) {
          const PgStringView sub = successor(j, slots, rng, depth + 1);
          walk(sub, 0, sub.length, depth + 1, relevant, visit);
          continue;
        }
      }
      visit(symbol, params, nparams);
    }
  }

 private:
  struct Level {  // successor buffer of one recursion depth
    std::vector<uint8_t> symbols;
    std::vector<uint64_t> offsets;
    std::vector<float> params;
  };

  PgStringView successor(int32_t j, const float* slots, PgRandomStream& rng, int level) {
    Level& L = levels_[static_cast<size_t>(level)];
    const PgProduction& p = rules_.productions[j];
    L.symbols.clear();
    L.offsets.clear();
    L.params.clear();
    L.offsets.push_back(0);
    rng.draws = PG_DRAW_SUCCESSOR;
    for (int32_t m = 0; m < p.succ_count; ++m) {
      const PgSuccessorModule sm = rules_.successors[p.succ_begin + m];
      L.symbols.push_back(static_cast<uint8_t>(sm.symbol));
      for (int32_t k = 0; k < sm.num_params; ++k)
        L.params.push_back(pgEval(&rules_, rules_.successor_exprs[sm.first_expr + k], slots, &rng));
      L.offsets.push_back(L.params.size());
    }
    PgStringView v;
    v.symbols = L.symbols.data();
    v.param_offsets = L.offsets.data();
    v.params = L.params.data();
    v.length = L.symbols.size();
    return v;
  }

  PgRules rules_;
  int max_depth_;
  uint64_t seed_;
  const int64_t* partner_;
  std::vector<Level> levels_;
};

}  // namespace procgen::detail

// Serial interpretation (paper §5; ABOP §1.5): one turtle walks the string in
// order, with a stack for branches. Homomorphism productions are applied on
// the fly (cpfg): a module with a homomorphism production is replaced, for
// drawing only, by its successor, recursively up to the table's maximum depth.
// The per-module logic (turtle set-up, drawing rules, homomorphism expansion)
// is interpret_module.hpp, shared with the cpu interpreter.
#include <algorithm>
#include <vector>

#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/interpret_budget.hpp"
#include "lsystem/interpret_cancel.hpp"
#include "lsystem/interpret_module.hpp"
#include "lsystem/lsystem_data.hpp"
#include "lsystem/serial/interpret.hpp"

namespace procgen::detail {
namespace {

class SerialInterpreter {
 public:
  SerialInterpreter(const LSystemData& data, const InterpretOptions& options, Geometry& out)
      : data_(data), out_(out), cancel_(options), instance_(options.instance), max_depth_(homomorphismDepth(data)) {
    initTurtle(options.view, &view_, &turtle_);
    // A module is worth a look when the turtle acts on it or a homomorphism
    // production may replace it; skipping the rest (A, X, ...) saves a call
    // and a mispredicted dispatch per module.
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c)
      relevant_[c] = pgTurtleActs(static_cast<uint8_t>(c)) ||
                     (max_depth_ > 0 && data.homomorphism.first_by_symbol[c] != PG_NO_PRODUCTION);
  }

  void run(const ModuleString& s, uint64_t seed) {
    if (max_depth_ == 0) {
      walkPlain(s);
      return;
    }
    const PgStringView view = stringView(s);
    OverwriteVector<int64_t> partner;
    if (data_.homomorphism.hasContext()) {
      resizeForOverwrite(partner, s.size());
      bracketPartnersSerial(s.symbols.data(), s.size(), partner.data());
    }
    HomomorphismExpander expander(data_, seed, partner.empty() ? nullptr : partner.data());
    // In chunks of modules (each module's expansion depends only on its
    // position and the seed), asking keep_going between them.
    for (uint64_t begin = 0; begin < view.length; begin += kKeepGoingModules) {
      cancel_.check();
      expander.walk(view, begin, std::min(view.length, begin + kKeepGoingModules), 0, relevant_,
                    [this](uint8_t symbol, const float* params, int32_t nparams) {
                      apply(turtle_, symbol, params, nparams, *this);
                    });
    }
  }

  /// No homomorphism: the string is drawn as it is (walkRun, shared with the
  /// cpu interpreter's linear path), in chunks of modules, asking keep_going
  /// between them.
  void walkPlain(const ModuleString& s) {
    bool special = false;
    const uint64_t draws = countDrawSymbols(s.symbols.data(), s.size(), &special);
    const size_t base = out_.segments.size();
    reserveLarge(out_.segments, base + draws);
    out_.segments.resize(base + draws);  // unset (SegmentArray); trimmed to what was drawn below
    const PgStringView view = stringView(s);
    PgTurtle t = turtle_;
    PlainSink sink{this, out_.segments.data() + base, {}};
    for (uint64_t begin = 0; begin < view.length; begin += kKeepGoingModules) {
      cancel_.check();
      walkRun(view, begin, std::min(view.length, begin + kKeepGoingModules), relevant_, view_, t, sink);
    }
    turtle_ = t;
    out_.segments.resize(static_cast<size_t>(sink.next - out_.segments.data()));
    non_finite_ |= sink.non_finite;
  }

  /// walkPlain's sink: segments at a raw cursor, their finiteness tested as
  /// they are drawn (so interpret() need not read the output again);
  /// polygons and the branch stack go to the interpreter.
  struct PlainSink {
    SerialInterpreter* self;
    Segment* next;
    NonFiniteLanes non_finite;
    bool inPolygon() const { return self->inPolygon(); }
    void segment(const float* prev, const PgTurtle& t) {
      non_finite |= nonFiniteDrawnLanes(t);
      *next++ = makeSegment(prev, t, self->instance_);
    }
    void vertex(const PgTurtle& t) { self->vertex(t); }
    void beginPolygon() { self->beginPolygon(); }
    void endPolygon(const PgTurtle& t) { self->endPolygon(t); }
    void push(PgTurtle& t) { self->stack_.push(t); }
    void pop(PgTurtle& t) { self->stack_.pop(t); }
  };

  // Sink of applyModule under a homomorphism: geometry appended to out_ as it is drawn.
  bool inPolygon() const { return !polygon_starts_.empty(); }
  void segment(const float* prev, const PgTurtle& t) {
    non_finite_ |= nonFiniteDrawnLanes(t);
    out_.segments.push_back(makeSegment(prev, t, instance_));
  }
  bool segmentsFinite() const { return finiteLanes(non_finite_); }
  void vertex(const PgTurtle& t) { polygon_vertices_.push_back({t.pos[0], t.pos[1], t.pos[2]}); }
  void beginPolygon() { polygon_starts_.push_back(polygon_vertices_.size()); }
  void endPolygon(const PgTurtle& t) {
    size_t start = polygon_starts_.back();
    polygon_starts_.pop_back();
    if (polygon_vertices_.size() - start >= 3) {
      out_.polygon_vertices.insert(out_.polygon_vertices.end(),
                                   polygon_vertices_.begin() + static_cast<std::ptrdiff_t>(start),
                                   polygon_vertices_.end());
      out_.polygon_offsets.push_back(out_.polygon_vertices.size());
      out_.polygon_colors.push_back(t.color);
      out_.polygon_instances.push_back(instance_);
    }
    polygon_vertices_.resize(start);
  }

 private:
  template <typename Sink>
  void apply(PgTurtle& t, uint8_t symbol, const float* params, int32_t nparams, Sink& sink) {
    switch (applyModule(t, view_, symbol, params, nparams, sink)) {
      case PG_TURTLE_PUSH: stack_.push(t); break;
      case PG_TURTLE_POP: stack_.pop(t); break;
      default: break;
    }
  }

  const LSystemData& data_;
  Geometry& out_;
  InterpretCancel cancel_;
  int32_t instance_;
  int max_depth_;
  PgTurtleView view_{};
  PgTurtle turtle_{};
  bool relevant_[PG_SYMBOL_COUNT] = {};
  BranchStack stack_;
  NonFiniteLanes non_finite_ = {};  ///< nonFiniteDrawnLanes of every segment drawn, OR-ed
  std::vector<size_t> polygon_starts_;
  std::vector<Vec3> polygon_vertices_;
};

}  // namespace

bool interpretSerial(const LSystemData& data, const ModuleString& string,
                     const InterpretOptions& options, uint64_t seed, Geometry& out) {
  SerialInterpreter interpreter(data, options, out);
  interpreter.run(string, seed);
  return interpreter.segmentsFinite();
}

}  // namespace procgen::detail

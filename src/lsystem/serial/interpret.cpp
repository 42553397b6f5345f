// Serial interpretation (paper §5; ABOP §1.5): one turtle walks the string in
// order, with a stack for branches. Homomorphism productions are applied on
// the fly (cpfg): a module with a homomorphism production is replaced, for
// drawing only, by its successor, recursively up to the table's maximum depth.
// The per-module logic (turtle set-up, drawing rules, homomorphism expansion)
// is interpret_module.hpp, shared with the cpu interpreter.
#include <vector>

#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/interpret_module.hpp"
#include "lsystem/lsystem_data.hpp"
#include "lsystem/serial/interpret.hpp"

namespace procgen::detail {
namespace {

class SerialInterpreter {
 public:
  SerialInterpreter(const LSystemData& data, const InterpretOptions& options, Geometry& out)
      : data_(data), out_(out), instance_(options.instance), max_depth_(homomorphismDepth(data)) {
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
      // Exact sizing: one segment per F or G outside polygons at most.
      uint64_t draws = 0;
      for (uint8_t c : s.symbols) draws += (c == 'F') | (c == 'G');
      reserveLarge(out_.segments, out_.segments.size() + draws);
    }
    const PgStringView view = stringView(s);
    std::vector<int64_t> partner;
    if (max_depth_ > 0 && data_.homomorphism.hasContext()) {
      resizeForOverwrite(partner, s.size());
      bracketPartnersSerial(s.symbols.data(), s.size(), partner.data());
    }
    HomomorphismExpander expander(data_, seed, partner.empty() ? nullptr : partner.data());
    expander.walk(view, 0, view.length, 0, relevant_,
                  [this](uint8_t symbol, const float* params, int32_t nparams) { apply(symbol, params, nparams); });
  }

  // Sink of applyModule: geometry appended to out_ as it is drawn.
  bool inPolygon() const { return !polygon_starts_.empty(); }
  void segment(const float* prev, const PgTurtle& t) { out_.segments.push_back(makeSegment(prev, t, instance_)); }
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
  void apply(uint8_t symbol, const float* params, int32_t nparams) {
    switch (applyModule(turtle_, view_, symbol, params, nparams, *this)) {
      case PG_TURTLE_PUSH:
        stack_.push_back(turtle_);
        turtle_.depth += 1;
        break;
      case PG_TURTLE_POP:
        if (!stack_.empty()) {
          turtle_ = stack_.back();
          stack_.pop_back();
        }
        break;
      default: break;
    }
  }

  const LSystemData& data_;
  Geometry& out_;
  int32_t instance_;
  int max_depth_;
  PgTurtleView view_{};
  PgTurtle turtle_{};
  bool relevant_[PG_SYMBOL_COUNT] = {};
  std::vector<PgTurtle> stack_;
  std::vector<size_t> polygon_starts_;
  std::vector<Vec3> polygon_vertices_;
};

}  // namespace

void interpretSerial(const LSystemData& data, const ModuleString& string,
                     const InterpretOptions& options, uint64_t seed, Geometry& out) {
  SerialInterpreter interpreter(data, options, out);
  interpreter.run(string, seed);
}

}  // namespace procgen::detail

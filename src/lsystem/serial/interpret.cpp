// Serial interpretation (paper §5; ABOP §1.5): one turtle walks the string in
// order, with a stack for branches. Homomorphism productions are applied on
// the fly (cpfg): a module with a homomorphism production is replaced, for
// drawing only, by its successor, recursively up to the table's maximum depth.
#include <algorithm>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/lsystem_data.hpp"
#include "lsystem/match.h"
#include "lsystem/serial/interpret.hpp"
#include "lsystem/turtle.h"

namespace procgen::detail {
namespace {

constexpr int kMaxHomomorphismDepth = 64;

class SerialInterpreter {
 public:
  SerialInterpreter(const LSystemData& data, const InterpretOptions& options, Geometry& out)
      : data_(data), out_(out), instance_(options.instance) {
    const ViewSettings& v = options.view;
    pgTurtleViewInit(&view_, v.step, v.angle_deg, v.width_factor, v.width_scale, v.tropism.x,
                     v.tropism.y, v.tropism.z, v.elasticity);
    pgTurtleInit(&turtle_, v.initial_width * v.width_scale);
    homomorphism_ = data.rules(data.homomorphism);
    max_depth_ = data.homomorphism.empty() ? 0 : std::clamp(data.homomorphism.max_depth, 1, kMaxHomomorphismDepth);
    levels_.resize(static_cast<size_t>(max_depth_) + 1);
    // A module is worth a look when the turtle acts on it or a homomorphism
    // production may replace it; skipping the rest (A, X, ...) saves a call
    // and a mispredicted dispatch per module.
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c)
      relevant_[c] = pgTurtleActs(static_cast<uint8_t>(c)) ||
                     (max_depth_ > 0 && homomorphism_.first_by_symbol[c] != PG_NO_PRODUCTION);
  }

  void run(const ModuleString& s, uint64_t seed) {
    seed_ = seed;
    if (max_depth_ == 0) {
      // Exact sizing: one segment per F or G outside polygons at most.
      uint64_t draws = 0;
      for (uint8_t c : s.symbols) draws += (c == 'F') | (c == 'G');
      out_.segments.reserve(out_.segments.size() + draws);
    }
    PgStringView view = stringView(s);
    std::vector<int64_t> partner;
    if (max_depth_ > 0 && data_.homomorphism.hasContext()) {
      partner.resize(s.size());
      bracketPartnersSerial(s.symbols.data(), s.size(), partner.data());
      partner_ = partner.data();
    }
    walk(view, 0);
  }

 private:
  struct Level {  // successor buffer of one homomorphism depth
    std::vector<uint8_t> symbols;
    std::vector<uint64_t> offsets;
    std::vector<float> params;
  };

  void walk(const PgStringView& s, int depth) {
    const bool expand = depth < max_depth_;
    for (uint64_t i = 0; i < s.length; ++i) {
      const uint8_t symbol = s.symbols[i];
      if (!relevant_[symbol]) continue;
      const int32_t nparams = pgParamCount(&s, i);
      const float* params = nparams ? s.params + s.param_offsets[i] : nullptr;
      if (expand && homomorphism_.first_by_symbol[symbol] != PG_NO_PRODUCTION) {
        float slots[PG_MAX_FORMALS];
        PgRandomStream rng{seed_, depth == 0 ? i : 0, 0xffffff00u | static_cast<uint32_t>(depth), 0};
        const int64_t* partner = depth == 0 ? partner_ : nullptr;
        int32_t j = pgFindProduction(&homomorphism_, &s, partner, i, slots, &rng);
        if (j != PG_NO_PRODUCTION) {
          PgStringView sub = expandSuccessor(j, slots, rng, depth + 1);
          walk(sub, depth + 1);
          continue;
        }
      }
      apply(symbol, params, nparams);
    }
  }

  PgStringView expandSuccessor(int32_t j, const float* slots, PgRandomStream& rng, int level) {
    Level& buffer = levels_[static_cast<size_t>(level)];
    const PgProduction& p = homomorphism_.productions[j];
    buffer.symbols.clear();
    buffer.offsets.clear();
    buffer.params.clear();
    buffer.offsets.push_back(0);
    rng.draws = PG_DRAW_SUCCESSOR;
    for (int32_t m = 0; m < p.succ_count; ++m) {
      const PgSuccessorModule sm = homomorphism_.successors[p.succ_begin + m];
      buffer.symbols.push_back(static_cast<uint8_t>(sm.symbol));
      for (int32_t k = 0; k < sm.num_params; ++k)
        buffer.params.push_back(pgEval(&homomorphism_, homomorphism_.successor_exprs[sm.first_expr + k], slots, &rng));
      buffer.offsets.push_back(buffer.params.size());
    }
    PgStringView v;
    v.symbols = buffer.symbols.data();
    v.param_offsets = buffer.offsets.data();
    v.params = buffer.params.data();
    v.length = buffer.symbols.size();
    return v;
  }

  void apply(uint8_t symbol, const float* params, int32_t nparams) {
    const float prev[3] = {turtle_.pos[0], turtle_.pos[1], turtle_.pos[2]};
    switch (pgTurtleApply(&turtle_, symbol, params, nparams, &view_)) {
      case PG_TURTLE_NONE: break;
      case PG_TURTLE_DRAW:
        if (polygon_starts_.empty()) emitSegment(prev);
        else recordVertex();
        break;
      case PG_TURTLE_MOVE:
        if (!polygon_starts_.empty()) recordVertex();
        break;
      case PG_TURTLE_DRAW_SILENT:
        if (polygon_starts_.empty()) emitSegment(prev);
        break;
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
      case PG_TURTLE_POLYGON_BEGIN: polygon_starts_.push_back(polygon_vertices_.size()); break;
      case PG_TURTLE_POLYGON_VERTEX:
        if (!polygon_starts_.empty()) recordVertex();
        break;
      case PG_TURTLE_POLYGON_END:
        if (!polygon_starts_.empty()) endPolygon();
        break;
    }
  }

  void emitSegment(const float* prev) {
    Segment seg;
    seg.start = {prev[0], prev[1], prev[2]};
    seg.end = {turtle_.pos[0], turtle_.pos[1], turtle_.pos[2]};
    seg.width = turtle_.width;
    seg.color = turtle_.color;
    seg.depth = turtle_.depth;
    seg.instance = instance_;
    out_.segments.push_back(seg);
  }

  void recordVertex() { polygon_vertices_.push_back({turtle_.pos[0], turtle_.pos[1], turtle_.pos[2]}); }

  void endPolygon() {
    size_t start = polygon_starts_.back();
    polygon_starts_.pop_back();
    if (polygon_vertices_.size() - start >= 3) {
      out_.polygon_vertices.insert(out_.polygon_vertices.end(), polygon_vertices_.begin() + static_cast<std::ptrdiff_t>(start),
                                   polygon_vertices_.end());
      out_.polygon_offsets.push_back(out_.polygon_vertices.size());
      out_.polygon_colors.push_back(turtle_.color);
      out_.polygon_instances.push_back(instance_);
    }
    polygon_vertices_.resize(start);
  }

  const LSystemData& data_;
  Geometry& out_;
  int32_t instance_;
  PgTurtleView view_{};
  PgTurtle turtle_{};
  PgRules homomorphism_{};
  int max_depth_ = 0;
  uint64_t seed_ = 0;
  const int64_t* partner_ = nullptr;
  std::vector<Level> levels_;
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

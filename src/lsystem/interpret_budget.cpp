// Sizing and checking the interpretation (paper §5) before and after the
// backends draw (issue 16): the homomorphism expansion is bounded per symbol
// over the recursion depth, like the derivation's count pass bounds a step,
// so `B --> BB` at depth 40 stops at once instead of spinning; the geometry
// is sized from the symbols that emit; and non-finite output is traced back
// to the module that caused it.
#include "lsystem/interpret_budget.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/large_buffer.hpp"
#include "lsystem/derive_stages.hpp"
#include "lsystem/interpret_module.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::detail {
namespace {

uint64_t satAdd(uint64_t a, uint64_t b) { return checkedAdd(a, b).value_or(UINT64_MAX); }
uint64_t satMul(uint64_t a, uint64_t b) { return checkedMul(a, b).value_or(UINT64_MAX); }

/// Symbols whose module can emit an output element (emit.h: F and G a
/// segment, F f '.' a polygon vertex, '}' a polygon close).
bool emits(int c) { return c == 'F' || c == 'G' || c == 'f' || c == '.' || c == '}'; }

struct Count {
  uint64_t modules = 0, elements = 0;
  Count plus(const Count& o) const { return {satAdd(modules, o.modules), satAdd(elements, o.elements)}; }
  Count times(uint64_t k) const { return {satMul(modules, k), satMul(elements, k)}; }
  Count max(const Count& o) const { return {std::max(modules, o.modules), std::max(elements, o.elements)}; }
  Count min(const Count& o) const { return {std::min(modules, o.modules), std::min(elements, o.elements)}; }
};

constexpr uint64_t kElementBytes = sizeof(Segment);

uint64_t bytesOf(const Count& c, bool homomorphism) {
  // The serial interpreter appends under a homomorphism (no exact count to
  // size from), so its output may hold up to twice its size while it grows.
  const uint64_t out = satMul(c.elements, homomorphism ? 2 * kElementBytes : kElementBytes);
  return homomorphism ? satAdd(satMul(c.modules, kExpandedModuleBytes), out) : out;
}

std::string symbolText(uint8_t symbol, const float* params, int32_t n) {
  std::string s = "'";
  s += static_cast<char>(symbol);
  if (n > 0) {
    s += '(';
    for (int32_t k = 0; k < n; ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(params[k]));
      if (k) s += ',';
      s += buf;
    }
    s += ')';
  }
  return s + "'";
}

/// Bounds of the homomorphism expansion per symbol, by recursion levels left.
class ExpansionBounds {
 public:
  explicit ExpansionBounds(const LSystemData& data) : table_(data.homomorphism) {
    const int depth = data.homomorphism.max_depth;
    for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
      const Count base{1, emits(c) ? 1u : 0u};
      upper_[c] = lower_any_[c] = lower_certain_[c] = base;
      const int32_t first = table_.first_by_symbol[static_cast<size_t>(c)];
      certain_[c] = false;
      if (first == PG_NO_PRODUCTION) continue;
      const PgProduction& p = table_.productions[static_cast<size_t>(first)];
      // Applies to every module of the symbol with its parameter count.
      certain_[c] = p.next < 0 && p.condition < 0 && p.lc_count == 0 && p.rc_count == 0 &&
                    p.probability == PG_NOT_STOCHASTIC;
      pred_params_[c] = p.pred_params;
    }
    for (int level = 1; level <= depth; ++level) {
      std::array<Count, PG_SYMBOL_COUNT> up = upper_, lo_any = lower_any_, lo_certain = lower_certain_;
      for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
        int32_t j = table_.first_by_symbol[static_cast<size_t>(c)];
        if (j == PG_NO_PRODUCTION) continue;
        const Count base{1, emits(c) ? 1u : 0u};
        Count hi = base, lo = base;  // base: no production applies
        bool first = true;
        for (; j >= 0; j = table_.productions[static_cast<size_t>(j)].next) {
          const PgProduction& p = table_.productions[static_cast<size_t>(j)];
          Count sum_hi, sum_lo;
          for (int32_t m = 0; m < p.succ_count; ++m) {
            const PgSuccessorModule& sm = table_.successors[static_cast<size_t>(p.succ_begin + m)];
            sum_hi = sum_hi.plus(upper_[sm.symbol]);
            sum_lo = sum_lo.plus(lowerOf(sm.symbol, sm.num_params));
          }
          hi = hi.max(sum_hi);
          lo = first && certain_[c] ? sum_lo : lo.min(sum_lo);
          if (certain_[c]) lo_certain[c] = sum_lo;
          first = false;
        }
        up[c] = hi;
        lo_any[c] = certain_[c] ? base : lo;
      }
      upper_ = up;
      lower_any_ = lo_any;
      lower_certain_ = lo_certain;
    }
  }

  const Count& upper(uint8_t c) const { return upper_[c]; }
  /// Lower bound for a module of `symbol` with `nparams` parameters.
  const Count& lowerOf(int symbol, int32_t nparams) const {
    return certain_[symbol] && nparams == pred_params_[symbol] ? lower_certain_[symbol] : lower_any_[symbol];
  }

 private:
  const RuleTable& table_;
  std::array<Count, PG_SYMBOL_COUNT> upper_, lower_any_, lower_certain_;
  std::array<bool, PG_SYMBOL_COUNT> certain_{};
  std::array<int32_t, PG_SYMBOL_COUNT> pred_params_{};
};

struct OverLimit {};

}  // namespace

InterpretSize checkInterpretation(const LSystemData& data, const ModuleString& string, uint64_t begin,
                                  uint64_t end, uint64_t seed, uint64_t max_modules, uint64_t budget_bytes,
                                  uint64_t held_bytes, const std::string& stage) {
  const uint64_t budget = effectiveMemoryBudget(budget_bytes);
  const uint64_t n = end - begin;
  const bool homomorphism = homomorphismDepth(data) > 0;
  auto fits = [&](const Count& c) {
    if (homomorphism && max_modules && c.modules > max_modules) return false;
    // Near the default budget the resident memory counts too (heldForBudget).
    const uint64_t bytes = bytesOf(c, homomorphism);
    const uint64_t held = procgen::detail::heldForBudget(bytes, held_bytes, budget_bytes, budget);
    return held <= budget && bytes <= budget - held;
  };
  auto result = [&](const Count& c) {
    return InterpretSize{c.modules, c.elements, bytesOf(c, homomorphism)};
  };
  auto refuse = [&](const Count& c, const char* how) {
    if (homomorphism && max_modules && c.modules > max_modules)
      throw ResourceError(stage + ": the homomorphism expands the string to " + how + std::to_string(c.modules) +
                          " modules, over --max-modules " + std::to_string(max_modules) +
                          "; stopped before expanding");
    std::string what = stage + " (";
    if (homomorphism) what += "homomorphism expansion to " + std::string(how) + std::to_string(c.modules) + " modules, ";
    what += std::string(how) + std::to_string(c.elements) + " segments and polygon vertices)";
    requireMemory(what, bytesOf(c, homomorphism), budget_bytes, held_bytes);
  };

  if (!homomorphism) {
    // Every module emits at most one element: try the string length first.
    const Count quick{n, n};
    if (fits(quick)) return result(quick);
    Count exact{n, 0};
    for (uint64_t i = begin; i < end; ++i) exact.elements += emits(string.symbols[i]) ? 1 : 0;
    if (!fits(exact)) refuse(exact, "");
    return result(exact);
  }

  // Bounds from a histogram of the string and the per-symbol bounds.
  const ExpansionBounds bounds(data);
  std::array<uint64_t, PG_SYMBOL_COUNT> hist{};
  Count lower;
  const bool parametric = string.parametric();
  for (uint64_t i = begin; i < end; ++i) {
    const uint8_t c = string.symbols[i];
    ++hist[c];
    if (parametric) lower = lower.plus(bounds.lowerOf(c, string.paramCount(i)));
  }
  Count upper;
  for (int c = 0; c < PG_SYMBOL_COUNT; ++c) {
    upper = upper.plus(bounds.upper(static_cast<uint8_t>(c)).times(hist[static_cast<size_t>(c)]));
    if (!parametric) lower = lower.plus(bounds.lowerOf(c, 0).times(hist[static_cast<size_t>(c)]));
  }
  if (fits(upper)) return result(upper);
  if (!fits(lower)) refuse(lower, "at least ");

  // The bounds straddle the limit (conditions or stochastic choices decide):
  // walk the expansion as the interpreters will, counting, up to the limit.
  PgStringView view = stringView(string);
  view.symbols += begin;
  if (view.param_offsets) view.param_offsets += begin;
  view.length = n;
  OverwriteVector<int64_t> partner;
  if (data.homomorphism.hasContext()) {
    resizeForOverwrite(partner, n);
    bracketPartnersSerial(view.symbols, n, partner.data());
  }
  bool all[PG_SYMBOL_COUNT];
  std::fill(std::begin(all), std::end(all), true);
  HomomorphismExpander expander(data, seed, partner.empty() ? nullptr : partner.data());
  Count counted;
  try {
    expander.walk(view, 0, n, 0, all, [&](uint8_t symbol, const float*, int32_t) {
      counted.modules += 1;
      counted.elements += emits(symbol) ? 1 : 0;
      if ((counted.modules & 1023) == 0 && !fits(counted)) throw OverLimit{};
    });
  } catch (const OverLimit&) {
    refuse(counted, "more than ");
  }
  if (!fits(counted)) refuse(counted, "");
  return result(counted);
}

namespace {

bool finite3(const float* v) { return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]); }
bool finiteTurtle(const PgTurtle& t) {
  return finite3(t.pos) && finite3(t.h) && finite3(t.l) && finite3(t.u) && std::isfinite(t.width);
}

/// Replays the turtle to name the module behind the first non-finite output.
class FiniteTracer {
 public:
  FiniteTracer(const LSystemData& data, const InterpretOptions& options) : data_(data), options_(options) {
    initTurtle(options.view, &view_, &turtle_);
  }

  [[noreturn]] void run(const ModuleString& s) {
    if (!finiteTurtle(turtle_))
      throw Error("interpretation: the turtle's initial state is not finite (initial width " +
                  std::to_string(options_.view.initial_width) + ", width scale " +
                  std::to_string(options_.view.width_scale) + ", step " + std::to_string(options_.view.step) +
                  "); view settings must be finite numbers");
    const PgStringView view = stringView(s);
    bool all[PG_SYMBOL_COUNT];
    std::fill(std::begin(all), std::end(all), true);
    OverwriteVector<int64_t> partner;
    if (homomorphismDepth(data_) > 0 && data_.homomorphism.hasContext()) {
      resizeForOverwrite(partner, s.size());
      bracketPartnersSerial(s.symbols.data(), s.size(), partner.data());
    }
    HomomorphismExpander expander(data_, options_.seed, partner.empty() ? nullptr : partner.data());
    auto visit = [&](uint8_t symbol, const float* params, int32_t np) { step(symbol, params, np); };
    if (homomorphismDepth(data_) > 0) {
      expander.walk(view, 0, view.length, 0, all, visit);
    } else {
      for (uint64_t i = 0; i < view.length; ++i) {
        const int32_t np = pgParamCount(&view, i);
        visit(view.symbols[i], np ? view.params + view.param_offsets[i] : nullptr, np);
      }
    }
    throw Error("interpretation: the geometry holds a non-finite number, which no module could be traced to");
  }

  // Sink of applyModule.
  bool inPolygon() const { return polygon_depth_ > 0; }
  void segment(const float* prev, const PgTurtle& t) {
    if (!finite3(prev) || !finiteTurtle(t)) fail("drew a segment");
  }
  void vertex(const PgTurtle& t) {
    if (!finiteTurtle(t)) fail("recorded a polygon vertex");
  }
  void beginPolygon() { ++polygon_depth_; }
  void endPolygon(const PgTurtle&) { --polygon_depth_; }

 private:
  void step(uint8_t symbol, const float* params, int32_t np) {
    current_ = symbolText(symbol, params, np);
    switch (applyModule(turtle_, view_, symbol, params, np, *this)) {
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
    if (culprit_.empty() && !finiteTurtle(turtle_)) {
      culprit_ = current_;
      culprit_index_ = index_;
    }
    ++index_;
  }

  [[noreturn]] void fail(const char* what) {
    std::string m = "interpretation: module " + std::to_string(index_) + " " + current_ + " " + what +
                    " with a non-finite position or width";
    if (!culprit_.empty())
      m += " (the turtle state became non-finite at module " + std::to_string(culprit_index_) + " " + culprit_ + ")";
    if (homomorphismDepth(data_) > 0) m += "; modules counted after the homomorphism expansion";
    throw Error(m + "; geometry must be finite (check the parameters and the view settings)");
  }

  const LSystemData& data_;
  const InterpretOptions& options_;
  PgTurtleView view_{};
  PgTurtle turtle_{};
  std::vector<PgTurtle> stack_;
  int64_t polygon_depth_ = 0;
  uint64_t index_ = 0;
  std::string current_, culprit_;
  uint64_t culprit_index_ = 0;
};

}  // namespace

bool finiteSegments(const Segment* segments, size_t n) {
  NonFiniteLanes bad = {};
  for (size_t i = 0; i < n; ++i) bad |= nonFiniteLanes(segments[i]);
  return finiteLanes(bad);
}

bool finitePolygonVertices(const Geometry& geometry) {
  uint32_t bad = 0;
  for (const Vec3& v : geometry.polygon_vertices) bad |= nonFiniteBit(v);
  return finiteBits(bad);
}

bool finiteGeometry(const Geometry& geometry) {
  return finiteSegments(geometry.segments.data(), geometry.segments.size()) && finitePolygonVertices(geometry);
}

void throwNonFiniteGeometry(const LSystemData& data, const ModuleString& string, const InterpretOptions& options) {
  FiniteTracer(data, options).run(string);
}

}  // namespace procgen::detail

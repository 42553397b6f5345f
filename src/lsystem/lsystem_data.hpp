// The compiled form of an L-system: three rule tables (productions,
// decomposition, homomorphism) over shared expression pools. Every array is a
// flat vector of the plain structs of tables.h, so the cpu backend reads them
// as they are and the OpenCL backend uploads them unchanged.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lsystem/tables.h"
#include "procgen/lsystem.hpp"

namespace procgen::detail {

/// The largest `maximum depth:` of a decomposition table (docs/lsystem-language.md).
inline constexpr int kMaxDecompositionDepth = 255;
/// The largest `maximum depth:` of a homomorphism table: the turtle expands
/// recursively, one successor buffer per level.
inline constexpr int kMaxHomomorphismDepth = 64;

struct RuleTable {
  std::array<int32_t, PG_SYMBOL_COUNT> first_by_symbol;
  std::vector<PgProduction> productions;
  std::vector<PgPatternModule> patterns;
  std::vector<PgSuccessorModule> successors;
  std::vector<int32_t> successor_exprs;
  int max_depth = 1;  ///< decomposition / homomorphism: maximum recursion depth

  RuleTable() { first_by_symbol.fill(PG_NO_PRODUCTION); }
  bool empty() const { return productions.empty(); }
  bool hasContext() const {
    for (const PgProduction& p : productions)
      if (p.lc_count || p.rc_count) return true;
    return false;
  }
  bool hasStochastic() const {
    for (const PgProduction& p : productions)
      if (p.probability != PG_NOT_STOCHASTIC) return true;
    return false;
  }
};

struct LSystemData {
  std::string name;
  std::string source_file;
  RuleTable productions;
  RuleTable decomposition;
  RuleTable homomorphism;
  std::vector<uint32_t> code;         ///< expression bytecode (expr.h)
  std::vector<float> constants;       ///< literal pool
  std::vector<float> globals;         ///< #define values, in definition order
  std::vector<std::string> global_names;
  std::array<uint8_t, PG_SYMBOL_COUNT> ignored{};  ///< from #ignore / #consider
  ModuleString axiom;
  int derivation_length = 0;
  bool parametric = false;  ///< true when any module (axiom or successor) has parameters
  ViewSettings view;
  std::optional<uint64_t> seed;

  /// The C view of one table, for the per-module logic in tables.h / expr.h.
  PgRules rules(const RuleTable& table) const {
    PgRules r;
    r.first_by_symbol = table.first_by_symbol.data();
    r.productions = table.productions.data();
    r.patterns = table.patterns.data();
    r.successors = table.successors.data();
    r.successor_exprs = table.successor_exprs.data();
    r.code = code.data();
    r.constants = constants.data();
    r.globals = globals.data();
    r.ignored = ignored.data();
    return r;
  }
};

inline PgStringView stringView(const ModuleString& s) {
  PgStringView v;
  v.symbols = s.symbols.data();
  v.param_offsets = s.parametric() ? s.param_offsets.data() : nullptr;
  v.params = s.params.data();
  v.length = s.symbols.size();
  return v;
}

/// Appends `src` to `dst` (the combined string of a multi-L-system scene, §6).
/// With `parametric`, `dst` keeps one parameter offset per module plus the end
/// offset, and the offsets of `src` (none when it has no parameters) are
/// shifted by the parameters already in `dst`.
inline void appendModules(ModuleString& dst, const ModuleString& src, bool parametric) {
  const uint64_t p0 = dst.params.size();
  dst.symbols.insert(dst.symbols.end(), src.symbols.begin(), src.symbols.end());
  if (!parametric) return;
  dst.param_offsets.pop_back();
  for (uint64_t i = 0; i < src.size(); ++i)
    dst.param_offsets.push_back(p0 + (src.param_offsets.empty() ? 0 : src.param_offsets[i]));
  dst.params.insert(dst.params.end(), src.params.begin(), src.params.end());
  dst.param_offsets.push_back(dst.params.size());
}

}  // namespace procgen::detail

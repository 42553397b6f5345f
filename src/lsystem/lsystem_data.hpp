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

}  // namespace procgen::detail

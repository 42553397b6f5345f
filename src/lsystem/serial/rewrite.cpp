// Serial twins of the rewriting stages (paper §4.2): count, rewrite, and the
// D0L fast path; see derive_stages.hpp. These functions are also what every
// cpu-backend worker runs on its chunk.
#include <algorithm>
#include <cstring>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/match.h"
#include "procgen/treebox.hpp"

namespace procgen::detail {

ChunkCount countChunk(const RewritePass& pass, uint64_t begin, uint64_t end, int32_t* choice) {
  ChunkCount c;
  float slots[PG_MAX_FORMALS];
  PgRandomStream rng{pass.seed, 0, pass.phase, 0};
  const PgProduction* prods = pass.table->productions.data();
  for (uint64_t i = begin; i < end; ++i) {
    int32_t j = PG_NO_PRODUCTION;
    if (pass.rules.first_by_symbol[pass.in.symbols[i]] != PG_NO_PRODUCTION) {
      rng.position = i;
      j = pgFindProduction(&pass.rules, &pass.in, pass.partner, i, slots, &rng);
    }
    choice[i] = j;
    if (j == PG_NO_PRODUCTION) {
      c.modules += 1;
      c.params += static_cast<uint64_t>(pgParamCount(&pass.in, i));
    } else {
      c.modules += static_cast<uint64_t>(prods[j].succ_count);
      c.params += static_cast<uint64_t>(prods[j].succ_params);
      c.rewritten += 1;
    }
  }
  return c;
}

void rewriteChunk(const RewritePass& pass, uint64_t begin, uint64_t end, const int32_t* choice,
                  uint64_t out_module, uint64_t out_param, ModuleString& out) {
  float slots[PG_MAX_FORMALS];
  PgRandomStream rng{pass.seed, 0, pass.phase, 0};
  const PgRules& rules = pass.rules;
  const PgStringView& in = pass.in;
  uint8_t* out_symbols = out.symbols.data();
  uint64_t* out_offsets = pass.parametric ? out.param_offsets.data() : nullptr;
  float* out_params = out.params.data();
  const bool in_parametric = in.param_offsets != nullptr;

  for (uint64_t i = begin; i < end; ++i) {
    int32_t j = choice[i];
    if (j == PG_NO_PRODUCTION) {
      out_symbols[out_module] = in.symbols[i];
      if (out_offsets) {
        out_offsets[out_module] = out_param;
        if (in_parametric) {
          for (uint64_t k = in.param_offsets[i]; k < in.param_offsets[i + 1]; ++k)
            out_params[out_param++] = in.params[k];
        }
      }
      ++out_module;
      continue;
    }
    const PgProduction& p = rules.productions[j];
    if (!out_offsets) {
      // No parameters anywhere: the successor is just its letters.
      const PgSuccessorModule* succ = rules.successors + p.succ_begin;
      for (int32_t m = 0; m < p.succ_count; ++m) out_symbols[out_module + m] = static_cast<uint8_t>(succ[m].symbol);
      out_module += static_cast<uint64_t>(p.succ_count);
      continue;
    }
    if (p.num_formals) pgBindProduction(&rules, j, &in, pass.partner, i, slots);
    rng.position = i;
    rng.draws = PG_DRAW_SUCCESSOR;
    for (int32_t m = 0; m < p.succ_count; ++m) {
      const PgSuccessorModule sm = rules.successors[p.succ_begin + m];
      out_symbols[out_module] = static_cast<uint8_t>(sm.symbol);
      out_offsets[out_module] = out_param;
      for (int32_t k = 0; k < sm.num_params; ++k)
        out_params[out_param++] = pgEval(&rules, rules.successor_exprs[sm.first_expr + k], slots, &rng);
      ++out_module;
    }
  }
}

namespace {

/// The derived fields of a new table whose successor rows and lengths are
/// set: the growing symbols, the longest row and the padded rows.
void finishD0LTable(D0LTable& t) {
  t.usable = true;
  for (uint32_t c = 0; c < PG_SYMBOL_COUNT; ++c)
    if (t.length[c] != 1) t.growing.emplace_back(static_cast<uint8_t>(c), int64_t{t.length[c]} - 1);
  if (t.growing.size() > D0LTable::kCountedSymbols) t.growing.clear();
  t.max_length = *std::max_element(std::begin(t.length), std::end(t.length));
  const bool rows_fit = std::all_of(std::begin(t.length), std::end(t.length),
                                    [](uint32_t len) { return len >= 1 && len <= D0LTable::kPaddedRow; });
  if (rows_fit) {
    t.padded.assign(size_t{PG_SYMBOL_COUNT} * D0LTable::kPaddedRow, 0);
    for (uint32_t c = 0; c < PG_SYMBOL_COUNT; ++c) {
      uint8_t* row = t.padded.data() + size_t{c} * D0LTable::kPaddedRow;
      if (t.identity(static_cast<uint8_t>(c))) row[0] = static_cast<uint8_t>(c);
      else std::copy_n(t.row(static_cast<uint8_t>(c)), t.length[c], row);
    }
  }
}

/// A table that keeps every symbol (not yet usable).
D0LTable identityD0LTable() {
  D0LTable t;
  std::fill(std::begin(t.length), std::end(t.length), 1u);
  std::fill(std::begin(t.start), std::end(t.start), -1);
  return t;
}

}  // namespace

D0LTable makeD0LTable(const LSystemData& data, const RuleTable& table) {
  D0LTable t = identityD0LTable();
  if (data.parametric) return t;
  std::vector<int> productions_per_symbol(PG_SYMBOL_COUNT, 0);
  for (const PgProduction& p : table.productions) {
    if (p.lc_count || p.rc_count || p.condition >= 0 || p.probability != PG_NOT_STOCHASTIC)
      return t;
    if (++productions_per_symbol[p.predecessor] > 1) return t;  // first would win; keep generic
  }
  for (const PgProduction& p : table.productions) {
    t.start[p.predecessor] = static_cast<int32_t>(t.rows.size());  // an empty row erases
    for (int32_t m = 0; m < p.succ_count; ++m)
      t.rows.push_back(static_cast<uint8_t>(table.successors[p.succ_begin + m].symbol));
    t.length[p.predecessor] = static_cast<uint32_t>(p.succ_count);
  }
  finishD0LTable(t);
  return t;
}

D0LTable composeD0L(const D0LTable& first, const D0LTable& step, uint32_t max_row, uint64_t max_bytes) {
  D0LTable t = identityD0LTable();
  if (!first.usable || !step.usable) return t;
  // Every row of the result is `step` applied to a row of `first` (or `step`'s
  // own row where `first` keeps the symbol): count, then write in place.
  uint64_t bytes = 0;
  for (uint32_t c = 0; c < PG_SYMBOL_COUNT; ++c) {
    const auto x = static_cast<uint8_t>(c);
    if (first.identity(x)) {
      t.length[c] = step.length[c];
    } else {
      t.length[c] = static_cast<uint32_t>(countChunkD0L(step, first.row(x), 0, first.length[c]));
    }
    if (t.length[c] > max_row) return identityD0LTable();  // not usable
    if (!first.identity(x) || !step.identity(x)) bytes += t.length[c];
  }
  if (bytes > max_bytes) return identityD0LTable();
  t.rows.resize(bytes);
  uint8_t* out = t.rows.data();
  for (uint32_t c = 0; c < PG_SYMBOL_COUNT; ++c) {
    const auto x = static_cast<uint8_t>(c);
    if (first.identity(x) && step.identity(x)) continue;
    t.start[c] = static_cast<int32_t>(out - t.rows.data());
    if (first.identity(x)) out = std::copy_n(step.row(x), step.length[c], out);
    else out = rewriteChunkD0L(step, first.row(x), 0, first.length[c], out);
  }
  finishD0LTable(t);
  return t;
}

namespace {

/// countChunkD0L when the table has few growing symbols: per 16 modules, one
/// compare and subtract per growing symbol into byte counters (GCC/Clang
/// vector extensions, as countDrawSymbols), flushed before they overflow.
/// About 5x faster than a lookup per module, whose dependent loads were a
/// quarter of a parallel D0L step.
template <size_t K>
int64_t growthOf(const std::pair<uint8_t, int64_t>* growing, const uint8_t* p, uint64_t n) {
  typedef uint8_t V __attribute__((vector_size(16)));
  V sym[K];
  for (size_t k = 0; k < K; ++k) sym[k] = V{} + growing[k].first;
  int64_t counts[K] = {};
  uint64_t i = 0;
  while (i + 16 <= n) {
    V acc[K] = {};
    for (int round = 0; round < 255 && i + 16 <= n; ++round, i += 16) {
      V v;
      std::memcpy(&v, p + i, 16);
      for (size_t k = 0; k < K; ++k) acc[k] -= (V)(v == sym[k]);
    }
    for (size_t k = 0; k < K; ++k)
      for (int lane = 0; lane < 16; ++lane) counts[k] += acc[k][lane];
  }
  for (; i < n; ++i)
    for (size_t k = 0; k < K; ++k) counts[k] += p[i] == growing[k].first;
  int64_t growth = 0;
  for (size_t k = 0; k < K; ++k) growth += counts[k] * growing[k].second;
  return growth;
}

int64_t growthOf(const D0LTable& t, const uint8_t* p, uint64_t n) {
  const auto* g = t.growing.data();
  switch (t.growing.size()) {
    case 1: return growthOf<1>(g, p, n);
    case 2: return growthOf<2>(g, p, n);
    case 3: return growthOf<3>(g, p, n);
    case 4: return growthOf<4>(g, p, n);
    case 5: return growthOf<5>(g, p, n);
    case 6: return growthOf<6>(g, p, n);
    default: return 0;  // none: every module maps to one (callers test this first)
  }
}
static_assert(D0LTable::kCountedSymbols == 6, "growthOf dispatches on up to 6 growing symbols");

}  // namespace

uint64_t countChunkD0L(const D0LTable& t, const uint8_t* symbols, uint64_t begin, uint64_t end) {
  if (!t.growing.empty())
    return static_cast<uint64_t>(static_cast<int64_t>(end - begin) + growthOf(t, symbols + begin, end - begin));
  // Four independent sums of table lookups. (A symbol histogram is slower on
  // strings that repeat a symbol, as Koch's F…F does: every increment of the
  // same counter waits for the previous one.)
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  uint64_t i = begin;
  for (; i + 4 <= end; i += 4) {
    s0 += t.length[symbols[i]];
    s1 += t.length[symbols[i + 1]];
    s2 += t.length[symbols[i + 2]];
    s3 += t.length[symbols[i + 3]];
  }
  for (; i < end; ++i) s0 += t.length[symbols[i]];
  return s0 + s1 + s2 + s3;
}

uint8_t* rewriteChunkD0L(const D0LTable& t, const uint8_t* symbols, uint64_t begin, uint64_t end,
                         uint8_t* out) {
  if (!t.padded.empty()) {
    // A whole row per module: module i's copy spills at most kPaddedRow - 1
    // bytes past its successor, into the outputs of the next kPaddedRow - 1
    // modules (each at least one byte long), which overwrite it in turn. The
    // last kPaddedRow modules are copied exactly, so nothing is written past
    // the chunk's own output (other chunks write beside it in parallel).
    constexpr uint64_t kRow = D0LTable::kPaddedRow;
    const uint8_t* rows = t.padded.data();
    for (; begin + kRow < end; ++begin) {
      const uint8_t c = symbols[begin];
      std::memcpy(out, rows + size_t{c} * kRow, kRow);
      out += t.length[c];
    }
  }
  for (uint64_t i = begin; i < end; ++i) {
    const uint8_t c = symbols[i];
    const uint32_t len = t.length[c];
    if (t.identity(c)) {
      *out++ = c;
    } else if (len != 0) {  // an erasing production; `out` may be null when the result is empty
      std::memcpy(out, t.row(c), len);
      out += len;
    }
  }
  return out;
}

void bracketPartnersSerial(const uint8_t* symbols, uint64_t n, int64_t* partner) {
  // treebox matching (serial backend, no depth limit, branch-free) gives a
  // ']' the index of its '[' and a '[' its enclosing '['; one in-place pass
  // turns that into partners: a ']' at i tells its '[' (at m < i, already
  // visited) that its partner is i.
  matchBrackets(symbols, n, '[', ']', partner, Execution{Backend::kSerial, 1});
  for (uint64_t i = 0; i < n; ++i) {
    if (symbols[i] == '[') {
      partner[i] = -1;
    } else if (symbols[i] == ']' && partner[i] >= 0) {
      partner[partner[i]] = static_cast<int64_t>(i);
    }
  }
}

bool cutBranches(ModuleString& s) {
  const uint64_t n = s.size();
  const bool parametric = s.parametric();
  uint64_t w = 0, wp = 0;  // write positions (modules, params)
  bool removed = false;
  for (uint64_t i = 0; i < n;) {
    if (s.symbols[i] == '%') {
      // Skip to the ']' that closes the current branch (kept), or the end.
      removed = true;
      int64_t depth = 0;
      uint64_t j = i + 1;
      for (; j < n; ++j) {
        if (s.symbols[j] == '[') ++depth;
        else if (s.symbols[j] == ']' && depth-- == 0) break;
      }
      i = j;
      continue;
    }
    s.symbols[w] = s.symbols[i];
    if (parametric) {
      uint64_t b = s.param_offsets[i], e = s.param_offsets[i + 1];
      s.param_offsets[w] = wp;
      for (uint64_t k = b; k < e; ++k) s.params[wp++] = s.params[k];
    }
    ++w;
    ++i;
  }
  if (!removed) return false;
  s.symbols.resize(w);
  if (parametric) {
    s.param_offsets.resize(w + 1);
    s.param_offsets[w] = wp;
    s.params.resize(wp);
  }
  return true;
}

}  // namespace procgen::detail

// The stages of one rewriting pass (paper §4.2, Figure 4): count → scan →
// rewrite. A pass reads one module string and one rule table (productions or
// decomposition) and writes the next string. The stage functions work on a
// chunk [begin, end) of the input, so the serial backend calls them once over
// the whole string and the cpu backend calls them per chunk in parallel with
// a scan of the chunk counts in between; both produce identical output.
#pragma once

#include <cstdint>
#include <vector>

#include "lsystem/lsystem_data.hpp"
#include "lsystem/tables.h"

namespace procgen::detail {

/// The random phase of a pass (common/random.h): step · 256 + pass, pass 0
/// being the productions and 1, 2, ... the decomposition passes. Every
/// derivation driver keys its passes so, which keeps the backends identical.
inline uint32_t passPhase(int step, int pass) {
  return (static_cast<uint32_t>(step) << 8) | static_cast<uint32_t>(pass & 0xff);
}

/// Whether `symbol` can ever stand in a derived string: it is in the axiom
/// or in a successor. With '%' it tells whether the cut pass can do anything.
bool symbolCanAppear(const LSystemData& d, uint8_t symbol);

/// Everything a pass reads. `partner` is the bracket partner array of `in`
/// (see match.h), or null when the rule table has no context productions or
/// the string has no brackets.
struct RewritePass {
  const LSystemData* data = nullptr;
  const RuleTable* table = nullptr;
  PgRules rules{};
  PgStringView in{};
  const int64_t* partner = nullptr;
  uint64_t seed = 0;
  uint32_t phase = 0;
  bool parametric = false;  ///< output carries param_offsets
};

/// Output size of a chunk; `rewritten` counts modules a production applied to.
struct ChunkCount {
  uint64_t modules = 0;
  uint64_t params = 0;
  uint64_t rewritten = 0;
  ChunkCount& operator+=(const ChunkCount& o) {
    modules += o.modules;
    params += o.params;
    rewritten += o.rewritten;
    return *this;
  }
};

/// Stage "count": picks the production for each module of [begin, end)
/// (choice[i], or PG_NO_PRODUCTION to copy) and returns the chunk's output size.
ChunkCount countChunk(const RewritePass& pass, uint64_t begin, uint64_t end, int32_t* choice);

/// Stage "rewrite": writes the successors of [begin, end) starting at output
/// module `out_module` and parameter `out_param`. `out` is already sized.
void rewriteChunk(const RewritePass& pass, uint64_t begin, uint64_t end, const int32_t* choice,
                  uint64_t out_module, uint64_t out_param, ModuleString& out);

/// D0L fast path (no parameters, contexts, conditions or stochastic choice):
/// every character has at most one successor, so no choice array is needed.
struct D0LTable {
  /// Row width of `padded`: one unaligned 32-byte copy per module.
  static constexpr uint32_t kPaddedRow = 32;
  bool usable = false;
  uint32_t length[PG_SYMBOL_COUNT];            ///< successor length (1 for the identity)
  uint32_t max_length = 1;                     ///< the longest successor: output <= input * max_length
  /// Where each symbol's successor starts in `rows`; -1 for the identity.
  /// One flat array rather than a vector per symbol, which cost 256
  /// allocations per composed jump table (building Hilbert's tables: 15 → 12
  /// µs of a 30 µs derivation, traced).
  int32_t start[PG_SYMBOL_COUNT];
  std::vector<uint8_t> rows;  ///< every successor, back to back
  bool identity(uint8_t c) const { return start[c] < 0; }
  const uint8_t* row(uint8_t c) const { return rows.data() + start[c]; }
  /// Every symbol's successor (itself for the identity) in a row of
  /// kPaddedRow bytes, when every successor has 1 to kPaddedRow modules;
  /// empty otherwise. Lets rewriteChunkD0L copy a whole row per module and
  /// advance by the length, with no branch and no call.
  std::vector<uint8_t> padded;
  /// The symbols whose successor is not one module long, with length − 1,
  /// when there are at most kCountedSymbols of them (Koch: F; Hilbert: A–D);
  /// empty otherwise. The output length of a chunk is then its input length
  /// plus the counts of these symbols times their growth, and countChunkD0L
  /// counts them 16 modules at a time instead of a table lookup per module.
  static constexpr size_t kCountedSymbols = 6;
  std::vector<std::pair<uint8_t, int64_t>> growing;
};
D0LTable makeD0LTable(const LSystemData& data, const RuleTable& table);
/// The table of `first` followed by `step`: a D0L step is a homomorphism of
/// strings, so k steps are one step with every symbol's k-step successor as
/// its row (derive.cpp jumps over the last steps with such tables). Not
/// usable when a row would be longer than `max_row` or all rows together
/// longer than `max_bytes` (checked before any row is written).
D0LTable composeD0L(const D0LTable& first, const D0LTable& step, uint32_t max_row = UINT32_MAX,
                    uint64_t max_bytes = INT32_MAX);
uint64_t countChunkD0L(const D0LTable& t, const uint8_t* symbols, uint64_t begin, uint64_t end);
/// Writes the successors of [begin, end) from `out` on; returns the end of
/// what it wrote.
uint8_t* rewriteChunkD0L(const D0LTable& t, const uint8_t* symbols, uint64_t begin, uint64_t end,
                         uint8_t* out);

/// Bracket partners of `s` (match.h convention), from treebox matchBrackets
/// (serial backend) converted in place.
/// Unmatched brackets get -1.
void bracketPartnersSerial(const uint8_t* symbols, uint64_t n, int64_t* partner);

/// Removes, for every '%', the module and the rest of its branch up to (not
/// including) the ']' that closes the branch, or to the end at top level.
/// Returns true when anything was removed.
bool cutBranches(ModuleString& s);

/// Modules [b, e) of `s` as a string of their own (parameter offsets from 0;
/// none unless `parametric`): a segment of a scene's combined string.
ModuleString sliceModules(const ModuleString& s, uint64_t b, uint64_t e, bool parametric);

}  // namespace procgen::detail

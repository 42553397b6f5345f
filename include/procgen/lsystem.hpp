// procgen L-systems: plain-text ABOP / cpfg L-systems read at run time,
// derived and interpreted on any backend.
//
// Paper: Lipp, Wonka, Wimmer, "Parallel Generation of Multiple L-Systems"
// (shared/seeds/000_04df0cc43202a9a5.txt). The language is that of cpfg
// (L-studio / vlab) and of "The Algorithmic Beauty of Plants" (ABOP); see
// docs/lsystem-language.md for what is accepted.
//
// Determinism: for the same LSystem, options and seed, derive() returns the
// same module string (bit for bit, parameters included) on every backend and
// thread count. interpret() returns the same segments and polygons in the same
// order; coordinates agree within 2e-4 of the model's size across backends
// (the parallel matrix scan reassociates the turtle's float products; the
// largest deviation measured is 1.3e-4, tests/common/lsystem_helpers.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/error.hpp"
#include "procgen/geometry.hpp"

namespace procgen {

namespace detail {
struct LSystemData;  // compiled tables (src/lsystem/lsystem_data.hpp)
}

/// A parametric word: flat arrays, no per-module objects (paper Figure 3).
/// Module i is symbols[i] with parameters params[param_offsets[i] .. param_offsets[i+1]).
/// param_offsets is empty when no module of the L-system can carry parameters.
/// The arrays are std::vectors except that resize(n) leaves new elements
/// unset (OverwriteVector): derivation writes every module of a step's output,
/// and zero-filling it first cost as much as the D0L rewrite itself.
struct ModuleString {
  OverwriteVector<uint8_t> symbols;
  OverwriteVector<uint64_t> param_offsets;
  OverwriteVector<float> params;

  uint64_t size() const { return symbols.size(); }
  bool parametric() const { return !param_offsets.empty(); }
  uint32_t paramCount(uint64_t i) const {
    return parametric() ? static_cast<uint32_t>(param_offsets[i + 1] - param_offsets[i]) : 0;
  }
  void clear(bool parametric_string) {
    symbols.clear();
    params.clear();
    param_offsets.clear();
    if (parametric_string) param_offsets.push_back(0);
  }
  bool operator==(const ModuleString&) const = default;
};

/// Turtle and view settings; the .l file may set them (docs/lsystem-language.md),
/// command-line flags override them.
struct ViewSettings {
  float angle_deg = 90.0f;      ///< default turn for + - & ^ \ / without a parameter
  float step = 1.0f;            ///< default length for F f G g without a parameter
  /// Width of the first segment, in model units. The default, a tenth of the
  /// default step, draws thin lines as cpfg's one-pixel default does.
  float initial_width = 0.1f;
  /// Multiplies every width given to the turtle (initial width and `!(w)`):
  /// converts models whose widths are cpfg pixels into model units.
  float width_scale = 1.0f;
  float width_factor = 1.0f;    ///< `!` without a parameter multiplies the width by this
  Vec3 tropism{0.0f, -1.0f, 0.0f};  ///< tropism direction T (ABOP §2.2)
  float elasticity = 0.0f;      ///< tropism strength e; 0 disables tropism
};

/// A compiled L-system: production tables, axiom, constants and view settings.
/// Cheap to copy (shared, immutable). Thread-safe to use concurrently.
class LSystem {
 public:
  /// Reads and compiles `path`. Throws ParseError (file:line:col) on malformed
  /// input and Error when the file cannot be read.
  static LSystem fromFile(const std::filesystem::path& path);
  /// Compiles `text`; `filename` is used in diagnostics only.
  static LSystem fromText(std::string_view text, const std::string& filename = "<input>");

  const std::string& name() const;          ///< file stem, or "<input>"
  int derivationLength() const;             ///< the file's `derivation length:`
  const ViewSettings& view() const;         ///< the file's view settings
  const ModuleString& axiom() const;
  bool parametric() const;                  ///< any module can carry parameters
  std::optional<uint64_t> seed() const;     ///< the file's `seed:`, if any

  const detail::LSystemData& data() const { return *data_; }
  explicit LSystem(std::shared_ptr<const detail::LSystemData> data) : data_(std::move(data)) {}

 private:
  std::shared_ptr<const detail::LSystemData> data_;
};

/// Reads cpfg view-file directives (`angle factor:`, `angle increment:`,
/// `initial line width:`, `tropism direction:`, `initial elasticity:` ...) into
/// `view`; unknown cpfg directives are ignored. Throws ParseError.
void applyViewFile(std::string_view text, const std::string& filename, ViewSettings& view);

struct DeriveOptions {
  std::optional<int> iterations;  ///< default: the file's derivation length
  uint64_t seed = 1;              ///< selects the stochastic stream
  /// The longest string allowed, axiom included; 0 means no module limit
  /// (only the memory budget limits the string).
  uint64_t max_modules = 0;
  uint64_t memory_budget_bytes = 0;  ///< 0: defaultMemoryBudget() (procgen/budget.hpp: half the smallest memory limit)
  Execution execution;
  /// Called after every step with (step, total steps, modules); may be empty.
  /// (deriveScene on serial and cpu: after every instance, procgen/scene.hpp.)
  std::function<void(int, int, uint64_t)> progress;
};

struct DeriveStats {
  int iterations = 0;
  uint64_t modules = 0;        ///< length of the final string
  uint64_t modules_total = 0;  ///< sum of the lengths produced by steps 1..n (paper Table 2)
  std::vector<uint64_t> step_modules;  ///< length after each step
  int threads = 1;             ///< threads actually used
};

/// Derives the axiom `iterations` steps: each step rewrites every module in
/// parallel-rewriting semantics, then applies decomposition, then cuts (`%`).
/// Throws ResourceError before allocating when the axiom or a step (or a
/// decomposition pass) would exceed max_modules or the memory budget; the
/// message names the step and the projected size, and the bytes of the string
/// already held, which count against the budget until the step is written.
/// Throws Error when the final string holds a non-finite parameter (NaN or
/// ±inf, e.g. from a division by zero), naming the module and its position.
ModuleString derive(const LSystem& lsystem, const DeriveOptions& options,
                    DeriveStats* stats = nullptr);

struct InterpretOptions {
  ViewSettings view;  ///< usually lsystem.view() with command-line overrides applied
  Execution execution;
  int32_t instance = 0;  ///< written into every segment and polygon
  uint64_t seed = 1;     ///< keys ran() in homomorphism successors (use the derivation's seed)
  /// Longest homomorphism expansion of the string; 0: no module limit.
  uint64_t max_modules = 0;
  uint64_t memory_budget_bytes = 0;  ///< 0: defaultMemoryBudget() (procgen/budget.hpp)
  /// Asked between chunks of the work (about every 64 k modules, and between
  /// stages and kernel launches on every backend); when it returns false the
  /// interpretation stops and throws InterpretCancelled. May be called from
  /// several threads at once (the cpu backend asks from its workers), so it
  /// must be thread-safe and cheap (an atomic load). Empty: never asked.
  std::function<bool()> keep_going;
};

/// An interpretation stopped because InterpretOptions::keep_going returned
/// false. Nothing is returned: the partial geometry is discarded.
class InterpretCancelled : public Error {
 public:
  InterpretCancelled() : Error("the interpretation was cancelled (keep_going returned false)") {}
};

/// Interprets `string` with a 3D turtle (ABOP §1.5): starts at the origin,
/// heading +Y, up +Z; homomorphism productions are applied on the fly.
/// Output order is string order.
/// Before drawing, the homomorphism expansion and the geometry are sized
/// (docs/reliability.md): throws ResourceError, before allocating, when the
/// expansion exceeds options.max_modules or when expansion and geometry plus
/// the string itself exceed the memory budget. Throws Error when the geometry
/// would hold a non-finite coordinate or width, naming the module that drew it.
/// Throws InterpretCancelled when options.keep_going returns false.
Geometry interpret(const LSystem& lsystem, const ModuleString& string,
                   const InterpretOptions& options);

/// Bounds of everything drawn inside one bracketed branch.
struct BranchBounds {
  uint64_t begin = 0;  ///< module index of the branch's '['
  int32_t depth = 0;   ///< 1 for a branch at top level, 2 inside one, … (= Segment::depth inside it)
  Bounds bounds;       ///< segment end points and polygon vertices (no line widths); empty() if none
};

/// Per-branch bounding boxes (treebox, docs/treebox.md): one entry per '[' of
/// `string`, in string order, each the union of the segments and polygons
/// drawn between the '[' and its matching ']' (through nested branches; an
/// unclosed '[' encloses the rest of the string). `geometry` must be
/// interpret(lsystem, string, …) with the same string. Throws Error when the
/// L-system has homomorphism productions (segments cannot then be traced to
/// modules) or when `geometry` does not match what `string` draws.
/// `execution` selects the treebox backend. O(string size + geometry size).
std::vector<BranchBounds> branchBounds(const LSystem& lsystem, const ModuleString& string,
                                       const Geometry& geometry, const Execution& execution);

/// Canonical text of a module string: modules with parameters as `F(1.5,2)`,
/// floats in shortest round-trip form.
std::string toText(const ModuleString& string);
/// 64-bit FNV-1a hash of toText(string), computed without building the text.
uint64_t stringHash(const ModuleString& string);
/// The FNV-1a hash continued over toText(string) from `hash` (the hash of
/// the text before it): stringHash(a + b) == stringHash(b, stringHash(a))
/// when a's text followed by b's is the text of a + b (a distributed scene's
/// ranges, hashed rank after rank).
uint64_t stringHash(const ModuleString& string, uint64_t hash);
/// The same FNV-1a hash over text already made: stringHash(s, hash) ==
/// textHash(toText(s), hash), so a text made once serves the string output
/// and its hashes. The default `hash` is FNV-1a's basis, as stringHash(s).
uint64_t textHash(std::string_view text, uint64_t hash = 1469598103934665603ull);
/// Parses a module string with numeric parameters, e.g. "F(1)[+A(2.5)]B".
/// `parametric` forces param_offsets even when no module has parameters.
/// Throws ParseError.
ModuleString parseModuleString(std::string_view text, bool parametric = true);

}  // namespace procgen

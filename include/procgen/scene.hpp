// Many L-systems at once (Lipp et al. §6): a scene lists L-system instances —
// different grammars, constants, iteration counts, seeds and placements — that
// are derived together in batched passes over one combined module string and
// drawn into one Geometry whose elements carry their instance id.
// The scene file format is documented in docs/scenes.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/geometry.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {

/// One placed L-system of a scene.
struct LSystemInstance {
  std::filesystem::path file;     ///< the .l file, resolved against the scene's folder
  LSystem lsystem{nullptr};       ///< compiled with the instance's constant overrides
  std::optional<int> iterations;  ///< default: the file's derivation length
  std::optional<uint64_t> seed;   ///< default: the derivation seed + instance index
  ViewSettings view;              ///< the file's view settings with the instance's overrides
  Vec3 position{};                ///< where the turtle's origin lands
  Vec3 rotation_deg{};            ///< rotation about X, then Y, then Z (degrees)
  float scale = 1.0f;             ///< uniform scale of coordinates and widths
  int line = 0;                   ///< line in the scene file (for messages)
};

struct LSystemScene {
  std::vector<LSystemInstance> instances;

  /// Reads a scene file. Throws ParseError (file:line:col) on a malformed
  /// line, and the L-system's ParseError for a malformed model.
  static LSystemScene fromFile(const std::filesystem::path& path);
  /// `base` resolves relative model paths; `filename` is used in diagnostics.
  static LSystemScene fromText(std::string_view text, const std::string& filename,
                               const std::filesystem::path& base);
};

/// The derived scene: one combined module string in which instance k owns
/// modules [begin[k], begin[k+1]).
struct LSystemSceneDerivation {
  ModuleString string;
  std::vector<uint64_t> begin;     ///< instances()+1 entries
  std::vector<DeriveStats> stats;  ///< per instance, as derive() would report it
  int threads = 1;                 ///< threads actually used

  size_t instances() const { return stats.size(); }
  /// Instance k's final string, exactly as derive() returns it for that
  /// instance alone (no param_offsets when the instance is not parametric).
  ModuleString instanceString(size_t k, const LSystemScene& scene) const;
};

/// Derives every instance in batched passes: each pass runs count → scan →
/// rewrite over the combined string, chunks of all instances balanced across
/// threads (not one thread per L-system). Instance k gets the same string as
/// derive() alone with iterations (options.iterations overrides every
/// instance) and seed (its own, else options.seed + k). Memory limits as in
/// derive(), over the combined string.
LSystemSceneDerivation deriveScene(const LSystemScene& scene, const DeriveOptions& options);

/// Draws every instance with its view settings and placement; segments and
/// polygons carry the instance index in `instance`, in instance order.
/// One budget for the whole scene: every instance's homomorphism expansion
/// and geometry are sized before any is drawn, and their sum (twice: the
/// parts and the placed whole) plus the combined string must fit the memory
/// budget (`memory_budget_bytes` 0: defaultMemoryBudget()), each
/// expansion within `max_modules` (0: no limit); else ResourceError, before
/// allocating. Throws Error when the geometry would hold a non-finite number.
Geometry interpretScene(const LSystemScene& scene, const LSystemSceneDerivation& derivation,
                        const Execution& execution, uint64_t seed = 1, uint64_t max_modules = 0,
                        uint64_t memory_budget_bytes = 0);

}  // namespace procgen

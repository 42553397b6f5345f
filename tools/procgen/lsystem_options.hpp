// Options shared by the L-system commands (`lsystem`, `scene`): turtle
// overrides and the geometry outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/geometry.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::cli {

/// --angle --step --width --width-factor --width-scale --tropism --elasticity --view
struct TurtleOptions {
  std::optional<float> angle, step, width, width_factor, width_scale, elasticity;
  std::vector<float> tropism;
  std::string view_file;

  void add(CLI::App& cmd);
  /// Applies the view file, then the flags, on top of `view`.
  void apply(ViewSettings& view) const;
};

/// --max-modules and --memory-budget: the limits of every stage (derivation,
/// homomorphism expansion, interpretation, writers), docs/reliability.md.
struct BudgetOptions {
  uint64_t max_modules = 0;     ///< 0: no module limit
  uint64_t memory_budget = 0;   ///< bytes; 0: defaultMemoryBudget()

  void add(CLI::App& cmd);
  void apply(DeriveOptions& options) const {
    options.max_modules = max_modules;
    options.memory_budget_bytes = memory_budget;
  }
  void apply(InterpretOptions& options) const {
    options.max_modules = max_modules;
    options.memory_budget_bytes = memory_budget;
  }
};

/// Adds --memory-budget SIZE (parseByteSize, at least 1 byte) writing `memory_budget`.
CLI::Option* addMemoryBudgetOption(CLI::App& cmd, uint64_t& memory_budget);

/// "512M", "2G", "1.5GiB", "4096": bytes with an optional binary suffix
/// (K, M, G, T, optionally followed by "iB" or "B"); nullopt when malformed.
std::optional<uint64_t> parseByteSize(const std::string& text);

/// -o (repeatable), --stats-json and the settings of the geometry writers.
struct OutputOptions {
  CommandOutputs files;
  bool cylinders = false;
  int cylinder_sides = 8;
  std::string projection = "front";
  std::vector<int> image_size;
  uint64_t memory_budget = 0;  ///< set from BudgetOptions: the writers' buffers count against it

  void add(CLI::App& cmd);
  /// Throws a usage error for an unsupported extension (before a long run).
  void validate() const;
  /// True when an output is a mesh or an image (so the string must be interpreted).
  bool needsGeometry() const {
    for (const std::string& out : files.paths)
      if (!isStringOutput(out)) return true;
    return false;
  }
  /// Writes every output: the module string for .txt and -, geometry otherwise.
  /// `string` is only called when a string output is requested.
  template <typename StringFn>
  void write(const Geometry& geometry, StringFn&& string) const {
    for (const std::string& out : files.paths) {
      if (isStringOutput(out)) writeOutput(out, string() + "\n");
      else writeGeometry(geometry, out, writeOptions());
    }
  }

  /// The settings of the geometry writers (--cylinders, --image-size, ...).
  WriteOptions writeOptions() const;
  static bool isStringOutput(const std::string& path);
};

}  // namespace procgen::cli

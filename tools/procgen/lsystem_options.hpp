// Options shared by the L-system commands (`lsystem`, `scene`): turtle
// overrides, geometry outputs, and the small JSON helpers of their stats.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
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

/// -o (repeatable) and the settings of the geometry writers.
struct OutputOptions {
  std::vector<std::string> outputs;
  bool cylinders = false;
  int cylinder_sides = 8;
  std::string projection = "front";
  std::vector<int> image_size;

  void add(CLI::App& cmd);
  /// Throws a usage error for an unsupported extension (before a long run).
  void validate() const;
  /// True when an output is a mesh or an image (so the string must be interpreted).
  bool needsGeometry() const {
    for (const std::string& out : outputs)
      if (!isStringOutput(out)) return true;
    return false;
  }
  /// Writes every output: the module string for .txt and -, geometry otherwise.
  /// `string` is only called when a string output is requested.
  template <typename StringFn>
  void write(const Geometry& geometry, StringFn&& string) const {
    for (const std::string& out : outputs) {
      if (isStringOutput(out)) writeTextOutput(out, string() + "\n");
      else writeGeometry(geometry, out, writeOptions());
    }
  }

 private:
  static bool isStringOutput(const std::string& path);
  WriteOptions writeOptions() const;
};

std::string jsonNumber(double v);
std::string jsonString(const std::string& s);
/// [minx, miny, minz, maxx, maxy, maxz]; zeros when empty.
std::string jsonBounds(Bounds b);

}  // namespace procgen::cli

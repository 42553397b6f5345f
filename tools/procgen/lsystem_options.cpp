#include "lsystem_options.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "procgen/input.hpp"

namespace procgen::cli {

namespace {

/// Turtle numbers reach the geometry and the outputs: NaN and ±inf are refused
/// (a NaN width once made the SVG writer loop, issue 16).
const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size() && !std::isfinite(static_cast<float>(v))) return "must be a finite number (of float range), not '" + text + "'";
      } catch (const std::exception&) {
        return {};  // not a number at all: CLI11's conversion reports it
      }
      return {};
    },
    "FINITE");

}  // namespace

std::optional<uint64_t> parseByteSize(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!(v >= 0) || text.find_first_of("xXpP") != std::string::npos) return std::nullopt;  // no hex floats
  std::string unit = text.substr(used);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (!unit.empty()) {
    const std::string units = "KMGT";
    const size_t u = units.find(unit[0]);
    if (u == std::string::npos) {
      if (unit != "B") return std::nullopt;
    } else {
      scale = std::ldexp(1.0, 10 * static_cast<int>(u + 1));
      const std::string rest = unit.substr(1);
      if (!rest.empty() && rest != "B" && rest != "IB") return std::nullopt;
    }
  }
  const double bytes = v * scale;
  if (!(bytes < 18446744073709551615.0)) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

void BudgetOptions::add(CLI::App& cmd) {
  addInteger(cmd, "--max-modules", max_modules,
             "Refuse a string (axiom, any derivation step, the homomorphism expansion) longer than this; "
             "0 (the default): no module limit, only the memory budget")
      ->group("Limits");
  addMemoryBudgetOption(cmd, memory_budget);
}

CLI::Option* addMemoryBudgetOption(CLI::App& cmd, uint64_t& memory_budget) {
  return cmd
      .add_option_function<std::string>(
          "--memory-budget",
          [&memory_budget](const std::string& text) {
            const std::optional<uint64_t> bytes = parseByteSize(text);
            if (!bytes || *bytes == 0)
              throw CLI::ValidationError("--memory-budget", "expected a size such as 512M or 4G, not '" + text + "'");
            memory_budget = *bytes;
          },
          "Memory every stage may use, e.g. 512M, 4G (default: half the RAM, or of ulimit -v or the "
          "cgroup limit when smaller); a run that would need more stops before allocating, exit 2")
      ->type_name("SIZE")
      ->group("Limits");
}

void TurtleOptions::add(CLI::App& cmd) {
  cmd.add_option("--angle", angle, "Default turn angle in degrees")->check(kFinite)->group("Turtle");
  cmd.add_option("--step", step, "Default step length")->check(kFinite)->group("Turtle");
  cmd.add_option("--width", width, "Initial line width (model units)")->check(kFinite)->group("Turtle");
  cmd.add_option("--width-factor", width_factor, "Factor applied by ! without a parameter")
      ->check(kFinite)
      ->group("Turtle");
  cmd.add_option("--width-scale", width_scale, "Multiply every width (initial and !(w)), e.g. cpfg pixels to model units")
      ->check(kFinite)
      ->group("Turtle");
  cmd.add_option("--tropism", tropism, "Tropism vector x y z")
      ->expected(3)
      ->delimiter(',')
      ->check(kFinite)
      ->group("Turtle");
  cmd.add_option("--elasticity", elasticity, "Tropism elasticity (0 disables tropism)")
      ->check(kFinite)
      ->group("Turtle");
  cmd.add_option("--view", view_file, "cpfg view file (.v) with angle/width/tropism settings")
      ->check(CLI::ExistingFile)
      ->group("Turtle");
}

void TurtleOptions::apply(ViewSettings& view) const {
  if (!view_file.empty()) {
    applyViewFile(readInputFile(view_file, "view file"), view_file, view);
  }
  if (angle) view.angle_deg = *angle;
  if (step) view.step = *step;
  if (width) view.initial_width = *width;
  if (width_factor) view.width_factor = *width_factor;
  if (width_scale) view.width_scale = *width_scale;
  if (elasticity) view.elasticity = *elasticity;
  if (!tropism.empty()) view.tropism = {tropism[0], tropism[1], tropism[2]};
}

void OutputOptions::add(CLI::App& cmd) {
  files.addOutputs(cmd, "Output file; repeat for several");
  // An .obj also writes its .mtl: part of the clash check (output_options.hpp).
  files.files_of = [this](const std::string& path) {
    return isStringOutput(path) ? std::vector<std::filesystem::path>{path} : geometryFiles(path, writeOptions());
  };
  files.addStatsJson(cmd, "Write statistics as JSON to PATH, or - for stdout");
  cmd.add_flag("--cylinders", cylinders, "Meshes: segments as cylinders instead of lines")->group("Output");
  addInteger(cmd, "--cylinder-sides", cylinder_sides, "Sides of each cylinder", 3, 64)
      ->capture_default_str()
      ->group("Output");
  cmd.add_option("--projection", projection, "SVG/PNG view: front, side, top or iso")
      ->check(CLI::IsMember({"front", "side", "top", "iso"}))
      ->capture_default_str()
      ->group("Output");
  addInteger(cmd, "--image-size", image_size, "PNG/SVG size W,H in pixels", 16, 16384)
      ->expected(2)
      ->delimiter(',')
      ->group("Output");
}

bool OutputOptions::isStringOutput(const std::string& path) { return path == "-" || extensionOf(path) == ".txt"; }

void OutputOptions::validate() const {
  for (const std::string& out : files.paths) {
    if (!isStringOutput(out) && !isGeometryExtension(extensionOf(out)))
      throw Error("unsupported output '" + out + "': use .txt (module string) or " +
                      std::string(geometryExtensionList()) + ", or - for the string on stdout",
                  ExitCode::kUsage);
  }
}

WriteOptions OutputOptions::writeOptions() const {
  WriteOptions w;
  w.cylinders = cylinders;
  w.cylinder_sides = cylinder_sides;
  w.projection = *parseProjection(projection);
  w.memory_budget_bytes = memory_budget;
  if (image_size.size() == 2) {
    w.width = image_size[0];
    w.height = image_size[1];
  }
  return w;
}

}  // namespace procgen::cli

#include "lsystem_options.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace procgen::cli {

void TurtleOptions::add(CLI::App& cmd) {
  cmd.add_option("--angle", angle, "Default turn angle in degrees")->group("Turtle");
  cmd.add_option("--step", step, "Default step length")->group("Turtle");
  cmd.add_option("--width", width, "Initial line width (model units)")->group("Turtle");
  cmd.add_option("--width-factor", width_factor, "Factor applied by ! without a parameter")->group("Turtle");
  cmd.add_option("--width-scale", width_scale, "Multiply every width (initial and !(w)), e.g. cpfg pixels to model units")
      ->group("Turtle");
  cmd.add_option("--tropism", tropism, "Tropism vector x y z")->expected(3)->delimiter(',')->group("Turtle");
  cmd.add_option("--elasticity", elasticity, "Tropism elasticity (0 disables tropism)")->group("Turtle");
  cmd.add_option("--view", view_file, "cpfg view file (.v) with angle/width/tropism settings")
      ->check(CLI::ExistingFile)
      ->group("Turtle");
}

void TurtleOptions::apply(ViewSettings& view) const {
  if (!view_file.empty()) {
    std::ifstream in(view_file, std::ios::binary);
    if (!in) throw Error("cannot read view file '" + view_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    applyViewFile(text.str(), view_file, view);
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
  files.addStatsJson(cmd, "Write statistics as JSON to PATH, or - for stdout");
  cmd.add_flag("--cylinders", cylinders, "Meshes: segments as cylinders instead of lines")->group("Output");
  cmd.add_option("--cylinder-sides", cylinder_sides, "Sides of each cylinder")
      ->check(CLI::Range(3, 64))
      ->capture_default_str()
      ->group("Output");
  cmd.add_option("--projection", projection, "SVG/PNG view: front, side, top or iso")
      ->check(CLI::IsMember({"front", "side", "top", "iso"}))
      ->capture_default_str()
      ->group("Output");
  cmd.add_option("--image-size", image_size, "PNG/SVG size W,H in pixels")
      ->expected(2)
      ->delimiter(',')
      ->check(CLI::Range(16, 16384))
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
  if (image_size.size() == 2) {
    w.width = image_size[0];
    w.height = image_size[1];
  }
  return w;
}

}  // namespace procgen::cli

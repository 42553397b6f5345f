// Compiles a genome into the chaos game's tables (flame/chaos_program.hpp).
// Selection follows flam3.c flam3_create_chaos_distrib; the colour map
// follows rect.c (dmap).
#include "flame/chaos_program.hpp"

#include <cmath>
#include <string>

#include "procgen/error.hpp"

namespace procgen::flame {
namespace {

[[noreturn]] void fail(const FlameGenome& genome, const std::string& message) {
  std::string where = genome.name.empty() ? "flame" : "flame '" + genome.name + "'";
  if (genome.source_line > 0) where += " (line " + std::to_string(genome.source_line) + ")";
  throw Error(where + ": " + message, ExitCode::kBadInput);
}

// One row: entry i is the xform whose cumulative weight interval holds
// i · total / grain (flam3's walk, in double as flam3).
void fillRow(const FlameGenome& genome, int previous, uint16_t* row) {
  const size_t n = genome.xforms.size();
  auto weightOf = [&](size_t j) {
    double w = genome.xforms[j].weight;
    if (previous >= 0) {
      const std::vector<double>& chaos = genome.xforms[static_cast<size_t>(previous)].chaos;
      if (j < chaos.size()) w *= chaos[j];
    }
    return w;
  };
  double total = 0.0;
  for (size_t j = 0; j < n; ++j) {
    const double w = weightOf(j);
    if (!(w >= 0.0) || !std::isfinite(w))
      fail(genome, "xform " + std::to_string(j) + " has weight " + std::to_string(w) +
                       (previous >= 0 ? " after xform " + std::to_string(previous) + " (chaos)" : std::string()) +
                       "; weights must be finite and non-negative");
    total += w;
  }
  if (total == 0.0)
    fail(genome, previous < 0 ? std::string("all xform weights are 0; nothing to iterate")
                              : "the chaos row of xform " + std::to_string(previous) +
                                    " gives every xform weight 0; nothing can follow it");
  const double step = total / kSelectionGrain;
  size_t j = 0;
  double t = weightOf(0), r = 0.0;
  for (uint32_t i = 0; i < kSelectionGrain; ++i) {
    while (r >= t && j + 1 < n) t += weightOf(++j);
    row[i] = static_cast<uint16_t>(j);
    r += step;
  }
}

float plotWeight(float opacity) {
  if (opacity == 0.0f) return 0.0f;
  return static_cast<float>(std::pow(10.0, -std::log(1.0 / opacity) / std::log(2.0)));
}

}  // namespace

ChaosProgram compileChaosProgram(const FlameGenome& genome) {
  if (genome.xforms.empty()) fail(genome, "the genome has no <xform>");
  if (genome.xforms.size() > 65535) fail(genome, "more than 65535 xforms");
  ChaosProgram program;
  program.table = compileXforms(genome);
  program.palette_mode = genome.palette_mode;
  program.palette.resize(256 * 4);
  for (size_t i = 0; i < 256; ++i)
    for (size_t k = 0; k < 4; ++k) program.palette[i * 4 + k] = static_cast<float>(genome.palette[i][k] * 255.0);

  const size_t n = genome.xforms.size();
  for (const FlameXform& xf : genome.xforms)
    if (!xf.chaos.empty()) program.has_xaos = true;
  program.selection_rows = program.has_xaos ? static_cast<int>(n) + 1 : 1;
  program.selection.resize(static_cast<size_t>(program.selection_rows) * kSelectionGrain);
  fillRow(genome, -1, program.selection.data());
  if (program.has_xaos)
    for (size_t i = 0; i < n; ++i) fillRow(genome, static_cast<int>(i), program.selection.data() + (i + 1) * kSelectionGrain);

  double total = 0.0;
  for (const FlameXform& xf : genome.xforms) total += xf.weight;
  for (const FlameXform& xf : genome.xforms) program.weights.push_back(xf.weight / total);
  for (int i = 0; i < program.table.iterated_count; ++i)
    program.plot_weights.push_back(plotWeight(program.table.xforms[static_cast<size_t>(i)].opacity));
  return program;
}

}  // namespace procgen::flame

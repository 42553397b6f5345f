// Everything the chaos game reads, compiled once per render from a genome:
// the xform tables (flame/xform_table.hpp), the palette as flam3's colour map
// (rect.c "dmap": palette × 255, alpha too), and the xform selection tables
// (flam3.c flam3_create_xform_distrib: 16384 entries per row mapping a
// random number's low 14 bits to an xform index, row 0 by weight, row 1 + i
// after xform i when the genome has xaos). The same tables serve every
// backend, so all pick xforms with the same quantisation as flam3.
#pragma once

#include <cstdint>
#include <vector>

#include "flame/xform_table.hpp"
#include "procgen/flame.hpp"

namespace procgen::flame {

inline constexpr uint32_t kSelectionGrain = 16384;  // flam3's CHOOSE_XFORM_GRAIN

struct ChaosProgram {
  XformTable table;
  std::vector<float> palette;  ///< 256 × RGBA, 0..255 (alpha premultiplied as flam3)
  FlamePaletteMode palette_mode = FlamePaletteMode::kStep;
  /// rows × kSelectionGrain xform indices; rows = 1 without xaos, 1 + xforms with.
  std::vector<uint16_t> selection;
  int selection_rows = 1;
  bool has_xaos = false;
  /// Normalised selection weights of the iterated xforms (row 0 as
  /// probabilities): the presorted method's share of points per xform.
  std::vector<double> weights;
  /// flam3's plotted weight of each iterated xform's points: interpolation.c
  /// adjust_percentage(opacity) = 10^log2(opacity) (variations.c
  /// vis_adjusted). PgFlameXform::opacity stays raw: it is also the final
  /// xform's probability of being applied.
  std::vector<float> plot_weights;
};

/// Throws Error (ExitCode::kBadInput) naming the genome's line for a genome
/// that cannot be iterated: no xforms, a negative or non-finite weight, all
/// weights 0, more than 65535 xforms, or an xaos row whose weights sum to 0
/// (flam3: "cannot iterate empty flame").
ChaosProgram compileChaosProgram(const FlameGenome& genome);

}  // namespace procgen::flame

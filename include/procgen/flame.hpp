// procgen flames: flam3 genomes (the XML every flame tool reads and writes),
// the variation catalogue, and the reader.
//
// Paper: "Fractal flames on the GPU" (Schied et al., shared/seeds/003_*.txt);
// the format and semantics follow flam3 3.1.1 (shared/reference/flam3/).
// Rendering is in procgen/flame_render.hpp.
//
// A genome is kept as flam3 reads it: doubles, flam3's attribute names and
// defaults (flam3.c clear_cp, variations.c initialize_xforms), the palette
// already resolved to 256 colours. The renderer compiles it to flat float
// tables for the kernels (src/flame/).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/error.hpp"

namespace procgen {

// --- The variation catalogue (flam3's 99, in flam3's index order) ----------

inline constexpr int kFlameVariationCount = 99;
/// Variation parameters across all variations (flam3's per-xform attributes).
inline constexpr int kFlameParamCount = 109;

/// "linear", "sinusoidal", … "mobius"; index 0 .. kFlameVariationCount-1.
std::string_view flameVariationName(int index);
/// The index of a variation name (exact, case-sensitive, as flam3); nullopt if unknown.
std::optional<int> flameVariationIndex(std::string_view name);

struct FlameParamInfo {
  std::string_view name;   ///< XML attribute, e.g. "blob_low"
  std::string_view alias;  ///< a second accepted spelling ("oscope_damping", "Re_A"), or empty
  int variation;           ///< the variation it belongs to
  double default_value;    ///< flam3's default (initialize_xforms)
};
/// All parameters, grouped by variation in index order; a parameter's
/// position in this table is its index in FlameXform::params.
std::span<const FlameParamInfo> flameParams();
/// The index of a parameter attribute (name or alias); nullopt if not a parameter.
std::optional<int> flameParamIndex(std::string_view name);

// --- The genome ------------------------------------------------------------

/// An affine map x' = a·x + b·y + c, y' = d·x + e·y + f. The XML attributes
/// `coefs` and `post` list it as "a d b e c f" (flam3's c[0][0] c[0][1]
/// c[1][0] c[1][1] c[2][0] c[2][1]).
struct FlameAffine {
  double a = 1, b = 0, c = 0, d = 0, e = 1, f = 0;
  bool isIdentity() const { return a == 1 && b == 0 && c == 0 && d == 0 && e == 1 && f == 0; }
};

struct FlameVariationTerm {
  int index = 0;        ///< into the catalogue
  double weight = 0.0;  ///< non-zero
};

struct FlameXform {
  double weight = 0.0;       ///< selection weight (`weight`); unused on the final xform
  double color = 0.0;        ///< palette coordinate 0..1
  double color_speed = 0.5;  ///< new colour = color_speed·color + (1 − color_speed)·old (`symmetry` maps here)
  double animate = 1.0;      ///< kept for writers; rendering ignores it
  double opacity = 1.0;      ///< weight of this xform's points when plotted (0: never plotted)
  FlameAffine affine;        ///< `coefs`, applied before the variations
  FlameAffine post;          ///< `post`, applied to the variation sum
  std::vector<FlameVariationTerm> variations;  ///< non-zero weights, ascending index
  std::array<double, kFlameParamCount> params{};  ///< by flameParams() index; defaults filled in
  /// `chaos` (xaos): multipliers on the next xform's weight after this one;
  /// entries past the end are 1. Empty when the genome has none.
  std::vector<double> chaos;
  int source_line = 0;  ///< line of the <xform> element (for messages)
  /// True for the xforms a <symmetry kind> element added (they have no
  /// <xform> element of their own; source_line is the <flame>'s).
  bool added_by_symmetry = false;
};

enum class FlamePaletteMode : uint8_t { kStep, kLinear };

/// flam3's spatial filter kernels (filters.c), by `filter_shape` name.
enum class FlameFilterShape : uint8_t {
  kGaussian, kHermite, kBox, kTriangle, kBell, kBspline, kMitchell,
  kBlackman, kCatrom, kHanning, kHamming, kLanczos3, kLanczos2, kQuadratic,
};
std::string_view flameFilterShapeName(FlameFilterShape shape);
std::optional<FlameFilterShape> parseFlameFilterShape(std::string_view name);

/// One <flame> element: a control point, with flam3's defaults (clear_cp).
struct FlameGenome {
  std::string name;
  std::string version;
  int source_line = 0;  ///< line of the <flame> element
  double time = 0.0;

  // Camera and sampling.
  int width = 100, height = 100;         ///< `size`
  double center_x = 0.0, center_y = 0.0; ///< `center`: world point at the image centre
  double scale = 50.0;                   ///< `scale`: pixels per world unit
  double zoom = 0.0;                     ///< ppu × 2^zoom, density × 4^zoom
  double rotate = 0.0;                   ///< degrees about the centre
  double quality = 1.0;                  ///< plotted samples per output pixel
  int supersample = 1;                   ///< `supersample` / `oversample`
  int passes = 1;
  double filter_radius = 0.5;            ///< `filter`, output pixels
  FlameFilterShape filter_shape = FlameFilterShape::kGaussian;
  int temporal_samples = 1000;
  std::string temporal_filter_type = "box";
  double temporal_filter_width = 1.0, temporal_filter_exp = 0.0;

  // Tone mapping.
  std::array<double, 3> background{0.0, 0.0, 0.0};  ///< 0..1
  double brightness = 4.0;
  double contrast = 1.0;   ///< read and kept; flam3's parser ignores it on input, so do we when rendering
  double gamma = 4.0;
  double gamma_threshold = 0.01;
  double vibrancy = 1.0;
  double highlight_power = -1.0;
  double estimator_radius = 9.0, estimator_minimum = 0.0, estimator_curve = 0.4;

  // Colour.
  double hue = 0.0;  ///< palette hue rotation, fraction of a turn (already applied to `palette`)
  int palette_index = -1;  ///< `palette=N` from flam3-palettes.xml, or −1
  /// RGBA in 0..1, alpha premultiplied as flam3 stores it.
  std::array<std::array<double, 4>, 256> palette{};
  FlamePaletteMode palette_mode = FlamePaletteMode::kStep;

  // Animation attributes, read and kept (a still render does not use them).
  std::string interpolation = "linear";
  std::string interpolation_type = "log";
  std::string palette_interpolation = "hsv_circular";
  double hsv_rgb_palette_blend = 0.0;

  int solo_xform = -1;  ///< `soloxform`: render only this xform (the others plot nothing)
  int symmetry_kind = 0;  ///< `<symmetry kind>` as read (its xforms are already appended)
  std::vector<FlameXform> xforms;
  std::optional<FlameXform> final_xform;
};

// --- Reading ---------------------------------------------------------------

struct FlameReadOptions {
  /// Unknown variation attributes: false → ParseError naming it and its
  /// line; true → a warning through `warn` and the attribute is ignored (flam3).
  bool skip_unknown = false;
  /// flam3-palettes.xml for `palette=N`; empty: $flam3_palettes, then
  /// /usr/share/flam3/flam3-palettes.xml. Missing file + palette=N → error.
  std::filesystem::path palettes_file;
  /// Receives warnings ("file:line: warning: …"); null: dropped.
  std::function<void(const std::string&)> warn;
};

/// Every <flame> element in `xml` (at any depth: <pick>, <test>, <flames>…),
/// in document order. `file_name` is used in messages. Malformed XML, bad
/// numbers, out-of-range values, unknown variations (unless skip_unknown)
/// and files without a <flame> throw ParseError ("file:line:col: error: …",
/// ExitCode::kBadInput). Never allocates beyond a small multiple of the text.
std::vector<FlameGenome> parseFlameGenomes(std::string_view xml, std::string_view file_name,
                                           const FlameReadOptions& options = {});

/// The diagnostic for a flame the renderer refuses (its size, quality,
/// filter or memory, `message`): a ParseError at the line of the flame's
/// <flame> element in `text` (the file parseFlameGenomes read), the column of
/// the tag, the message prefixed "flame INDEX 'NAME': ".
ParseError flameGenomeError(std::string_view file_name, std::string_view text, const FlameGenome& genome,
                            int index, const std::string& message);

/// readInputFile (procgen/input.hpp) + parseFlameGenomes.
std::vector<FlameGenome> readFlameFile(const std::filesystem::path& path,
                                       const FlameReadOptions& options = {});

}  // namespace procgen

// Palettes of flam3 genomes: the colour conversions, the palette library
// (flam3-palettes.xml) with hue rotation, the old two-palette blend, the hex
// colour lists and the filling of missing entries, as flam3's palettes.c,
// interpolation.c and parser.c do them. Used by the genome reader.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace procgen::flame {

using PaletteColor = std::array<double, 4>;  ///< RGBA 0..1
using Palette = std::array<PaletteColor, 256>;

/// A palette being read: entries a genome has not given yet are `set == false`.
struct PaletteDraft {
  Palette colors{};
  std::array<bool, 256> set{};
};

/// palettes.c rgb2hsv / hsv2rgb: rgb 0..1, h 0..6, s and v 0..1. hsvToRgb
/// reduces any finite hue into 0..6 (flam3 loops; a huge hue hangs it) and
/// reads a non-finite hue as 0.
void rgbToHsv(const double rgb[3], double hsv[3]);
void hsvToRgb(const double hsv[3], double rgb[3]);

/// parser.c flam3_interp_missing_colors: every entry not set is interpolated
/// between its nearest set neighbours, wrapping around the ends; a palette
/// with no entry set stays black and transparent. Returns false in that case.
bool fillMissingColors(PaletteDraft& palette);

/// interpolation.c interpolate_cmap: blend of two palettes in HSV, taking the
/// short way round the hue circle; `blend` 0 gives `p0`.
Palette blendPalettes(const Palette& p0, const Palette& p1, double blend);

/// How a hex colour list is written.
enum class HexLayout {
  kRgb,      ///< <palette format="RGB">: RRGGBB per entry
  kRgba,     ///< <palette format="RGBA">: RRGGBBAA (alpha stored as given, not premultiplied: flam3)
  kZeroRgb,  ///< <colors data> and the library: 00RRGGBB
};
struct HexError {
  size_t index = 0;  ///< byte of `text` where it went wrong
  std::string message;
};
/// Reads exactly `count` (1..256) entries into palette entries 0..count-1,
/// whitespace allowed between entries (parser.c flam3_parse_hexformat_colors,
/// strict: only hex digits inside an entry, nothing after the last).
std::optional<HexError> parseHexColors(std::string_view text, int count, HexLayout layout, PaletteDraft& out);

/// flam3-palettes.xml: `<palette number="N" data="00RRGGBB…"/>` entries.
class PaletteLibrary {
 public:
  /// The library at `path`, read once per process and reused while the
  /// file's size and time are unchanged. Throws procgen::Error when it cannot
  /// be read and ParseError when it is not XML. Thread-safe.
  static std::shared_ptr<const PaletteLibrary> load(const std::filesystem::path& path);

  /// The 256 colours of the first palette numbered `number`, each hue-rotated
  /// by `hue` turns in HSV (palettes.c flam3_get_palette), alpha 1; nullopt
  /// when there is none. A malformed data attribute throws ParseError at it.
  std::optional<Palette> colors(int number, double hue) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Entry {
    int number = 0;
    size_t data_offset = 0;  ///< of the data value in text_
    std::string data;
  };
  std::filesystem::path path_;
  std::string text_;
  std::vector<Entry> entries_;
};

/// The library `palette=N` reads: `option` when given, else $flam3_palettes,
/// else /usr/share/flam3/flam3-palettes.xml (Debian's flam3-palette).
std::filesystem::path palettesPath(const std::filesystem::path& option);

}  // namespace procgen::flame

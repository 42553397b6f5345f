// The flam3 genome reader (procgen/flame.hpp: parseFlameGenomes).
// Follows flam3 3.1.1's parser.c (scan_for_flame_nodes, parse_flame_element,
// parse_xform_xml), flam3.c (clear_cp defaults, flam3_add_xforms,
// flam3_add_symmetry), variations.c (initialize_xforms) and palettes.c; the
// format is summarised in shared/reference/flam3/FLAM3_SPEC.md and in
// docs/flames.md ("Genomes"), which also lists where we are stricter.
//
// Stages: pugixml parses the text in place (flame/xml_source.hpp, offsets →
// file:line:col); every <flame> at any depth is read in document order; its
// attributes, then its children in order (palette forms, <symmetry>, <xform>,
// <finalxform>); then the palette is resolved (palette=N from the library
// overrides all, then missing entries are interpolated) and chaos rows and
// soloxform are checked against the final xform count.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "flame/palettes.hpp"
#include "flame/xml_source.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/flame.hpp"
#include "procgen/input.hpp"

namespace procgen {
namespace {

using flame::XmlSource;

constexpr int kMaxSide = 1 << 20;  // image side and supersample: beyond is absurd
constexpr int kMaxInt = 2147483647;

constexpr std::array<std::string_view, 14> kFilterShapeNames = {
    "gaussian", "hermite", "box",     "triangle", "bell",     "bspline",  "mitchell",
    "blackman", "catrom",  "hanning", "hamming",  "lanczos3", "lanczos2", "quadratic",
};

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

struct Token {
  std::string_view text;
  size_t index = 0;  // in the attribute value
};

std::vector<Token> splitWords(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isSpace(s[i])) ++i;
    if (i >= s.size()) break;
    const size_t start = i;
    while (i < s.size() && !isSpace(s[i])) ++i;
    out.push_back({s.substr(start, i - start), start});
  }
  return out;
}

// Strict numbers: the whole token, C locale, an optional leading '+', finite.
// flam3 uses strtod/strtol and accepts hex floats, inf and nan; we do not.
bool parseDouble(std::string_view s, double& out) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), out, std::chars_format::general);
  return err == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

bool parseInteger(std::string_view s, long long& out) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), out);
  return err == std::errc() && end == s.data() + s.size();
}

uint64_t genomeBytes(const FlameGenome& g) {
  uint64_t bytes = sizeof(FlameGenome) + g.name.size() + g.version.size();
  for (const FlameXform& xf : g.xforms)
    bytes += sizeof(FlameXform) + xf.chaos.size() * sizeof(double) +
             xf.variations.size() * sizeof(FlameVariationTerm);
  if (g.final_xform)
    bytes += sizeof(FlameXform) + g.final_xform->variations.size() * sizeof(FlameVariationTerm);
  return bytes;
}

/// Per-document state: the source, the options, the palette library once
/// needed and the symmetry allowance.
class GenomeReader {
 public:
  GenomeReader(const XmlSource& source, const FlameReadOptions& options)
      : source_(source), options_(options), symmetry_allowance_(4096 + source.text().size() / 8) {}

  std::vector<FlameGenome> readAll();

 private:
  // --- attribute values ---------------------------------------------------
  std::string describe(pugi::xml_node element, pugi::xml_attribute a) const {
    return std::string("<") + element.name() + "> attribute " + a.name() + "=\"" + a.value() + "\"";
  }
  [[noreturn]] void failValue(pugi::xml_node element, pugi::xml_attribute a, size_t index,
                              const std::string& why) const {
    source_.fail(source_.valueOffset(a, index), describe(element, a) + ": " + why);
  }
  void warn(size_t offset, const std::string& message) const {
    if (options_.warn) options_.warn(source_.where(offset) + ": warning: " + message);
  }

  std::vector<double> numbers(pugi::xml_node element, pugi::xml_attribute a, size_t min_count,
                              size_t max_count) const {
    const std::string_view value = a.value();
    const std::vector<Token> words = splitWords(value);
    if (words.size() < min_count || words.size() > max_count) {
      const std::string expected = min_count == max_count
                                       ? std::to_string(min_count)
                                       : std::to_string(min_count) + " or " + std::to_string(max_count);
      failValue(element, a, words.size() > max_count ? words[max_count].index : value.size(),
                "expected " + expected + (max_count == 1 ? " number" : " numbers") + ", found " +
                    std::to_string(words.size()));
    }
    std::vector<double> out(words.size());
    for (size_t i = 0; i < words.size(); ++i)
      if (!parseDouble(words[i].text, out[i]))
        failValue(element, a, words[i].index, "'" + std::string(words[i].text) + "' is not a finite number");
    return out;
  }
  double number(pugi::xml_node element, pugi::xml_attribute a) const { return numbers(element, a, 1, 1)[0]; }
  double numberAtLeast(pugi::xml_node element, pugi::xml_attribute a, double min, bool inclusive) const {
    const double v = number(element, a);
    if (inclusive ? !(v >= min) : !(v > min))
      failValue(element, a, firstWord(a), std::string("must be ") + (inclusive ? ">= " : "> ") + fmt(min));
    return v;
  }
  int integer(pugi::xml_node element, pugi::xml_attribute a, long long min, long long max) const {
    const std::vector<Token> words = splitWords(a.value());
    if (words.size() != 1)
      failValue(element, a, words.size() > 1 ? words[1].index : 0,
                "expected 1 integer, found " + std::to_string(words.size()));
    long long v = 0;
    if (!parseInteger(words[0].text, v))
      failValue(element, a, words[0].index, "'" + std::string(words[0].text) + "' is not an integer");
    if (v < min || v > max)
      failValue(element, a, words[0].index, "must be " + std::to_string(min) + " .. " + std::to_string(max));
    return static_cast<int>(v);
  }
  static size_t firstWord(pugi::xml_attribute a) {
    const std::vector<Token> words = splitWords(a.value());
    return words.empty() ? 0 : words[0].index;
  }
  static std::string fmt(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  // --- elements -----------------------------------------------------------
  FlameGenome readFlame(pugi::xml_node node);
  void readFlameAttributes(pugi::xml_node node, FlameGenome& genome, pugi::xml_attribute& palette_attr,
                           pugi::xml_attribute& solo_attr);
  FlameXform readXform(pugi::xml_node node, bool final_xform, int flam3_slot,
                       pugi::xml_attribute& chaos_attr);
  void readColor(pugi::xml_node node, flame::PaletteDraft& palette) const;
  void readColors(pugi::xml_node node, flame::PaletteDraft& palette) const;
  void readPalette(pugi::xml_node node, flame::PaletteDraft& palette);
  void readSymmetry(pugi::xml_node node, FlameGenome& genome);
  [[noreturn]] void failElement(pugi::xml_node node, const std::string& why) const {
    source_.fail(source_.offsetOf(node), "<" + std::string(node.name()) + ">: " + why);
  }
  void requireAttributes(pugi::xml_node node) const {
    if (!node.first_attribute()) failElement(node, "element without attributes (flam3 refuses it)");
  }
  const flame::PaletteLibrary& library(pugi::xml_node element, pugi::xml_attribute a);
  flame::Palette libraryPalette(pugi::xml_node element, pugi::xml_attribute a, int number, double hue);

  const XmlSource& source_;
  const FlameReadOptions& options_;
  std::shared_ptr<const flame::PaletteLibrary> library_;
  size_t symmetry_allowance_;  // xforms <symmetry> may still add in this document
};

std::vector<FlameGenome> GenomeReader::readAll() {
  std::vector<FlameGenome> genomes;
  uint64_t held_outside = 0;  // xforms, chaos rows, strings: outside the vector
  // Depth-first over the elements without recursion; a <flame> is read and
  // not entered (scan_for_flame_nodes).
  pugi::xml_node node = source_.document().first_child();
  while (node) {
    if (node.type() == pugi::node_element && std::string_view(node.name()) == "flame") {
      FlameGenome genome = readFlame(node);
      // A genome is ~1000 times its shortest text (the 256-colour palette):
      // the memory budget bounds what a file of empty <flame/>s may take,
      // the vector's growth included (old and new arrays live together).
      const uint64_t outside = genomeBytes(genome) - sizeof(FlameGenome);
      size_t capacity = genomes.capacity();
      uint64_t growing = 0;
      if (genomes.size() == capacity) {
        growing = uint64_t{capacity} * sizeof(FlameGenome);
        capacity = std::max<size_t>(4, capacity * 2);
      }
      requireMemory("flame genomes", uint64_t{capacity} * sizeof(FlameGenome) + growing + outside, 0,
                    held_outside);
      genomes.reserve(capacity);
      genomes.push_back(std::move(genome));
      held_outside += outside;
    } else if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling()) node = node.parent();
    if (node) node = node.next_sibling();
  }
  if (genomes.empty()) {
    const pugi::xml_node root = source_.document().document_element();
    source_.fail(root ? source_.offsetOf(root) : 0, "no <flame> element in the document");
  }
  return genomes;
}

void GenomeReader::readFlameAttributes(pugi::xml_node node, FlameGenome& g, pugi::xml_attribute& palette_attr,
                                       pugi::xml_attribute& solo_attr) {
  for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
    const std::string_view name = a.name();
    const std::string_view value = a.value();
    if (name == "time") {
      g.time = number(node, a);
    } else if (name == "hsv_rgb_palette_blend") {
      g.hsv_rgb_palette_blend = number(node, a);
    } else if (name == "interpolation") {
      // Animation only: an unknown value keeps the default, as flam3 (with its warning).
      if (value == "linear" || value == "smooth")
        g.interpolation = value;
      else
        warn(source_.offsetOf(a), describe(node, a) + ": unknown interpolation; 'linear' kept");
    } else if (name == "palette_interpolation") {
      if (value == "hsv" || value == "sweep" || value == "hsv_circular" || value == "rgb")
        g.palette_interpolation = value;
      else
        warn(source_.offsetOf(a), describe(node, a) + ": unknown palette interpolation; 'hsv_circular' kept");
    } else if (name == "interpolation_type" || name == "interpolation_space") {
      if (value == "linear" || value == "log" || value == "old" || value == "older")
        g.interpolation_type = value;
      else
        warn(source_.offsetOf(a), describe(node, a) + ": unknown interpolation type; 'log' kept");
    } else if (name == "name") {
      g.name = value;
      for (char& c : g.name)
        if (isSpace(c)) c = '_';
    } else if (name == "version") {
      g.version = value;
    } else if (name == "palette") {
      g.palette_index = integer(node, a, -1, kMaxInt);  // -1: flam3's "none"
      palette_attr = a;
    } else if (name == "size") {
      const std::vector<Token> words = splitWords(value);
      if (words.size() != 2)
        failValue(node, a, words.size() > 2 ? words[2].index : 0,
                  "expected 2 integers (width height), found " + std::to_string(words.size()));
      for (size_t i = 0; i < 2; ++i) {
        long long v = 0;
        if (!parseInteger(words[i].text, v))
          failValue(node, a, words[i].index, "'" + std::string(words[i].text) + "' is not an integer");
        if (v < 1 || v > kMaxSide)
          failValue(node, a, words[i].index,
                    std::string(i == 0 ? "width" : "height") + " must be 1 .. " + std::to_string(kMaxSide));
        (i == 0 ? g.width : g.height) = static_cast<int>(v);
      }
    } else if (name == "center") {
      const std::vector<double> c = numbers(node, a, 2, 2);
      g.center_x = c[0];
      g.center_y = c[1];
    } else if (name == "scale") {
      g.scale = number(node, a);
    } else if (name == "rotate") {
      g.rotate = number(node, a);
    } else if (name == "zoom") {
      g.zoom = number(node, a);
    } else if (name == "oversample" || name == "supersample") {
      g.supersample = integer(node, a, 1, kMaxSide);
    } else if (name == "filter") {
      g.filter_radius = numberAtLeast(node, a, 0.0, true);
    } else if (name == "filter_shape") {
      const auto shape = parseFlameFilterShape(value);
      if (!shape)
        failValue(node, a, 0,
                  "unknown filter shape (gaussian, hermite, box, triangle, bell, bspline, "
                  "mitchell, blackman, catrom, hanning, hamming, lanczos3, lanczos2, quadratic)");
      g.filter_shape = *shape;
    } else if (name == "temporal_filter_type") {
      if (value == "box" || value == "gaussian" || value == "exp")
        g.temporal_filter_type = value;
      else
        warn(source_.offsetOf(a), describe(node, a) + ": unknown temporal filter; 'box' kept");
    } else if (name == "temporal_filter_width") {
      g.temporal_filter_width = number(node, a);
    } else if (name == "temporal_filter_exp") {
      g.temporal_filter_exp = number(node, a);
    } else if (name == "palette_mode") {
      if (value == "step")
        g.palette_mode = FlamePaletteMode::kStep;
      else if (value == "linear")
        g.palette_mode = FlamePaletteMode::kLinear;
      else
        failValue(node, a, 0, "palette_mode must be step or linear");
    } else if (name == "quality") {
      g.quality = numberAtLeast(node, a, 0.0, true);
    } else if (name == "passes") {
      g.passes = integer(node, a, 1, kMaxInt);
    } else if (name == "temporal_samples") {
      g.temporal_samples = integer(node, a, 1, kMaxInt);
    } else if (name == "background") {
      const std::vector<double> c = numbers(node, a, 3, 3);
      g.background = {c[0], c[1], c[2]};
    } else if (name == "brightness") {
      g.brightness = number(node, a);
    } else if (name == "contrast") {
      g.contrast = number(node, a);  // kept; flam3's parser ignores it
    } else if (name == "gamma") {
      g.gamma = numberAtLeast(node, a, 0.0, false);
    } else if (name == "highlight_power") {
      g.highlight_power = number(node, a);
    } else if (name == "vibrancy") {
      g.vibrancy = number(node, a);
    } else if (name == "hue") {
      g.hue = std::fmod(number(node, a), 1.0);
    } else if (name == "estimator_radius") {
      g.estimator_radius = numberAtLeast(node, a, 0.0, true);
    } else if (name == "estimator_minimum") {
      g.estimator_minimum = numberAtLeast(node, a, 0.0, true);
    } else if (name == "estimator_curve") {
      g.estimator_curve = number(node, a);
    } else if (name == "gamma_threshold") {
      g.gamma_threshold = numberAtLeast(node, a, 0.0, true);
    } else if (name == "soloxform") {
      const int solo = integer(node, a, -kMaxInt, kMaxInt);
      g.solo_xform = solo < 0 ? -1 : solo;
      solo_attr = a;
    }
    // Any other attribute is ignored, as flam3 does (writers add their own:
    // url, nick, plugins, new_linear, …).
  }
}

FlameGenome GenomeReader::readFlame(pugi::xml_node node) {
  FlameGenome g;
  g.source_line = source_.line(source_.offsetOf(node));
  // flam3 refuses a <flame> without attributes; all defaults is a valid genome.
  pugi::xml_attribute palette_attr, solo_attr;
  readFlameAttributes(node, g, palette_attr, solo_attr);

  flame::PaletteDraft palette;
  // Per xform, its element and chaos attribute (for the check at the end).
  std::vector<std::pair<pugi::xml_node, pugi::xml_attribute>> chaos_attrs;
  for (pugi::xml_node child = node.first_child(); child; child = child.next_sibling()) {
    if (child.type() != pugi::node_element) continue;
    const std::string_view name = child.name();
    if (name == "color") {
      readColor(child, palette);
    } else if (name == "colors") {
      readColors(child, palette);
    } else if (name == "palette") {
      readPalette(child, palette);
    } else if (name == "symmetry") {
      const size_t before = g.xforms.size();
      readSymmetry(child, g);
      chaos_attrs.resize(chaos_attrs.size() + (g.xforms.size() - before));
    } else if (name == "xform" || name == "finalxform") {
      const bool is_final = name == "finalxform";
      if (is_final && g.final_xform) failElement(child, "a flame has at most one <finalxform>");
      // flam3 initialises a new xform's colour to its slot's parity, the
      // slot counting the final xform when there is one (initialize_xforms).
      const int slot = static_cast<int>(g.xforms.size()) + (g.final_xform ? 1 : 0);
      pugi::xml_attribute chaos_attr;
      FlameXform xf = readXform(child, is_final, slot, chaos_attr);
      if (is_final) {
        g.final_xform = std::move(xf);
      } else {
        g.xforms.push_back(std::move(xf));
        chaos_attrs.emplace_back(child, chaos_attr);
      }
    }
    // <edit> (provenance), <motion> and unknown children: skipped, as flam3
    // does for a still image.
  }

  // chaos: one multiplier per following xform; flam3 writes past its table
  // for entries beyond the xform count, so only 1s (no-ops) may be there.
  // Trailing 1s are dropped (entries past the end are 1), so a row of 1s is
  // no chaos at all and the renderer keeps its single selection table.
  const size_t n = g.xforms.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<double>& chaos = g.xforms[i].chaos;
    for (size_t j = n; j < chaos.size(); ++j)
      if (chaos[j] != 1.0) {
        const auto [element, a] = chaos_attrs[i];
        const std::vector<Token> words = splitWords(a.value());
        failValue(element, a, j < words.size() ? words[j].index : 0,
                  "entry " + std::to_string(j) + " is " + fmt(chaos[j]) + " but the flame has only " +
                      std::to_string(n) + " xforms");
      }
    while (!chaos.empty() && chaos.back() == 1.0) chaos.pop_back();
  }
  if (g.solo_xform >= 0 && static_cast<size_t>(g.solo_xform) >= n)
    failValue(node, solo_attr, 0, "the flame has " + std::to_string(n) + " xforms (numbered from 0)");

  // Palette: palette=N replaces every entry (flam3 reads the library after
  // the element), then missing entries are interpolated.
  if (g.palette_index != -1) {
    const flame::Palette colors = libraryPalette(node, palette_attr, g.palette_index, g.hue);
    palette.colors = colors;
    palette.set.fill(true);
  }
  if (!flame::fillMissingColors(palette))
    warn(source_.offsetOf(node), "<flame> has no palette; every colour is black and transparent (as flam3)");
  g.palette = palette.colors;
  return g;
}

FlameXform GenomeReader::readXform(pugi::xml_node node, bool final_xform, int flam3_slot,
                                   pugi::xml_attribute& chaos_attr) {
  requireAttributes(node);
  FlameXform xf;
  xf.source_line = source_.line(source_.offsetOf(node));
  xf.color = flam3_slot & 1;
  const std::span<const FlameParamInfo> params = flameParams();
  for (size_t i = 0; i < params.size(); ++i) xf.params[i] = params[i].default_value;
  std::array<double, kFlameVariationCount> weights{};  // the parser clears flam3's default linear=1

  for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
    const std::string_view name = a.name();
    if (name == "weight") {
      xf.weight = numberAtLeast(node, a, 0.0, true);
      if (final_xform && xf.weight != 0.0) failValue(node, a, 0, "a final xform has no weight");
    } else if (name == "symmetry") {
      // Deprecated (flam3 2.7): both colour speed and animate follow from it.
      const double s = number(node, a);
      xf.color_speed = (1.0 - s) / 2.0;
      xf.animate = s > 0 ? 0.0 : 1.0;
    } else if (name == "color_speed") {
      xf.color_speed = number(node, a);
    } else if (name == "animate") {
      xf.animate = number(node, a);
    } else if (name == "color") {
      xf.color = numbers(node, a, 1, 2)[0];  // "c1 c2": flam3 keeps c1
    } else if (name == "opacity") {
      xf.opacity = number(node, a);
    } else if (name == "plotmode") {
      const std::string_view value = a.value();
      if (value == "off")
        xf.opacity = 0.0;
      else if (value != "on")
        failValue(node, a, 0, "plotmode must be off or on");
    } else if (name == "coefs" || name == "post") {
      const std::vector<double> c = numbers(node, a, 6, 6);
      FlameAffine& m = name == "coefs" ? xf.affine : xf.post;
      m = FlameAffine{c[0], c[2], c[4], c[1], c[3], c[5]};  // "a d b e c f"
    } else if (name == "chaos") {
      if (final_xform) failValue(node, a, 0, "a final xform has no chaos (it is never chosen)");
      xf.chaos = numbers(node, a, 0, source_.text().size());
      const std::vector<Token> words = splitWords(a.value());
      for (size_t j = 0; j < xf.chaos.size(); ++j)
        if (xf.chaos[j] < 0) failValue(node, a, words[j].index, "chaos entries must be >= 0");
      chaos_attr = a;
    } else if (name == "var") {
      // Legacy: every weight in flam3's index order.
      const std::vector<double> w = numbers(node, a, kFlameVariationCount, kFlameVariationCount);
      std::copy(w.begin(), w.end(), weights.begin());
    } else if (name == "var1") {
      // Legacy: one variation by index, weight 1, the others cleared.
      weights.fill(0.0);
      weights[static_cast<size_t>(integer(node, a, 0, kFlameVariationCount - 1))] = 1.0;
    } else if (name == "motion_frequency") {
      if (integer(node, a, -kMaxInt, kMaxInt) != 0)
        failValue(node, a, 0,
                  "motion parameters belong in <motion> children, not on the xform (flam3 refuses them)");
    } else if (name == "motion_function") {
      failValue(node, a, 0,
                "motion parameters belong in <motion> children, not on the xform (flam3 refuses them)");
    } else if (const auto v = flameVariationIndex(name)) {
      weights[static_cast<size_t>(*v)] = number(node, a);
    } else if (const auto p = flameParamIndex(name)) {
      double value = number(node, a);
      if (params[static_cast<size_t>(*p)].name == "super_shape_rnd")
        value = std::clamp(value, 0.0, 1.0);  // flam3
      xf.params[static_cast<size_t>(*p)] = value;
    } else if (name == "amw_amp") {
      (void)number(node, a);  // flam3 reads it into a field no variation uses
    } else if (options_.skip_unknown) {
      warn(source_.offsetOf(a),
           "unknown variation '" + std::string(name) + "' on <" + node.name() + "> ignored (as flam3)");
    } else {
      source_.fail(source_.offsetOf(a), "unknown variation '" + std::string(name) + "' on <" + node.name() +
                                            "> at line " + std::to_string(source_.line(source_.offsetOf(a))) +
                                            " (--skip-unknown ignores it, as flam3 does)");
    }
  }
  for (int i = 0; i < kFlameVariationCount; ++i)
    if (weights[static_cast<size_t>(i)] != 0.0) xf.variations.push_back({i, weights[static_cast<size_t>(i)]});
  return xf;
}

void GenomeReader::readColor(pugi::xml_node node, flame::PaletteDraft& palette) const {
  requireAttributes(node);
  int index = -1;
  double rgb[3] = {0, 0, 0}, alpha = 255.0;
  bool have_rgb = false;
  auto checkRange = [&](pugi::xml_attribute a, const std::vector<double>& c) {
    const std::vector<Token> words = splitWords(a.value());
    for (size_t i = 0; i < c.size(); ++i)
      if (c[i] < 0 || c[i] > 255) failValue(node, a, words[i].index, "colour components must be 0 .. 255");
  };
  for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
    const std::string_view name = a.name();
    if (name == "index") {
      index = integer(node, a, 0, 255);
    } else if (name == "rgb" || name == "rgba") {
      const size_t n = name == "rgb" ? 3 : 4;
      const std::vector<double> c = numbers(node, a, n, n);
      checkRange(a, c);
      std::copy_n(c.begin(), 3, rgb);
      if (n == 4) alpha = c[3];
      have_rgb = true;
    } else if (name == "a") {
      const std::vector<double> c = numbers(node, a, 1, 1);
      checkRange(a, c);
      alpha = c[0];
    } else {
      source_.fail(source_.offsetOf(a),
                   "unknown <color> attribute '" + std::string(name) + "' (index, rgb, rgba, a)");
    }
  }
  if (index < 0) failElement(node, "missing index attribute (0 .. 255)");
  if (!have_rgb) failElement(node, "missing rgb or rgba attribute");
  // Stored premultiplied, in flam3's order of operations.
  flame::PaletteColor& c = palette.colors[static_cast<size_t>(index)];
  c[3] = alpha / 255.0;
  for (size_t k = 0; k < 3; ++k) c[k] = c[3] * rgb[k] / 255.0;
  palette.set[static_cast<size_t>(index)] = true;
}

void GenomeReader::readColors(pugi::xml_node node, flame::PaletteDraft& palette) const {
  requireAttributes(node);
  int count = 0;
  pugi::xml_attribute data;
  for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
    const std::string_view name = a.name();
    if (name == "count")
      count = integer(node, a, 1, 256);
    else if (name == "data")
      data = a;
    else
      source_.fail(source_.offsetOf(a),
                   "unknown <colors> attribute '" + std::string(name) + "' (count, data)");
  }
  if (count == 0) failElement(node, "missing count attribute (1 .. 256)");
  if (!data) failElement(node, "missing data attribute");
  if (auto error = flame::parseHexColors(data.value(), count, flame::HexLayout::kZeroRgb, palette))
    failValue(node, data, error->index, error->message);
}

void GenomeReader::readPalette(pugi::xml_node node, flame::PaletteDraft& palette) {
  requireAttributes(node);
  pugi::xml_attribute index0, index1, hue0, hue1, blend, count, format;
  for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
    const std::string_view name = a.name();
    pugi::xml_attribute* slot = name == "index0"   ? &index0
                                : name == "index1" ? &index1
                                : name == "hue0"   ? &hue0
                                : name == "hue1"   ? &hue1
                                : name == "blend"  ? &blend
                                : name == "count"  ? &count
                                : name == "format" ? &format
                                                   : nullptr;
    if (!slot)
      source_.fail(source_.offsetOf(a), "unknown <palette> attribute '" + std::string(name) +
                                            "' (count and format, or index0, index1, hue0, hue1, blend)");
    *slot = a;
  }
  const bool old_form = index0 || index1 || hue0 || hue1 || blend;
  if (old_form && (count || format))
    failElement(node, "mixes the old (index0, index1, hue0, hue1, blend) and new (count, format) forms");

  if (old_form) {
    // Two library palettes blended in HSV (interpolation.c interpolate_cmap).
    // flam3 picks a random palette for a missing index; we ask for it.
    if (!index0 || !index1)
      failElement(node, "the old form needs index0 and index1 (flam3 would pick at random)");
    const int n0 = integer(node, index0, 0, kMaxInt), n1 = integer(node, index1, 0, kMaxInt);
    const double h0 = hue0 ? number(node, hue0) : 0.0, h1 = hue1 ? number(node, hue1) : 0.0;
    const double b = blend ? number(node, blend) : 0.5;
    const flame::Palette p0 = libraryPalette(node, index0, n0, h0);
    const flame::Palette p1 = libraryPalette(node, index1, n1, h1);
    palette.colors = flame::blendPalettes(p0, p1, b);
    palette.set.fill(true);
    return;
  }
  if (!count) failElement(node, "missing count attribute (1 .. 256)");
  if (!format) failElement(node, "missing format attribute (RGB or RGBA)");
  const int n = integer(node, count, 1, 256);
  const std::string_view layout_name = format.value();
  if (layout_name != "RGB" && layout_name != "RGBA") failValue(node, format, 0, "format must be RGB or RGBA");
  const flame::HexLayout layout = layout_name == "RGB" ? flame::HexLayout::kRgb : flame::HexLayout::kRgba;

  // The hex text is the element's whole text content (xmlNodeGetContent):
  // concatenated, remembering where each piece starts for messages.
  std::string text;
  std::vector<std::pair<size_t, pugi::xml_node>> pieces;
  for (pugi::xml_node d = node.first_child(); d;) {
    if (d.type() == pugi::node_pcdata || d.type() == pugi::node_cdata) {
      pieces.emplace_back(text.size(), d);
      text += d.value();
    }
    if (d.first_child()) {
      d = d.first_child();
      continue;
    }
    while (d && d != node && !d.next_sibling()) d = d.parent();
    if (d == node) break;
    if (d) d = d.next_sibling();
  }
  if (auto error = flame::parseHexColors(text, n, layout, palette)) {
    size_t offset = source_.offsetOf(node);
    for (const auto& [start, piece] : pieces)
      if (start <= error->index) offset = source_.textOffset(piece, error->index - start);
    source_.fail(offset, "<palette> text: " + error->message);
  }
}

void GenomeReader::readSymmetry(pugi::xml_node node, FlameGenome& g) {
  requireAttributes(node);
  int kind = 0;
  pugi::xml_attribute kind_attr;
  for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
    if (std::string_view(a.name()) != "kind")
      source_.fail(source_.offsetOf(a),
                   "unknown <symmetry> attribute '" + std::string(a.name()) + "' (kind)");
    kind = integer(node, a, -kMaxInt, kMaxInt);
    kind_attr = a;
  }
  g.symmetry_kind = kind;
  if (kind == 0) {
    // flam3 draws a random symmetry here; a genome should say which.
    warn(source_.offsetOf(node), "<symmetry kind=\"0\"> asks flam3 for a random symmetry; read as none");
    return;
  }
  if (kind == 1) return;
  const size_t adds = static_cast<size_t>(std::abs(static_cast<long long>(kind))) - (kind > 0 ? 1 : 0);
  if (adds > symmetry_allowance_)
    failValue(node, kind_attr, 0,
              "adds " + std::to_string(adds) + " xforms; this document allows " +
                  std::to_string(symmetry_allowance_) + " more symmetry xforms");
  symmetry_allowance_ -= adds;

  // flam3_add_symmetry: identity-coloured linear xforms of weight 1 that do
  // not change the colour (color_speed 0) and do not animate.
  auto addLinear = [&](double color, const FlameAffine& affine) {
    FlameXform xf;
    xf.source_line = g.source_line;
    xf.added_by_symmetry = true;
    const std::span<const FlameParamInfo> params = flameParams();
    for (size_t i = 0; i < params.size(); ++i) xf.params[i] = params[i].default_value;
    xf.weight = 1.0;
    xf.color_speed = 0.0;
    xf.animate = 0.0;
    xf.color = color;
    xf.affine = affine;
    xf.variations.push_back({0, 1.0});
    g.xforms.push_back(std::move(xf));
  };
  // round6: flam3 rounds the rotation coefficients to 6 decimals (its way).
  auto round6 = [](double x) {
    x *= 1e6;
    if (x < 0) x -= 1.0;
    return 1e-6 * static_cast<int>(x + 0.5);
  };
  const size_t first = g.xforms.size();
  int sym = kind;
  if (sym < 0) {
    addLinear(1.0, FlameAffine{-1.0, 0.0, 0.0, 0.0, 1.0, 0.0});  // reflection x → −x
    sym = -sym;
  }
  const double step = 2 * std::numbers::pi / sym;
  for (int k = 1; k < sym; ++k) {
    const double c00 = round6(std::cos(k * step)), c01 = round6(std::sin(k * step));
    const double c10 = round6(-c01), c11 = c00;
    // coefs "a d b e c f" = c00 c01 c10 c11 0 0
    addLinear(sym < 3 ? 0.0 : (k - 1.0) / (sym - 2.0), FlameAffine{c00, c10, 0.0, c01, c11, 0.0});
  }

  // flam3 then sorts the added xforms (interpolation.c compare_xforms, glibc's
  // stable merge sort): by colour speed (all 0 here), then by determinant.
  // With a final xform already read, flam3's sorted range is shifted by one
  // (it holds the final, which sorts last, and misses the first added xform).
  const size_t sort_begin = g.final_xform ? std::min(first + 1, g.xforms.size()) : first;
  auto det = [](const FlameXform& x) { return x.affine.a * x.affine.e - x.affine.d * x.affine.b; };
  std::stable_sort(g.xforms.begin() + static_cast<ptrdiff_t>(sort_begin), g.xforms.end(),
                   [&](const FlameXform& a, const FlameXform& b) {
                     if (a.color_speed != b.color_speed) return a.color_speed < b.color_speed;
                     return det(a) < det(b);
                   });
}

const flame::PaletteLibrary& GenomeReader::library(pugi::xml_node element, pugi::xml_attribute a) {
  if (!library_) {
    const std::filesystem::path path = flame::palettesPath(options_.palettes_file);
    try {
      library_ = flame::PaletteLibrary::load(path);
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      failValue(element, a, 0, "cannot read the palette library (" + std::string(e.what()) + ")");
    }
  }
  return *library_;
}

flame::Palette GenomeReader::libraryPalette(pugi::xml_node element, pugi::xml_attribute a, int number,
                                            double hue) {
  const flame::PaletteLibrary& lib = library(element, a);
  std::optional<flame::Palette> colors = lib.colors(number, hue);
  if (!colors)
    failValue(element, a, 0, "no palette numbered " + std::to_string(number) + " in " + lib.path().string());
  return *colors;
}

}  // namespace

std::string_view flameFilterShapeName(FlameFilterShape shape) {
  const size_t i = static_cast<size_t>(shape);
  return i < kFilterShapeNames.size() ? kFilterShapeNames[i] : std::string_view{};
}

std::optional<FlameFilterShape> parseFlameFilterShape(std::string_view name) {
  for (size_t i = 0; i < kFilterShapeNames.size(); ++i)
    if (kFilterShapeNames[i] == name) return static_cast<FlameFilterShape>(i);
  return std::nullopt;
}

std::vector<FlameGenome> parseFlameGenomes(std::string_view xml, std::string_view file_name,
                                           const FlameReadOptions& options) {
  const XmlSource source(xml, std::string(file_name));
  GenomeReader reader(source, options);
  return reader.readAll();
}

ParseError flameGenomeError(std::string_view file_name, std::string_view text, const FlameGenome& genome,
                            int index, const std::string& message) {
  // Line genome.source_line (1-based) of the text, without its newline.
  size_t at = 0;
  for (int l = 1; l < genome.source_line && at != std::string_view::npos; ++l) {
    at = text.find('\n', at);
    if (at != std::string_view::npos) ++at;
  }
  std::string line;
  if (at != std::string_view::npos && genome.source_line >= 1) {
    const size_t end = text.find('\n', at);
    line = std::string(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
  }
  const size_t tag = line.find("<flame");
  const int column = tag == std::string::npos ? 1 : static_cast<int>(tag) + 1;
  std::string name = "flame " + std::to_string(index);
  if (!genome.name.empty()) name += " '" + printableText(genome.name, 60) + "'";
  return ParseError({std::string(file_name), genome.source_line, column}, name + ": " + message, line);
}

std::vector<FlameGenome> readFlameFile(const std::filesystem::path& path, const FlameReadOptions& options) {
  const std::string text = readInputFile(path, "flame genome");
  return parseFlameGenomes(text, path.string(), options);
}

}  // namespace procgen

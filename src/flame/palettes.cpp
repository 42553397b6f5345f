// Palettes of flam3 genomes (palettes.hpp). Follows flam3 3.1.1: palettes.c
// (rgb2hsv, hsv2rgb, flam3_get_palette, the library file), interpolation.c
// (interpolate_cmap) and parser.c (flam3_parse_hexformat_colors,
// flam3_interp_missing_colors). The arithmetic is flam3's, in its order, so
// the colours equal libflam3's bit for bit.
#include "flame/palettes.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

#include "flame/xml_source.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"

namespace procgen::flame {
namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

void rgbToHsv(const double rgb[3], double hsv[3]) {
  const double rd = rgb[0], gd = rgb[1], bd = rgb[2];
  double max, min;
  if (rd >= gd)
    max = rd >= bd ? rd : bd;
  else
    max = gd >= bd ? gd : bd;
  if (rd <= gd)
    min = rd <= bd ? rd : bd;
  else
    min = gd <= bd ? gd : bd;
  const double del = max - min;
  const double v = max;
  const double s = max != 0.0 ? del / max : 0.0;
  double h = 0;
  if (s != 0.0) {
    const double rc = (max - rd) / del, gc = (max - gd) / del, bc = (max - bd) / del;
    if (rd == max)
      h = bc - gc;
    else if (gd == max)
      h = 2 + rc - bc;
    else if (bd == max)
      h = 4 + gc - rc;
    if (h < 0) h += 6;
  }
  hsv[0] = h;
  hsv[1] = s;
  hsv[2] = v;
}

void hsvToRgb(const double hsv[3], double rgb[3]) {
  double h = hsv[0];
  const double s = hsv[1], v = hsv[2];
  // flam3 subtracts or adds 6 until h is in [0, 6); fmod gives the same
  // (exact) result without looping on a huge hue.
  if (!std::isfinite(h)) h = 0.0;
  if (h >= 6.0) h = std::fmod(h, 6.0);
  if (h < 0.0) {
    h = std::fmod(h, 6.0);
    if (h < 0.0) h += 6.0;
  }
  const int j = static_cast<int>(std::floor(h));
  const double f = h - j;
  const double p = v * (1 - s);
  const double q = v * (1 - (s * f));
  const double t = v * (1 - (s * (1 - f)));
  // The sextant's (r, g, b); flam3's default case (j = 6 after rounding) is sextant 0.
  const double sextants[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
  const double* out = sextants[j >= 0 && j < 6 ? j : 0];
  rgb[0] = out[0];
  rgb[1] = out[1];
  rgb[2] = out[2];
}

bool fillMissingColors(PaletteDraft& palette) {
  int first = -1, last = -1;
  for (int i = 0; i < 256; ++i)
    if (palette.set[static_cast<size_t>(i)]) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0) return false;
  // A run of missing entries [begin, end) is interpolated between its set
  // neighbours; before the first and after the last it wraps around, the
  // neighbour's position taken 256 entries away.
  int i = 0;
  while (i < 256) {
    if (palette.set[static_cast<size_t>(i)]) {
      ++i;
      continue;
    }
    const int begin = i;
    while (i < 256 && !palette.set[static_cast<size_t>(i)]) ++i;
    const int end = i;
    int left_pos = begin - 1, left = begin - 1;
    int right_pos = end, right = end;
    if (left_pos == -1) left_pos = last - 256, left = last;
    if (right_pos == 256) right_pos = first + 256, right = first;
    for (int j = begin; j < end; ++j) {
      const double t = (j - left_pos) / static_cast<double>(right_pos - left_pos);
      for (size_t k = 0; k < 4; ++k)
        palette.colors[static_cast<size_t>(j)][k] = palette.colors[static_cast<size_t>(left)][k] * (1.0 - t) +
                                                    palette.colors[static_cast<size_t>(right)][k] * t;
    }
    for (int j = begin; j < end; ++j) palette.set[static_cast<size_t>(j)] = true;
  }
  return true;
}

Palette blendPalettes(const Palette& p0, const Palette& p1, double blend) {
  Palette out{};
  for (size_t i = 0; i < 256; ++i) {
    double s[5], t[5];
    rgbToHsv(p0[i].data(), s);
    rgbToHsv(p1[i].data(), t);
    s[3] = p0[i][3];
    t[3] = p1[i][3];
    s[4] = t[4] = static_cast<double>(i);  // flam3 blends the entry indices too (equal here)
    if (s[0] - t[0] > 3.0) s[0] -= 6.0;
    if (s[0] - t[0] < -3.0) s[0] += 6.0;
    for (int j = 0; j < 5; ++j) t[j] = ((1.0 - blend) * s[j]) + (blend * t[j]);
    hsvToRgb(t, out[i].data());
    out[i][3] = t[3];
  }
  return out;
}

std::optional<HexError> parseHexColors(std::string_view text, int count, HexLayout layout,
                                       PaletteDraft& out) {
  const size_t digits = layout == HexLayout::kRgb ? 6 : 8;
  size_t i = 0;
  while (i < text.size() && isSpace(text[i])) ++i;
  for (int entry = 0; entry < count; ++entry) {
    if (i >= text.size())
      return HexError{i, "expected " + std::to_string(count) + " colours, found " + std::to_string(entry)};
    int bytes[4] = {0, 0, 0, 255};
    for (size_t d = 0; d < digits; ++d) {
      const int value = i + d < text.size() ? hexDigit(text[i + d]) : -1;
      if (value < 0) {
        const std::string entry_text(text.substr(i, digits));
        return HexError{i + d, "colour " + std::to_string(entry) + " '" + entry_text + "' is not " +
                                   std::to_string(digits) + " hex digits" +
                                   (layout == HexLayout::kZeroRgb ? " (00RRGGBB)" : "")};
      }
      if (d % 2 == 0)
        bytes[d / 2] = value * 16;
      else
        bytes[d / 2] += value;
    }
    PaletteColor color{};
    if (layout == HexLayout::kZeroRgb) {
      if (bytes[0] != 0)
        return HexError{i, "colour " + std::to_string(entry) + " '" + std::string(text.substr(i, digits)) +
                               "' does not start with 00 (00RRGGBB)"};
      color = {bytes[1] / 255.0, bytes[2] / 255.0, bytes[3] / 255.0, 1.0};
    } else {
      color = {bytes[0] / 255.0, bytes[1] / 255.0, bytes[2] / 255.0, bytes[3] / 255.0};
    }
    out.colors[static_cast<size_t>(entry)] = color;
    out.set[static_cast<size_t>(entry)] = true;
    i += digits;
    while (i < text.size() && isSpace(text[i])) ++i;
  }
  if (i < text.size())
    return HexError{i, "extra data after " + std::to_string(count) + " colours (count=\"" +
                           std::to_string(count) + "\")"};
  return std::nullopt;
}

std::filesystem::path palettesPath(const std::filesystem::path& option) {
  if (!option.empty()) return option;
  if (const char* env = std::getenv("flam3_palettes"); env != nullptr && *env != '\0') return env;
  return "/usr/share/flam3/flam3-palettes.xml";
}

std::shared_ptr<const PaletteLibrary> PaletteLibrary::load(const std::filesystem::path& path) {
  struct Cached {
    std::filesystem::file_time_type time;
    uintmax_t size = 0;
    std::shared_ptr<const PaletteLibrary> library;
  };
  static std::mutex mutex;
  static std::map<std::string, Cached> cache;

  std::error_code ec;
  const auto time = std::filesystem::last_write_time(path, ec);
  const uintmax_t size = ec ? 0 : std::filesystem::file_size(path, ec);
  const bool cacheable = !ec;
  std::lock_guard<std::mutex> lock(mutex);
  if (cacheable) {
    auto it = cache.find(path.string());
    if (it != cache.end() && it->second.time == time && it->second.size == size) return it->second.library;
  }

  auto library = std::make_shared<PaletteLibrary>();
  library->path_ = path;
  library->text_ = readInputFile(path, "flam3 palette library");
  {
    XmlSource source(library->text_, path.string());
    // Every <palette> element at any depth, in document order (palettes.c parse_palettes).
    pugi::xml_node node = source.document().first_child();
    while (node) {
      if (node.type() == pugi::node_element && std::string_view(node.name()) == "palette") {
        const pugi::xml_attribute number = node.attribute("number");
        const pugi::xml_attribute data = node.attribute("data");
        int value = 0;
        const std::string_view digits = number.value();
        const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        // An entry without a readable number or data can never be chosen.
        if (number && data && err == std::errc() && end == digits.data() + digits.size() && !digits.empty())
          library->entries_.push_back({value, source.valueOffset(data), data.value()});
      } else if (node.first_child()) {
        node = node.first_child();
        continue;
      }
      while (node && !node.next_sibling()) node = node.parent();
      if (node) node = node.next_sibling();
    }
  }
  if (cacheable) cache[path.string()] = Cached{time, size, library};
  return library;
}

std::optional<Palette> PaletteLibrary::colors(int number, double hue) const {
  for (const Entry& entry : entries_) {
    if (entry.number != number) continue;
    PaletteDraft draft;
    if (auto error = parseHexColors(entry.data, 256, HexLayout::kZeroRgb, draft)) {
      // Offsets inside the value are exact: the library's data has no entities.
      XmlSource::failAt(text_, path_.string(), entry.data_offset + error->index,
                        "palette " + std::to_string(number) + ": " + error->message);
    }
    Palette out{};
    for (size_t i = 0; i < 256; ++i) {
      double hsv[3];
      rgbToHsv(draft.colors[i].data(), hsv);
      hsv[0] += hue * 6.0;
      hsvToRgb(hsv, out[i].data());
      out[i][3] = 1.0;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace procgen::flame

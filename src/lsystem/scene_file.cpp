// The scene file (docs/scenes.md): one L-system instance per line,
//   MODEL.l [key=value]...
// with the keys n, seed, at, rotate, scale and the view overrides angle, step,
// width, width-factor, width-scale, elasticity, tropism; any other NAME=VALUE
// overrides the model's `#define NAME` (paper §6: instances differ in grammar,
// constants, iteration counts and initial transforms).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lsystem/lexer.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"
#include "procgen/scene.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}
bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// One line of the scene file, with column-aware errors.
class SceneLine {
 public:
  SceneLine(std::string_view text, const std::string& file, int line)
      : text_(text), file_(file), line_(line) {}

  [[noreturn]] void fail(size_t column0, const std::string& message) const {
    throw ParseError(SourceLocation{file_, line_, static_cast<int>(column0) + 1}, message,
                     std::string(text_));
  }

  /// Splits into whitespace-separated words (a word may be "double quoted").
  std::vector<std::pair<size_t, std::string>> words() const {
    std::vector<std::pair<size_t, std::string>> out;
    size_t i = 0;
    while (i < text_.size()) {
      while (i < text_.size() && isBlank(text_[i])) ++i;
      if (i >= text_.size() || text_[i] == '#') break;
      const size_t start = i;
      std::string word;
      if (text_[i] == '"') {
        ++i;
        while (i < text_.size() && text_[i] != '"') word += text_[i++];
        if (i >= text_.size()) fail(start, "unterminated quoted path");
        ++i;
      } else {
        while (i < text_.size() && !isBlank(text_[i])) word += text_[i++];
      }
      out.emplace_back(start, word);
    }
    return out;
  }

  float number(const std::string& s, size_t column0) const {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
      fail(column0, "expected a finite number, got '" + s + "'");
    // Finite as a double is not enough: 1e39 becomes inf as a float, which
    // would reach the placed geometry.
    if (!std::isfinite(static_cast<float>(v)))
      fail(column0, "'" + s + "' is out of range for a 32-bit float (largest 3.4e38)");
    return static_cast<float>(v);
  }

  Vec3 vector3(const std::string& s, size_t column0) const {
    float v[3];
    size_t pos = 0;
    for (int k = 0; k < 3; ++k) {
      const size_t comma = s.find(',', pos);
      if ((k < 2) != (comma != std::string::npos))
        fail(column0, "expected three numbers x,y,z, got '" + s + "'");
      v[k] = number(s.substr(pos, k < 2 ? comma - pos : std::string::npos), column0 + pos);
      pos = comma + 1;
    }
    return Vec3{v[0], v[1], v[2]};
  }

  uint64_t unsignedInteger(const std::string& s, size_t column0, uint64_t max) const {
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || end != s.c_str() + s.size() || errno == ERANGE || v > max)
      fail(column0, "expected a non-negative integer up to " + std::to_string(max) + ", got '" + s + "'");
    return v;
  }

 private:
  std::string_view text_;
  const std::string& file_;
  int line_;
};

/// Replaces the value of `#define name ...` in an L-system's text, keeping a
/// trailing comment. Returns false when the model has no such define.
bool overrideDefine(std::string& text, const std::string& name, const std::string& value) {
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    size_t i = line_start;
    while (i < line_end && isBlank(text[i])) ++i;
    if (text.compare(i, 7, "#define") == 0) {
      size_t n = i + 7;
      while (n < line_end && isBlank(text[n])) ++n;
      size_t e = n;
      while (e < line_end && isIdentChar(text[e])) ++e;
      if (text.compare(n, e - n, name) == 0 && e - n == name.size()) {
        const size_t comment = text.find("/*", e);
        const size_t keep = comment < line_end ? comment : line_end;
        text.replace(i, keep - i, "#define " + name + " (" + value + ") ");
        return true;
      }
    }
    line_start = line_end + 1;
  }
  return false;
}

LSystemInstance parseInstance(const SceneLine& line, const std::vector<std::pair<size_t, std::string>>& words,
                              const fs::path& base) {
  LSystemInstance inst;
  inst.file = fs::path(words[0].second);
  if (inst.file.is_relative()) inst.file = base / inst.file;
  std::error_code ec;
  if (!fs::is_regular_file(inst.file, ec))
    line.fail(words[0].first, "cannot read model '" + inst.file.string() + "'");

  std::vector<std::pair<std::string, std::string>> defines;
  struct ViewOverride {
    std::optional<float> angle, step, width, width_factor, width_scale, elasticity;
    std::optional<Vec3> tropism;
  } view;
  for (size_t w = 1; w < words.size(); ++w) {
    const auto& [col, word] = words[w];
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
      line.fail(col, "expected key=value, got '" + word + "'");
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    const size_t vcol = col + eq + 1;
    if (key == "n")
      inst.iterations = static_cast<int>(line.unsignedInteger(value, vcol, 1000000));
    else if (key == "seed")
      inst.seed = line.unsignedInteger(value, vcol, UINT64_MAX);
    else if (key == "at")
      inst.position = line.vector3(value, vcol);
    else if (key == "rotate")
      inst.rotation_deg = line.vector3(value, vcol);
    else if (key == "scale")
      inst.scale = line.number(value, vcol);
    else if (key == "angle")
      view.angle = line.number(value, vcol);
    else if (key == "step")
      view.step = line.number(value, vcol);
    else if (key == "width")
      view.width = line.number(value, vcol);
    else if (key == "width-factor")
      view.width_factor = line.number(value, vcol);
    else if (key == "width-scale")
      view.width_scale = line.number(value, vcol);
    else if (key == "elasticity")
      view.elasticity = line.number(value, vcol);
    else if (key == "tropism")
      view.tropism = line.vector3(value, vcol);
    else {
      for (char c : key)
        if (!isIdentChar(c)) line.fail(col, "unknown key '" + key + "'");
      defines.emplace_back(key, value);
    }
  }

  std::string text = readInputFile(inst.file, "L-system file");
  for (const auto& [name, value] : defines) {
    if (!overrideDefine(text, name, value))
      line.fail(words[0].first,
                "'" + name +
                    "' is neither a scene key (n, seed, at, rotate, scale, angle, step, "
                    "width, width-factor, width-scale, elasticity, tropism) nor a #define of " +
                    inst.file.filename().string());
  }
  inst.lsystem = LSystem::fromText(text, inst.file.string());
  inst.view = inst.lsystem.view();
  if (view.angle) inst.view.angle_deg = *view.angle;
  if (view.step) inst.view.step = *view.step;
  if (view.width) inst.view.initial_width = *view.width;
  if (view.width_factor) inst.view.width_factor = *view.width_factor;
  if (view.width_scale) inst.view.width_scale = *view.width_scale;
  if (view.elasticity) inst.view.elasticity = *view.elasticity;
  if (view.tropism) inst.view.tropism = *view.tropism;
  if (!(inst.scale > 0.0f)) line.fail(words[0].first, "scale must be positive");
  return inst;
}

}  // namespace

LSystemScene LSystemScene::fromText(std::string_view text, const std::string& filename,
                                    const fs::path& base) {
  text = detail::withoutBom(text);
  LSystemScene scene;
  int line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_number;
    const SceneLine line(text.substr(start, end - start), filename, line_number);
    const auto words = line.words();
    if (!words.empty()) {
      scene.instances.push_back(parseInstance(line, words, base));
      scene.instances.back().line = line_number;
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  if (scene.instances.empty())
    throw ParseError(SourceLocation{filename, line_number, 1}, "the scene lists no L-system", "");
  return scene;
}

LSystemScene LSystemScene::fromFile(const fs::path& path) {
  return fromText(readInputFile(path, "scene"), path.string(), path.parent_path());
}

}  // namespace procgen

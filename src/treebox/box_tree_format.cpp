// Box tree text format (`.boxtree`, docs/treebox.md): reader, writer and random generator for
// the flattened trees of clip groups, blend groups and leaves of Levien,
// "Fast GPU bounding boxes on tree-structured scenes", §1 and §6.
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/random.h"
#include "procgen/error.hpp"
#include "procgen/input.hpp"
#include "procgen/treebox.hpp"

namespace procgen {
namespace {

struct Token {
  std::string_view text;
  int column;  // 1-based
};

std::vector<Token> tokenize(std::string_view line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
           line[i] != '#')
      ++i;
    tokens.push_back(Token{line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return tokens;
}

class BoxTreeParser {
 public:
  BoxTreeParser(std::string_view text, const std::string& filename) : text_(text), file_(filename) {}

  BoxTree parse() {
    BoxTree scene;
    scene.dimensions = 0;
    struct Open {
      int line;
      int column;
      std::string source;
    };
    std::vector<Open> open;
    size_t pos = 0;
    int line_no = 0;
    while (pos <= text_.size()) {
      size_t eol = text_.find('\n', pos);
      if (eol == std::string_view::npos) eol = text_.size();
      std::string_view line = text_.substr(pos, eol - pos);
      ++line_no;
      line_ = line;
      line_no_ = line_no;
      std::vector<Token> t = tokenize(line);
      if (!t.empty()) {
        const Token& key = t[0];
        if (key.text == "leaf" || key.text == "clip") {
          bool clip = key.text == "clip";
          size_t numbers = t.size() - 1 - (clip ? 1 : 0);
          if (clip && (t.size() < 2 || t.back().text != "{"))
            fail(t.back().column + static_cast<int>(t.back().text.size()),
                 "expected '{' at the end of a clip line");
          if (numbers != 4 && numbers != 6)
            fail(key.column, "expected 4 numbers (2D: x0 y0 x1 y1) or 6 (3D: x0 y0 z0 x1 y1 z1)");
          int dims = numbers == 4 ? 2 : 3;
          if (scene.dimensions == 0) scene.dimensions = dims;
          if (dims != scene.dimensions)
            fail(key.column, "this scene is " + std::to_string(scene.dimensions) +
                                 "D, but this line has a " + std::to_string(dims) + "D box");
          float v[6] = {0, 0, 0, 0, 0, 0};
          for (size_t k = 0; k < numbers; ++k) v[k] = number(t[1 + k]);
          Box3 box;
          if (dims == 2) box = Box3{{v[0], v[1], 0.0f}, {v[2], v[3], 0.0f}};
          else box = Box3{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}};
          if (box.empty()) fail(t[1].column, "box minimum exceeds its maximum");
          scene.kinds.push_back(clip ? BoxTreeNodeKind::kClip : BoxTreeNodeKind::kLeaf);
          scene.boxes.push_back(box);
          if (clip) open.push_back(Open{line_no, key.column, std::string(line)});
        } else if (key.text == "blend") {
          if (t.size() != 2 || t[1].text != "{")
            fail(t.size() > 2 ? t[2].column : key.column, "expected 'blend {'");
          scene.kinds.push_back(BoxTreeNodeKind::kBlend);
          scene.boxes.push_back(emptyBox());
          open.push_back(Open{line_no, key.column, std::string(line)});
        } else if (key.text == "}") {
          if (t.size() != 1) fail(t[1].column, "unexpected text after '}'");
          if (open.empty()) fail(key.column, "'}' closes no group");
          open.pop_back();
          scene.kinds.push_back(BoxTreeNodeKind::kEnd);
          scene.boxes.push_back(emptyBox());
        } else {
          fail(key.column, "unknown element '" + std::string(key.text) +
                               "' (expected clip, blend, leaf or })");
        }
      }
      if (eol == text_.size()) break;
      pos = eol + 1;
    }
    if (!open.empty())
      throw ParseError(SourceLocation{file_, open.back().line, open.back().column},
                       "group is never closed", open.back().source);
    if (scene.dimensions == 0) scene.dimensions = 2;
    return scene;
  }

 private:
  [[noreturn]] void fail(int column, const std::string& message) const {
    throw ParseError(SourceLocation{file_, line_no_, column}, message, std::string(line_));
  }

  float number(const Token& t) const {
    float v = 0;
    const char* first = t.text.data();
    const char* last = first + t.text.size();
    if (first != last && *first == '+') ++first;
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last)
      fail(t.column, "expected a number, got '" + std::string(t.text) + "'");
    if (!std::isfinite(v)) fail(t.column, "coordinates must be finite");
    return v;
  }

  std::string_view text_;
  std::string file_;
  std::string_view line_;
  int line_no_ = 0;
};

void appendFloat(std::string& s, float v) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  s.append(buf, ptr);
}

void appendBox(std::string& s, const Box3& b, int dims) {
  const float v2[4] = {b.min.x, b.min.y, b.max.x, b.max.y};
  const float v3[6] = {b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z};
  const float* v = dims == 3 ? v3 : v2;
  for (int k = 0; k < 2 * dims; ++k) {
    s += ' ';
    appendFloat(s, v[k]);
  }
}

const char* kindWord(BoxTreeNodeKind k) {
  switch (k) {
    case BoxTreeNodeKind::kLeaf: return "leaf";
    case BoxTreeNodeKind::kClip: return "clip";
    case BoxTreeNodeKind::kBlend: return "blend";
    case BoxTreeNodeKind::kEnd: return "end";
  }
  return "?";
}

}  // namespace

BoxTree parseBoxTree(std::string_view text, const std::string& filename) {
  return BoxTreeParser(text, filename).parse();
}

BoxTree readBoxTree(const std::filesystem::path& path) {
  return parseBoxTree(readInputFile(path, "box tree"), path.string());
}

std::string writeBoxTree(const BoxTree& scene) {
  std::string s;
  int indent = 0;
  for (uint64_t i = 0; i < scene.size(); ++i) {
    BoxTreeNodeKind k = scene.kinds[i];
    if (k == BoxTreeNodeKind::kEnd && indent > 0) --indent;
    s.append(static_cast<size_t>(2 * indent), ' ');
    switch (k) {
      case BoxTreeNodeKind::kLeaf:
        s += "leaf";
        appendBox(s, scene.boxes[i], scene.dimensions);
        break;
      case BoxTreeNodeKind::kClip:
        s += "clip";
        appendBox(s, scene.boxes[i], scene.dimensions);
        s += " {";
        ++indent;
        break;
      case BoxTreeNodeKind::kBlend:
        s += "blend {";
        ++indent;
        break;
      case BoxTreeNodeKind::kEnd: s += "}"; break;
    }
    s += '\n';
  }
  return s;
}

std::string writeBoxTreeBoxes(const BoxTree& scene, const Box3* boxes) {
  std::string s;
  for (uint64_t i = 0; i < scene.size(); ++i) {
    s += kindWord(scene.kinds[i]);
    if (boxes[i].empty()) s += " empty";
    else appendBox(s, boxes[i], scene.dimensions);
    s += '\n';
  }
  return s;
}

BoxTree randomBoxTree(uint64_t n, uint64_t seed, int dimensions) {
  BoxTree scene;
  scene.dimensions = dimensions == 3 ? 3 : 2;
  scene.kinds.reserve(n);
  scene.boxes.reserve(n);
  const pg_u32 kPhase = 0x5ce1u;
  uint64_t depth = 0;
  auto randomBox = [&](uint64_t i, float max_size) {
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      if (a == 2 && scene.dimensions == 2) {
        lo[a] = hi[a] = 0.0f;
        continue;
      }
      float c = 1000.0f * pgUniformAt(seed, kPhase, i, 1u + 2u * a);
      float h = 0.5f * max_size * pgUniformAt(seed, kPhase, i, 2u + 2u * a);
      lo[a] = std::max(0.0f, c - h);
      hi[a] = std::min(1000.0f, c + h);
    }
    return Box3{{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
  };
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t remaining = n - i;
    float u = pgUniformAt(seed, kPhase, i, 0u);
    BoxTreeNodeKind k;
    if (remaining <= depth) k = BoxTreeNodeKind::kEnd;
    else if (u < 0.25f && remaining >= depth + 2) k = u < 0.125f ? BoxTreeNodeKind::kClip : BoxTreeNodeKind::kBlend;
    else if (u < 0.5f && depth > 0) k = BoxTreeNodeKind::kEnd;
    else k = BoxTreeNodeKind::kLeaf;
    scene.kinds.push_back(k);
    if (k == BoxTreeNodeKind::kLeaf) scene.boxes.push_back(randomBox(i, 100.0f));
    else if (k == BoxTreeNodeKind::kClip) scene.boxes.push_back(randomBox(i, 700.0f));
    else scene.boxes.push_back(emptyBox());
    if (k == BoxTreeNodeKind::kClip || k == BoxTreeNodeKind::kBlend) ++depth;
    if (k == BoxTreeNodeKind::kEnd) --depth;
  }
  return scene;
}

}  // namespace procgen

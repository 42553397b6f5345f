// Comment removal, line continuation and position tracking for the L-system
// front end (see lexer.hpp for the rules and why they are what they are).
#include "lsystem/lexer.hpp"

namespace procgen::detail {

std::string_view withoutBom(std::string_view text) {
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  return text.substr(0, kUtf8Bom.size()) == kUtf8Bom ? text.substr(kUtf8Bom.size()) : text;
}

SourceText::SourceText(std::string_view text, std::string filename)
    : text_(withoutBom(text)), filename_(std::move(filename)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string SourceText::physicalLine(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string_view::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  // Whole: ParseError shows a window of a long line around the column.
  return std::string(text_.substr(begin, end - begin));
}

void SourceText::fail(int line, int column, const std::string& message) const {
  throw ParseError(SourceLocation{filename_, line, column}, message, physicalLine(line));
}

namespace {

bool allSpace(const std::string& s) {
  for (char c : s)
    if (!isSpace(c)) return false;
  return true;
}

}  // namespace

std::vector<LogicalLine> splitLogicalLines(const SourceText& source) {
  std::string_view text = source.text();
  std::vector<LogicalLine> out;
  LogicalLine cur;
  cur.source = &source;
  int line = 1;
  int col = 1;
  auto push = [&](char c, int l, int co) {
    cur.text.push_back(c);
    cur.line.push_back(l);
    cur.column.push_back(co);
  };
  auto finish = [&](int l, int co) {
    cur.line.push_back(l);
    cur.column.push_back(co);
    out.push_back(std::move(cur));
    cur = LogicalLine{};
    cur.source = &source;
  };
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      size_t k = cur.text.size();
      while (k > 0 && isSpace(cur.text[k - 1])) --k;
      // `\` is also the roll-left turtle symbol (ABOP writes `\\\\`), so only a
      // backslash standing alone after whitespace continues the line.
      bool continued = k >= 1 && cur.text[k - 1] == '\\' && (k == 1 || isSpace(cur.text[k - 2]));
      if (continued) {
        cur.text[k - 1] = ' ';
      } else {
        finish(line, col);
      }
      ++i;
      ++line;
      col = 1;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      int start_line = line;
      int start_col = col;
      push(' ', line, col);
      i += 2;
      col += 2;
      bool closed = false;
      while (i < n) {
        if (text[i] == '*' && i + 1 < n && text[i + 1] == '/') {
          i += 2;
          col += 2;
          closed = true;
          break;
        }
        if (text[i] == '\n') {
          ++line;
          col = 1;
        } else {
          ++col;
        }
        ++i;
      }
      if (!closed) source.fail(start_line, start_col, "unterminated /* comment");
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      // `//` is two roll-right turtle commands in ABOP successors ("/////"),
      // so it starts a comment only where a module string cannot continue.
      bool after_space = cur.text.empty() || isSpace(cur.text.back());
      bool before_space = i + 2 >= n || isSpace(text[i + 2]);
      if (allSpace(cur.text) || (after_space && before_space)) {
        while (i < n && text[i] != '\n') {
          ++i;
          ++col;
        }
        continue;
      }
    }
    push(c, line, col);
    ++i;
    ++col;
  }
  if (!cur.text.empty()) finish(line, col);
  return out;
}

LogicalLine wholeTextLine(const SourceText& source) {
  std::string_view text = source.text();
  LogicalLine out;
  out.source = &source;
  int line = 1;
  int col = 1;
  for (char c : text) {
    out.text.push_back(c == '\n' ? ' ' : c);
    out.line.push_back(line);
    out.column.push_back(col);
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  out.line.push_back(line);
  out.column.push_back(col);
  return out;
}

}  // namespace procgen::detail

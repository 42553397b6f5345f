// Source text handling for the L-system front end: comment removal, line
// continuation and byte-exact positions for diagnostics.
//
// cpfg runs .l files through the C preprocessor, so a block comment acts as a
// single space and may join physical lines. The rest of the language is line
// oriented; this file turns the raw bytes into "logical lines" whose every byte
// remembers its physical line and column, so that any later stage can throw a
// ParseError pointing at the original text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "procgen/error.hpp"

namespace procgen::detail {

/// `text` without a leading UTF-8 byte-order mark, which some editors write:
/// it is not part of the text (issue 16: it read as "expected a production"
/// at 1:1). Used by the .l and .scene readers.
std::string_view withoutBom(std::string_view text);

/// The original file (without a byte-order mark), kept for the caret line of diagnostics.
class SourceText {
 public:
  SourceText(std::string_view text, std::string filename);

  const std::string& filename() const { return filename_; }
  std::string_view text() const { return text_; }
  /// Physical line `line` (1-based) without its newline, or "" when out of range.
  std::string physicalLine(int line) const;
  [[noreturn]] void fail(int line, int column, const std::string& message) const;

 private:
  std::string_view text_;
  std::string filename_;
  std::vector<size_t> line_starts_;
};

/// One line after comments are removed and continuations joined. `line[i]` and
/// `column[i]` give the physical position of text[i]; both have one extra entry
/// for the position just past the end (used for "unexpected end of line").
struct LogicalLine {
  std::string text;
  std::vector<int> line;
  std::vector<int> column;
  const SourceText* source = nullptr;

  [[noreturn]] void fail(size_t pos, const std::string& message) const {
    if (pos > text.size()) pos = text.size();
    source->fail(line[pos], column[pos], message);
  }
  int lineAt(size_t pos) const { return line[pos < text.size() ? pos : text.size()]; }
};

/// Splits `source` into logical lines. `/* */` comments become one space;
/// `//` starts a comment at the beginning of a line or after whitespace when
/// followed by whitespace or the end of the line (so turtle rolls like
/// `/////` stay modules); a final `\` preceded by whitespace continues the line.
/// Throws ParseError for an unterminated block comment.
std::vector<LogicalLine> splitLogicalLines(const SourceText& source);

/// A single logical line covering the whole text (newlines become spaces), for
/// module strings given on the command line or in tests.
LogicalLine wholeTextLine(const SourceText& source);

inline bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
inline bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }
inline bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace procgen::detail

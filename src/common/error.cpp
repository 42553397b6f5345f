#include "procgen/error.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace procgen {
namespace {

bool isContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/// Length of the well-formed UTF-8 sequence of a non-ASCII, non-control
/// character at text[i], 0 when the bytes there are not one (RFC 3629 table:
/// no overlongs, no surrogates, nothing above U+10FFFF, no C1 controls).
size_t utf8Length(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = at(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (!isContinuation(at(k))) return 0;
  if (c == 0xC2 && at(1) < 0xA0) return 0;  // U+0080..U+009F: C1 controls
  return n;
}

/// Appends the character at text[i] to `out`, escaped when it is a control
/// byte or not valid UTF-8; returns the bytes of `text` it consumed. Tabs stay
/// tabs when `raw_tabs` (the caret line of a diagnostic reproduces them).
size_t appendChar(std::string& out, std::string_view text, size_t i, bool raw_tabs) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  if (c >= 0x20 && c < 0x7F) {
    out += static_cast<char>(c);
    return 1;
  }
  if (c == '\t') {
    out += raw_tabs ? "\t" : "\\t";
    return 1;
  }
  if (c == '\n' || c == '\r') {
    out += c == '\n' ? "\\n" : "\\r";
    return 1;
  }
  if (const size_t n = c >= 0x80 ? utf8Length(text, i) : 0) {
    out.append(text.substr(i, n));
    return n;
  }
  static const char kHex[] = "0123456789ABCDEF";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
  return 1;
}

/// The escaped form of text[begin, end) and, for each character, the offset
/// in the output where it starts and the offset in `text` it came from.
struct Escaped {
  std::string text;
  std::vector<size_t> out_offsets;
  std::vector<size_t> in_offsets;
};

Escaped escape(std::string_view text, size_t begin, size_t end, bool raw_tabs) {
  Escaped e;
  for (size_t i = begin; i < end;) {
    e.out_offsets.push_back(e.text.size());
    e.in_offsets.push_back(i);
    i += appendChar(e.text, text, i, raw_tabs);
  }
  e.out_offsets.push_back(e.text.size());
  e.in_offsets.push_back(end);
  return e;
}

/// The window of a long source line shown under a diagnostic, and where the
/// caret goes in it: about kBefore bytes before the column and kAfter after.
constexpr size_t kBefore = 60, kAfter = 40;

std::string formatDiagnostic(const SourceLocation& loc, const std::string& message,
                             const std::string& source_line) {
  std::ostringstream out;
  out << (loc.file.empty() ? "<input>" : printableText(loc.file)) << ':' << loc.line << ':' << loc.column
      << ": error: " << printableText(message);
  if (!source_line.empty()) {
    const std::string_view line = source_line;
    const size_t caret = loc.column > 0 ? std::min(static_cast<size_t>(loc.column - 1), line.size()) : 0;
    size_t begin = caret > kBefore ? caret - kBefore : 0;
    size_t end = std::min(line.size(), caret + kAfter);
    while (begin > 0 && isContinuation(static_cast<unsigned char>(line[begin]))) --begin;
    while (end < line.size() && isContinuation(static_cast<unsigned char>(line[end]))) ++end;
    const std::string lead = begin > 0 ? "..." : "";
    const Escaped before = escape(line, begin, caret, true);
    const Escaped after = escape(line, caret, end, true);
    out << "\n    " << lead << before.text << after.text << (end < line.size() ? "..." : "") << "\n    "
        << std::string(lead.size(), ' ');
    // One caret column per shown character; tabs reproduced so the caret lines up.
    for (char c : before.text)
      if (!isContinuation(static_cast<unsigned char>(c))) out << (c == '\t' ? '\t' : ' ');
    out << '^';
  }
  return out.str();
}

}  // namespace

std::string printableText(std::string_view text, size_t max_bytes) {
  Escaped e = escape(text, 0, text.size(), false);
  if (e.text.size() <= max_bytes) return std::move(e.text);
  // Keep about two thirds of the room for the head and one third for the
  // tail, cutting only between characters.
  const size_t head_room = max_bytes * 2 / 3, tail_room = max_bytes - head_room;
  size_t head = 0;  // characters kept at the front
  while (head + 1 < e.out_offsets.size() && e.out_offsets[head + 1] <= head_room) ++head;
  size_t tail = e.out_offsets.size() - 1;  // first character kept at the back
  while (tail > head && e.text.size() - e.out_offsets[tail - 1] <= tail_room) --tail;
  const size_t omitted = e.in_offsets[tail] - e.in_offsets[head];
  return e.text.substr(0, e.out_offsets[head]) + "...[" + std::to_string(omitted) + " bytes]..." +
         e.text.substr(e.out_offsets[tail]);
}

ParseError::ParseError(SourceLocation location, std::string message, std::string source_line)
    : Error(formatDiagnostic(location, message, source_line), ExitCode::kBadInput),
      location_(std::move(location)),
      message_(std::move(message)) {}

}  // namespace procgen

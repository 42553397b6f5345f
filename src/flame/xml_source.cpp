// In-place pugixml parsing with offsets into the original text (xml_source.hpp).
// pugixml runs without end-of-line normalisation and attribute whitespace
// conversion, so a value differs from its raw bytes only where an entity
// reference was decoded; offsets inside a value are exact up to the first one.
#include "flame/xml_source.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

namespace procgen::flame {
namespace {

constexpr unsigned kParseOptions = pugi::parse_cdata | pugi::parse_escapes;

}  // namespace

XmlSource::XmlSource(std::string_view text, std::string file_name)
    : text_(text), file_name_(std::move(file_name)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);

  // XML forbids NUL; pugixml would stop reading at it without saying so.
  if (const size_t nul = text_.find('\0'); nul != std::string_view::npos)
    fail(nul, "malformed XML: NUL byte");

  buffer_ = std::make_unique<char[]>(text_.size() + 1);
  std::memcpy(buffer_.get(), text_.data(), text_.size());
  buffer_[text_.size()] = '\0';
  const pugi::xml_parse_result result =
      document_.load_buffer_inplace(buffer_.get(), text_.size(), kParseOptions, pugi::encoding_utf8);
  if (!result) {
    const size_t at = std::min(static_cast<size_t>(std::max<ptrdiff_t>(result.offset, 0)), text_.size());
    fail(at, std::string("malformed XML: ") + result.description());
  }

  // libxml2 (flam3's parser) rejects a repeated attribute; pugixml keeps both.
  // Walk every element without recursion (the nesting depth is the input's).
  pugi::xml_node node = document_.first_child();
  while (node) {
    if (node.type() == pugi::node_element) {
      size_t count = 0;
      for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) ++count;
      auto repeated = [&](pugi::xml_attribute a) {
        fail(offsetOf(a),
             std::string("malformed XML: attribute '") + a.name() + "' repeated on <" + node.name() + ">");
      };
      if (count > 1 && count <= 16) {  // the usual case: pairwise, no allocation
        for (pugi::xml_attribute a = node.first_attribute().next_attribute(); a; a = a.next_attribute())
          for (pugi::xml_attribute b = node.first_attribute(); b != a; b = b.next_attribute())
            if (std::strcmp(a.name(), b.name()) == 0) repeated(a);
      } else if (count > 16) {
        std::unordered_set<std::string_view> seen;
        seen.reserve(count);
        for (pugi::xml_attribute a = node.first_attribute(); a; a = a.next_attribute())
          if (!seen.insert(a.name()).second) repeated(a);
      }
    }
    if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling()) node = node.parent();
    if (node) node = node.next_sibling();
  }
}

size_t XmlSource::offsetOfPointer(const char* p, size_t fallback) const {
  const char* begin = buffer_.get();
  if (p >= begin && p <= begin + text_.size()) return static_cast<size_t>(p - begin);
  return fallback;
}

size_t XmlSource::offsetOf(pugi::xml_node node) const {
  // The name starts one byte after '<'; point at the '<'.
  const size_t name = offsetOfPointer(node.name(), 0);
  return name > 0 && text_[name - 1] == '<' ? name - 1 : name;
}

size_t XmlSource::offsetOf(pugi::xml_attribute attribute) const {
  return offsetOfPointer(attribute.name(), 0);
}

size_t XmlSource::valueOffset(pugi::xml_attribute attribute) const {
  return offsetOfPointer(attribute.value(), offsetOf(attribute));
}

size_t XmlSource::mapDecodedIndex(size_t start, size_t decoded_length, char terminator, size_t index) const {
  // Identity when the raw bytes up to the index hold no entity reference.
  const size_t end = std::min(text_.size(), start + index);
  if (text_.substr(start, end - start).find('&') != std::string_view::npos) return start;
  const size_t raw_end = text_.find(terminator, start);
  const size_t raw_length = (raw_end == std::string_view::npos ? text_.size() : raw_end) - start;
  return std::min(start + std::min(index, decoded_length), start + raw_length);
}

size_t XmlSource::valueOffset(pugi::xml_attribute attribute, size_t index) const {
  const size_t start = valueOffset(attribute);
  if (start == 0 || start > text_.size()) return start;
  const char quote = text_[start - 1];
  if (quote != '"' && quote != '\'') return start;
  return mapDecodedIndex(start, std::strlen(attribute.value()), quote, index);
}

size_t XmlSource::textOffset(pugi::xml_node text_node, size_t index) const {
  const size_t start = offsetOfPointer(text_node.value(), offsetOf(text_node.parent()));
  if (text_node.type() == pugi::node_cdata) return std::min(start + index, text_.size());
  return mapDecodedIndex(start, std::strlen(text_node.value()), '<', index);
}

int XmlSource::line(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<int>(it - line_starts_.begin());
}

SourceLocation XmlSource::locate(size_t offset) const {
  offset = std::min(offset, text_.size());
  const int l = line(offset);
  const size_t start = line_starts_[static_cast<size_t>(l - 1)];
  return SourceLocation{file_name_, l, static_cast<int>(offset - start) + 1};
}

std::string XmlSource::where(size_t offset) const {
  return file_name_ + ":" + std::to_string(line(std::min(offset, text_.size())));
}

void XmlSource::fail(size_t offset, const std::string& message) const {
  const SourceLocation location = locate(offset);
  const size_t start = line_starts_[static_cast<size_t>(location.line - 1)];
  size_t end = text_.find('\n', start);
  if (end == std::string_view::npos) end = text_.size();
  throw ParseError(location, message, std::string(text_.substr(start, end - start)));
}

void XmlSource::failAt(std::string_view text, const std::string& file_name, size_t offset,
                       const std::string& message) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') ++line, start = i + 1;
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  throw ParseError(SourceLocation{file_name, line, static_cast<int>(offset - start) + 1}, message,
                   std::string(text.substr(start, end - start)));
}

}  // namespace procgen::flame

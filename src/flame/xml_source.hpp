// An XML text parsed with pugixml in place, so every element name, attribute
// name and value, and text node points into one buffer whose offsets are the
// original text's: diagnostics get file:line:col for any of them (the genome
// reader, the palette library). Used only inside src/flame/.
#pragma once

#include <cstddef>
#include <memory>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/error.hpp"

namespace procgen::flame {

class XmlSource {
 public:
  /// Parses `text` (kept by reference: it must outlive this object).
  /// Malformed XML, a NUL byte and repeated attributes throw ParseError at
  /// the offending byte.
  XmlSource(std::string_view text, std::string file_name);
  XmlSource(const XmlSource&) = delete;
  XmlSource& operator=(const XmlSource&) = delete;

  const pugi::xml_document& document() const { return document_; }
  const std::string& fileName() const { return file_name_; }
  std::string_view text() const { return text_; }

  /// Offset of an element (its name), an attribute (its name) or the first
  /// byte of an attribute's value / a text node's content.
  size_t offsetOf(pugi::xml_node node) const;
  size_t offsetOf(pugi::xml_attribute attribute) const;
  size_t valueOffset(pugi::xml_attribute attribute) const;
  /// Offset of byte `index` of the decoded value / text: exact when the raw
  /// text has no entity references before it, else the value's first byte.
  size_t valueOffset(pugi::xml_attribute attribute, size_t index) const;
  size_t textOffset(pugi::xml_node text_node, size_t index) const;

  int line(size_t offset) const;
  SourceLocation locate(size_t offset) const;
  /// "file:line" (warnings).
  std::string where(size_t offset) const;
  [[noreturn]] void fail(size_t offset, const std::string& message) const;
  /// The same for a text that is no longer parsed (scans it for the line).
  [[noreturn]] static void failAt(std::string_view text, const std::string& file_name, size_t offset,
                                  const std::string& message);

 private:
  size_t offsetOfPointer(const char* p, size_t fallback) const;
  size_t mapDecodedIndex(size_t start, size_t decoded_length, char terminator, size_t index) const;

  std::string_view text_;
  std::string file_name_;
  std::unique_ptr<char[]> buffer_;  // pugixml's in-place copy (NUL-terminated names and values)
  pugi::xml_document document_;
  std::vector<size_t> line_starts_;  // offset of each line's first byte
};

}  // namespace procgen::flame

// Stanford PLY records shared by the mesh writer (geometry/ply_writer.cpp) and
// the point-set writer (points/ply_points.cpp): one value writer for both
// encodings, so ASCII and binary_little_endian bodies come from the same calls.
#pragma once

#include <cstdint>
#include <string_view>

#include "io/output_file.hpp"

namespace procgen::io {

/// The `ply` / `format` lines that open every header.
inline void plyHeaderStart(OutputStream& out, bool ascii) {
  out.text("ply\nformat ");
  out.text(ascii ? "ascii" : "binary_little_endian");
  out.text(" 1.0\n");
}

/// Body values in declaration order. ASCII: values separated by one space,
/// each record ended by end() with a newline; floats in shortest round-trip
/// form. Binary: the values packed little-endian, end() writes nothing.
class PlyRecords {
 public:
  PlyRecords(OutputStream& out, bool ascii) : out_(out), ascii_(ascii) {}

  void f32(float v) {
    if (!ascii_) return out_.binary(v);
    separate();
    out_.number(v);
  }
  void u8(uint8_t v) {
    if (!ascii_) return out_.binary(v);
    separate();
    out_.number(uint32_t{v});
  }
  void i32(int32_t v) {
    if (!ascii_) return out_.binary(v);
    separate();
    out_.number(v);
  }
  void end() {
    if (!ascii_) return;
    out_.put('\n');
    first_ = true;
  }

 private:
  void separate() {
    if (!first_) out_.put(' ');
    first_ = false;
  }
  OutputStream& out_;
  bool ascii_;
  bool first_ = true;
};

}  // namespace procgen::io

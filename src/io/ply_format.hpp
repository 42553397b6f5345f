// Stanford PLY records shared by the mesh writer (geometry/ply_writer.cpp) and
// the point-set writer (points/ply_points.cpp): one value writer for both
// encodings, so ASCII and binary_little_endian bodies come from the same calls.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

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

  /// A whole fixed-layout record (e.g. a vertex) in one call: binary packs it
  /// into one write of a compile-time size — the hot path of big meshes.
  template <typename... T>
  void record(T... values) {
    if (ascii_) {
      (text(values), ...);
      end();
      return;
    }
    char bytes[(sizeof(T) + ...)];
    size_t at = 0;
    ((std::memcpy(bytes + at, &values, sizeof(T)), at += sizeof(T)), ...);
    out_.write(bytes, sizeof bytes);
  }

  // Value by value, for records whose layout varies (lists, optional properties).

  void f32(float v) {
    if (!ascii_) return pack(v);
    text(v);
  }
  void u8(uint8_t v) {
    if (!ascii_) return pack(v);
    text(v);
  }
  void i32(int32_t v) {
    if (!ascii_) return pack(v);
    text(v);
  }
  void end() {
    if (!ascii_) return flushRecord();
    out_.put('\n');
    first_ = true;
  }

 private:
  // Binary values are gathered per record and handed over in one write: with
  // one write per value the binary mesh writer took about 1.7x as long (perf
  // profile of a 2-million-segment plant).
  template <typename T>
  void pack(T v) {
    static_assert(std::endian::native == std::endian::little);
    if (used_ + sizeof(T) > sizeof record_) flushRecord();
    std::memcpy(record_ + used_, &v, sizeof(T));
    used_ += sizeof(T);
  }
  void flushRecord() {
    if (used_ <= OutputStream::kShort) out_.writeShort(record_, used_);
    else out_.write(record_, used_);
    used_ = 0;
  }
  template <typename T>
  void text(T v) {
    if (!first_) out_.put(' ');
    first_ = false;
    if constexpr (std::is_same_v<T, uint8_t>) out_.number(uint32_t{v});
    else out_.number(v);
  }
  OutputStream& out_;
  bool ascii_;
  bool first_ = true;
  size_t used_ = 0;
  char record_[256] = {};  // >= OutputStream::kShort, initialized: writeShort copies past used_
};

}  // namespace procgen::io

// Buffered binary/text output for every writer, over a ByteSink
// (procgen/output.hpp) — a file, memory, or a caller's stream. Files with
// millions of numbers must be written fast: numbers are formatted with
// std::to_chars (shortest round-trip form for floats) straight into a large
// buffer, never through iostream formatting. Sink failures are OutputErrors
// naming the output.
#pragma once

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/output.hpp"

namespace procgen::io {

class OutputStream {
 public:
  explicit OutputStream(ByteSink& sink) : sink_(sink), buffer_(kCapacity) {}
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  void write(const void* data, size_t size) {
    if (size > kCapacity - used_) {
      flush();
      if (size > kCapacity) {
        sink_.write(data, size);
        return;
      }
    }
    std::memcpy(buffer_.data() + used_, data, size);
    used_ += size;
  }
  /// write() of at most kShort bytes from a source with kShort readable bytes:
  /// one fixed-size copy (the bytes past `size` are overwritten later), which
  /// is much cheaper than a variable-size memcpy for small binary records.
  static constexpr size_t kShort = 32;
  void writeShort(const void* data, size_t size) {
    reserve(kShort);
    std::memcpy(buffer_.data() + used_, data, kShort);
    used_ += size;
  }
  void put(char c) {
    if (used_ == kCapacity) flush();
    buffer_[used_++] = c;
  }
  void text(std::string_view s) { write(s.data(), s.size()); }

  /// Shortest text that reads back to exactly `value`; -0 is written as 0.
  void number(float value) {
    reserve(32);
    if (value == 0.0f) value = 0.0f;
    auto result = std::to_chars(buffer_.data() + used_, buffer_.data() + kCapacity, value);
    used_ = static_cast<size_t>(result.ptr - buffer_.data());
  }
  void number(uint64_t value) {
    reserve(24);
    auto result = std::to_chars(buffer_.data() + used_, buffer_.data() + kCapacity, value);
    used_ = static_cast<size_t>(result.ptr - buffer_.data());
  }
  void number(int64_t value) {
    reserve(24);
    auto result = std::to_chars(buffer_.data() + used_, buffer_.data() + kCapacity, value);
    used_ = static_cast<size_t>(result.ptr - buffer_.data());
  }
  void number(int32_t value) { number(static_cast<int64_t>(value)); }
  void number(uint32_t value) { number(static_cast<uint64_t>(value)); }

  /// Little-endian binary value (the build targets little-endian hosts).
  template <typename T>
  void binary(T value) {
    static_assert(std::endian::native == std::endian::little);
    write(&value, sizeof(T));
  }

  /// Hands the buffered bytes to the sink and calls its finish(); call this on
  /// the success path (a stream dropped after an exception writes nothing more).
  void close() {
    flush();
    sink_.finish();
  }

  const ByteSink& sink() const { return sink_; }

 private:
  static constexpr size_t kCapacity = size_t{1} << 20;
  void reserve(size_t n) {
    if (kCapacity - used_ < n) flush();
  }
  void flush() {
    if (used_ != 0) sink_.write(buffer_.data(), used_);
    used_ = 0;
  }

  ByteSink& sink_;
  std::vector<char> buffer_;
  size_t used_ = 0;
};

/// The path variant of every writer: opens `path` (OutputError if it cannot),
/// runs `write` on the file sink, then finishes it. One format implementation
/// serves files and memory.
void writeToFile(const std::filesystem::path& path, const std::function<void(ByteSink&)>& write);

/// The memory variant: the bytes `write` produces.
std::vector<uint8_t> writeToMemory(const std::function<void(ByteSink&)>& write);

}  // namespace procgen::io

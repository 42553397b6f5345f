// Buffered binary/text output for the writers. Files with millions of numbers
// must be written fast: numbers are formatted with std::to_chars (shortest
// round-trip form for floats) straight into a large buffer, never through
// iostream formatting. Every failure becomes an OutputError naming the path.
#pragma once

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace procgen::io {

class OutputFile {
 public:
  /// Opens `path` for writing (truncating). Throws OutputError.
  explicit OutputFile(const std::filesystem::path& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t size) {
    if (size > kCapacity - used_) {
      flush();
      if (size > kCapacity) {
        writeRaw(data, size);
        return;
      }
    }
    std::memcpy(buffer_.data() + used_, data, size);
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

  /// Flushes and closes; throws OutputError if anything failed. The destructor
  /// closes silently, so call this on the success path.
  void close();

 private:
  static constexpr size_t kCapacity = size_t{1} << 20;
  void reserve(size_t n) {
    if (kCapacity - used_ < n) flush();
  }
  void flush();
  void writeRaw(const void* data, size_t size);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  size_t used_ = 0;
};

}  // namespace procgen::io

// procgen output sinks: where a writer's bytes go. Every writer in procgen
// (geometry in io.hpp, PNG images in image.hpp, volumes in volume.hpp, point
// sets in points.hpp) has one implementation that writes to a ByteSink; the
// path variants open a FileSink and the memory variants fill a MemorySink, so
// a file and its in-memory copy are the same bytes by construction. A server
// streams an output by implementing ByteSink (no temporary files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace procgen {

/// A destination for bytes. Writers call write() with chunks in order (they
/// buffer internally, so chunks are usually large) and finish() once at the
/// end of a successful write. Implementations throw OutputError (error.hpp)
/// when they cannot accept bytes; writers let it propagate.
/// Thread safety: a sink is used by one writer at a time.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  /// Appends `size` bytes. Throws OutputError.
  virtual void write(const void* data, size_t size) = 0;
  /// The output is complete: flush and close. Throws OutputError. Default: nothing.
  virtual void finish() {}
  /// What error messages call this output: a file's path, "memory" otherwise.
  virtual std::string name() const { return "memory"; }
};

/// Collects everything in a byte vector (never fails except by std::bad_alloc).
/// For outputs of tens of MB most of the time goes into growing the vector
/// into fresh memory (bench/bench_io.cpp, ply_tubes: memmove and page faults
/// were about 80% of a perf profile); a server should stream through its own
/// ByteSink instead.
class MemorySink final : public ByteSink {
 public:
  void write(const void* data, size_t size) override {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  /// Moves the bytes out, leaving the sink empty.
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

/// Writes a file, created or truncated on construction. finish() flushes and
/// closes and reports any failure; a FileSink destroyed without finish()
/// (a writer threw) closes silently and leaves a partial file.
class FileSink final : public ByteSink {
 public:
  /// Throws OutputError naming the path when it cannot be opened for writing.
  explicit FileSink(const std::filesystem::path& path);
  ~FileSink() override;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  void write(const void* data, size_t size) override;
  void finish() override;
  std::string name() const override { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace procgen

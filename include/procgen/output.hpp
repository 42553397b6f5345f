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

/// Writes a file atomically (issue 16): the bytes go to a hidden temporary in
/// the same directory (`.NAME.procgen-tmp-PID-N`), and finish() renames it
/// over `path` once everything is written and flushed, so `path` holds either
/// its previous contents or the complete new file — never a truncated one,
/// also on a full disk. A FileSink destroyed without finish() (a writer
/// threw) removes its temporary. While an OutputTransaction is open on this
/// thread, finish() hands the complete temporary to it instead of renaming.
///
/// Exceptions to the temporary: an existing `path` that is not a regular file
/// (/dev/null, a FIFO, a terminal) is written in place — replacing a device
/// node by a file would be wrong — and so is an existing writable file in a
/// directory where no new file can be created. The replaced file gets the
/// default mode (0666 minus the umask), not the old file's mode. Durability
/// across a power failure is not promised (no fsync); an interrupted process
/// (SIGKILL) may leave a hidden temporary, never a partial `path`.
class FileSink final : public ByteSink {
 public:
  /// Throws OutputError naming the path when it cannot be opened for writing
  /// (missing directory, permissions, `path` is a directory), and
  /// Error(ExitCode::kUsage) when the open transaction already wrote `path`.
  explicit FileSink(const std::filesystem::path& path);
  ~FileSink() override;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  void write(const void* data, size_t size) override;
  void finish() override;
  std::string name() const override { return path_; }
  /// The file the bytes go to: the temporary, or `path` when written in
  /// place. For a collective writer (procgen/distributed.hpp) whose other
  /// processes write into the same file before finish().
  std::string dataPath() const { return temp_path_.empty() ? path_ : temp_path_; }

 private:
  std::string path_;
  std::string temp_path_;  ///< empty: written in place
  std::FILE* file_ = nullptr;
};

/// The files of one run (or of one writer with companion files, such as OBJ
/// with its .mtl) that appear together or not at all (issue 16). Opening a
/// transaction makes it the current one of this thread until it is
/// destroyed; every FileSink finished meanwhile on this thread is kept under
/// its temporary name. commit() renames them all into place; destroying an
/// uncommitted transaction (an output or the run failed) removes them, so no
/// output of a failed run is left and earlier files of the same names keep
/// their contents. Transactions nest: an inner commit() hands its files to
/// the enclosing transaction, which decides.
///
/// The CLI opens one per command (tools/procgen/main.cpp); writers with
/// companion files open their own so library callers get the same guarantee.
/// A path finished twice within one transaction is refused (Error, kUsage):
/// one output would silently replace the other.
/// Thread safety: a transaction belongs to the thread that opened it; files
/// written on other threads are not part of it.
class OutputTransaction {
 public:
  OutputTransaction();
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;

  /// Renames every finished file into place (or hands them to the enclosing
  /// transaction). Throws OutputError when a rename fails; the files not yet
  /// renamed are removed and the ones already renamed are removed too.
  void commit();

  /// The innermost open transaction of this thread, nullptr when none.
  static OutputTransaction* current();

 private:
  friend class FileSink;
  struct Pending {
    std::string temp_path;
    std::string path;
  };
  /// Throws when `canonical` was opened before in this or an enclosing transaction.
  void claim(const std::string& canonical, const std::string& shown);
  void adopt(std::string temp_path, std::string path);  ///< a finished temporary
  void discard() noexcept;

  OutputTransaction* outer_;
  std::vector<Pending> pending_;
  std::vector<std::string> claimed_;  ///< canonical paths of the files opened in this transaction
  bool committed_ = false;
};

}  // namespace procgen

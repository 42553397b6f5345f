#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "procgen/error.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw OutputError("cannot " + what + " '" + path + "': " + std::strerror(err));
}

thread_local OutputTransaction* current_transaction = nullptr;

/// The name the same file has however the command line spelled it ("./x",
/// "d/../x", a symlinked directory), for "written twice" checks.
std::string canonicalName(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.string();
}

/// Creates a new, empty hidden file beside `path` with the default mode
/// (0666 minus the umask, as fopen would); returns its descriptor or -1 with errno.
int createTemporary(const std::string& path, std::string& temp_path) {
  static std::atomic<uint64_t> counter{0};
  const fs::path target(path);
  std::string base = target.filename().string();
  if (base.size() > 180) base.resize(180);  // room for the suffix within NAME_MAX
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = "." + base + ".procgen-tmp-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter.fetch_add(1));
    temp_path = (target.parent_path() / name).string();
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

FileSink::FileSink(const std::filesystem::path& path) : path_(path.string()) {
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail("open for writing", path_, EISDIR);
  if (OutputTransaction* t = OutputTransaction::current()) t->claim(canonicalName(path_), path_);
  if (exists && !S_ISREG(st.st_mode)) {  // a device or FIFO: write through it
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) fail("open for writing", path_, errno);
    return;
  }
  const int fd = createTemporary(path_, temp_path_);
  if (fd < 0) {
    const int err = errno;
    // A writable file in a directory that takes no new files: overwrite it in place.
    if (exists && (err == EACCES || err == EPERM || err == EROFS) && ::access(path_.c_str(), W_OK) == 0) {
      temp_path_.clear();
      file_ = std::fopen(path_.c_str(), "wb");
      if (file_) return;
    }
    temp_path_.clear();
    fail("open for writing", path_, err);
  }
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp_path_.c_str());
    fail("open for writing", path_, err);
  }
}

FileSink::~FileSink() {
  if (!file_) return;
  std::fclose(file_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());  // unfinished: nothing of it stays
}

void FileSink::write(const void* data, size_t size) {
  if (!file_) throw OutputError("cannot write '" + path_ + "': already closed");
  if (size != 0 && std::fwrite(data, 1, size, file_) != size) fail("write", path_, errno);
}

void FileSink::finish() {
  std::FILE* file = file_;
  if (!file) return;
  file_ = nullptr;
  int err = 0;
  if (std::fflush(file) != 0 || std::ferror(file)) err = errno ? errno : EIO;
  if (std::fclose(file) != 0 && err == 0) err = errno;
  if (err != 0) {
    if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
    fail("write", path_, err);
  }
  if (temp_path_.empty()) return;
  if (OutputTransaction* t = OutputTransaction::current()) {
    t->adopt(std::move(temp_path_), path_);
    return;
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    err = errno;
    ::unlink(temp_path_.c_str());
    fail("replace", path_, err);
  }
}

OutputTransaction::OutputTransaction() : outer_(current_transaction) { current_transaction = this; }

OutputTransaction::~OutputTransaction() {
  if (!committed_) discard();
  current_transaction = outer_;
}

OutputTransaction* OutputTransaction::current() { return current_transaction; }

void OutputTransaction::claim(const std::string& canonical, const std::string& shown) {
  for (const OutputTransaction* t = this; t; t = t->outer_)
    if (std::find(t->claimed_.begin(), t->claimed_.end(), canonical) != t->claimed_.end())
      throw Error("output '" + shown + "' is written twice in one run: one would replace the other",
                  ExitCode::kUsage);
  claimed_.push_back(canonical);
}

void OutputTransaction::adopt(std::string temp_path, std::string path) {
  pending_.push_back({std::move(temp_path), std::move(path)});
}

void OutputTransaction::discard() noexcept {
  for (const Pending& p : pending_) ::unlink(p.temp_path.c_str());
  pending_.clear();
}

void OutputTransaction::commit() {
  if (committed_) return;
  committed_ = true;
  if (outer_) {
    for (Pending& p : pending_) outer_->pending_.push_back(std::move(p));
    for (std::string& c : claimed_) outer_->claimed_.push_back(std::move(c));
    pending_.clear();
    return;
  }
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (std::rename(pending_[i].temp_path.c_str(), pending_[i].path.c_str()) == 0) continue;
    const int err = errno;
    for (size_t k = 0; k < i; ++k) ::unlink(pending_[k].path.c_str());  // all or nothing
    for (size_t k = i; k < pending_.size(); ++k) ::unlink(pending_[k].temp_path.c_str());
    const std::string path = pending_[i].path;
    pending_.clear();
    fail("replace", path, err);
  }
  pending_.clear();
}

namespace io {

void writeToFile(const std::filesystem::path& path, const std::function<void(ByteSink&)>& write) {
  FileSink file(path);  // atomic: a failed write leaves nothing (procgen/output.hpp)
  write(file);
  file.finish();  // idempotent: the writer's own OutputStream::close() may have finished it
}

std::vector<uint8_t> writeToMemory(const std::function<void(ByteSink&)>& write) {
  MemorySink memory;
  write(memory);
  memory.finish();
  return memory.take();
}

}  // namespace io
}  // namespace procgen

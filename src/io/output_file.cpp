#include "io/output_file.hpp"

#include <cerrno>

#include "procgen/error.hpp"

namespace procgen {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw OutputError("cannot " + what + " '" + path + "': " + std::strerror(err));
}

}  // namespace

FileSink::FileSink(const std::filesystem::path& path) : path_(path.string()) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) fail("open for writing", path_, errno);
}

FileSink::~FileSink() {
  if (file_) std::fclose(file_);
}

void FileSink::write(const void* data, size_t size) {
  if (!file_) throw OutputError("cannot write '" + path_ + "': already closed");
  if (size != 0 && std::fwrite(data, 1, size, file_) != size) fail("write", path_, errno);
}

void FileSink::finish() {
  std::FILE* file = file_;
  if (!file) return;
  file_ = nullptr;
  if (std::fflush(file) != 0 || std::ferror(file)) {
    int err = errno;
    std::fclose(file);
    fail("write", path_, err);
  }
  if (std::fclose(file) != 0) fail("close", path_, errno);
}

namespace io {

void writeToFile(const std::filesystem::path& path, const std::function<void(ByteSink&)>& write) {
  FileSink file(path);
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

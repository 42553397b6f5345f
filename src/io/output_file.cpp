#include "io/output_file.hpp"

#include <cerrno>

#include "procgen/error.hpp"

namespace procgen::io {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw OutputError("cannot " + what + " '" + path + "': " + std::strerror(err));
}

}  // namespace

OutputFile::OutputFile(const std::filesystem::path& path)
    : path_(path.string()), buffer_(kCapacity) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) fail("open for writing", path_, errno);
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::writeRaw(const void* data, size_t size) {
  if (size != 0 && std::fwrite(data, 1, size, file_) != size) fail("write", path_, errno);
}

void OutputFile::flush() {
  writeRaw(buffer_.data(), used_);
  used_ = 0;
}

void OutputFile::close() {
  flush();
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fflush(file) != 0 || std::ferror(file)) {
    int err = errno;
    std::fclose(file);
    fail("write", path_, err);
  }
  if (std::fclose(file) != 0) fail("close", path_, errno);
}

}  // namespace procgen::io

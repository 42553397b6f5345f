// readInputFile (procgen/input.hpp): stat first, so a directory or a device
// is refused before it is opened (opening a FIFO-like device could block and
// /dev/zero never ends), then read with the size checked against the budget.
#include "procgen/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen {
namespace {

[[noreturn]] void refuse(std::string_view what, const std::string& path, const std::string& why) {
  throw Error("cannot read " + std::string(what) + " '" + path + "': " + why);
}

/// Why a file of this type is not read, or nullptr when it is read.
const char* refusal(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a file";
  if (S_ISSOCK(mode)) return "it is a socket, not a file";
  if (S_ISREG(mode) || S_ISFIFO(mode)) return nullptr;
  return "it is not a regular file";
}

}  // namespace

std::string readInputFile(const std::filesystem::path& path, std::string_view what, uint64_t budget_bytes) {
  const std::string name = path.string();
  struct stat st {};
  if (::stat(name.c_str(), &st) != 0) refuse(what, name, std::strerror(errno));
  if (const char* why = refusal(st.st_mode)) refuse(what, name, why);
  const std::string stage = std::string(what) + " '" + name + "'";
  if (S_ISREG(st.st_mode)) requireMemory(stage, static_cast<uint64_t>(st.st_size), budget_bytes);

  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) refuse(what, name, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // Checked again on the open file: the path may have been replaced since stat.
  if (::fstat(fd, &st) != 0) refuse(what, name, std::strerror(errno));
  if (const char* why = refusal(st.st_mode)) refuse(what, name, why);

  // A regular file is read into exactly its size (+1 so that EOF is seen
  // without growing); a pipe, or a file that grows while read, doubles the
  // buffer with the budget checked before each growth.
  std::string bytes(S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) + 1 : size_t{1} << 16, '\0');
  size_t used = 0;
  for (;;) {
    if (used == bytes.size()) {
      requireMemory(stage, 2 * static_cast<uint64_t>(bytes.size()), budget_bytes);
      bytes.resize(2 * bytes.size());
    }
    const ssize_t got = ::read(fd, bytes.data() + used, bytes.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) refuse(what, name, std::strerror(errno));
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  bytes.resize(used);
  return bytes;
}

}  // namespace procgen

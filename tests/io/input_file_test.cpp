// readInputFile (procgen/input.hpp, issue 16 D7): the bytes of a regular
// file or a pipe exactly; directories, devices and sockets refused before
// reading; a file or a pipe over the memory budget refused (the size is
// checked before reading a regular file and as a pipe's bytes arrive).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "io/io_test_util.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"

namespace procgen::iotest {
namespace {

namespace fs = std::filesystem;

TEST(InputFile, ReadsARegularFileExactly) {
  TempDir dir;
  std::string bytes;
  for (uint32_t i = 0; i < 300000; ++i) bytes += static_cast<char>(i * 7919u % 251u);  // binary, > one read
  std::ofstream(dir / "f.bin", std::ios::binary) << bytes;
  const std::string got = readInputFile(dir / "f.bin", "test input");
  EXPECT_TRUE(got == bytes) << got.size() << " bytes read of " << bytes.size();  // no 300 KB diff on failure
  std::ofstream(dir / "empty", std::ios::binary);
  EXPECT_EQ(readInputFile(dir / "empty", "test input"), "");
}

TEST(InputFile, RefusesDirectoriesDevicesAndMissingFiles) {
  TempDir dir;
  auto message = [](const fs::path& p) {
    try {
      (void)readInputFile(p, "test input");
    } catch (const Error& e) {
      EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(dir.path()).find("directory"), std::string::npos);
  EXPECT_NE(message("/dev/zero").find("device"), std::string::npos);
  EXPECT_NE(message("/dev/null").find("device"), std::string::npos);
  EXPECT_NE(message(dir / "missing").find("test input"), std::string::npos);
  const int s = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = (dir / "sock").string();
  if (s >= 0 && sock.size() < sizeof(addr.sun_path)) {
    std::copy(sock.begin(), sock.end(), addr.sun_path);
    ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_NE(message(sock).find("socket"), std::string::npos);
  }
  if (s >= 0) close(s);
}

TEST(InputFile, AFileOverTheBudgetIsRefusedBeforeReading) {
  TempDir dir;
  std::ofstream(dir / "f.txt") << std::string(5000, 'x');
  EXPECT_EQ(readInputFile(dir / "f.txt", "test input", 5001).size(), 5000u);
  EXPECT_THROW((void)readInputFile(dir / "f.txt", "test input", 4096), ResourceError);
}

TEST(InputFile, APipeIsReadAndHeldToTheBudget) {
  TempDir dir;
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto feed = [&](size_t bytes) {
    return std::thread([&fifo, bytes] {
      const int fd = open(fifo.c_str(), O_WRONLY);
      const std::string chunk(4096, 'p');
      for (size_t sent = 0; fd >= 0 && sent < bytes; sent += chunk.size())
        if (write(fd, chunk.data(), std::min(chunk.size(), bytes - sent)) < 0) break;  // reader gone
      if (fd >= 0) close(fd);
    });
  };
  std::thread writer = feed(200000);
  EXPECT_EQ(readInputFile(fifo, "test input"), std::string(200000, 'p'));
  writer.join();
  signal(SIGPIPE, SIG_IGN);  // the reader stops early below
  writer = feed(size_t{1} << 22);
  EXPECT_THROW((void)readInputFile(fifo, "test input", size_t{1} << 20), ResourceError);
  writer.join();
}

}  // namespace
}  // namespace procgen::iotest

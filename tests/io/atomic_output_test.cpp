// Atomic outputs (issue 16, D8): a file appears under its name only when it
// was written completely; a failed write leaves neither a partial file nor a
// temporary; the files of one OutputTransaction (a run, or a writer's
// companions such as OBJ's .mtl and a volume's .json/.nhdr) appear together
// or not at all; devices and FIFOs are written in place, never replaced.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_test_util.hpp"
#include "procgen/error.hpp"
#include "procgen/io.hpp"

namespace procgen::iotest {
namespace {

namespace fs = std::filesystem;

/// Every name in `dir` (temporaries included: they start with a dot).
std::vector<std::string> listDir(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void writeString(ByteSink& sink, const std::string& s) { sink.write(s.data(), s.size()); }

/// Simulates a full disk for this process: writes past `bytes` fail with EFBIG
/// (SIGXFSZ ignored) until the object is destroyed.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
};

TEST(AtomicOutput, AFileAppearsOnlyWhenFinished) {
  TempDir dir;
  const fs::path path = dir / "a.txt";
  std::ofstream(path) << "old";
  {
    FileSink sink(path);
    writeString(sink, "new contents");
    EXPECT_EQ(readText(path), "old");  // still the previous file while writing
    sink.finish();
  }
  EXPECT_EQ(readText(path), "new contents");
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{"a.txt"});  // no temporary left
}

TEST(AtomicOutput, AnUnfinishedFileLeavesNothing) {
  TempDir dir;
  {
    FileSink sink(dir / "partial.txt");
    writeString(sink, std::string(100000, 'x'));
  }  // a writer threw: destroyed without finish()
  EXPECT_TRUE(listDir(dir.path()).empty());
  // Replacing an existing file: the old one stays untouched.
  std::ofstream(dir / "kept.txt") << "old";
  {
    FileSink sink(dir / "kept.txt");
    writeString(sink, "half");
  }
  EXPECT_EQ(readText(dir / "kept.txt"), "old");
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{"kept.txt"});
}

TEST(AtomicOutput, AFullDiskLeavesNoPartialFile) {
  TempDir dir;
  const Geometry g = kochCurve(6);  // 4096 segments: far more than 4 KiB of text
  {
    FileSizeLimit limit(4096);
    EXPECT_THROW(writeGeometry(g, dir / "koch.obj"), OutputError);
    EXPECT_THROW(writeGeometry(g, dir / "koch.svg"), OutputError);
  }
  EXPECT_TRUE(listDir(dir.path()).empty());
}

TEST(AtomicOutput, ObjIsNotLeftWithoutItsMaterialLibrary) {
  TempDir dir;
  fs::create_directory(dir / "tree.mtl");  // the .mtl cannot be written
  EXPECT_THROW(writeGeometry(kochCurve(2, 0.01f, true), dir / "tree.obj"), OutputError);
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{"tree.mtl"});  // no tree.obj, no temporary
  fs::remove(dir / "tree.mtl");
  writeGeometry(kochCurve(2, 0.01f, true), dir / "tree.obj");
  EXPECT_EQ(listDir(dir.path()), (std::vector<std::string>{"tree.mtl", "tree.obj"}));
}

TEST(AtomicOutput, AVolumeIsNotLeftWithoutItsSidecars) {
  TempDir dir;
  fs::create_directory(dir / "v.nhdr");  // the last of the three files fails
  float values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  VolumeView volume;
  volume.values = values;
  volume.dims = {2, 2, 2};
  EXPECT_THROW(writeVolume(volume, dir / "v.raw"), OutputError);
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{"v.nhdr"});
}

TEST(AtomicOutput, ATransactionCommitsAllOrNothing) {
  TempDir dir;
  {
    OutputTransaction run;
    for (const char* name : {"a.txt", "b.txt"}) {
      FileSink sink(dir / name);
      writeString(sink, name);
      sink.finish();
    }
    EXPECT_FALSE(fs::exists(dir / "a.txt"));  // finished, but not yet in place
  }  // not committed: a later output failed
  EXPECT_TRUE(listDir(dir.path()).empty());
  {
    OutputTransaction run;
    for (const char* name : {"a.txt", "b.txt"}) {
      FileSink sink(dir / name);
      writeString(sink, name);
      sink.finish();
    }
    run.commit();
  }
  EXPECT_EQ(listDir(dir.path()), (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(readText(dir / "b.txt"), "b.txt");
}

TEST(AtomicOutput, ANestedTransactionHandsItsFilesToTheRun) {
  TempDir dir;
  {
    OutputTransaction run;
    writeGeometry(kochCurve(1, 0.01f, true), dir / "k.obj");  // commits its own (inner) transaction
    EXPECT_TRUE(listDir(dir.path()).size() == 2 && !fs::exists(dir / "k.obj"));  // two temporaries
  }
  EXPECT_TRUE(listDir(dir.path()).empty());
}

TEST(AtomicOutput, TheSameFileTwiceInOneRunIsRefused) {
  TempDir dir;
  OutputTransaction run;
  {
    FileSink sink(dir / "x.txt");
    sink.finish();
  }
  EXPECT_THROW(FileSink(dir / "." / "x.txt"), Error);
}

TEST(AtomicOutput, AFifoIsWrittenInPlaceNotReplaced) {
  TempDir dir;
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer's open does not block
  ASSERT_GE(reader, 0);
  {
    FileSink sink(fifo);
    writeString(sink, "through the pipe");
    sink.finish();
  }
  char buf[64] = {};
  const ssize_t got = read(reader, buf, sizeof buf);
  close(reader);
  EXPECT_EQ(std::string(buf, got > 0 ? static_cast<size_t>(got) : 0), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

}  // namespace
}  // namespace procgen::iotest

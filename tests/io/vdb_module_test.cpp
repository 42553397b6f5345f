// The .vdb writer as a module loaded on demand (src/io/volumes/vdb_writer.cpp,
// cmake/ProcgenVdbModule.cmake): OpenVDB is linked only into procgen_vdb.so,
// so neither the procgen executable nor libprocgen.a depends on it (read
// from their ELF files with <elf.h>'s structures, independently of our
// code); a missing or foreign module is an output error (exit 4) naming the
// path tried and the loader's reason, before any output is written; and a
// sink that fails inside the module's write reaches the caller as the sink's
// own exception. What the module writes is checked by vdb_writer_test.cpp.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli_run.hpp"
#include "procgen/distributed.hpp"
#include "procgen/error.hpp"
#include "procgen/output.hpp"
#include "procgen/volume.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::runProcgen;
using procgen::test::slurp;

// ---------------------------------------------------------------------------
// A minimal reader of 64-bit little-endian ELF files and ar archives.

template <typename T>
T readAt(const std::string& bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) throw std::runtime_error("truncated ELF");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string stringAt(const std::string& bytes, uint64_t offset) {
  if (offset >= bytes.size()) throw std::runtime_error("ELF string out of range");
  return std::string(bytes.c_str() + offset);  // NUL-terminated inside the file (or at its end)
}

std::vector<Elf64_Shdr> sections(const std::string& elf) {
  if (elf.size() < sizeof(Elf64_Ehdr) || std::memcmp(elf.data(), ELFMAG, SELFMAG) != 0 ||
      elf[EI_CLASS] != ELFCLASS64 || elf[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error("not a 64-bit little-endian ELF file");
  const auto header = readAt<Elf64_Ehdr>(elf, 0);
  std::vector<Elf64_Shdr> result;
  for (unsigned i = 0; i < header.e_shnum; ++i)
    result.push_back(readAt<Elf64_Shdr>(elf, header.e_shoff + uint64_t(i) * header.e_shentsize));
  return result;
}

/// The DT_NEEDED entries of an executable or shared library.
std::vector<std::string> neededLibraries(const std::string& elf) {
  const std::vector<Elf64_Shdr> all = sections(elf);
  std::vector<std::string> needed;
  for (const Elf64_Shdr& s : all) {
    if (s.sh_type != SHT_DYNAMIC) continue;
    const Elf64_Shdr& strings = all.at(s.sh_link);
    for (uint64_t at = s.sh_offset; at + sizeof(Elf64_Dyn) <= s.sh_offset + s.sh_size; at += sizeof(Elf64_Dyn)) {
      const auto entry = readAt<Elf64_Dyn>(elf, at);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_NEEDED) needed.push_back(stringAt(elf, strings.sh_offset + entry.d_un.d_val));
    }
  }
  return needed;
}

/// The undefined symbols of a relocatable object (what it needs from elsewhere).
std::vector<std::string> undefinedSymbols(const std::string& elf) {
  const std::vector<Elf64_Shdr> all = sections(elf);
  std::vector<std::string> names;
  for (const Elf64_Shdr& s : all) {
    if (s.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr& strings = all.at(s.sh_link);
    for (uint64_t at = s.sh_offset + sizeof(Elf64_Sym); at + sizeof(Elf64_Sym) <= s.sh_offset + s.sh_size;
         at += sizeof(Elf64_Sym)) {
      const auto symbol = readAt<Elf64_Sym>(elf, at);
      if (symbol.st_shndx == SHN_UNDEF && symbol.st_name != 0)
        names.push_back(stringAt(elf, strings.sh_offset + symbol.st_name));
    }
  }
  return names;
}

/// The members of an ar archive (a static library), without the symbol
/// index and the long-name table.
std::vector<std::string> archiveMembers(const std::string& archive) {
  if (archive.compare(0, 8, "!<arch>\n") != 0) throw std::runtime_error("not an ar archive");
  std::vector<std::string> members;
  for (size_t at = 8; at + 60 <= archive.size();) {
    const std::string name = archive.substr(at, 16);
    const size_t size = std::stoull(archive.substr(at + 48, 10));
    if (archive.compare(at + 58, 2, "`\n") != 0 || at + 60 + size > archive.size())
      throw std::runtime_error("malformed ar member header");
    if (name.compare(0, 2, "/ ") != 0 && name.compare(0, 3, "// ") != 0 && name.compare(0, 7, "/SYM64/") != 0)
      members.push_back(archive.substr(at + 60, size));
    at += 60 + size + (size & 1);
  }
  return members;
}

bool anyContains(const std::vector<std::string>& names, const std::string& part) {
  for (const std::string& n : names)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// ---------------------------------------------------------------------------

TEST(VdbModule, TheProcgenExecutableDoesNotNeedOpenVdb) {
  const std::vector<std::string> needed = neededLibraries(slurp(PROCGEN_CLI_PATH));
  std::string list;
  for (const std::string& n : needed) list += n + " ";
  // The reader works: the C and C++ runtimes are there.
  EXPECT_TRUE(anyContains(needed, "libc.so")) << list;
  EXPECT_TRUE(anyContains(needed, "libstdc++.so")) << list;
  // OpenVDB and Imath, which only OpenVDB's headers need, are not.
  EXPECT_FALSE(anyContains(needed, "openvdb")) << list;
  EXPECT_FALSE(anyContains(needed, "Imath")) << list;
}

TEST(VdbModule, TheLibraryReferencesNoOpenVdbSymbol) {
  const std::vector<std::string> members = archiveMembers(slurp(PROCGEN_LIBRARY_PATH));
  ASSERT_GT(members.size(), 10u);
  std::set<std::string> undefined;
  for (const std::string& m : members)
    for (std::string& s : undefinedSymbols(m)) undefined.insert(std::move(s));
  // The reader works: the PNG encoder's call into libpng is seen.
  EXPECT_TRUE(undefined.count("png_create_write_struct")) << undefined.size() << " undefined symbols";
  // No object calls into OpenVDB (its mangled names hold "7openvdb").
  for (const std::string& s : undefined) EXPECT_EQ(s.find("openvdb"), std::string::npos) << s;
}

TEST(VdbModule, TheModuleIsWhatNeedsOpenVdb) {
  if (!procgen::volumeVdbAvailable()) GTEST_SKIP() << "this build has no OpenVDB";
  // CMake copies the module beside this test executable.
  const fs::path module = fs::read_symlink("/proc/self/exe").parent_path() / "procgen_vdb.so";
  ASSERT_TRUE(fs::exists(module)) << module;
  EXPECT_TRUE(anyContains(neededLibraries(slurp(module)), "libopenvdb.so"));
}

// Open MPI the same way (src/mpi/mpi_module.hpp): only procgen_mpi.so, which
// distributed::initialize loads under mpirun, links it.
TEST(MpiModule, NeitherTheExecutableNorTheLibraryNeedsOpenMpi) {
  const std::vector<std::string> needed = neededLibraries(slurp(PROCGEN_CLI_PATH));
  std::string list;
  for (const std::string& n : needed) list += n + " ";
  EXPECT_TRUE(anyContains(needed, "libstdc++.so")) << list;
  EXPECT_FALSE(anyContains(needed, "libmpi")) << list;
  EXPECT_FALSE(anyContains(needed, "libopen-pal")) << list;
  const std::vector<std::string> members = archiveMembers(slurp(PROCGEN_LIBRARY_PATH));
  size_t undefined = 0;
  for (const std::string& m : members)
    for (const std::string& symbol : undefinedSymbols(m)) {
      ++undefined;
      EXPECT_NE(symbol.compare(0, 4, "MPI_"), 0) << symbol;
      EXPECT_NE(symbol.compare(0, 5, "ompi_"), 0) << symbol;
    }
  EXPECT_GT(undefined, 100u);
}

TEST(MpiModule, TheModuleIsWhatNeedsOpenMpi) {
  if (!procgen::distributed::built()) GTEST_SKIP() << "this build has no MPI";
  const fs::path module = fs::path(PROCGEN_CLI_PATH).parent_path() / "procgen_mpi.so";  // beside build/procgen
  ASSERT_TRUE(fs::exists(module)) << module;
  EXPECT_TRUE(anyContains(neededLibraries(slurp(module)), "libmpi.so"));
}

class VdbModuleCli : public procgen::test::ScratchDirTest {
 protected:
  void SetUp() override {
    if (!procgen::volumeVdbAvailable()) GTEST_SKIP() << "this build has no OpenVDB";
    procgen::test::ScratchDirTest::SetUp();
    fs::create_directories(dir_ / "modules");
  }
  /// `procgen noise` to X.raw and X.vdb with the module looked for in dir_/modules only.
  int runWithModuleDir() {
    return runProcgen("noise perlin -q --size 8 -o " + (dir_ / "x.raw").string() + " -o " + (dir_ / "x.vdb").string(),
                      dir_ / "err.txt", {}, "PROCGEN_PLUGIN_DIR=" + (dir_ / "modules").string());
  }
  std::string err() const { return slurp(dir_ / "err.txt"); }
};

TEST_F(VdbModuleCli, AMissingModuleIsAnOutputErrorNamingThePathTried) {
  EXPECT_EQ(runWithModuleDir(), 4) << err();
  EXPECT_NE(err().find("error: "), std::string::npos) << err();
  EXPECT_NE(err().find((dir_ / "modules" / "procgen_vdb.so").string() + ": cannot open shared object file"),
            std::string::npos)
      << err();
  EXPECT_NE(err().find("PROCGEN_PLUGIN_DIR"), std::string::npos) << err();
  // Found out before anything was computed or written, the .raw included.
  EXPECT_FALSE(fs::exists(dir_ / "x.vdb"));
  EXPECT_FALSE(fs::exists(dir_ / "x.raw"));
}

TEST_F(VdbModuleCli, ALibraryWithoutTheEntryPointIsRefusedByName) {
  // A real shared library that is not the module: libpng, which the tests link.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<const void*>(&png_access_version_number), &info), 0);
  fs::copy_file(info.dli_fname, dir_ / "modules" / "procgen_vdb.so");
  EXPECT_EQ(runWithModuleDir(), 4) << err();
  EXPECT_NE(err().find((dir_ / "modules" / "procgen_vdb.so").string()), std::string::npos) << err();
  EXPECT_NE(err().find("undefined symbol: procgen_vdb_write_v1"), std::string::npos) << err();
  EXPECT_FALSE(fs::exists(dir_ / "x.vdb"));
}

TEST_F(VdbModuleCli, TheModuleInPluginDirIsUsed) {
  fs::copy_file(fs::read_symlink("/proc/self/exe").parent_path() / "procgen_vdb.so",
                dir_ / "modules" / "procgen_vdb.so");
  EXPECT_EQ(runWithModuleDir(), 0) << err();
  EXPECT_TRUE(fs::exists(dir_ / "x.vdb"));
}

/// Takes `capacity` bytes, then throws like a full disk.
class FullSink final : public procgen::ByteSink {
 public:
  explicit FullSink(size_t capacity) : left_(capacity) {}
  void write(const void*, size_t size) override {
    ++writes_;
    if (size > left_) throw procgen::OutputError("test sink: no space left");
    left_ -= size;
    taken_ += size;
  }
  void finish() override { finished_ = true; }
  int writes_ = 0;
  size_t taken_ = 0;
  bool finished_ = false;

 private:
  size_t left_;
};

TEST(VdbModule, ASinkFailingInsideTheModulesWriteThrowsItsOwnError) {
  if (!procgen::volumeVdbAvailable()) GTEST_SKIP() << "this build has no OpenVDB";
  // 2^21 incompressible values: some 8 MB of .vdb, so the writer's 1 MB
  // buffer reaches the sink while OpenVDB is still writing (inside the
  // module), not only at the final flush.
  const uint64_t n = 128;
  std::vector<float> values(n * n * n);
  uint32_t state = 12345;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = float(state >> 8) + 1.0f;
  }
  const procgen::VolumeView view{values.data(), {n, n, n}};
  FullSink full(3u << 20);
  try {
    procgen::writeVolumeVdb(view, full);
    ADD_FAILURE() << "no exception";
  } catch (const procgen::OutputError& e) {
    EXPECT_STREQ(e.what(), "test sink: no space left");
  }
  EXPECT_GE(full.writes_, 4);  // three 1 MB chunks taken, the fourth refused
  EXPECT_FALSE(full.finished_);
  // The module is still usable afterwards; and the premise held: the .vdb
  // is larger than what the full sink took.
  FullSink roomy(size_t(1) << 30);
  procgen::writeVolumeVdb(view, roomy);
  EXPECT_TRUE(roomy.finished_);
  EXPECT_GT(roomy.taken_, size_t(4) << 20);
}

}  // namespace

// Volumes as OpenVDB files (procgen/volume.hpp, writeVolumeVdb). The writing
// itself is in a module of its own, procgen_vdb.so (vdb_module/), loaded with
// dlopen on the first .vdb write: linking libopenvdb and its dependencies
// into every procgen process cost each one tens of milliseconds of dynamic
// relocations before main (docs/performance.md, "Cold start"), and only .vdb
// output needs them. This file validates the volume, finds and loads the
// module, and streams what it writes into the caller's ByteSink. Built with
// PROCGEN_HAVE_OPENVDB when CMake found Debian's libopenvdb-dev; otherwise
// the functions say the build has no OpenVDB.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <new>
#include <string>
#include <vector>

#if PROCGEN_HAVE_OPENVDB
#include <atomic>
#include <mutex>

#include "common/module_loader.hpp"
#include "io/volumes/vdb_module_abi.hpp"
#endif

#include "io/output_file.hpp"
#include "io/volumes/volume_check.hpp"
#include "procgen/error.hpp"
#include "procgen/volume.hpp"

namespace procgen {

namespace {

/// The checks before any module is loaded or file opened: a valid view, and
/// dimensions that OpenVDB's 32-bit coordinates hold.
void checkVdbVolume(const VolumeView& volume) {
  (void)detail::checkedVolumeCount(volume);
  for (uint64_t d : volume.dims)
    if (d > uint64_t(std::numeric_limits<int32_t>::max()))
      throw Error("volume: OpenVDB coordinates are 32-bit; every dimension must be below 2^31", ExitCode::kUsage);
}

#if PROCGEN_HAVE_OPENVDB

// Set by CMakeLists.txt: the module's file name, and where an installed
// module sits relative to the installed executable's directory.
#ifndef PROCGEN_VDB_MODULE_FILE
#define PROCGEN_VDB_MODULE_FILE "procgen_vdb.so"
#endif
#ifndef PROCGEN_VDB_MODULE_INSTALL_DIR
#define PROCGEN_VDB_MODULE_INSTALL_DIR "../lib/procgen"
#endif

/// The module's entry point, loaded once per process and never unloaded
/// (OpenVDB keeps global state). A failed load is not remembered, so a later
/// call (after PROCGEN_PLUGIN_DIR changed) tries again.
procgen_vdb_write_fn vdbModule() {
  static std::atomic<procgen_vdb_write_fn> loaded{nullptr};
  static std::mutex loading;
  if (procgen_vdb_write_fn entry = loaded.load(std::memory_order_acquire)) return entry;
  const std::lock_guard<std::mutex> lock(loading);
  if (procgen_vdb_write_fn entry = loaded.load(std::memory_order_relaxed)) return entry;

  std::string tried;  // "PATH: reason" per place tried
  if (void* symbol = detail::loadModuleEntry(PROCGEN_VDB_MODULE_FILE, PROCGEN_VDB_MODULE_INSTALL_DIR,
                                             PROCGEN_VDB_MODULE_ENTRY, tried)) {
    const auto entry = reinterpret_cast<procgen_vdb_write_fn>(symbol);
    loaded.store(entry, std::memory_order_release);
    return entry;
  }
  throw OutputError("cannot write .vdb: the OpenVDB writer module " PROCGEN_VDB_MODULE_FILE
                    " could not be loaded; tried " +
                    tried + " (PROCGEN_PLUGIN_DIR names the directory that holds it)");
}

/// What the module's byte callback writes into: the host's buffered stream,
/// and the exception its sink threw (rethrown once the module has returned,
/// so no C++ exception crosses the C interface).
struct SinkContext {
  io::OutputStream* out;
  std::exception_ptr failure;
};

int writeToSink(void* context, const void* bytes, size_t size) {
  auto* sink = static_cast<SinkContext*>(context);
  try {
    sink->out->write(bytes, size);
    return 0;
  } catch (...) {
    sink->failure = std::current_exception();
    return 1;
  }
}

#endif

}  // namespace

#if PROCGEN_HAVE_OPENVDB

bool volumeVdbAvailable() { return true; }

void loadVolumeVdbWriter() { (void)vdbModule(); }

void writeVolumeVdb(const VolumeView& volume, ByteSink& sink, const VdbWriteOptions& options) {
  checkVdbVolume(volume);
  const procgen_vdb_write_fn write = vdbModule();

  const procgen_vdb_volume c_volume{volume.values,
                                    {volume.dims[0], volume.dims[1], volume.dims[2]},
                                    {volume.spacing[0], volume.spacing[1], volume.spacing[2]},
                                    {volume.origin[0], volume.origin[1], volume.origin[2]}};
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : options.metadata) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  io::OutputStream out(sink);
  SinkContext context{&out, nullptr};
  char error[1024] = "";
  const int status = write(&c_volume, options.grid_name.c_str(), keys.data(), values.data(), keys.size(),
                           &writeToSink, &context, error, sizeof error);
  switch (status) {
    case PROCGEN_VDB_OK: out.close(); return;
    case PROCGEN_VDB_SINK_FAILED:
      if (context.failure) std::rethrow_exception(context.failure);
      throw OutputError("cannot write .vdb to " + sink.name() + ": the output stopped");
    case PROCGEN_VDB_OUT_OF_MEMORY: throw std::bad_alloc();
    default: throw OutputError("cannot write .vdb to " + sink.name() + ": OpenVDB: " + error);
  }
}

#else

bool volumeVdbAvailable() { return false; }

void loadVolumeVdbWriter() {
  throw Error("cannot write .vdb: this build has no OpenVDB (install libopenvdb-dev and rebuild); write .raw and "
              "its .json sidecar instead",
              ExitCode::kUsage);
}

void writeVolumeVdb(const VolumeView& volume, ByteSink&, const VdbWriteOptions&) {
  (void)detail::checkedVolumeCount(volume);
  loadVolumeVdbWriter();
}

#endif

void writeVolumeVdb(const VolumeView& volume, const std::filesystem::path& path, const VdbWriteOptions& options) {
  // A bad view, a build without OpenVDB or a module that does not load
  // throws before the file is opened, so no file appears.
  if (volumeVdbAvailable()) checkVdbVolume(volume);
  else (void)detail::checkedVolumeCount(volume);
  loadVolumeVdbWriter();
  io::writeToFile(path, [&](ByteSink& sink) { writeVolumeVdb(volume, sink, options); });
}

}  // namespace procgen

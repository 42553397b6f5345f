// Optional pieces of procgen that live in modules of their own, loaded with
// dlopen only by the runs that need them, so that every other process skips
// loading (and relocating) the libraries they link: the OpenVDB writer
// (procgen_vdb.so, src/io/volumes/vdb_writer.cpp) and MPI (procgen_mpi.so,
// src/common/distributed.cpp).
#pragma once

#include <string>

namespace procgen::detail {

/// Loads the module `file` (RTLD_NOW | RTLD_LOCAL, never unloaded) and
/// returns its symbol `entry`, or nullptr with `tried` set to "PATH: reason"
/// for each place tried. Where, in order: only $PROCGEN_PLUGIN_DIR when it
/// is set; otherwise beside the executable or library this code is linked
/// into (the build tree, where CMake puts the modules beside the programs),
/// then `install_dir` relative to that directory (the install tree).
void* loadModuleEntry(const char* file, const char* install_dir, const char* entry, std::string& tried);

}  // namespace procgen::detail

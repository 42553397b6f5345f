// dlopen of procgen's optional modules (module_loader.hpp).
#include "common/module_loader.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace procgen::detail {
namespace {

/// The directory of the executable or shared library this code was linked
/// into; empty when unknown.
std::filesystem::path directoryOfThisCode() {
  Dl_info info{};
  link_map* object = nullptr;
  if (dladdr1(reinterpret_cast<const void*>(&directoryOfThisCode), &info, reinterpret_cast<void**>(&object),
              RTLD_DL_LINKMAP) == 0 ||
      object == nullptr)
    return {};
  std::error_code ec;
  // The main program's link map has no name (dladdr would give argv[0],
  // which is a bare name when the shell found the program on PATH).
  const std::filesystem::path file = object->l_name[0] == '\0'
                                         ? std::filesystem::read_symlink("/proc/self/exe", ec)
                                         : std::filesystem::weakly_canonical(object->l_name, ec);
  if (ec) return {};
  return file.parent_path();
}

std::vector<std::filesystem::path> moduleCandidates(const char* file, const char* install_dir) {
  const char* override_dir = std::getenv("PROCGEN_PLUGIN_DIR");
  if (override_dir != nullptr && override_dir[0] != '\0') return {std::filesystem::path(override_dir) / file};
  const std::filesystem::path origin = directoryOfThisCode();
  if (origin.empty()) return {};
  return {origin / file, (origin / install_dir / file).lexically_normal()};
}

}  // namespace

void* loadModuleEntry(const char* file, const char* install_dir, const char* entry, std::string& tried) {
  tried.clear();
  const auto failed = [&tried](const std::filesystem::path& candidate, std::string message) {
    // dlerror() usually starts with the path already.
    const std::string prefix = candidate.string() + ": ";
    if (message.compare(0, prefix.size(), prefix) != 0) message = prefix + message;
    tried += (tried.empty() ? "" : "; ") + message;
  };
  for (const std::filesystem::path& candidate : moduleCandidates(file, install_dir)) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = dlerror();
      failed(candidate, reason != nullptr ? reason : "cannot be loaded");
      continue;
    }
    dlerror();  // clear, then tell a null symbol from a missing one
    void* symbol = dlsym(handle, entry);
    if (symbol == nullptr) {
      const char* reason = dlerror();
      failed(candidate, std::string(reason != nullptr ? reason : std::string("null entry point ") + entry) +
                            " (a module from another procgen build?)");
      dlclose(handle);
      continue;
    }
    return symbol;
  }
  if (tried.empty()) tried = "nowhere (the directory of the running program is unknown)";
  return nullptr;
}

}  // namespace procgen::detail

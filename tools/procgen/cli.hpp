// The procgen CLI: a thin layer over the library. Each subcommand lives in its
// own cmd_<name>.cpp and registers itself with PROCGEN_REGISTER_COMMAND, so
// adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/error.hpp"

namespace procgen::cli {

/// A subcommand's setup: add it to `app` and set its callback. The callback
/// returns normally on success and throws procgen::Error (or CLI11 errors) on failure.
using CommandSetup = std::function<void(CLI::App& app)>;

/// Order is the order commands appear in `procgen --help`.
bool registerCommand(int order, CommandSetup setup);
const std::vector<std::pair<int, CommandSetup>>& registeredCommands();

/// Options every backend-aware command shares: --backend, --threads and --device.
struct ExecutionOptions {
  std::string backend = "serial";
  int threads = 0;
  int device = -1;  ///< --device N (opencl); -1 = PROCGEN_OPENCL_DEVICE or a GPU first
  void add(CLI::App& cmd, const std::string& default_backend = "serial");
  /// Validates and converts; throws BackendUnavailableError if not compiled in.
  Execution resolve() const;
};

/// True when stderr is a terminal (progress lines are shown only then).
bool stderrIsTerminal();

}  // namespace procgen::cli

#define PROCGEN_CLI_CONCAT2(a, b) a##b
#define PROCGEN_CLI_CONCAT(a, b) PROCGEN_CLI_CONCAT2(a, b)
#define PROCGEN_REGISTER_COMMAND(order, fn)                                  \
  static const bool PROCGEN_CLI_CONCAT(procgen_registered_, __LINE__) =      \
      ::procgen::cli::registerCommand(order, fn)

// procgen — procedural content generation on one core, all cores, and GPUs.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>

#include "cli.hpp"
#include "procgen/distributed.hpp"
#include "procgen/opencl.hpp"
#include "procgen/output.hpp"

namespace procgen::cli {

static std::vector<std::pair<int, CommandSetup>>& registry() {
  static std::vector<std::pair<int, CommandSetup>> commands;
  return commands;
}

bool registerCommand(int order, CommandSetup setup) {
  registry().emplace_back(order, std::move(setup));
  return true;
}

const std::vector<std::pair<int, CommandSetup>>& registeredCommands() { return registry(); }

void ExecutionOptions::add(CLI::App& cmd, const std::string& default_backend) {
  backend = default_backend;
  cmd.add_option("--backend", backend, "Execution backend: serial, cpu or opencl")
      ->check(CLI::IsMember({"serial", "cpu", "opencl"}))
      ->capture_default_str()
      ->group("Execution");
  addInteger(cmd, "--threads", threads, "Worker threads for the cpu backend (0 = all cores)", 0)
      ->capture_default_str()
      ->group("Execution");
  addInteger(cmd, "--device", device,
             "OpenCL device index for --backend opencl (see 'procgen devices'; default: "
             "$PROCGEN_OPENCL_DEVICE, else the first GPU, else the first device)",
             0)
      ->group("Execution");
}

Execution ExecutionOptions::resolve() const {
  Execution execution;
  execution.backend = *parseBackend(backend);
  execution.threads = threads;
  if (!backendAvailable(execution.backend)) {
    std::string hint = execution.backend == Backend::kCpu
                           ? "rebuild with oneTBB (apt-get install libtbb-dev)"
                           : "rebuild with OpenCL (apt-get install ocl-icd-opencl-dev opencl-headers) "
                             "and install a GPU driver, or pocl-opencl-icd to run on the CPU";
    throw BackendUnavailableError("backend '" + backend + "' is not available in this build: " + hint);
  }
  if (execution.backend == Backend::kOpenCL) {
    execution.device = device;
    openclSelectedDevice(device);  // no platform/device or a bad index: exit 3 with what to install
  }
  // Threads and device contexts start now, while the command reads its input,
  // instead of inside the first stage of this fresh process.
  prepareBackend(execution);
  return execution;
}

bool stderrIsTerminal() { return isatty(fileno(stderr)) != 0; }

}  // namespace procgen::cli

namespace {

/// Prints the error of a failed run and returns its exit code.
int reportError(const std::exception_ptr& failure) {
  using namespace procgen;
  try {
    std::rethrow_exception(failure);
  } catch (const distributed::PeerFailure& e) {
    // Another rank failed (it printed why), or a collective failed on every rank.
    if (e.report()) std::cerr << "error: " << printableText(e.what(), 400) << "\n";
    return static_cast<int>(e.exitCode());
  } catch (const CLI::ParseError& e) {
    // CLI11 runs subcommand callbacks inside parse(); a procgen::Error escapes
    // from there, a CLI::ParseError means the command line itself was wrong.
    std::cerr << "error: " << printableText(e.what(), 400) << "\n"
              << "Run 'procgen --help' for usage.\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const Error& e) {
    // A ParseError is already a formatted diagnostic; other messages may quote
    // untrusted text (a path, a token), made printable and short here.
    if (dynamic_cast<const ParseError*>(&e)) std::cerr << e.what() << "\n";
    else std::cerr << "error: " << printableText(e.what(), 400) << "\n";
    return static_cast<int>(e.exitCode());
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
    return 70;
  }
}

/// Under mpirun, the commands that split their work over the ranks run on
/// every rank (docs/scaling.md); the others run on rank 0 alone, as in one
/// process, while the other ranks wait at the final agreement.
bool runsOnThisRank(CLI::App& app, int argc, char** argv) {
  if (procgen::distributed::size() == 1 || procgen::distributed::isRoot()) return true;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    if (word == "flame" || word == "flam3-render" || word == "noise" || word == "scene" || word == "octree")
      return true;
    try {
      app.get_subcommand(word);
      return false;  // another command: rank 0's alone
    } catch (const CLI::OptionNotFound&) {
    }
  }
  return true;  // no command named: every rank reports the usage error alike
}

}  // namespace

int runCommand(int argc, char** argv);

int main(int argc, char** argv) {
  using namespace procgen;
  // MPI starts only under mpirun (procgen/distributed.hpp); a plain start pays nothing.
  distributed::initialize(&argc, &argv);
  if (!distributed::startupError().empty()) {
    std::cerr << "error: started by mpirun, but " << distributed::startupError() << "\n";
    return static_cast<int>(ExitCode::kBackendUnavailable);
  }
  const int code = runCommand(argc, argv);
  distributed::finalize();
  return code;
}

int runCommand(int argc, char** argv) {
  using namespace procgen;
  CLI::App app{
      "procgen — procedural content generation: L-systems, parentheses matching and tree\n"
      "bounding boxes, on one core (serial), all cores (cpu) or OpenCL devices (opencl).",
      "procgen"};
  app.require_subcommand(1);
  // Made only when asked for: the MPI library's version loads the MPI module.
  app.set_version_flag("--version", std::function<std::string()>([] {
    return std::string("procgen 0.1.0") +
           (distributed::built() ? " (MPI: " + distributed::libraryVersion() + ")" : " (MPI: not built)");
  }));
  app.footer("Run 'procgen COMMAND --help' for the options of one command.\n"
             "Exit codes: 0 ok, 1 usage, 2 bad input, 3 backend unavailable, 4 output I/O error.");

  auto commands = cli::registeredCommands();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, setup] : commands) setup(app);

  bool agreed = false;  // every rank finished its command (distributed::checkpoint passed)
  int code = 0;
  try {
    // Every file the command writes appears only when the whole run succeeded
    // (issue 16): an exception destroys the uncommitted transaction, which
    // removes the run's finished temporaries (procgen/output.hpp). Under
    // mpirun, only when every rank succeeded.
    OutputTransaction run_outputs;
    if (runsOnThisRank(app, argc, argv)) app.parse(argc, argv);
    distributed::checkpoint();
    agreed = true;
    run_outputs.commit();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (...) {
    code = reportError(std::current_exception());
    // This rank failed first: the others stop at their next collective.
    bool peer = false;
    try {
      throw;
    } catch (const distributed::PeerFailure&) {
      peer = true;
    } catch (...) {
    }
    if (!agreed && !peer) distributed::fail(static_cast<ExitCode>(code));
  }
  // After the checkpoint the ranks commit their own outputs; a commit that
  // failed on one rank makes every rank's exit code non-zero.
  if (agreed && distributed::active()) code = distributed::agreeOnExit(code);
  return code;
}

// procgen devices: the OpenCL devices the opencl backend can run on, with the
// index that --device N and PROCGEN_OPENCL_DEVICE select.
#include <cstdio>
#include <sstream>

#include "cli.hpp"
#include "output_options.hpp"
#include "procgen/distributed.hpp"
#include "procgen/opencl.hpp"

namespace procgen::cli {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void setupDevices(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "devices",
      "List the OpenCL devices of the opencl backend (select one with --device N or "
      "PROCGEN_OPENCL_DEVICE=N; the default prefers a GPU)");
  cmd->callback([] {
    const std::vector<OpenCLDevice> devices = openclDevices();
    if (devices.empty()) throw BackendUnavailableError(openclStatus());
    int chosen = -1;
    try {
      chosen = openclSelectedDevice().index;
    } catch (const BackendUnavailableError& e) {
      std::fprintf(stderr, "warning: %s\n", e.what());
    }
    std::ostringstream out;
    for (const OpenCLDevice& d : devices) {
      out << (d.index == chosen ? "* " : "  ") << d.index << ": " << d.name << "\n"
          << "      platform:        " << d.platform << "\n"
          << "      type:            " << d.type << "\n"
          << "      version:         " << d.version << "\n"
          << "      compute units:   " << d.compute_units << "\n"
          << "      global memory:   " << mib(d.global_memory) << "\n"
          << "      max allocation:  " << mib(d.max_allocation) << "\n"
          << "      local memory:    " << (d.local_memory >> 10) << " KiB\n"
          << "      max work-group:  " << d.max_work_group << "\n";
    }
    out << "(* = the device --backend opencl uses by default)\n"
        << "MPI: " << (distributed::built() ? distributed::libraryVersion() + " (mpirun -n R procgen ...)" : "not built")
        << "\n";
    writeOutput("-", out.str());
  });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(95, setupDevices);

}  // namespace procgen::cli

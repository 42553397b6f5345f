// procgen serve: the browser studio (issue 20) — an HTTP server on localhost
// serving the page bundled from web/ and the API of src/studio/. The first
// line on stdout is the address ("procgen studio: http://HOST:PORT/"), so a
// script that asked for --port 0 learns the port.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <thread>

#include "cli.hpp"
#include "lsystem_options.hpp"
#include "procgen/budget.hpp"

#if PROCGEN_HAVE_STUDIO
#include <unistd.h>

#include "procgen/studio.hpp"
#endif

namespace procgen::cli {
namespace {

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8080;
  bool open = false;
  int max_jobs = 2;
  uint64_t max_body_mib = 16;
  double time_limit = 30;
  int threads = 0;
  uint64_t memory_budget = 0;  ///< per job; 0: the default budget / max jobs
  bool quiet = false;
};

#if PROCGEN_HAVE_STUDIO
/// Opens the page in the desktop's browser (xdg-open), without waiting for it.
void openBrowser(const std::string& url) {
  pid_t pid = fork();
  if (pid == 0) {
    execlp("xdg-open", "xdg-open", url.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) std::fprintf(stderr, "procgen serve: could not start xdg-open; open %s yourself\n", url.c_str());
}

void serve(const ServeArgs& args) {
  StudioOptions options;
  options.host = args.host;
  options.port = args.port;
  options.max_jobs = args.max_jobs;
  options.max_body_bytes = args.max_body_mib << 20;
  options.time_limit_seconds = args.time_limit;
  options.threads = args.threads;
  options.memory_budget = args.memory_budget;
  options.quiet = args.quiet;
  // SIGINT/SIGTERM end the server cleanly: blocked here (and so in every
  // thread started later), taken by one thread with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  StudioServer server(options);
  int port = server.bind();
  std::string url = "http://" + (args.host.find(':') != std::string::npos ? "[" + args.host + "]" : args.host) + ":" +
                    std::to_string(port) + "/";
  std::printf("procgen studio: %s\n", url.c_str());
  std::fflush(stdout);
  if (!studioPageAvailable())
    std::fprintf(stderr, "procgen serve: built without the page (node/npm missing at build time); the API works\n");
  if (args.open) openBrowser(url);
  std::thread waiter([&server, signals] {
    int signal = 0;
    sigwait(&signals, &signal);
    server.stop();
  });
  server.run();
  // run() returned: a signal stopped it (or the socket failed); wake the waiter if needed.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
}
#endif

void setupServe(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve procgen studio: edit L-systems, noise, flames and octrees live in the browser "
      "(http://127.0.0.1:8080/ by default; localhost only unless --host is given)");
  cmd->add_option("--host", args->host, "Address to listen on (0.0.0.0: every interface — anyone on the network can use it)");
  addInteger(*cmd, "--port", args->port, "Port (0: any free port; the address is printed on stdout)", 0, 65535);
  cmd->add_flag("--open", args->open, "Open the page in the desktop's browser");
  addInteger(*cmd, "--max-jobs", args->max_jobs, "Computations at once (more get HTTP 429)", 1, 64);
  addInteger(*cmd, "--max-body", args->max_body_mib, "Largest request body in MiB (larger get HTTP 413)", 1, 4096);
  cmd->add_option("--time-limit", args->time_limit, "Seconds a computation may run")->check(CLI::Range(0.1, 86400.0));
  addInteger(*cmd, "--threads", args->threads, "cpu backend threads per computation (0: all)", 0, 1024);
  addMemoryBudgetOption(*cmd, args->memory_budget)
      ->description("Memory each computation may use, e.g. 512M (default: the default budget — half the RAM, or "
                    "of ulimit -v or the cgroup limit — divided by --max-jobs); a request that would need more "
                    "gets a 422 'budget' error before anything is allocated");
  cmd->add_flag("--quiet", args->quiet, "No request log on stderr");
  cmd->callback([args] {
#if PROCGEN_HAVE_STUDIO
    serve(*args);
#else
    throw BackendUnavailableError(
        "this procgen was built without the studio (cpp-httplib not found at build time; run "
        "scripts/install-deps.sh and rebuild)");
#endif
  });
}

}  // namespace

PROCGEN_REGISTER_COMMAND(35, setupServe);

}  // namespace procgen::cli

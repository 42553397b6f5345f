// procgen studio: the browser front end served by `procgen serve` (issue 20).
//
// One page (HTML + a JavaScript bundle built from web/ at build time and
// embedded in the binary: no CDN, works offline) and a small JSON/binary API
// under /api/ that runs the library's systems — L-systems, noise, flames,
// octrees — on request. docs/studio.md describes the API and its limits.
//
// Limits, so a page or a script cannot take the machine down: request bodies
// are capped, at most `max_jobs` computations run at once (others get 429),
// each job has a time limit and a share of the memory budget, and a new
// request on the same channel (client id + endpoint) cancels the one in flight.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace procgen {

struct StudioOptions {
  std::string host = "127.0.0.1";  ///< localhost only unless set
  int port = 8080;                 ///< 0: any free port (see StudioServer::port())
  int max_jobs = 2;                ///< computations at once; more get 429
  uint64_t max_body_bytes = 16ull << 20;  ///< larger request bodies get 413
  double time_limit_seconds = 30;  ///< per job; cooperative (checked between stages and steps)
  /// Per job; 0: defaultMemoryBudget() / max_jobs (procgen/budget.hpp).
  uint64_t memory_budget = 0;
  int threads = 0;                 ///< cpu backend threads per job; 0: all
  bool quiet = false;              ///< no request log on stderr
};

/// The HTTP server. bind() then run() (blocks) on one thread; stop() from any
/// thread (or a signal handler's helper thread) makes run() return.
class StudioServer {
 public:
  explicit StudioServer(StudioOptions options);
  ~StudioServer();
  StudioServer(const StudioServer&) = delete;
  StudioServer& operator=(const StudioServer&) = delete;

  /// Binds the listening socket; returns the port (useful with port 0).
  /// Throws Error when the address cannot be bound.
  int bind();
  /// Serves until stop(). bind() must have succeeded.
  void run();
  void stop();
  int port() const;
  const StudioOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// True when the page bundle was built into this binary (node and npm were
/// found at build time); without it the API still works and / says so.
bool studioPageAvailable();

}  // namespace procgen

// InterpretOptions::keep_going as every interpretation backend asks it:
// between chunks of modules, stages and kernel launches (never per module).
#pragma once

#include <atomic>
#include <cstdint>

#include "procgen/lsystem.hpp"

namespace procgen::detail {

/// Modules walked between two questions in a sequential loop.
constexpr uint64_t kKeepGoingModules = uint64_t{1} << 16;

class InterpretCancel {
 public:
  explicit InterpretCancel(const InterpretOptions& options)
      : keep_going_(options.keep_going ? &options.keep_going : nullptr) {}
  /// Asks keep_going (once it said no, the answer stays no without asking
  /// again). Thread-safe: workers ask it between their chunks.
  bool stopped() const {
    if (!keep_going_) return false;
    if (stopped_.load(std::memory_order_relaxed)) return true;
    if ((*keep_going_)()) return false;
    stopped_.store(true, std::memory_order_relaxed);
    return true;
  }
  /// Throws InterpretCancelled when stopped() (between stages).
  void check() const {
    if (stopped()) throw InterpretCancelled();
  }
  /// Throws when a worker saw a stop (after a parallel stage whose chunks
  /// returned early: its output is incomplete and must not be used).
  void checkWorkers() const {
    if (stopped_.load(std::memory_order_relaxed)) throw InterpretCancelled();
  }

 private:
  const std::function<bool()>* keep_going_;
  mutable std::atomic<bool> stopped_{false};
};

}  // namespace procgen::detail

// A backend's implementation of the rewriting stages over a whole string. The
// derivation driver (derive.cpp) is written once against this interface; the
// serial runner calls the chunk stages once, the cpu runner per chunk with a
// scan in between (paper §4.2).
#pragma once

#include <functional>
#include <memory>

#include "lsystem/derive_stages.hpp"
#include "procgen/backend.hpp"

namespace procgen::detail {

class PassRunner {
 public:
  virtual ~PassRunner() = default;
  virtual int threads() const = 0;
  /// Stage count over the whole input: fills choice[0..n) and returns the output size.
  virtual ChunkCount count(const RewritePass& pass, int32_t* choice) = 0;
  /// Stage rewrite over the whole input, after count() of the same pass.
  virtual void rewrite(const RewritePass& pass, const int32_t* choice, ModuleString& out) = 0;
  virtual uint64_t countD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n) = 0;
  virtual void rewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out) = 0;
  /// Stage count and rewrite of a D0L step in one pass, for an `out` with
  /// room for the output (n * t.max_length bounds it); returns its size.
  /// `expected_output` estimates it (the runner may choose how to run by it).
  /// The serial runner writes without counting; the cpu runner counts each
  /// chunk just before writing it (one parallel pass, no scan between).
  virtual uint64_t countRewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out,
                                   uint64_t expected_output) {
    (void)expected_output;
    const uint64_t total = countD0L(t, symbols, n);
    rewriteD0L(t, symbols, n, out);
    return total;
  }
  virtual void bracketPartners(const uint8_t* symbols, uint64_t n, int64_t* partner) = 0;

  /// Runs fn(i) for every i in [0, n): the work lists a driver builds itself,
  /// e.g. the chunks of many L-systems in one batched pass (paper §6). The cpu
  /// runner runs them in parallel; the default runs them in order.
  virtual void forEach(uint64_t n, const std::function<void(uint64_t)>& fn) {
    for (uint64_t i = 0; i < n; ++i) fn(i);
  }
  /// Modules per chunk for such work lists.
  virtual uint64_t chunkModules() const { return uint64_t{1} << 15; }
  /// Stage cut: removes every '%' and the rest of its branch (cutBranches);
  /// returns true when anything was removed. The serial twin is the default.
  virtual bool cut(ModuleString& s) { return cutBranches(s); }
};

std::unique_ptr<PassRunner> makeSerialPassRunner();
/// cpu/pass_runner.cpp (built with the cpu backend only): `threads` <= 0
/// means all hardware threads.
std::unique_ptr<PassRunner> makeCpuPassRunner(int threads);

class CpuExecutor;
/// Bracket partners (match.h convention) on the cpu: the treebox parallel
/// matcher, then every ']' writes itself into its '[' (cpu/pass_runner.cpp).
void bracketPartnersCpu(CpuExecutor& exec, const uint8_t* symbols, uint64_t n, int64_t* partner);
/// Throws BackendUnavailableError when the backend is not built in
/// (common/dispatch.hpp).
std::unique_ptr<PassRunner> makePassRunner(const Execution& execution);

}  // namespace procgen::detail

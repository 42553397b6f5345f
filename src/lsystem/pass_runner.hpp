// A backend's rewriting stages (paper §4.2, Figure 4: count → scan → rewrite)
// over a module string the runner holds for the whole derivation: in host
// memory for serial and cpu, in device memory for opencl, so the string stays
// where the stages run from the axiom (load) to the result (download). The
// derivation driver (derive.cpp) — steps, decomposition passes, cut, random
// phases, memory budget, D0L jumps, statistics — is written once against this
// interface and serves derive() and the scenes of many L-systems (§6) on every
// backend; the runners differ only in how a pass's stages are executed.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "procgen/backend.hpp"
#include "procgen/memory.hpp"

namespace procgen::detail {

/// One L-system's part of a batched pass over a combined string (paper §6):
/// its segment is rewritten with pass.table, or copied when that is null.
/// pass.in and pass.partner are left to the runner (the segment of its string).
struct SegmentPass {
  RewritePass pass;
  bool context = false;           ///< the table has context productions
  const D0LTable* d0l = nullptr;  ///< a usable D0L table of the productions (a host runner may use it)
};

class PassRunner {
 public:
  virtual ~PassRunner() = default;
  virtual int threads() const = 0;

  // -- the resident string -------------------------------------------------
  /// Starts a derivation of `systems` (their rule tables go to the device once;
  /// batched passes name them by index) from the string `s`, carrying
  /// parameters when `parametric` (s may then lack offsets: no parameters).
  virtual void load(std::span<const LSystemData* const> systems, const ModuleString& s, bool parametric) = 0;
  virtual uint64_t modules() const = 0;
  /// The bytes the string holds (MemoryBudget::bytesOf).
  virtual uint64_t bytes() const = 0;
  /// The string, read back once at the end.
  virtual ModuleString download() = 0;

  // -- one string ------------------------------------------------------------
  /// Stage count of `pass` over the whole string (pass.in and pass.partner
  /// are the runner's; bracket partners are found when `context`): returns
  /// the output size. Keeps the choices for rewritePass.
  virtual ChunkCount countPass(const RewritePass& pass, bool context) = 0;
  /// Stage rewrite after countPass of the same pass; `total` is what it
  /// returned. The output becomes the string.
  virtual void rewritePass(const RewritePass& pass, const ChunkCount& total) = 0;
  /// D0L fast path (no choice array): the output size of a step with `t`.
  virtual uint64_t countPassD0L(const D0LTable& t) = 0;
  /// The step with `t`, right after countPassD0L(t) returned `total`.
  virtual void rewritePassD0L(const D0LTable& t, uint64_t total) = 0;
  /// Count and rewrite of a D0L step in one go, into room for `room` modules
  /// (at least the output); `expected_output` estimates the output (the
  /// runner may choose how to run by it). The host runners write without
  /// counting first; the default counts, then rewrites.
  virtual uint64_t countRewritePassD0L(const D0LTable& t, uint64_t room, uint64_t expected_output) {
    (void)room;
    (void)expected_output;
    const uint64_t total = countPassD0L(t);
    rewritePassD0L(t, total);
    return total;
  }
  /// lengths[m] = the output size of a step with tables[m] (the sizes after
  /// each step a D0L jump skips), for m = 0, 1, ... up to k - 1 or up to the
  /// first m for which fits(lengths[m]) is false: a pass over the whole string
  /// each, so an over-budget jump stops counting where the single steps would
  /// have stopped. Returns how many were counted; the last table counted is
  /// counted last, as if by countPassD0L.
  virtual int countPassD0LSteps(const D0LTable* const* tables, int k, uint64_t* lengths,
                                const std::function<bool(uint64_t)>& fits) {
    for (int m = 0; m < k; ++m)
      if (!fits(lengths[m] = countPassD0L(*tables[m]))) return m + 1;
    return k;
  }
  /// The shortest string from which a D0L jump (several steps with composed
  /// tables, derive.cpp) pays on this backend: below it the driver steps one
  /// at a time.
  virtual uint64_t d0lJumpMinModules() const { return 0; }
  /// Stage cut: removes every '%' and the rest of its branch (cutBranches);
  /// returns true when anything was removed.
  virtual bool cutPass() = 0;

  // -- a combined string of many L-systems (paper §6) -------------------------
  // Segment k is modules [begin[k], begin[k + 1]) and belongs to systems[k] of
  // load(). Every segment is a string of its own: positions, contexts and
  // bracket partners are relative to it, so each derives as it would alone.
  /// Stage count of one batched pass; rewritten[k] = modules of segment k a
  /// production applied to. Returns the output size.
  virtual ChunkCount countSegments(const std::vector<SegmentPass>& passes, const std::vector<uint64_t>& begin,
                                   std::vector<uint64_t>& rewritten) = 0;
  /// Stage rewrite after countSegments; `begin` becomes the output's segment starts.
  virtual void rewriteSegments(const std::vector<SegmentPass>& passes, const ChunkCount& total,
                               std::vector<uint64_t>& begin) = 0;
  /// Stage cut in the segments k with cuts[k] (a cut at a segment's top level
  /// ends at the segment's end); `begin` is updated.
  virtual void cutSegments(const std::vector<uint8_t>& cuts, std::vector<uint64_t>& begin) = 0;

  /// Runs fn(i) for every i in [0, n): the work lists a caller builds itself
  /// (the scene interpretation's instances). The cpu runner runs them in
  /// parallel; the default runs them in order.
  virtual void forEach(uint64_t n, const std::function<void(uint64_t)>& fn) {
    for (uint64_t i = 0; i < n; ++i) fn(i);
  }
};

/// The host runners' common part (host_pass_runner.cpp): the resident string
/// is a ModuleString, and every PassRunner stage above is built from the
/// stages below over plain arrays, which serial/pass_runner.cpp (one chunk)
/// and cpu/pass_runner.cpp (chunks in parallel, scan between) implement.
class HostPassRunner : public PassRunner {
 public:
  void load(std::span<const LSystemData* const> systems, const ModuleString& s, bool parametric) override;
  uint64_t modules() const override { return cur_.size(); }
  uint64_t bytes() const override;
  ModuleString download() override;
  ChunkCount countPass(const RewritePass& pass, bool context) override;
  void rewritePass(const RewritePass& pass, const ChunkCount& total) override;
  uint64_t countPassD0L(const D0LTable& t) override;
  void rewritePassD0L(const D0LTable& t, uint64_t total) override;
  uint64_t countRewritePassD0L(const D0LTable& t, uint64_t room, uint64_t expected_output) override;
  int countPassD0LSteps(const D0LTable* const* tables, int k, uint64_t* lengths,
                        const std::function<bool(uint64_t)>& fits) override;
  bool cutPass() override { return cut(cur_); }
  ChunkCount countSegments(const std::vector<SegmentPass>& passes, const std::vector<uint64_t>& begin,
                           std::vector<uint64_t>& rewritten) override;
  void rewriteSegments(const std::vector<SegmentPass>& passes, const ChunkCount& total,
                       std::vector<uint64_t>& begin) override;
  void cutSegments(const std::vector<uint8_t>& cuts, std::vector<uint64_t>& begin) override;

  // -- stages over plain arrays ------------------------------------------------
  /// Stage count over the whole input: fills choice[0..n) and returns the output size.
  virtual ChunkCount count(const RewritePass& pass, int32_t* choice) = 0;
  /// Stage rewrite over the whole input, after count() of the same pass.
  virtual void rewrite(const RewritePass& pass, const int32_t* choice, ModuleString& out) = 0;
  virtual uint64_t countD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n) = 0;
  virtual void rewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out) = 0;
  /// Stage count and rewrite of a D0L step in one pass, for an `out` with
  /// room for the output; returns its size. The serial runner writes without
  /// counting; the cpu runner counts each chunk just before writing it (one
  /// parallel pass, no scan between).
  virtual uint64_t countRewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out,
                                   uint64_t expected_output) {
    (void)expected_output;
    const uint64_t total = countD0L(t, symbols, n);
    rewriteD0L(t, symbols, n, out);
    return total;
  }
  virtual void bracketPartners(const uint8_t* symbols, uint64_t n, int64_t* partner) = 0;
  /// Removes every '%' and the rest of its branch from `s` (the serial twin
  /// cutBranches is the default); true when anything was removed.
  virtual bool cut(ModuleString& s) { return cutBranches(s); }
  /// Modules per chunk of a batched pass's work list.
  virtual uint64_t chunkModules() const { return uint64_t{1} << 15; }

 private:
  /// A chunk of the combined string: modules [begin, end) of segment `segment`,
  /// in segment-relative positions.
  struct Chunk {
    uint32_t segment;
    uint64_t begin, end;
  };
  PgStringView segmentView(const std::vector<uint64_t>& begin, size_t k) const;
  ChunkCount countChunkOf(const SegmentPass& sp, const Chunk& ch, uint64_t base);
  void rewriteChunkOf(const SegmentPass& sp, const Chunk& ch, uint64_t base, const ChunkCount& at);

  ModuleString cur_, next_;
  bool parametric_ = false;
  OverwriteVector<int32_t> choice_;  // count fills the part a pass reads
  OverwriteVector<int64_t> partner_;
  const int64_t* pass_partner_ = nullptr;  ///< countPass → rewritePass
  // batched passes: countSegments → rewriteSegments
  std::vector<Chunk> chunks_;
  std::vector<ChunkCount> counts_;
  std::vector<RewritePass> segment_passes_;
};

std::unique_ptr<HostPassRunner> makeSerialPassRunner();
/// cpu/pass_runner.cpp (built with the cpu backend only): `threads` <= 0
/// means all hardware threads.
std::unique_ptr<HostPassRunner> makeCpuPassRunner(int threads);

class CpuExecutor;
/// Bracket partners (match.h convention) on the cpu: the treebox parallel
/// matcher, then every ']' writes itself into its '[' (cpu/pass_runner.cpp).
void bracketPartnersCpu(CpuExecutor& exec, const uint8_t* symbols, uint64_t n, int64_t* partner);
/// Throws BackendUnavailableError when the backend is not built in
/// (common/dispatch.hpp).
std::unique_ptr<PassRunner> makePassRunner(const Execution& execution);

/// One L-system of a derivation.
struct DerivedSystem {
  const LSystemData* data = nullptr;
  int iterations = 0;
  uint64_t seed = 1;
  int64_t scene_index = -1;  ///< its index in a scene, named in errors; -1: derive() of one system
};

/// What the driver returns: the combined string, segment k = modules
/// [begin[k], begin[k + 1]) being systems[k]'s result, with its statistics.
struct Derivation {
  ModuleString string;
  std::vector<uint64_t> begin;
  std::vector<DeriveStats> stats;
  int threads = 1;
};

/// The derivation driver (derive.cpp) for derive() (one system) and
/// deriveScene() (many, paper §6: every pass batched over all of them, each
/// with its own step count). options.seed and options.iterations are ignored
/// (the systems carry theirs); progress gets (step, the largest step count,
/// the combined string's length).
Derivation deriveSystems(std::span<const DerivedSystem> systems, const DeriveOptions& options);

}  // namespace procgen::detail

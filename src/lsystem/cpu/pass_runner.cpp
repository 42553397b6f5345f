// The cpu backend's pass runner (oneTBB). Paper §4.2, Figure 4: every
// rewriting pass is count → scan → rewrite. The input string is cut into
// chunks balanced by input size; each chunk runs the serial stage functions of
// derive_stages.hpp (count, rewrite, and the D0L fast path) on its range, and an
// exclusive scan of the chunk counts gives every chunk its output offsets, so
// the result is bit-identical to the serial runner's for any chunking and any
// thread count (stochastic choices are keyed by module position, not by chunk).
// Context search reads across chunk borders through the bracket partner array,
// which comes from the treebox parallel parentheses matcher (Levien §4, the
// replacement for the paper's depth-bucketed hierarchy extraction). The cut
// pass ('%') is parallel too: positions of '%' per chunk, their branch ends from
// the matched brackets, a scan over chunks to drop cuts nested in earlier ones,
// and a compaction (count kept modules per chunk → scan → copy).
#include "common/large_buffer.hpp"
#include "lsystem/pass_runner.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "cpu/executor.hpp"
#include "primitives/primitives.hpp"
#include "procgen/treebox.hpp"

namespace procgen::detail {
namespace {

/// Default chunk of the rewriting stages: big enough to amortise the task,
/// small enough that a chunk's output stays in L2 and threads can steal.
constexpr uint64_t kRewriteChunk = uint64_t{1} << 15;

/// Output modules below which a D0L step runs on one thread (see countRewriteD0L).
constexpr uint64_t kParallelD0LOutput = uint64_t{1} << 19;  // 524,288
/// The same while the arena's workers have not run yet (a fresh process).
constexpr uint64_t kColdParallelD0LOutput = uint64_t{1} << 23;  // 8,388,608
/// Input modules below which any pass runs on one thread while the arena's
/// workers have not run yet: at 10-30 ns a module, about the ~1 ms the first
/// parallel region of a fresh process waits for oneTBB to start them.
constexpr uint64_t kColdParallelModules = uint64_t{1} << 16;  // 65,536

/// A cut removes [begin, end): from the '%' to the ']' closing its branch.
struct CutRange {
  uint64_t begin;
  uint64_t end;
};

class CpuPassRunner final : public HostPassRunner {
 public:
  explicit CpuPassRunner(int threads) : exec_(threads) {}

  int threads() const override { return exec_.threads(); }

  ChunkCount count(const RewritePass& pass, int32_t* choice) override {
    plan_ = planPass(pass.in.length);
    counts_.assign(plan_.count + 1, ChunkCount{});
    exec_.forEachChunk(plan_, [&](uint64_t c) {
      counts_[c] = countChunk(pass, plan_.begin(c), plan_.end(c), choice);
    });
    // Exclusive scan: counts_[c] becomes the output offset of chunk c.
    ChunkCount total;
    for (uint64_t c = 0; c < plan_.count; ++c) {
      ChunkCount here = counts_[c];
      counts_[c] = total;
      total += here;
    }
    counts_[plan_.count] = total;
    return total;
  }

  void rewrite(const RewritePass& pass, const int32_t* choice, ModuleString& out) override {
    // The plan and offsets of the count() call of the same pass.
    exec_.forEachChunk(plan_, [&](uint64_t c) {
      rewriteChunk(pass, plan_.begin(c), plan_.end(c), choice, counts_[c].modules, counts_[c].params, out);
    });
  }

  uint64_t countD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n) override {
    plan_ = planPass(n);
    offsets_.assign(plan_.count + 1, 0);
    exec_.forEachChunk(plan_, [&](uint64_t c) {
      offsets_[c] = countChunkD0L(t, symbols, plan_.begin(c), plan_.end(c));
    });
    // offsets_[c] becomes chunk c's output offset, offsets_[count] (0 so far) the total.
    primitives::serial::scan<primitives::SumU64>(primitives::ScanKind::kExclusive, offsets_.data(), nullptr,
                                                 offsets_.data(), plan_.count + 1);
    return offsets_[plan_.count];
  }

  void rewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out) override {
    exec_.forEachChunk(plan_, [&](uint64_t c) {
      rewriteChunkD0L(t, symbols, plan_.begin(c), plan_.end(c), out + offsets_[c]);
    });
  }

  uint64_t countRewriteD0L(const D0LTable& t, const uint8_t* symbols, uint64_t n, uint8_t* out,
                           uint64_t expected_output) override {
    plan_ = exec_.plan(n, kRewriteChunk);
    // A small step runs on this thread alone: a sleeping worker can take
    // longer to wake than the step takes. Measured here with one D0L step at
    // a time (before the deriver's multi-step jumps), bench lsystem
    // --repeat 12, whole derivations: Koch n=7 (625 k modules) 0.10 ms alone,
    // 0.08 ms on two threads; Hilbert n=6 (1.1 M) 0.14 ms alone, 0.11 ms on
    // two when the worker was awake and 0.14 ms when it slept (it then did
    // not arrive before the end).
    // In a fresh process the first parallel region also waits for oneTBB to
    // start its workers (~1 ms here), while one thread writes a D0L step of
    // 8 M modules, row copies, in about as long: plant-2d n=7 (5.7 M) and
    // Hilbert n=6 (1.1 M) derived in 1.30 and 1.53 ms cold on two threads
    // against 0.52 and 0.30 ms alone (bench lsystem --cold-runs 5, 2026-12-04).
    const uint64_t limit = exec_.warm() ? kParallelD0LOutput : kColdParallelD0LOutput;
    const bool small = expected_output < limit && cpuChunkOverride() == 0;
    if (plan_.count <= 1 || exec_.threads() == 1 || small) return rewriteChunkD0L(t, symbols, 0, n, out) - out;
    // Chunks are taken in order (a ticket, whatever order the scheduler runs
    // the bodies in); each counts its output, waits for the inclusive prefix
    // of the chunk before it — taken earlier by a running body, so it is
    // coming — publishes its own, and writes at its offset. The count of the
    // next chunk overlaps the write of this one: one parallel pass per step.
    if (prefix_capacity_ < plan_.count) {
      prefix_.reset(new std::atomic<uint64_t>[plan_.count]);
      prefix_capacity_ = plan_.count;
    }
    constexpr uint64_t kPending = ~uint64_t{0};
    for (uint64_t c = 0; c < plan_.count; ++c) prefix_[c].store(kPending, std::memory_order_relaxed);
    std::atomic<uint64_t> ticket{0};
    exec_.forEachChunk(plan_, [&](uint64_t) {
      const uint64_t c = ticket.fetch_add(1, std::memory_order_relaxed);
      const uint64_t here = countChunkD0L(t, symbols, plan_.begin(c), plan_.end(c));
      uint64_t before = 0;
      if (c > 0) {
        for (int spin = 0; (before = prefix_[c - 1].load(std::memory_order_acquire)) == kPending; ++spin)
          if (spin > 64) std::this_thread::yield();  // its owner was descheduled
      }
      prefix_[c].store(before + here, std::memory_order_release);
      rewriteChunkD0L(t, symbols, plan_.begin(c), plan_.end(c), out + before);
    });
    return prefix_[plan_.count - 1].load(std::memory_order_relaxed);
  }

  void forEach(uint64_t n, const std::function<void(uint64_t)>& fn) override {
    if (alone(modules())) {  // the chunks of a short (scene) string, while the workers start
      for (uint64_t c = 0; c < n; ++c) fn(c);
      return;
    }
    exec_.forEachChunk(ChunkPlan{n, 1, n}, fn);  // one work item per "chunk"
  }

  uint64_t chunkModules() const override {
    const uint64_t forced = cpuChunkOverride();
    return forced ? forced : kRewriteChunk;
  }

  void bracketPartners(const uint8_t* symbols, uint64_t n, int64_t* partner) override {
    if (alone(n)) bracketPartnersSerial(symbols, n, partner);
    else bracketPartnersCpu(exec_, symbols, n, partner);
  }

  bool cut(ModuleString& s) override;

 private:
  /// Whether a pass over `modules` input modules runs on this thread alone:
  /// in a fresh process, until the arena's workers have run once, a short
  /// pass is done before they would arrive (kColdParallelModules). The
  /// result is the same either way: chunking never changes it.
  bool alone(uint64_t modules) const {
    return !exec_.warm() && modules < kColdParallelModules && cpuChunkOverride() == 0;
  }

  /// The chunks of a pass over n input modules (one when it runs alone).
  ChunkPlan planPass(uint64_t n) const {
    if (alone(n)) return ChunkPlan{n, std::max<uint64_t>(n, 1), n > 0 ? 1u : 0u};
    return exec_.plan(n, kRewriteChunk);
  }

  CpuExecutor exec_;
  ChunkPlan plan_;
  std::vector<ChunkCount> counts_;
  std::vector<uint64_t> offsets_;
  std::unique_ptr<std::atomic<uint64_t>[]> prefix_;  ///< countRewriteD0L: inclusive output prefix per chunk
  uint64_t prefix_capacity_ = 0;
  // cut() scratch, reused across steps
  OverwriteVector<int64_t> enclosing_;
  std::vector<std::vector<CutRange>> chunk_cuts_;
  std::vector<CutRange> cuts_;
  ModuleString cut_out_;
};

bool CpuPassRunner::cut(ModuleString& s) {
  const uint64_t n = s.size();
  const uint8_t* symbols = s.symbols.data();
  const ChunkPlan plan = planPass(n);

  // 1. Where are the '%'? Most strings have none: then nothing else runs.
  chunk_cuts_.resize(plan.count);
  std::vector<uint8_t> has_cut(plan.count, 0);
  exec_.forEachChunk(plan, [&](uint64_t c) {
    const uint8_t* b = symbols + plan.begin(c);
    const uint8_t* e = symbols + plan.end(c);
    has_cut[c] = std::find(b, e, '%') != e;
  });
  if (std::find(has_cut.begin(), has_cut.end(), 1) == has_cut.end()) return false;

  // 2. Branch ends. enclosing_[i] = innermost '[' around i (matchBrackets);
  // every matched ']' then stores itself into its '[' slot, so for a '%' at i
  // with enclosing '[' o the cut ends at enclosing_[o] when that is > o (else
  // o is never closed: the cut runs to the end). A '%' at top level ends at the
  // first unmatched ']' after it, as in the serial depth-counting scan.
  resizeForOverwrite(enclosing_, n);
  Execution e;
  e.backend = Backend::kCpu;
  e.threads = alone(n) ? 1 : exec_.threads();
  matchBrackets(symbols, n, '[', ']', enclosing_.data(), e);
  std::vector<uint8_t> has_unmatched_close(plan.count, 0);
  exec_.forEachChunk(plan, [&](uint64_t c) {
    for (uint64_t i = plan.begin(c), end = plan.end(c); i < end; ++i) {
      if (symbols[i] != ']') continue;
      const int64_t o = enclosing_[i];
      if (o >= 0) enclosing_[o] = static_cast<int64_t>(i);
      else has_unmatched_close[c] = 1;
    }
  });
  std::vector<uint64_t> unmatched_closes;  // rare: only malformed strings have them
  for (uint64_t c = 0; c < plan.count; ++c)
    if (has_unmatched_close[c])
      for (uint64_t i = plan.begin(c); i < plan.end(c); ++i)
        if (symbols[i] == ']' && enclosing_[i] < 0) unmatched_closes.push_back(i);

  // 3. Cut ranges per chunk, dropping those nested in an earlier range of the
  // same chunk (ranges are nested or disjoint: a '%' inside a cut branch ends
  // at or before that branch's ']').
  exec_.forEachChunk(plan, [&](uint64_t c) {
    std::vector<CutRange>& out = chunk_cuts_[c];
    out.clear();
    if (!has_cut[c]) return;
    uint64_t covered = 0;
    for (uint64_t i = plan.begin(c), end = plan.end(c); i < end; ++i) {
      if (symbols[i] != '%' || i < covered) continue;
      uint64_t stop;
      const int64_t o = enclosing_[i];
      if (o >= 0) {
        const int64_t close = enclosing_[o];
        stop = close > o ? static_cast<uint64_t>(close) : n;
      } else {
        auto it = std::upper_bound(unmatched_closes.begin(), unmatched_closes.end(), i);
        stop = it == unmatched_closes.end() ? n : *it;
      }
      out.push_back({i, stop});
      covered = stop;
    }
  });
  // Across chunks (a scan of the furthest end so far): drop ranges inside an
  // earlier chunk's range.
  cuts_.clear();
  uint64_t covered = 0;
  for (uint64_t c = 0; c < plan.count; ++c)
    for (const CutRange& r : chunk_cuts_[c])
      if (r.begin >= covered) {
        cuts_.push_back(r);
        covered = r.end;
      }

  // 4. Compaction: kept modules and parameters per chunk → scan → copy.
  const bool parametric = s.parametric();
  auto firstCut = [&](uint64_t pos) {  // first range ending after pos
    return std::upper_bound(cuts_.begin(), cuts_.end(), pos,
                            [](uint64_t p, const CutRange& r) { return p < r.end; });
  };
  // Calls keep(b, e) for every kept run [b, e) within [begin, end).
  auto forKeptRuns = [&](uint64_t begin, uint64_t end, auto&& keep) {
    uint64_t pos = begin;
    for (auto it = firstCut(begin); pos < end; ++it) {
      const uint64_t run_end = it == cuts_.end() ? end : std::min(end, std::max(pos, it->begin));
      if (run_end > pos) keep(pos, run_end);
      if (it == cuts_.end()) break;
      pos = std::max(pos, it->end);
    }
  };
  std::vector<ChunkCount> kept(plan.count + 1);
  exec_.forEachChunk(plan, [&](uint64_t c) {
    ChunkCount k;
    forKeptRuns(plan.begin(c), plan.end(c), [&](uint64_t b, uint64_t e) {
      k.modules += e - b;
      if (parametric) k.params += s.param_offsets[e] - s.param_offsets[b];
    });
    kept[c] = k;
  });
  ChunkCount total;
  for (uint64_t c = 0; c < plan.count; ++c) {
    ChunkCount here = kept[c];
    kept[c] = total;
    total += here;
  }
  resizeForOverwrite(cut_out_.symbols, total.modules);
  if (parametric) {
    resizeForOverwrite(cut_out_.param_offsets, total.modules + 1);
    resizeForOverwrite(cut_out_.params, total.params);
  } else {
    cut_out_.param_offsets.clear();
    cut_out_.params.clear();
  }
  exec_.forEachChunk(plan, [&](uint64_t c) {
    uint64_t w = kept[c].modules, wp = kept[c].params;
    forKeptRuns(plan.begin(c), plan.end(c), [&](uint64_t b, uint64_t e) {
      std::copy(symbols + b, symbols + e, cut_out_.symbols.begin() + static_cast<std::ptrdiff_t>(w));
      if (parametric) {
        const uint64_t pb = s.param_offsets[b], pe = s.param_offsets[e];
        for (uint64_t i = b; i < e; ++i) cut_out_.param_offsets[w + (i - b)] = wp + (s.param_offsets[i] - pb);
        std::copy(s.params.begin() + static_cast<std::ptrdiff_t>(pb), s.params.begin() + static_cast<std::ptrdiff_t>(pe),
                  cut_out_.params.begin() + static_cast<std::ptrdiff_t>(wp));
        wp += pe - pb;
      }
      w += e - b;
    });
  });
  if (parametric) cut_out_.param_offsets[total.modules] = total.params;
  std::swap(s, cut_out_);
  return true;
}

}  // namespace

void bracketPartnersCpu(CpuExecutor& exec, const uint8_t* symbols, uint64_t n, int64_t* partner) {
  // matchBrackets leaves, for every ']', the index of its '[' (-1 when
  // unmatched) and for every '[' the innermost '[' enclosing it (< its own
  // index). Each ']' then writes its index into its '[' (one writer per
  // '['); a '[' still holding a smaller index was never closed.
  Execution e;
  e.backend = Backend::kCpu;
  e.threads = exec.threads();
  matchBrackets(symbols, n, '[', ']', partner, e);
  const ChunkPlan plan = exec.plan(n, kRewriteChunk);
  exec.forEachChunk(plan, [&](uint64_t c) {
    for (uint64_t i = plan.begin(c), end = plan.end(c); i < end; ++i)
      if (symbols[i] == ']' && partner[i] >= 0) partner[partner[i]] = static_cast<int64_t>(i);
  });
  exec.forEachChunk(plan, [&](uint64_t c) {
    for (uint64_t i = plan.begin(c), end = plan.end(c); i < end; ++i)
      if (symbols[i] == '[' && partner[i] < static_cast<int64_t>(i)) partner[i] = -1;
  });
}

std::unique_ptr<HostPassRunner> makeCpuPassRunner(int threads) {
  // One thread has nothing to share: the serial runner runs the same stage
  // functions without chunk bookkeeping, and without starting oneTBB in a
  // fresh process (plant-2d derived in 0.74 ms cold on cpu x1 against 0.62
  // serial). Tests that force chunks still get the chunked runner.
  if (CpuExecutor::resolveThreads(threads) == 1 && cpuChunkOverride() == 0) return makeSerialPassRunner();
  return std::make_unique<CpuPassRunner>(threads);
}

}  // namespace procgen::detail

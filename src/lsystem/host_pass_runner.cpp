// The host runners' resident string (serial and cpu; see pass_runner.hpp):
// the PassRunner stages of one string and of a combined string of many
// L-systems (Lipp et al. §4.2 and §6) over a ModuleString, built from the
// backend's stages over plain arrays. A batched pass cuts every segment into
// chunks that never straddle two segments and runs them as one work list
// (forEach), whichever segment they belong to — so one huge tree and fifty
// small plants keep every core busy; each chunk reads its own L-system's
// tables, and a segment with no table this pass is copied.
#include <algorithm>
#include <span>
#include <cstring>

#include "common/large_buffer.hpp"
#include "lsystem/memory_budget.hpp"
#include "lsystem/pass_runner.hpp"

namespace procgen::detail {

void HostPassRunner::load(std::span<const LSystemData* const> systems, const ModuleString& s, bool parametric) {
  (void)systems;
  parametric_ = parametric;
  cur_ = s;
  if (parametric && !cur_.parametric()) cur_.param_offsets.assign(cur_.size() + 1, 0);
  if (!parametric) {
    cur_.param_offsets.clear();
    cur_.params.clear();
  }
}

uint64_t HostPassRunner::bytes() const { return MemoryBudget::bytesOf(cur_); }

ModuleString HostPassRunner::download() { return std::move(cur_); }

ChunkCount HostPassRunner::countPass(const RewritePass& pass, bool context) {
  const uint64_t n = cur_.size();
  RewritePass p = pass;
  p.in = stringView(cur_);
  pass_partner_ = nullptr;
  if (context && std::find_if(cur_.symbols.begin(), cur_.symbols.end(), [](uint8_t c) {
                   return c == '[' || c == ']';
                 }) != cur_.symbols.end()) {
    resizeForOverwrite(partner_, n);
    bracketPartners(cur_.symbols.data(), n, partner_.data());
    pass_partner_ = partner_.data();
  }
  p.partner = pass_partner_;
  resizeForOverwrite(choice_, n);
  return count(p, choice_.data());
}

void HostPassRunner::rewritePass(const RewritePass& pass, const ChunkCount& total) {
  RewritePass p = pass;
  p.in = stringView(cur_);
  p.partner = pass_partner_;
  resizeForOverwrite(next_.symbols, total.modules);
  if (p.parametric) {
    resizeForOverwrite(next_.param_offsets, total.modules + 1);
    resizeForOverwrite(next_.params, total.params);
  } else {
    next_.param_offsets.clear();
    next_.params.clear();
  }
  rewrite(p, choice_.data(), next_);
  if (p.parametric) next_.param_offsets[total.modules] = total.params;
  std::swap(cur_, next_);
}

uint64_t HostPassRunner::countPassD0L(const D0LTable& t) { return countD0L(t, cur_.symbols.data(), cur_.size()); }

void HostPassRunner::rewritePassD0L(const D0LTable& t, uint64_t total) {
  resizeForOverwrite(next_.symbols, total);
  rewriteD0L(t, cur_.symbols.data(), cur_.size(), next_.symbols.data());
  std::swap(cur_.symbols, next_.symbols);
}

uint64_t HostPassRunner::countRewritePassD0L(const D0LTable& t, uint64_t room, uint64_t expected_output) {
  // Only the pages written are touched: resize leaves the rest unset.
  resizeForOverwrite(next_.symbols, room);
  const uint64_t total = countRewriteD0L(t, cur_.symbols.data(), cur_.size(), next_.symbols.data(), expected_output);
  next_.symbols.resize(total);
  std::swap(cur_.symbols, next_.symbols);
  return total;
}

int HostPassRunner::countPassD0LSteps(const D0LTable* const* tables, int k, uint64_t* lengths,
                                      const std::function<bool(uint64_t)>& fits) {
  // On this thread: the string before a jump is small (the jump writes the big one).
  for (int m = 0; m < k; ++m)
    if (!fits(lengths[m] = countChunkD0L(*tables[m], cur_.symbols.data(), 0, cur_.size()))) return m + 1;
  return k;
}

// -- batched passes (paper §6) ----------------------------------------------------

PgStringView HostPassRunner::segmentView(const std::vector<uint64_t>& begin, size_t k) const {
  // Parameter offsets stay absolute.
  PgStringView v = stringView(cur_);
  v.symbols += begin[k];
  if (v.param_offsets) v.param_offsets += begin[k];
  v.length = begin[k + 1] - begin[k];
  return v;
}

ChunkCount HostPassRunner::countSegments(const std::vector<SegmentPass>& passes, const std::vector<uint64_t>& begin,
                                         std::vector<uint64_t>& rewritten) {
  const size_t n = passes.size();
  segment_passes_.assign(n, RewritePass{});
  // Bracket partners (8 bytes a module) only when a segment needs context, as
  // the memory budget counts them (MemoryBudget::check's has_context): made
  // for every pass, they took 8 bytes a module past the budget.
  if (std::any_of(passes.begin(), passes.end(),
                  [](const SegmentPass& sp) { return sp.pass.table && sp.context && !sp.d0l; }))
    resizeForOverwrite(partner_, cur_.size());
  resizeForOverwrite(choice_, cur_.size());
  for (size_t k = 0; k < n; ++k) {
    const SegmentPass& sp = passes[k];
    RewritePass& p = segment_passes_[k];
    p = sp.pass;
    if (p.table == nullptr) continue;
    p.in = segmentView(begin, k);
    p.partner = nullptr;
    if (sp.context && !sp.d0l) {
      const uint8_t* first = cur_.symbols.data() + begin[k];
      if (std::any_of(first, first + p.in.length, [](uint8_t c) { return c == '[' || c == ']'; })) {
        bracketPartners(first, p.in.length, partner_.data() + begin[k]);
        p.partner = partner_.data() + begin[k];
      }
    }
  }
  // Chunks of every segment, one work list for all threads.
  const uint64_t size = chunkModules();
  chunks_.clear();
  for (size_t k = 0; k < n; ++k) {
    const uint64_t len = begin[k + 1] - begin[k];
    for (uint64_t b = 0; b < len; b += size) chunks_.push_back(Chunk{static_cast<uint32_t>(k), b, std::min(len, b + size)});
  }
  counts_.assign(chunks_.size() + 1, ChunkCount{});
  forEach(chunks_.size(), [&](uint64_t c) {
    const Chunk& ch = chunks_[c];
    counts_[c] = countChunkOf(passes[ch.segment], ch, begin[ch.segment]);
  });
  rewritten.assign(n, 0);
  for (size_t c = 0; c < chunks_.size(); ++c) rewritten[chunks_[c].segment] += counts_[c].rewritten;
  // Exclusive scan: counts_[c] becomes chunk c's output offset.
  ChunkCount total;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    const ChunkCount here = counts_[c];
    counts_[c] = total;
    total += here;
  }
  counts_[chunks_.size()] = total;
  return total;
}

void HostPassRunner::rewriteSegments(const std::vector<SegmentPass>& passes, const ChunkCount& total,
                                     std::vector<uint64_t>& begin) {
  resizeForOverwrite(next_.symbols, total.modules);
  if (parametric_) {
    resizeForOverwrite(next_.param_offsets, total.modules + 1);
    resizeForOverwrite(next_.params, total.params);
  } else {
    next_.param_offsets.clear();
    next_.params.clear();
  }
  forEach(chunks_.size(), [&](uint64_t c) {
    const Chunk& ch = chunks_[c];
    rewriteChunkOf(passes[ch.segment], ch, begin[ch.segment], counts_[c]);
  });
  if (parametric_) next_.param_offsets[total.modules] = total.params;
  // New segment starts: the output offset of each segment's first chunk (an
  // empty segment starts where the next one does).
  const size_t n = passes.size();
  size_t c = 0;
  for (size_t k = 0; k < n; ++k) {
    begin[k] = c < chunks_.size() ? counts_[c].modules : total.modules;
    while (c < chunks_.size() && chunks_[c].segment == k) ++c;
  }
  begin[n] = total.modules;
  std::swap(cur_, next_);
}

ChunkCount HostPassRunner::countChunkOf(const SegmentPass& sp, const Chunk& ch, uint64_t base) {
  const RewritePass& p = segment_passes_[ch.segment];
  if (p.table == nullptr) {  // copied unchanged
    ChunkCount c;
    c.modules = ch.end - ch.begin;
    if (parametric_) c.params = cur_.param_offsets[base + ch.end] - cur_.param_offsets[base + ch.begin];
    return c;
  }
  if (sp.d0l) {
    const uint64_t m = countChunkD0L(*sp.d0l, cur_.symbols.data() + base, ch.begin, ch.end);
    return ChunkCount{m, 0, ch.end - ch.begin};
  }
  return countChunk(p, ch.begin, ch.end, choice_.data() + base);
}

void HostPassRunner::rewriteChunkOf(const SegmentPass& sp, const Chunk& ch, uint64_t base, const ChunkCount& at) {
  const RewritePass& p = segment_passes_[ch.segment];
  if (p.table == nullptr) {
    const uint64_t m = ch.end - ch.begin;
    std::memcpy(next_.symbols.data() + at.modules, cur_.symbols.data() + base + ch.begin, m);
    if (parametric_) {
      const uint64_t p0 = cur_.param_offsets[base + ch.begin];
      const uint64_t p1 = cur_.param_offsets[base + ch.end];
      for (uint64_t i = 0; i < m; ++i)
        next_.param_offsets[at.modules + i] = cur_.param_offsets[base + ch.begin + i] - p0 + at.params;
      if (p1 > p0) std::memcpy(next_.params.data() + at.params, cur_.params.data() + p0, (p1 - p0) * sizeof(float));
    }
    return;
  }
  if (sp.d0l) {
    rewriteChunkD0L(*sp.d0l, cur_.symbols.data() + base, ch.begin, ch.end, next_.symbols.data() + at.modules);
    return;
  }
  rewriteChunk(p, ch.begin, ch.end, choice_.data() + base, at.modules, at.params, next_);
}

ModuleString sliceModules(const ModuleString& s, uint64_t b, uint64_t e, bool parametric) {
  ModuleString out;
  out.clear(parametric);
  out.symbols.assign(s.symbols.begin() + static_cast<std::ptrdiff_t>(b), s.symbols.begin() + static_cast<std::ptrdiff_t>(e));
  if (parametric) {
    const uint64_t p0 = s.param_offsets[b];
    out.param_offsets.clear();
    for (uint64_t i = b; i <= e; ++i) out.param_offsets.push_back(s.param_offsets[i] - p0);
    out.params.assign(s.params.begin() + static_cast<std::ptrdiff_t>(p0),
                      s.params.begin() + static_cast<std::ptrdiff_t>(s.param_offsets[e]));
  }
  return out;
}

void HostPassRunner::cutSegments(const std::vector<uint8_t>& cuts, std::vector<uint64_t>& begin) {
  const size_t n = cuts.size();
  if (std::find(cuts.begin(), cuts.end(), 1) == cuts.end()) return;
  ModuleString rebuilt;
  rebuilt.clear(parametric_);
  std::vector<uint64_t> starts(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    ModuleString seg = sliceModules(cur_, begin[k], begin[k + 1], parametric_);
    if (cuts[k]) cut(seg);
    starts[k] = rebuilt.size();
    appendModules(rebuilt, seg, parametric_);
  }
  starts[n] = rebuilt.size();
  begin = std::move(starts);
  cur_ = std::move(rebuilt);
}

}  // namespace procgen::detail

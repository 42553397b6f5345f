// The chaos game over the ranks of an MPI job (procgen/distributed.hpp;
// docs/scaling.md "Flames"): the cpu stage's "sorted scatter"
// (src/flame/cpu/iterate.cpp) with ranks in the place of threads, its
// exchange overlapped with the iteration.
//
// A bucket's value depends on the order of its float additions, so a
// histogram summed from per-rank partial histograms (MPI_Reduce) would differ
// from one process's in the last bits. Instead every bucket keeps the
// single-process order. The histogram is cut into bands of 2^shift cells,
// band b owned by rank b mod R (interleaved, so that every rank adds about
// 1/R of the records however the flame's density lies). The work units run
// in rounds; in round k rank r runs a contiguous block of the round's units,
// cut into `chunks` contiguous pieces (one per cpu thread of the widest
// rank). The record sink sorts each slice of records by band straight into
// one part per (chunk, owner): per slice, the owner's bands in order, each
// band's records in generation order, and the count of each band. The parts
// for other ranks are sent (nonblocking) while round k + 1 iterates; after
// it, the owner adds round k band by band: for each band, the parts of rank
// 0, 1, ... (its own without a copy), chunk by chunk, slice by slice — unit
// order, the serial stage's order for every bucket. Rank 0 gathers the bands
// at the end for the tone mapping: the same histogram bits as one process on
// serial or cpu, for every rank count.
//
// Failures: every round starts a nonblocking checkpoint before its sends, so
// a rank that fails before sending round k is seen by the others waiting for
// round k (distributed::Exchange).
#include <algorithm>
#include <memory>
#include <thread>

#include "common/dispatch.hpp"
#include "common/large_buffer.hpp"
#include "flame/chaos_game.hpp"
#include "flame/flame_stages.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"
#include "procgen/memory.hpp"

namespace procgen {
namespace {

using flame::PlotRecord;

// Bands of 2^shift cells, band b owned by rank b % ranks at local band
// b / ranks; records carry the cell inside the owner's compact band array.
struct BandMap {
  int shift = 0, ranks = 1;
  uint64_t bands = 0;
  std::vector<uint32_t> local_base;  // per band: (b / ranks) << shift

  BandMap(uint64_t cells, int r) : ranks(r) {
    // At least 8 bands per rank where the histogram allows (the shares
    // even out), at most 2^15 cells (640 KiB of buckets, in L2) per band.
    // Not more: the record sink writes one stream per band, and 113 bands
    // (2^13 cells at 1280x720) took it twice the time of 29.
    shift = 15;
    while (shift > 8 && (cells >> shift) < 8 * uint64_t(ranks)) --shift;
    bands = (cells + (uint64_t{1} << shift) - 1) >> shift;
    local_base.resize(bands);
    for (uint64_t b = 0; b < bands; ++b) local_base[b] = static_cast<uint32_t>((b / uint64_t(ranks)) << shift);
  }
  uint64_t owned(int d) const { return uint64_t(d) < bands ? (bands - uint64_t(d) + ranks - 1) / ranks : 0; }
};

// What one chunk of a round sends one owner: the records of the owner's
// bands, slice after slice (each slice's grouped by band), and per slice the
// record count of each of the owner's bands.
struct Part {
  OverwriteVector<PlotRecord> records;
  std::vector<uint32_t> counts;
};

// Capacity for `n` elements and a quarter more (parts of later rounds vary
// a little in size), without copying: the old elements are not kept.
template <typename T>
void reserveFresh(OverwriteVector<T>& v, uint64_t n) {
  if (v.capacity() >= n) return;
  v = OverwriteVector<T>();
  detail::reserveLarge(v, n + n / 4);
}

template <typename T>
T* appendUninitialized(OverwriteVector<T>& v, uint64_t n) {
  const size_t at = v.size();
  if (v.capacity() < at + n) v.reserve(std::max<size_t>(at + n, 2 * v.capacity()));
  v.resize(at + n);
  return v.data() + at;
}

// The record sink of one chunk: each slice sorted by band into the parts of
// the bands' owners (a stable counting sort), the cell made local.
class OwnerScatter final : public flame::RecordSink {
 public:
  OwnerScatter(const BandMap& map, const std::function<void()>& progress)
      : map_(map), progress_(progress), count_(map.bands), out_(map.bands) {}

  void setParts(Part* parts) { parts_ = parts; }

  void take(const PlotRecord* records, uint64_t n) override {
    const int shift = map_.shift, ranks = map_.ranks;
    const uint64_t bands = map_.bands;
    const uint32_t mask = (uint32_t{1} << shift) - 1;
    uint32_t* count = count_.data();
    std::fill(count, count + bands, 0u);
    for (uint64_t i = 0; i < n; ++i) ++count[records[i].cell >> shift];
    PlotRecord** out = out_.data();
    for (int d = 0; d < ranks; ++d) {
      Part& part = parts_[d];
      uint64_t total = 0;
      for (uint64_t b = uint64_t(d); b < bands; b += uint64_t(ranks)) {
        part.counts.push_back(count[b]);
        total += count[b];
      }
      PlotRecord* at = appendUninitialized(part.records, total);
      for (uint64_t b = uint64_t(d); b < bands; b += uint64_t(ranks)) {
        out[b] = at;
        at += count[b];
      }
    }
    const uint32_t* base = map_.local_base.data();
    for (uint64_t i = 0; i < n; ++i) {
      const PlotRecord r = records[i];
      const uint32_t b = r.cell >> shift;
      *out[b]++ = PlotRecord{(r.cell & mask) | base[b], r.colour, r.xform};
    }
    progress_();
  }

 private:
  const BandMap& map_;
  const std::function<void()>& progress_;
  std::vector<uint32_t> count_;
  std::vector<PlotRecord*> out_;
  Part* parts_ = nullptr;
};

// One slice of a part as its owner reads it: records and, per owned band,
// where the band's records start (the counts turned into offsets in place).
struct SliceView {
  const PlotRecord* records;
  const uint32_t* starts;
  uint32_t total;
};

// Appends the slices of `part` (owner with `owned` bands) to `slices`.
void viewSlices(Part& part, uint64_t owned, std::vector<SliceView>& slices) {
  if (owned == 0) return;
  const uint64_t n = part.counts.size() / owned;
  const PlotRecord* records = part.records.data();
  for (uint64_t s = 0; s < n; ++s) {
    uint32_t* c = &part.counts[s * owned];
    uint32_t start = 0;
    for (uint64_t j = 0; j < owned; ++j) {
      const uint32_t k = c[j];
      c[j] = start;
      start += k;
    }
    slices.push_back({records, c, start});
    records += start;
  }
}

}  // namespace

FlameHistogram iterateFlameAcrossRanks(const FlameGenome& genome, const FlameRenderOptions& options,
                                       const Execution& execution) {
  const int ranks = distributed::size(), me = distributed::rank();
  if (ranks == 1) return iterateFlame(genome, options, execution);
  if (execution.backend == Backend::kOpenCL)
    throw Error("flame: one image over several MPI ranks runs on --backend serial or cpu (the opencl iteration is "
                "not split over ranks); a genome file with several flames spreads whole images over the ranks on "
                "any backend",
                ExitCode::kUsage);
  if (options.method != FlameMethod::kPresorted && options.method != FlameMethod::kNaive)
    throw Error("iterateFlame: unknown method", ExitCode::kUsage);
  const FlameHistogramLayout layout = flameHistogramLayout(genome, options);
  const uint64_t cells = static_cast<uint64_t>(layout.width) * static_cast<uint64_t>(layout.height);
  if (cells > UINT32_MAX)
    throw ResourceError("flame histogram: " + std::to_string(layout.width) + "x" + std::to_string(layout.height) +
                        " cells is more than the 2^32 the iteration addresses");
  detail::requireBackend(execution.backend, "iterateFlameAcrossRanks");
  const bool cpu = execution.backend == Backend::kCpu;
  const flame::ChaosProgram program = flame::compileChaosProgram(genome);
  const flame::ChaosGame game(program, layout, options);
  const uint64_t units = game.unitCount();
  int threads = 1;
  if constexpr (detail::kHaveCpuBackend)
    if (cpu) threads = flame::cpuWorkerThreads(execution);
  // Every rank cuts its block into as many chunks as the widest rank has
  // threads: the receivers must know how many parts come (collective, and the
  // first agreement: a rank that failed before the iteration stops us here).
  uint64_t widest[1] = {uint64_t(threads)};
  distributed::allReduce(std::span<uint64_t>(widest, 1), distributed::ReduceOp::kMax);
  const uint64_t chunks = widest[0];

  const BandMap map(cells, ranks);
  const uint64_t owned = map.owned(me);
  // A round: about 2^21 records (2 presorted units) per rank and a unit per
  // chunk; the exchange of one round overlaps the next round's iteration.
  // Five rounds of parts are held (below), so rounds stay small.
  const uint64_t per_unit = game.maxUnitSamples();
  const uint64_t units_per_rank = std::max<uint64_t>(chunks, ((uint64_t{1} << 21) + per_unit - 1) / per_unit);
  const uint64_t round_units = std::min(units, units_per_rank * uint64_t(ranks));
  const uint64_t rounds = (units + round_units - 1) / round_units;
  const uint64_t band_bytes = (owned << map.shift) * sizeof(FlameBucket);
  // Three rounds of own parts in flight and two of received ones.
  const uint64_t round_bytes =
      5 * std::min(units_per_rank, (units + uint64_t(ranks) - 1) / uint64_t(ranks)) * per_unit * sizeof(PlotRecord);
  requireMemory("flame iteration", game.workspaceBytes() * uint64_t(threads) + game.tableBytes() + round_bytes,
                options.memory_budget, band_bytes + (me == 0 ? cells * sizeof(FlameBucket) : 0));

  // The buffers MPI reads and writes, owned by a shared block that the
  // exchange keeps alive if a failure unwinds with transfers in flight.
  struct Buffers {
    std::vector<Part> own[3];       // [round % 3][chunk * ranks + owner]
    std::vector<Part> received[2];  // [round % 2][rank * chunks + chunk]
  };
  auto buffers = std::make_shared<Buffers>();
  for (auto& parts : buffers->own) parts.resize(chunks * uint64_t(ranks));
  for (auto& parts : buffers->received) parts.resize(uint64_t(ranks) * chunks);
  distributed::Exchange exchange;
  exchange.keepAlive(buffers);

  // Huge pages where the kernel allows (fewer first-touch faults), zeroed once.
  OverwriteVector<FlameBucket> band;
  detail::resizeForOverwrite(band, owned << map.shift);
  std::fill(band.begin(), band.end(), FlameBucket{});
  const std::thread::id main_thread = std::this_thread::get_id();
  const std::function<void()> progress = [&] {
    if (std::this_thread::get_id() == main_thread) exchange.progress();
  };
  std::vector<flame::UnitWorkspace> workspaces(static_cast<size_t>(threads));
  for (flame::UnitWorkspace& ws : workspaces) game.prepareWorkspace(ws);
  std::vector<OwnerScatter> scatters;
  scatters.reserve(size_t(threads));
  for (int w = 0; w < threads; ++w) scatters.emplace_back(map, progress);
  std::vector<flame::UnitStats> chunk_stats(chunks);
  auto runTasks = [&](uint64_t tasks, const std::function<void(int, uint64_t)>& task) {
    if constexpr (detail::kHaveCpuBackend)
      if (cpu && threads > 1) return flame::runTasksCpu(execution, tasks, task);
    for (uint64_t t = 0; t < tasks; ++t) task(0, t);
  };
  // Transfer groups: sends of round k are 2k, receives 2k + 1.
  auto sendGroup = [](uint64_t k) { return 2 * k; };
  auto receiveGroup = [](uint64_t k) { return 2 * k + 1; };
  auto roundBlock = [&](uint64_t k, int r) {
    const uint64_t first = k * round_units, count = std::min(round_units, units - first);
    const distributed::Block b = distributed::blockOf(count, r, ranks);
    return distributed::Block{first + b.begin, first + b.end};
  };

  // Round k's bands, owner by owner in rank order (this rank's own parts in place).
  std::vector<SliceView> slices;
  auto accumulateRound = [&](uint64_t k) {
    slices.clear();
    for (int r = 0; r < ranks; ++r)
      for (uint64_t c = 0; c < chunks; ++c)
        viewSlices(r == me ? buffers->own[k % 3][c * ranks + uint64_t(me)] : buffers->received[k % 2][r * chunks + c],
                   owned, slices);
    runTasks(owned, [&](int, uint64_t j) {
      for (const SliceView& s : slices) {
        const uint32_t begin = s.starts[j], end = j + 1 < owned ? s.starts[j + 1] : s.total;
        if (end > begin) game.accumulate(s.records + begin, end - begin, band.data());
      }
    });
  };

  uint64_t totals[3] = {0, 0, 0};  // samples, bad values, iterations (integers)
  for (uint64_t k = 0; k <= rounds; ++k) {
    if (k < rounds) {
      // Iterate round k into its parts, moving the exchange of round k - 1 on.
      std::vector<Part>& own = buffers->own[k % 3];
      const distributed::Block block = roundBlock(k, me);
      // Each part sized once for about its share (no chain of growing copies).
      const uint64_t share = (block.end - block.begin + chunks - 1) / chunks * per_unit / uint64_t(ranks);
      for (Part& p : own) {
        p.records.clear();
        p.counts.clear();
        reserveFresh(p.records, share);
      }
      runTasks(chunks, [&](int w, uint64_t c) {
        const distributed::Block piece = distributed::blockOf(block.end - block.begin, int(c), int(chunks));
        OwnerScatter& scatter = scatters[size_t(w)];
        scatter.setParts(&own[c * uint64_t(ranks)]);
        flame::UnitStats sum;
        for (uint64_t u = block.begin + piece.begin; u < block.begin + piece.end; ++u) {
          const flame::UnitStats s = game.runUnit(u, workspaces[size_t(w)], scatter);
          sum.samples += s.samples;
          sum.bad_values += s.bad_values;
          sum.iterations += s.iterations;
        }
        chunk_stats[c] = sum;
      });
      for (const flame::UnitStats& s : chunk_stats) {
        totals[0] += s.samples;
        totals[1] += s.bad_values;
        totals[2] += static_cast<uint64_t>(s.iterations);
      }
      exchange.startCheckpoint();
      for (uint64_t c = 0; c < chunks && block.end > block.begin; ++c)
        for (int d = 0; d < ranks; ++d) {
          if (d == me) continue;
          const Part& p = own[c * uint64_t(ranks) + uint64_t(d)];
          exchange.send(d, 0, {reinterpret_cast<const uint8_t*>(p.records.data()), p.records.size() * sizeof(PlotRecord)},
                        sendGroup(k));
          exchange.send(d, 1, {reinterpret_cast<const uint8_t*>(p.counts.data()), p.counts.size() * sizeof(uint32_t)},
                        sendGroup(k));
        }
      for (int r = 0; r < ranks; ++r) {
        if (r == me) continue;
        const distributed::Block theirs = roundBlock(k, r);
        if (theirs.end == theirs.begin) continue;  // a rank without units this round sends nothing
        for (uint64_t c = 0; c < chunks; ++c) {
          Part& p = buffers->received[k % 2][uint64_t(r) * chunks + c];
          exchange.receive(r, 0, [&p](uint64_t n) {
            reserveFresh(p.records, n / sizeof(PlotRecord));
            p.records.resize(n / sizeof(PlotRecord));
            return reinterpret_cast<uint8_t*>(p.records.data());
          }, receiveGroup(k));
          exchange.receive(r, 1, [&p](uint64_t n) {
            p.counts.resize(n / sizeof(uint32_t));
            return reinterpret_cast<uint8_t*>(p.counts.data());
          }, receiveGroup(k));
        }
      }
    }
    if (k >= 1) {
      exchange.wait(receiveGroup(k - 1));
      accumulateRound(k - 1);
      for (uint64_t c = 0; c < chunks; ++c)
        for (int r = 0; r < ranks; ++r) {
          Part& p = buffers->received[(k - 1) % 2][uint64_t(r) * chunks + c];
          p.records.clear();
          p.counts.clear();
        }
      if (options.progress && me == 0)
        options.progress(static_cast<double>(roundBlock(k - 1, ranks - 1).end) / static_cast<double>(units));
    }
    // Round k - 2's parts are written again in round k + 1.
    if (k >= 2) exchange.wait(sendGroup(k - 2));
  }
  exchange.finish();
  distributed::allReduce(std::span<uint64_t>(totals, 3), distributed::ReduceOp::kSum);

  FlameHistogram histogram;
  histogram.layout = layout;
  histogram.samples = totals[0];
  histogram.bad_values = totals[1];
  histogram.iterations = static_cast<double>(totals[2]);
  std::vector<uint64_t> counts;
  const std::vector<uint8_t> all = distributed::gather(
      {reinterpret_cast<const uint8_t*>(band.data()), band.size() * sizeof(FlameBucket)}, 0, &counts);
  if (me == 0) {
    detail::reserveLarge(histogram.buckets, cells);
    histogram.buckets.resize(cells);
    std::vector<uint64_t> from(size_t(ranks), 0);
    for (int r = 1; r < ranks; ++r) from[size_t(r)] = from[size_t(r) - 1] + counts[size_t(r) - 1];
    for (uint64_t b = 0; b < map.bands; ++b) {
      const uint64_t first = b << map.shift, n = std::min(cells, first + (uint64_t{1} << map.shift)) - first;
      const uint64_t at = from[b % uint64_t(ranks)] + uint64_t(map.local_base[b]) * sizeof(FlameBucket);
      std::copy_n(all.data() + at, n * sizeof(FlameBucket), reinterpret_cast<uint8_t*>(histogram.buckets.data() + first));
    }
  }
  return histogram;
}

}  // namespace procgen

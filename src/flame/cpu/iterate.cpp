// The chaos game on oneTBB (src/cpu/executor.hpp): the work units of
// flame/chaos_game.hpp run in parallel, round by round, and their plotted
// points are added by "sorted scatter": each slice of a unit's records is
// sorted by histogram band (a stable counting sort, so each band keeps the
// generation order), then each band — 2^15 cells at most, 640 KiB of buckets
// — is accumulated by one thread, unit by unit and slice by slice in
// increasing order. Every bucket thus receives its additions in the order the
// serial stage makes them, and the histogram is bit-identical at any thread
// count (flam3's rect.c threads add into one histogram in whatever order they
// run). A round holds about two records per cell, so that a band, brought
// into cache once per round, takes several records per bucket.
#include <algorithm>
#include <atomic>
#include <numeric>

#include "common/large_buffer.hpp"
#include "cpu/executor.hpp"
#include "flame/chaos_game.hpp"
#include "flame/flame_stages.hpp"
#include "procgen/budget.hpp"
#include "procgen/memory.hpp"

namespace procgen::flame {
namespace {

// The band layout of one round: unit k's records in its slot
// records[k · unit_records …], slice by slice, each slice sorted by band;
// offsets[(k · max_slices + s) · (bands + 1) + b] is where band b of slice s
// starts in the slot.
struct Round {
  uint64_t unit_records = 0, max_slices = 0, bands = 0;
  int shift = 0;
  OverwriteVector<PlotRecord> records;
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> slices;  // per unit
  std::vector<UnitStats> stats;  // per unit

  const uint32_t* sliceOffsets(uint64_t k, uint64_t s) const {
    return &offsets[(k * max_slices + s) * (bands + 1)];
  }
};

// Sorts each slice a unit hands over into the unit's slot, by band.
class BandSorter final : public RecordSink {
 public:
  BandSorter(Round& round, uint64_t bands) : round_(round), cursor_(bands) {}

  void startUnit(uint64_t k) {
    k_ = k;
    used_ = 0;
    slice_ = 0;
  }
  uint32_t slices() const { return slice_; }

  void take(const PlotRecord* records, uint64_t n) override {
    const uint64_t bands = round_.bands;
    const int shift = round_.shift;
    uint32_t* cursor = cursor_.data();
    std::fill(cursor, cursor + bands, 0u);
    for (uint64_t i = 0; i < n; ++i) ++cursor[records[i].cell >> shift];
    uint32_t* off = &round_.offsets[(k_ * round_.max_slices + slice_) * (bands + 1)];
    uint32_t start = static_cast<uint32_t>(used_);
    for (uint64_t b = 0; b < bands; ++b) {
      off[b] = start;
      start += cursor[b];
      cursor[b] = off[b];
    }
    off[bands] = start;
    PlotRecord* slot = &round_.records[k_ * round_.unit_records];
    for (uint64_t i = 0; i < n; ++i) {
      const PlotRecord r = records[i];
      slot[cursor[r.cell >> shift]++] = r;
    }
    used_ += n;
    ++slice_;
  }

 private:
  Round& round_;
  std::vector<uint32_t> cursor_;
  uint64_t k_ = 0, used_ = 0;
  uint32_t slice_ = 0;
};

}  // namespace

FlameHistogram iterateCpu(const ChaosProgram& program, const FlameHistogramLayout& layout,
                          const FlameRenderOptions& options, const Execution& execution) {
  detail::CpuExecutor exec(execution.threads);
  const uint64_t threads = static_cast<uint64_t>(exec.threads());
  const ChaosGame game(program, layout, options);
  const uint64_t cells = static_cast<uint64_t>(layout.width) * static_cast<uint64_t>(layout.height);
  const uint64_t units = game.unitCount();

  Round round;
  round.unit_records = game.maxUnitSamples();
  round.max_slices = game.maxSlices();
  // Bands of 2^shift cells: at most 2^15, and at least 16 bands where the
  // histogram allows, so that small histograms still spread over the threads.
  round.shift = 15;
  while (round.shift > 6 && (cells >> round.shift) < 16) --round.shift;
  round.bands = (cells + (uint64_t{1} << round.shift) - 1) >> round.shift;
  const uint64_t bands = round.bands;

  // About two records per cell (at least 2^21, and a unit per thread); fewer
  // units when the memory budget asks.
  const uint64_t per_unit_bytes = round.unit_records * sizeof(PlotRecord) +
                                  round.max_slices * (bands + 1) * sizeof(uint32_t) + sizeof(UnitStats) + 4;
  const uint64_t fixed_bytes =
      threads * (game.workspaceBytes() + bands * sizeof(uint32_t)) + game.tableBytes() + bands * 12;
  const uint64_t held = cells * sizeof(FlameBucket);
  const uint64_t budget = effectiveMemoryBudget(options.memory_budget);
  const uint64_t round_records = std::max<uint64_t>(uint64_t{1} << 21, 2 * cells);
  uint64_t round_units =
      std::min(units, std::max(threads, (round_records + round.unit_records - 1) / round.unit_records));
  while (round_units > 1 && held + fixed_bytes + round_units * per_unit_bytes > budget) round_units /= 2;
  // The tests' forced chunk size cuts rounds that short (the histogram does not change).
  if (const uint64_t forced = detail::cpuChunkOverride()) round_units = std::min(round_units, forced);
  requireMemory("flame iteration", fixed_bytes + round_units * per_unit_bytes, options.memory_budget, held);

  FlameHistogram histogram;
  histogram.layout = layout;
  detail::reserveLarge(histogram.buckets, cells);  // huge pages: fewer first-touch faults
  histogram.buckets.resize(cells);
  std::vector<UnitWorkspace> workspaces(threads);
  for (UnitWorkspace& ws : workspaces) game.prepareWorkspace(ws);
  std::vector<BandSorter> sorters;
  sorters.reserve(threads);
  for (uint64_t w = 0; w < threads; ++w) sorters.emplace_back(round, bands);
  round.records.resize(round_units * round.unit_records);
  round.offsets.resize(round_units * round.max_slices * (bands + 1));
  round.slices.resize(round_units);
  round.stats.resize(round_units);
  std::vector<uint64_t> band_load(bands);
  std::vector<uint32_t> band_order(bands);

  for (uint64_t first = 0; first < units; first += round_units) {
    const uint64_t count = std::min(round_units, units - first);

    // Phase 1: the units, each slice sorted by band into the unit's slot.
    std::atomic<uint64_t> next_unit{0};
    exec.forEachWorker([&](int w) {
      UnitWorkspace& ws = workspaces[static_cast<size_t>(w)];
      BandSorter& sorter = sorters[static_cast<size_t>(w)];
      for (uint64_t k; (k = next_unit.fetch_add(1, std::memory_order_relaxed)) < count;) {
        sorter.startUnit(k);
        round.stats[k] = game.runUnit(first + k, ws, sorter);
        round.slices[k] = sorter.slices();
      }
    });

    // Phase 2: each band by one thread, units and slices in increasing
    // order; the heaviest bands first so that the threads finish together.
    std::fill(band_load.begin(), band_load.end(), 0);
    for (uint64_t k = 0; k < count; ++k)
      for (uint64_t s = 0; s < round.slices[k]; ++s) {
        const uint32_t* off = round.sliceOffsets(k, s);
        for (uint64_t b = 0; b < bands; ++b) band_load[b] += off[b + 1] - off[b];
      }
    std::iota(band_order.begin(), band_order.end(), 0u);
    std::stable_sort(band_order.begin(), band_order.end(),
                     [&](uint32_t a, uint32_t b) { return band_load[a] > band_load[b]; });
    std::atomic<uint64_t> next_band{0};
    exec.forEachWorker([&](int) {
      for (uint64_t i; (i = next_band.fetch_add(1, std::memory_order_relaxed)) < bands;) {
        const uint64_t b = band_order[i];
        if (band_load[b] == 0) continue;
        for (uint64_t k = 0; k < count; ++k) {
          const PlotRecord* slot = &round.records[k * round.unit_records];
          for (uint64_t s = 0; s < round.slices[k]; ++s) {
            const uint32_t* off = round.sliceOffsets(k, s);
            game.accumulate(slot + off[b], off[b + 1] - off[b], histogram.buckets.data());
          }
        }
      }
    });

    for (uint64_t k = 0; k < count; ++k) {
      histogram.samples += round.stats[k].samples;
      histogram.bad_values += round.stats[k].bad_values;
      histogram.iterations += round.stats[k].iterations;
    }
    if (options.progress) options.progress(static_cast<double>(first + count) / static_cast<double>(units));
  }
  return histogram;
}

}  // namespace procgen::flame

namespace procgen::flame {

int cpuWorkerThreads(const Execution& execution) { return detail::CpuExecutor(execution.threads).threads(); }

void runTasksCpu(const Execution& execution, uint64_t tasks, const std::function<void(int, uint64_t)>& task) {
  detail::CpuExecutor exec(execution.threads);
  std::atomic<uint64_t> next{0};
  exec.forEachWorker([&](int w) {
    for (uint64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tasks;) task(w, t);
  });
}

}  // namespace procgen::flame

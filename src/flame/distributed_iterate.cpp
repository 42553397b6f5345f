// The chaos game over the ranks of an MPI job (procgen/distributed.hpp;
// docs/scaling.md "Flames"): the cpu stage's "sorted scatter"
// (src/flame/cpu/iterate.cpp) with ranks in the place of threads.
//
// A bucket's value depends on the order of its float additions, so a
// histogram summed from per-rank partial histograms (MPI_Reduce) would differ
// from one process's in the last bits. Instead every bucket keeps the
// single-process order: the work units run in rounds; in each round rank r
// runs a contiguous block of the round's units, partitions their records by
// the rank owning the record's histogram band (a stable partition, so each
// band keeps the generation order), and one all-to-all delivers every band's
// records to its owner in rank order — which is unit order. The owner adds
// them as they come, exactly as the serial stage does, and the bands are
// gathered on rank 0 for the tone mapping: the same histogram bits as one
// process on serial or cpu, for every rank count.
#include <algorithm>

#include "common/dispatch.hpp"
#include "common/large_buffer.hpp"
#include "flame/chaos_game.hpp"
#include "flame/flame_stages.hpp"
#include "procgen/budget.hpp"
#include "procgen/distributed.hpp"

namespace procgen::flame {

UnitStats runUnitsSerial(const ChaosGame& game, uint64_t first, uint64_t count, UnitWorkspace& workspace,
                         std::vector<PlotRecord>& records) {
  struct Append final : RecordSink {
    std::vector<PlotRecord>& out;
    explicit Append(std::vector<PlotRecord>& o) : out(o) {}
    void take(const PlotRecord* r, uint64_t n) override { out.insert(out.end(), r, r + n); }
  } sink(records);
  UnitStats total;
  for (uint64_t u = first; u < first + count; ++u) {
    const UnitStats s = game.runUnit(u, workspace, sink);
    total.records += s.records;
    total.samples += s.samples;
    total.bad_values += s.bad_values;
    total.iterations += s.iterations;
  }
  return total;
}

}  // namespace procgen::flame

namespace procgen {

FlameHistogram iterateFlameAcrossRanks(const FlameGenome& genome, const FlameRenderOptions& options,
                                       const Execution& execution) {
  const int ranks = distributed::size(), me = distributed::rank();
  if (ranks == 1) return iterateFlame(genome, options, execution);
  if (ranks > 65535) throw Error("flame: at most 65535 MPI ranks", ExitCode::kUsage);
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
  const flame::ChaosProgram program = flame::compileChaosProgram(genome);
  const flame::ChaosGame game(program, layout, options);
  const uint64_t units = game.unitCount();
  const int threads = execution.backend == Backend::kCpu ? effectiveThreads(execution) : 1;

  // Band d = cells [band(d).begin, band(d).end), contiguous rows of the histogram.
  std::vector<uint64_t> band_start(size_t(ranks) + 1);
  for (int d = 0; d < ranks; ++d) band_start[size_t(d) + 1] = distributed::blockOf(cells, d, ranks).end;
  const distributed::Block mine = distributed::blockOf(cells, me, ranks);
  // A round: about 2^22 records (4 presorted units) per rank and at least a
  // unit per thread, so that the ranks meet every ~0.2 s of iteration.
  const uint64_t per_unit = game.maxUnitSamples();
  const uint64_t units_per_rank =
      std::max<uint64_t>(uint64_t(threads), ((uint64_t{1} << 22) + per_unit - 1) / per_unit);
  const uint64_t round_units = std::min(units, units_per_rank * uint64_t(ranks));
  const uint64_t band_bytes = (mine.end - mine.begin) * sizeof(FlameBucket);
  const uint64_t round_bytes = 3 * ((round_units + ranks - 1) / ranks) * per_unit * sizeof(flame::PlotRecord);
  requireMemory("flame iteration", game.workspaceBytes() * uint64_t(threads) + game.tableBytes() + round_bytes,
                options.memory_budget, band_bytes + (me == 0 ? cells * sizeof(FlameBucket) : 0));

  std::vector<FlameBucket> band(mine.end - mine.begin);
  std::vector<flame::PlotRecord> records, sorted;
  std::vector<uint64_t> offsets(size_t(ranks) + 1), byte_offsets(size_t(ranks) + 1), received_offsets, cursor;
  std::vector<uint16_t> owners;  // per record of the round
  flame::UnitWorkspace workspace;  // the serial backend's
  if (execution.backend == Backend::kSerial) game.prepareWorkspace(workspace);
  std::vector<uint8_t> received;
  uint64_t totals[3] = {0, 0, 0};  // samples, bad values, iterations (integers)
  for (uint64_t first = 0; first < units; first += round_units) {
    const uint64_t count = std::min(round_units, units - first);
    const distributed::Block block = distributed::blockOf(count, me, ranks);
    records.clear();
    const flame::UnitStats stats = detail::dispatch(
        execution, "iterateFlameAcrossRanks",
        [&] { return flame::runUnitsSerial(game, first + block.begin, block.end - block.begin, workspace, records); },
        [&] { return flame::runUnitsCpu(game, first + block.begin, block.end - block.begin, records, execution); },
        [&] { return flame::UnitStats{}; });
    totals[0] += stats.samples;
    totals[1] += stats.bad_values;
    totals[2] += static_cast<uint64_t>(stats.iterations);
    // Stable partition by owner; cells made relative to the owner's band.
    // Bands are blockOf(cells): the first `long_bands` hold one cell more.
    std::fill(offsets.begin(), offsets.end(), 0);
    const uint32_t short_band = static_cast<uint32_t>(cells / uint64_t(ranks)),
                   long_bands = static_cast<uint32_t>(cells % uint64_t(ranks));
    const uint32_t long_cells = long_bands * (short_band + 1);
    auto owner = [&](uint32_t cell) -> uint32_t {
      return cell < long_cells ? cell / (short_band + 1) : long_bands + (cell - long_cells) / short_band;
    };
    owners.resize(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      owners[i] = static_cast<uint16_t>(owner(records[i].cell));
      ++offsets[owners[i] + 1];
    }
    for (int d = 0; d < ranks; ++d) offsets[size_t(d) + 1] += offsets[size_t(d)];
    cursor.assign(offsets.begin(), offsets.end() - 1);
    sorted.resize(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      const uint16_t d = owners[i];
      flame::PlotRecord local = records[i];
      local.cell = static_cast<uint32_t>(local.cell - band_start[d]);
      sorted[cursor[d]++] = local;
    }
    for (size_t d = 0; d < offsets.size(); ++d) byte_offsets[d] = offsets[d] * sizeof(flame::PlotRecord);
    distributed::allToAll({reinterpret_cast<const uint8_t*>(sorted.data()), sorted.size() * sizeof(flame::PlotRecord)},
                          byte_offsets, received, received_offsets);
    // Rank order is unit order: the serial stage's order for every bucket.
    // (The received bytes are PlotRecords; operator new's alignment suffices.)
    game.accumulate(reinterpret_cast<const flame::PlotRecord*>(received.data()),
                    received.size() / sizeof(flame::PlotRecord), band.data());
    if (options.progress && me == 0) options.progress(static_cast<double>(first + count) / static_cast<double>(units));
  }
  distributed::allReduce(std::span<uint64_t>(totals, 3), distributed::ReduceOp::kSum);

  FlameHistogram histogram;
  histogram.layout = layout;
  histogram.samples = totals[0];
  histogram.bad_values = totals[1];
  histogram.iterations = static_cast<double>(totals[2]);
  const std::vector<uint8_t> all = distributed::gather(
      {reinterpret_cast<const uint8_t*>(band.data()), band.size() * sizeof(FlameBucket)}, 0);
  if (me == 0) {
    detail::reserveLarge(histogram.buckets, cells);
    histogram.buckets.resize(cells);
    std::copy(all.begin(), all.end(), reinterpret_cast<uint8_t*>(histogram.buckets.data()));
  }
  return histogram;
}

}  // namespace procgen

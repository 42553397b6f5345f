// The opencl chaos game with its launch choices exposed, for the tests and
// measurements; flame::iterateOpenCL (flame/flame_stages.hpp) is this with
// the defaults.
#pragma once

#include <cstddef>
#include <cstdint>

#include "flame/flame_stages.hpp"

namespace procgen::flame {

enum class OpenCLAccumulation : uint8_t {
  /// Floats when banded with one work-item per band (adds in a fixed order);
  /// otherwise fixed point when the device has 64-bit atomics, else float atomics.
  kAuto,
  kFixedPoint,  ///< 64-bit integer atomics (atom_add): exact, order-independent → deterministic
  /// floats (flam3's bucket type): plain adds in batch order where one
  /// work-item owns a band, else atomic_cmpxchg loops (order-dependent rounding)
  kFloat,
};

enum class OpenCLPlotting : uint8_t {
  kAuto,    ///< banded on CPU devices, direct elsewhere
  kDirect,  ///< each step adds its points to the histogram (atomics at random cells)
  kBanded,  ///< steps write records; binned by histogram band, then added band by band
};

struct OpenCLIterateTuning {
  /// Points advanced per step: 0 = chosen from the samples and the device;
  /// otherwise a power of 4 in [2^10, 2^22].
  uint32_t points = 0;
  /// Run the xaos path (draw, group, iterate) even for genomes without xaos.
  bool grouped = false;
  OpenCLAccumulation accumulation = OpenCLAccumulation::kAuto;
  OpenCLPlotting plotting = OpenCLPlotting::kAuto;
  /// Work-group size of the step kernels; 0 = the default.
  size_t work_group = 0;
  /// Work-items per band in the banded accumulation; 0 = 1 on CPU devices
  /// (plain adds, the band is the item's alone), 64 elsewhere (atomics).
  size_t band_work_group = 0;
  /// Banded: log2 of the cells per band (0 = the default, 13) and the records
  /// binned at once (0 = the default, 2^20).
  int band_shift = 0;
  uint32_t batch_records = 0;
};

/// What a run chose (for measurements and tests).
struct OpenCLIterateReport {
  uint32_t points = 0;
  uint64_t steps = 0;  ///< fuse included
  bool grouped = false;
  bool fixed_point = false;
  bool banded = false;
  bool deterministic = false;  ///< the same histogram on every run (fixed point, or ordered float adds)
};

FlameHistogram iterateOpenCLTuned(const ChaosProgram& program, const FlameHistogramLayout& layout,
                                  const FlameRenderOptions& options, const Execution& execution,
                                  const OpenCLIterateTuning& tuning, OpenCLIterateReport* report = nullptr);

}  // namespace procgen::flame

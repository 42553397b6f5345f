// The module string resident on the device between the passes of a
// derivation, held by the opencl PassRunner (pass_runner.cpp) for its
// one-string stages and the batched stages of many L-systems (scene.cpp): two
// strings ping-ponged (a pass reads current() and writes next()), the output
// sizing and closing offset every pass and the cut need, and the read-back at
// the end.
#pragma once

#include <cstdint>

#include "opencl/runtime.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::detail {

/// Sets kernel arguments a, a + 1, ... to `values`; a ends past the last.
template <typename... T>
void setArgs(opencl::Kernel& k, uint32_t& a, const T&... values) {
  (k.arg(a++, values), ...);
}

/// A module string on the device: letters, and for a parametric string the
/// n + 1 parameter offsets and the parameters.
struct DeviceString {
  opencl::Buffer symbols, offsets, params;
  uint64_t n = 0;
  uint64_t params_n = 0;

  /// The bytes the string occupies (the memory budget's measure).
  uint64_t bytes(bool parametric) const { return n + (parametric ? 8 * (n + 1) + 4 * params_n : 0); }
  /// Room for a pass's output of `modules` modules and `params` parameters.
  void reserveOutput(uint64_t modules, uint64_t params, bool parametric);
  ModuleString download(bool parametric) const;
};

class DeviceStrings {
 public:
  /// `what`: the buffers' names in error messages.
  DeviceStrings(opencl::Context& ctx, const char* what_symbols, const char* what_offsets, const char* what_params);

  DeviceString& current() { return strings_[current_]; }
  DeviceString& next() { return strings_[1 - current_]; }
  /// Makes the first string current (before a new string is uploaded into it).
  void restart() { current_ = 0; }
  /// A pass wrote `modules` modules and `params` parameters into next():
  /// its closing parameter offset is written and it becomes current.
  void advance(uint64_t modules, uint64_t params, bool parametric);

 private:
  DeviceString strings_[2];
  int current_ = 0;
};

}  // namespace procgen::detail

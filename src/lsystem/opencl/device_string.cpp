// See device_string.hpp.
#include "lsystem/opencl/device_string.hpp"

#include <algorithm>

namespace procgen::detail {

void DeviceString::reserveOutput(uint64_t modules, uint64_t params_count, bool parametric) {
  symbols.reserve(std::max<uint64_t>(modules, 1));
  if (parametric) {
    offsets.reserve((modules + 1) * sizeof(uint64_t));
    params.reserve(std::max<uint64_t>(params_count, 1) * sizeof(float));
  }
}

ModuleString DeviceString::download(bool parametric) const {
  ModuleString out;
  out.clear(parametric);
  out.symbols.resize(n);
  symbols.read(out.symbols.data(), n);
  if (parametric) {
    out.param_offsets.resize(n + 1);
    offsets.read(out.param_offsets.data(), (n + 1) * sizeof(uint64_t));
    out.params.resize(params_n);
    params.read(out.params.data(), params_n * sizeof(float));
  }
  return out;
}

DeviceStrings::DeviceStrings(opencl::Context& ctx, const char* what_symbols, const char* what_offsets,
                             const char* what_params) {
  for (DeviceString& s : strings_) {
    s.symbols = opencl::Buffer(ctx, what_symbols);
    s.offsets = opencl::Buffer(ctx, what_offsets);
    s.params = opencl::Buffer(ctx, what_params);
  }
}

void DeviceStrings::advance(uint64_t modules, uint64_t params, bool parametric) {
  DeviceString& out = next();
  out.n = modules;
  out.params_n = parametric ? params : 0;
  if (parametric) out.offsets.write(&params, sizeof params, modules * sizeof(uint64_t));
  current_ = 1 - current_;
}

}  // namespace procgen::detail

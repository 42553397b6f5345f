// The OpenCL C sources embedded into the binary at build time
// (cmake/ProcgenKernels.cmake generates the definition): every src/**/*.cl,
// the C-subset headers src/**/*.h they include, and the Random123 headers
// random.h needs. Names are paths relative to src/ ("lsystem/opencl/rewrite.cl",
// "common/clc.h") or to the system include directory ("Random123/philox.h").
#pragma once

#include <cstddef>

namespace procgen::opencl {

struct EmbeddedSource {
  const char* name;
  const char* text;
};

extern const EmbeddedSource kEmbeddedSources[];
extern const std::size_t kEmbeddedSourceCount;

}  // namespace procgen::opencl

// OpenCL devices as procgen sees them. No OpenCL types appear here (STYLE.md
// practice 4): a serial-only user may include this header in any build; with
// OpenCL switched off, openclDevices() is empty and openclStatus() says why.
//
// Device choice for Backend::kOpenCL (Execution::device):
//   device >= 0               that index of openclDevices();
//   else PROCGEN_OPENCL_DEVICE the index in that environment variable;
//   else                      the first GPU, else the first device of any type.
// One context and one in-order queue are created per process and device, on
// first use, and live until exit; kernels are built once per process from
// sources embedded in the binary (OpenCL C 1.2, no extensions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "procgen/error.hpp"

namespace procgen {

struct OpenCLDevice {
  int index = 0;                 ///< what --device / PROCGEN_OPENCL_DEVICE select
  std::string platform;          ///< platform name, e.g. "Portable Computing Language"
  std::string name;              ///< device name
  std::string type;              ///< "gpu", "cpu", "accelerator" or "other"
  std::string version;           ///< CL_DEVICE_VERSION
  uint32_t compute_units = 0;    ///< CL_DEVICE_MAX_COMPUTE_UNITS
  uint64_t global_memory = 0;    ///< bytes, CL_DEVICE_GLOBAL_MEM_SIZE
  uint64_t max_allocation = 0;   ///< bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE
  uint64_t local_memory = 0;     ///< bytes, CL_DEVICE_LOCAL_MEM_SIZE
  uint64_t max_work_group = 0;   ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
};

/// Every device of every platform, in platform order. Empty when OpenCL is not
/// built in, no ICD loader/platform is installed, or no platform has devices.
/// Thread-safe; enumerates once per process.
std::vector<OpenCLDevice> openclDevices();

/// Empty when at least one device exists; otherwise what is missing and what to
/// install (a GPU driver, or pocl-opencl-icd to run on the CPU).
std::string openclStatus();

/// The device Execution{Backend::kOpenCL, .., device} runs on (see the rules
/// above). Throws BackendUnavailableError when there is none or the index is
/// out of range.
OpenCLDevice openclSelectedDevice(int device = -1);

/// A failed OpenCL call: names the call and the status, and for program builds
/// carries the compiler's build log (also part of what()). Exit code 3.
class OpenCLError : public Error {
 public:
  OpenCLError(std::string call, int status, std::string build_log = {});
  const std::string& call() const noexcept { return call_; }
  int status() const noexcept { return status_; }
  const std::string& buildLog() const noexcept { return build_log_; }

 private:
  std::string call_;
  int status_;
  std::string build_log_;
};

}  // namespace procgen

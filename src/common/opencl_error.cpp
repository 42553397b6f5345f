// OpenCLError, and the OpenCL device queries of a build without OpenCL (the
// real ones live in src/opencl/, compiled only when OpenCL was found).
#include "procgen/opencl.hpp"

namespace procgen {

namespace {
// The OpenCL 1.2 status codes (CL/cl.h), spelled out so the message needs no lookup.
const char* statusName(int status) {
  switch (status) {
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -30: return "CL_INVALID_VALUE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
  }
}

std::string describe(const std::string& call, int status, const std::string& log) {
  std::string m = "OpenCL: " + call + " failed: " + statusName(status) + " (" + std::to_string(status) + ")";
  if (!log.empty()) m += "\nbuild log:\n" + log;
  return m;
}
}  // namespace

OpenCLError::OpenCLError(std::string call, int status, std::string build_log)
    : Error(describe(call, status, build_log), ExitCode::kBackendUnavailable),
      call_(std::move(call)),
      status_(status),
      build_log_(std::move(build_log)) {}

#if !PROCGEN_HAVE_OPENCL
std::vector<OpenCLDevice> openclDevices() { return {}; }

std::string openclStatus() {
  return "this build has no OpenCL backend: rebuild with OpenCL (apt-get install "
         "ocl-icd-opencl-dev opencl-headers) and install a GPU driver, or pocl-opencl-icd to run "
         "on the CPU";
}

OpenCLDevice openclSelectedDevice(int) { throw BackendUnavailableError(openclStatus()); }
#endif

}  // namespace procgen

// OpenCL runtime layer: see runtime.hpp.
#include "opencl/runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "opencl/kernel_sources.hpp"

namespace procgen {
namespace opencl {
namespace {

struct DeviceEntry {
  cl_platform_id platform;
  cl_device_id id;
  OpenCLDevice info;
};

std::string platformString(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  clGetPlatformInfo(p, what, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string deviceString(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  clGetDeviceInfo(d, what, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T deviceValue(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
  return v;
}

struct Discovery {
  std::vector<DeviceEntry> devices;
  std::string status;  ///< why there are none
};

const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery out;
    cl_uint count = 0;
    cl_int st = clGetPlatformIDs(0, nullptr, &count);
    if (st != CL_SUCCESS || count == 0) {
      out.status = "no OpenCL platform found (clGetPlatformIDs: status " + std::to_string(st) +
                   "): install a GPU driver with OpenCL support, or pocl-opencl-icd to run the "
                   "opencl backend on the CPU";
      return out;
    }
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
      cl_uint n = 0;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
      std::vector<cl_device_id> ids(n);
      clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr);
      for (cl_device_id id : ids) {
        OpenCLDevice info;
        info.index = static_cast<int>(out.devices.size());
        info.platform = platformString(p, CL_PLATFORM_NAME);
        info.name = deviceString(id, CL_DEVICE_NAME);
        info.version = deviceString(id, CL_DEVICE_VERSION);
        const auto type = deviceValue<cl_device_type>(id, CL_DEVICE_TYPE);
        info.type = (type & CL_DEVICE_TYPE_GPU)           ? "gpu"
                    : (type & CL_DEVICE_TYPE_CPU)         ? "cpu"
                    : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                          : "other";
        info.compute_units = deviceValue<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
        info.global_memory = deviceValue<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
        info.max_allocation = deviceValue<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
        info.local_memory = deviceValue<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
        info.max_work_group = deviceValue<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        out.devices.push_back({p, id, std::move(info)});
      }
    }
    if (out.devices.empty())
      out.status = "OpenCL platforms found but no devices: install a GPU driver with OpenCL "
                   "support, or pocl-opencl-icd to run the opencl backend on the CPU";
    return out;
  }();
  return d;
}

/// Index chosen by (requested, PROCGEN_OPENCL_DEVICE, first GPU, first device).
int chooseDevice(int requested) {
  const Discovery& d = discovery();
  if (d.devices.empty()) throw BackendUnavailableError(d.status);
  const int count = static_cast<int>(d.devices.size());
  std::string source = "--device";
  if (requested < 0) {
    if (const char* env = std::getenv("PROCGEN_OPENCL_DEVICE"); env && *env) {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v < 0)
        throw BackendUnavailableError(std::string("PROCGEN_OPENCL_DEVICE='") + env +
                                      "' is not a device index (see 'procgen devices')");
      requested = static_cast<int>(v);
      source = "PROCGEN_OPENCL_DEVICE";
    }
  }
  if (requested >= 0) {
    if (requested >= count)
      throw BackendUnavailableError(source + " " + std::to_string(requested) + " is out of range: " +
                                    std::to_string(count) + " OpenCL device(s), see 'procgen devices'");
    return requested;
  }
  for (const DeviceEntry& e : d.devices)
    if (e.info.type == "gpu") return e.info.index;
  return 0;
}

const EmbeddedSource* findEmbedded(const std::string& name) {
  for (std::size_t i = 0; i < kEmbeddedSourceCount; ++i)
    if (name == kEmbeddedSources[i].name) return &kEmbeddedSources[i];
  return nullptr;
}

std::string directoryOf(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? std::string() : name.substr(0, slash + 1);
}

void expandInto(std::string& out, const std::string& text, const std::string& name, int depth) {
  if (depth > 32) throw std::runtime_error("OpenCL sources: #include nesting too deep at " + name);
  out += "#line 1 \"" + name + "\"\n";
  size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(pos, end - pos);
    ++line;
    pos = end + 1;
    // #include "x" or <x>
    size_t k = l.find_first_not_of(" \t");
    const EmbeddedSource* inc = nullptr;
    std::string resolved;
    if (k != std::string::npos && l[k] == '#') {
      size_t d = l.find_first_not_of(" \t", k + 1);
      if (d != std::string::npos && l.compare(d, 7, "include") == 0) {
        size_t q = l.find_first_of("\"<", d + 7);
        if (q != std::string::npos) {
          const char close = l[q] == '"' ? '"' : '>';
          size_t e = l.find(close, q + 1);
          if (e != std::string::npos) {
            const std::string path = l.substr(q + 1, e - q - 1);
            resolved = directoryOf(name) + path;
            inc = close == '"' ? findEmbedded(resolved) : nullptr;
            if (!inc) {
              resolved = path;
              inc = findEmbedded(resolved);
            }
          }
        }
      }
    }
    if (inc) {
      expandInto(out, inc->text, resolved, depth + 1);
      out += "#line " + std::to_string(line + 1) + " \"" + name + "\"\n";
    } else {
      out += l;
      out += '\n';
    }
  }
}

}  // namespace

std::string expandIncludesOf(const std::string& text, const std::string& name) {
  std::string out;
  out.reserve(text.size() * 4);
  expandInto(out, text, name, 0);
  return out;
}

std::string expandIncludes(const std::string& name) {
  const EmbeddedSource* s = findEmbedded(name);
  if (!s) throw std::out_of_range("no embedded OpenCL source '" + name + "'");
  return expandIncludesOf(s->text, name);
}

// ---------------------------------------------------------------------------

Context::Registry& Context::registry() {
  static Registry registry;
  return registry;
}

Context& Context::get(int requested_device) {
  Registry& r = registry();
  const int index = chooseDevice(requested_device);
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.contexts[index];
  if (!slot) {
    const DeviceEntry& e = discovery().devices[static_cast<size_t>(index)];
    slot.reset(new Context(e.platform, e.id, e.info));
  }
  return *slot;
}

Context::Context(cl_platform_id platform, cl_device_id device, OpenCLDevice info)
    : device_(device), info_(std::move(info)) {
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
  cl_int st = CL_SUCCESS;
  context_ = clCreateContext(props, 1, &device_, nullptr, nullptr, &st);
  check(st, "clCreateContext");
  queue_ = clCreateCommandQueue(context_, device_, 0, &st);
  if (st != CL_SUCCESS) {
    clReleaseContext(context_);
    throw OpenCLError("clCreateCommandQueue", st);
  }
}

Context::~Context() {
  states_.clear();  // their kernels and buffers go before the programs and the context
  for (auto& [key, program] : programs_) clReleaseProgram(program);
  if (queue_) clReleaseCommandQueue(queue_);
  if (context_) clReleaseContext(context_);
}

cl_program Context::buildSource(const std::string& source, const std::string& options, std::string* log_out) {
  const std::string expanded = expandIncludesOf(source, "<source>");
  const char* text = expanded.c_str();
  const size_t length = expanded.size();
  cl_int st = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &st);
  check(st, "clCreateProgramWithSource");
  const std::string all_options = std::string(kBaseBuildOptions) + (options.empty() ? "" : " " + options);
  st = clBuildProgram(program, 1, &device_, all_options.c_str(), nullptr, nullptr);
  std::string log;
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) == CL_SUCCESS && size > 1) {
    log.resize(size);
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  }
  if (log_out) *log_out = log;
  if (st != CL_SUCCESS) {
    clReleaseProgram(program);
    throw OpenCLError("clBuildProgram", st, log.empty() ? "(the driver returned no build log)" : log);
  }
  return program;
}

cl_program Context::program(const std::string& name, const std::string& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(name, options);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  std::string source = "#include \"" + name + "\"\n";
  if (!findEmbedded(name)) throw std::out_of_range("no embedded OpenCL source '" + name + "'");
  cl_program p = buildSource(source, options);
  programs_.emplace(key, p);
  return p;
}

void Context::checkAllocation(uint64_t bytes, const char* what) const {
  auto mib = [](uint64_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; };
  if (bytes > info_.max_allocation)
    throw ResourceError(std::string("OpenCL: the ") + what + " buffer needs " + mib(bytes) +
                        ", over the device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE " +
                        mib(info_.max_allocation) + ") on '" + info_.name + "'; stopped before allocating");
  const uint64_t used = allocated_ > 0 ? static_cast<uint64_t>(allocated_) : 0;
  if (bytes + used > info_.global_memory)
    throw ResourceError(std::string("OpenCL: the ") + what + " buffer needs " + mib(bytes) + " with " +
                        mib(used) + " already allocated, over the global memory of '" + info_.name +
                        "' (" + mib(info_.global_memory) + "); stopped before allocating");
}

size_t Context::workGroupSize(cl_kernel kernel, size_t want) const {
  size_t kernel_max = 0;
  check(clGetKernelWorkGroupInfo(kernel, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max, &kernel_max,
                                 nullptr),
        "clGetKernelWorkGroupInfo");
  size_t limit = std::min<size_t>({want, kernel_max, static_cast<size_t>(info_.max_work_group)});
  size_t wg = 1;
  while (wg * 2 <= limit) wg *= 2;
  return wg;
}

// ---------------------------------------------------------------------------

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = o.ctx_;
    what_ = o.what_;
    mem_ = o.mem_;
    capacity_ = o.capacity_;
    o.mem_ = nullptr;
    o.capacity_ = 0;
  }
  return *this;
}

void Buffer::release() {
  if (mem_) {
    clReleaseMemObject(mem_);
    if (ctx_) ctx_->noteAllocated(-static_cast<int64_t>(capacity_));
  }
  mem_ = nullptr;
  capacity_ = 0;
}

void Buffer::reserve(uint64_t bytes) {
  if (bytes <= capacity_ && mem_) return;
  // Grow geometrically so a growing string reallocates O(log n) times, but never
  // past what the device accepts in one allocation.
  uint64_t want = std::max<uint64_t>({bytes, capacity_ + capacity_ / 2, 256});
  want = std::min<uint64_t>(want, std::max<uint64_t>(bytes, ctx_->info().max_allocation));
  release();
  ctx_->checkAllocation(want, what_);
  cl_int st = CL_SUCCESS;
  mem_ = clCreateBuffer(ctx_->context(), CL_MEM_READ_WRITE, want, nullptr, &st);
  if (st != CL_SUCCESS) throw OpenCLError(std::string("clCreateBuffer (") + what_ + ")", st);
  capacity_ = want;
  ctx_->noteAllocated(static_cast<int64_t>(want));
}

void Buffer::write(const void* data, uint64_t bytes, uint64_t offset) {
  if (bytes == 0) return;
  check(clEnqueueWriteBuffer(ctx_->queue(), mem_, CL_TRUE, offset, bytes, data, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
}

void Buffer::read(void* data, uint64_t bytes, uint64_t offset) const {
  if (bytes == 0) return;
  check(clEnqueueReadBuffer(ctx_->queue(), mem_, CL_TRUE, offset, bytes, data, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
}

// ---------------------------------------------------------------------------

Kernel::Kernel(cl_program program, const char* name) : name_(name) {
  cl_int st = CL_SUCCESS;
  kernel_ = clCreateKernel(program, name, &st);
  if (st != CL_SUCCESS) throw OpenCLError(std::string("clCreateKernel(") + name + ")", st);
}

Kernel::~Kernel() {
  if (kernel_) clReleaseKernel(kernel_);
}

void Kernel::run(Context& ctx, uint64_t global, size_t local) const {
  if (global == 0) return;
  const size_t rounded = static_cast<size_t>((global + local - 1) / local * local);
  const cl_int st = clEnqueueNDRangeKernel(ctx.queue(), kernel_, 1, nullptr, &rounded, &local, 0, nullptr, nullptr);
  if (st != CL_SUCCESS) throw OpenCLError("clEnqueueNDRangeKernel(" + name_ + ")", st);
}

}  // namespace opencl

namespace detail {
std::function<void()> prepareOpenCLBackend(int device) {
  // The registries exist before the background half runs (device discovery
  // itself is what the CLI has already done to check the device index).
  (void)opencl::discovery();
  (void)opencl::Context::registry();
  return [device] {
    try {
      (void)opencl::Context::get(device);
    } catch (const std::exception&) {
      // No device, or it failed: the stage that needs it reports the error.
    }
  };
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Public queries (procgen/opencl.hpp)

std::vector<OpenCLDevice> openclDevices() {
  std::vector<OpenCLDevice> out;
  for (const auto& e : opencl::discovery().devices) out.push_back(e.info);
  return out;
}

std::string openclStatus() { return opencl::discovery().status; }

OpenCLDevice openclSelectedDevice(int device) {
  return opencl::discovery().devices[static_cast<size_t>(opencl::chooseDevice(device))].info;
}

}  // namespace procgen

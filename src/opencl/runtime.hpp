// The OpenCL runtime layer shared by every opencl stage of every system:
// device discovery and choice, one context + in-order queue per process and
// device with one lock, per-device state (kernels and buffers a stage keeps
// between calls) cached in the context, programs built once per process from
// the kernel sources embedded at build time (kernel_sources.hpp) with the build
// log in the error, RAII buffers checked against the device's limits, and every
// failing call turned into procgen::OpenCLError naming the call.
// OpenCL 1.2 API and OpenCL C 1.2 only, no extensions.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include "procgen/opencl.hpp"

namespace procgen::opencl {

/// Throws OpenCLError(call, status) unless status is CL_SUCCESS.
inline void check(cl_int status, const char* call) {
  if (status != CL_SUCCESS) throw OpenCLError(call, status);
}

/// Build options every procgen program gets: OpenCL C 1.2, IEEE division and
/// square root (bit-exact parity with the host), no fast-math.
inline constexpr const char* kBaseBuildOptions = "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt";

class Kernel;

/// One device's context, queue, program cache and stage state. Created on first
/// use and kept until process exit. program() and state() are thread-safe;
/// enqueueing on queue() and using a state object are not: callers hold lock()
/// (withState() does), the one lock of this device for every system.
class Context {
 public:
  /// The context of the selected device (see procgen/opencl.hpp for the rules).
  /// Throws BackendUnavailableError when there is no device.
  static Context& get(int requested_device = -1);

  /// Every device's context, made on first use, destroyed at exit.
  struct Registry {
    std::mutex mutex;
    std::map<int, std::unique_ptr<Context>> contexts;
  };
  static Registry& registry();

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  cl_device_id device() const { return device_; }
  const OpenCLDevice& info() const { return info_; }

  /// The program of embedded source `name` (e.g. "lsystem/opencl/rewrite.cl")
  /// with `options` added to kBaseBuildOptions, built on first request.
  /// Throws OpenCLError carrying the build log when the build fails.
  cl_program program(const std::string& name, const std::string& options = "");

  /// Builds `source` (after expanding #include lines against the embedded
  /// headers) with kBaseBuildOptions + options; not cached. The caller owns the
  /// result (clReleaseProgram). `log` receives the build log even on success.
  cl_program buildSource(const std::string& source, const std::string& options, std::string* log = nullptr);

  /// Checks an allocation of `bytes` against CL_DEVICE_MAX_MEM_ALLOC_SIZE and
  /// the device's global memory minus what procgen already holds on it; throws
  /// ResourceError naming `what` otherwise.
  void checkAllocation(uint64_t bytes, const char* what) const;
  void noteAllocated(int64_t delta) { allocated_ += delta; }

  /// Work-group size for `kernel`: the largest power of two <= want that the
  /// kernel and device accept.
  size_t workGroupSize(cl_kernel kernel, size_t want) const;

  /// The lock every user of queue() and of the state objects holds while
  /// enqueueing. Recursive: a stage may call another stage on the same device
  /// (an L-system pass matching brackets, a bbox matching parentheses).
  [[nodiscard]] std::unique_lock<std::recursive_mutex> lock() {
    return std::unique_lock<std::recursive_mutex>(queue_mutex_);
  }

  /// This device's instance of T — a stage's kernels and buffers kept between
  /// calls — constructed as T(*this) on first request and destroyed with the
  /// context, before its programs, queue and context are released.
  template <typename T>
  T& state() {
    std::lock_guard<std::recursive_mutex> guard(state_mutex_);
    std::shared_ptr<void>& slot = states_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>(*this);
    return *static_cast<T*>(slot.get());
  }

 private:
  Context(cl_platform_id platform, cl_device_id device, OpenCLDevice info);

  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_device_id device_ = nullptr;
  OpenCLDevice info_;
  std::mutex mutex_;  ///< guards programs_
  std::map<std::pair<std::string, std::string>, cl_program> programs_;
  int64_t allocated_ = 0;
  std::recursive_mutex queue_mutex_;
  std::recursive_mutex state_mutex_;  ///< guards states_ (a state's constructor may ask for another)
  std::map<std::type_index, std::shared_ptr<void>> states_;
};

/// Runs fn(state) with T the per-device state of `device` (Context::get rules)
/// under the device's lock, and returns what fn returns.
template <typename T, typename Fn>
decltype(auto) withState(int device, Fn&& fn) {
  Context& ctx = Context::get(device);
  auto lock = ctx.lock();
  return std::forward<Fn>(fn)(ctx.state<T>());
}

/// A device buffer that grows on demand (never shrinks) and releases itself.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(Context& ctx, const char* what) : ctx_(&ctx), what_(what) {}
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;

  /// Makes the buffer hold at least `bytes` (contents are lost when it grows).
  /// Checks the device limits first (ResourceError).
  void reserve(uint64_t bytes);
  cl_mem get() const { return mem_; }
  uint64_t capacity() const { return capacity_; }

  void write(const void* data, uint64_t bytes, uint64_t offset = 0);
  void read(void* data, uint64_t bytes, uint64_t offset = 0) const;
  /// reserve(bytes) + write, skipping empty uploads.
  void upload(const void* data, uint64_t bytes) {
    reserve(bytes);
    if (bytes) write(data, bytes);
  }

 private:
  void release();
  Context* ctx_ = nullptr;
  const char* what_ = "buffer";
  cl_mem mem_ = nullptr;
  uint64_t capacity_ = 0;
};

/// A kernel object (owned) with typed argument setters.
class Kernel {
 public:
  Kernel() = default;
  Kernel(cl_program program, const char* name);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  Kernel(Kernel&& o) noexcept : kernel_(o.kernel_), name_(std::move(o.name_)) { o.kernel_ = nullptr; }
  Kernel& operator=(Kernel&& o) noexcept {
    std::swap(kernel_, o.kernel_);
    std::swap(name_, o.name_);
    return *this;
  }

  cl_kernel get() const { return kernel_; }
  template <typename T>
  Kernel& arg(cl_uint index, const T& value) {
    argStatus(clSetKernelArg(kernel_, index, sizeof(T), &value), index);
    return *this;
  }
  Kernel& arg(cl_uint index, const Buffer& buffer) {
    cl_mem m = buffer.get();
    argStatus(clSetKernelArg(kernel_, index, sizeof(cl_mem), &m), index);
    return *this;
  }
  Kernel& localArg(cl_uint index, size_t bytes) {
    argStatus(clSetKernelArg(kernel_, index, bytes, nullptr), index);
    return *this;
  }
  /// Enqueues `global` work items (rounded up to a multiple of `local`; the
  /// kernel bounds-checks) on ctx's queue.
  void run(Context& ctx, uint64_t global, size_t local) const;

 private:
  void argStatus(cl_int status, cl_uint index) const {
    if (status != CL_SUCCESS)
      throw OpenCLError("clSetKernelArg(" + name_ + ", " + std::to_string(index) + ")", status);
  }
  cl_kernel kernel_ = nullptr;
  std::string name_;
};

/// The embedded source `name` with every #include "..." / <...> that names an
/// embedded file replaced by that file's text (recursively, with #line
/// directives so build logs point at the original files). Unknown includes are
/// left as they are. Throws std::out_of_range when `name` is not embedded.
std::string expandIncludes(const std::string& name);
std::string expandIncludesOf(const std::string& text, const std::string& name);

}  // namespace procgen::opencl

// Primitive compact, opencl backend: host driver of compact.cl
// (count per run, scan of the counts, scatter per run) and the host-array twin.
#include "primitives/opencl/device.hpp"

namespace procgen::primitives::opencl {
namespace {
constexpr uint64_t kPer = 256;  ///< elements per work item
}

DeviceCompact::DeviceCompact(Context& ctx, size_t elem_bytes)
    : ctx_(ctx), offsets_(ctx, monoidInfo<SumU64>()), counts_(ctx, "compaction counts") {
  cl_program p = ctx.program("primitives/opencl/compact.cl", elem_bytes == 8 ? "-DPG_COMPACT_T=ulong" : "-DPG_COMPACT_T=uint");
  count_ = Kernel(p, "countRuns");
  scatter_ = Kernel(p, "scatterRuns");
}

uint64_t DeviceCompact::compact(cl_mem in, cl_mem flags, uint64_t n, cl_mem out) {
  if (n == 0) return 0;
  const uint64_t runs = (n + kPer - 1) / kPer;
  counts_.reserve((runs + 1) * sizeof(cl_ulong));
  count_.arg(0, flags).arg(1, cl_ulong{n}).arg(2, cl_ulong{kPer}).arg(3, cl_ulong{runs}).arg(4, counts_);
  count_.run(ctx_, runs + 1, 64);
  offsets_.exclusiveScan(counts_.get(), runs + 1);
  scatter_.arg(0, in).arg(1, flags).arg(2, cl_ulong{n}).arg(3, cl_ulong{kPer}).arg(4, counts_).arg(5, out);
  scatter_.run(ctx_, runs, 64);
  cl_ulong total = 0;
  counts_.read(&total, sizeof total, runs * sizeof(cl_ulong));
  return total;
}

template <typename T>
uint64_t compact(int device, const T* in, const uint8_t* flags, uint64_t n, T* out) {
  if (n == 0) return 0;
  Context& ctx = Context::get(device);
  DeviceCompact c(ctx, sizeof(T));
  Buffer data(ctx, "compaction input"), flag_buf(ctx, "compaction flags"), result(ctx, "compaction output");
  data.upload(in, n * sizeof(T));
  flag_buf.upload(flags, n);
  result.reserve(n * sizeof(T));
  const uint64_t kept = c.compact(data.get(), flag_buf.get(), n, result.get());
  result.read(out, kept * sizeof(T));
  return kept;
}

#define PROCGEN_INSTANTIATE_COMPACT(T) template uint64_t compact<T>(int, const T*, const uint8_t*, uint64_t, T*);
PROCGEN_PRIMITIVES_COMPACT_TYPES(PROCGEN_INSTANTIATE_COMPACT)
#undef PROCGEN_INSTANTIATE_COMPACT

}  // namespace procgen::primitives::opencl

// Primitive radix_sort, opencl backend: host driver of radix_sort.cl (see
// there), and the host-array twins.
#include <algorithm>

#include "primitives/opencl/device.hpp"

namespace procgen::primitives::opencl {
namespace {
constexpr int kBits = 8;
constexpr cl_ulong kBuckets = 256;

std::string sortOptions(size_t key_bytes, bool values) {
  return std::string("-DPG_KEY_T=") + (key_bytes == 8 ? "ulong" : "uint") + " -DPG_HAS_VALUES=" + (values ? "1" : "0");
}
}  // namespace

DeviceRadixSort::DeviceRadixSort(Context& ctx, size_t key_bytes, bool values)
    : ctx_(ctx),
      key_bytes_(key_bytes),
      values_(values),
      and_or_(ctx, monoidInfo<AndOrU64>()),
      count_scan_(ctx, monoidInfo<SumU64>()),
      bits_(ctx, "sort key bits"),
      bits_total_(ctx, "sort key bits"),
      counts_(ctx, "sort digit counts"),
      keys_tmp_(ctx, "sort keys"),
      values_tmp_(ctx, "sort values") {
  cl_program p = ctx.program("primitives/opencl/radix_sort.cl", sortOptions(key_bytes, values));
  key_bits_ = Kernel(p, "keyBits");
  histogram_ = Kernel(p, "histogram");
  scatter_ = Kernel(p, "scatter");
}

void DeviceRadixSort::sort(cl_mem keys, cl_mem values, uint64_t n) {
  if (n < 2) return;
  // Runs of consecutive keys per work item: long enough that 256 counters
  // per run stay small beside the keys, at most ~1024 runs.
  const uint64_t per = std::max<uint64_t>(1024, (n + 1023) / 1024);
  const uint64_t runs = (n + per - 1) / per;
  bits_.reserve(runs * sizeof(PgAndOrU64));
  bits_total_.reserve(sizeof(PgAndOrU64));
  key_bits_.arg(0, keys).arg(1, cl_ulong{n}).arg(2, cl_ulong{per}).arg(3, bits_);
  key_bits_.run(ctx_, runs, 1);
  and_or_.reduce(bits_.get(), runs, bits_total_.get());
  PgAndOrU64 bits;
  bits_total_.read(&bits, sizeof bits);
  const uint64_t varying = bits.all ^ bits.any;

  counts_.reserve(kBuckets * runs * sizeof(cl_ulong));
  keys_tmp_.reserve(n * key_bytes_);
  if (values_) values_tmp_.reserve(n * sizeof(cl_uint));
  cl_mem src_k = keys, dst_k = keys_tmp_.get();
  cl_mem src_v = values_ ? values : nullptr, dst_v = values_ ? values_tmp_.get() : nullptr;
  const int passes = static_cast<int>(key_bytes_) * 8 / kBits;
  for (int p = 0; p < passes; ++p) {
    const cl_uint shift = static_cast<cl_uint>(p * kBits);
    if (((varying >> shift) & (kBuckets - 1)) == 0) continue;  // every key has the same digit
    histogram_.arg(0, src_k).arg(1, cl_ulong{n}).arg(2, cl_ulong{per}).arg(3, cl_ulong{runs}).arg(4, shift);
    histogram_.arg(5, counts_);
    histogram_.run(ctx_, runs, 1);
    count_scan_.exclusiveScan(counts_.get(), kBuckets * runs);
    scatter_.arg(0, src_k).arg(1, src_v).arg(2, dst_k).arg(3, dst_v).arg(4, cl_ulong{n}).arg(5, cl_ulong{per});
    scatter_.arg(6, cl_ulong{runs}).arg(7, shift).arg(8, counts_);
    scatter_.run(ctx_, runs, 1);
    std::swap(src_k, dst_k);
    std::swap(src_v, dst_v);
  }
  if (src_k != keys) {  // an odd number of passes ran
    procgen::opencl::check(clEnqueueCopyBuffer(ctx_.queue(), src_k, keys, 0, 0, n * key_bytes_, 0, nullptr, nullptr),
                           "clEnqueueCopyBuffer");
    if (values_)
      procgen::opencl::check(
          clEnqueueCopyBuffer(ctx_.queue(), src_v, values, 0, 0, n * sizeof(cl_uint), 0, nullptr, nullptr),
          "clEnqueueCopyBuffer");
  }
}

namespace {
template <typename K>
void sortHost(int device, K* keys, uint32_t* values, uint64_t n) {
  if (n < 2) return;
  Context& ctx = Context::get(device);
  DeviceRadixSort s(ctx, sizeof(K), values != nullptr);
  Buffer k(ctx, "sort keys"), v(ctx, "sort values");
  k.upload(keys, n * sizeof(K));
  if (values) v.upload(values, n * sizeof(uint32_t));
  s.sort(k.get(), v.get(), n);
  k.read(keys, n * sizeof(K));
  if (values) v.read(values, n * sizeof(uint32_t));
}
}  // namespace

void radixSort(int device, uint32_t* keys, uint32_t* values, uint64_t n) { sortHost(device, keys, values, n); }
void radixSort(int device, uint64_t* keys, uint32_t* values, uint64_t n) { sortHost(device, keys, values, n); }

}  // namespace procgen::primitives::opencl

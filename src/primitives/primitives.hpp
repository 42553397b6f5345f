// Data-parallel primitives with serial, cpu and opencl twins of the same names
// (STYLE.md practice 1): monoid-typed scans (exclusive, inclusive, segmented),
// reduce, stream compaction and a stable LSD radix sort.
//
// Namespace procgen::primitives (internal: this header is under src/, not
// include/). Every primitive exists as
//   serial::f(...)                       the single-core reference loop,
//   cpu::f(CpuExecutor&, ...)            oneTBB inside the executor's arena,
//   opencl::f(int device, ...)           kernels on Context::get(device), host arrays,
//   f(const Execution&, ...)             the dispatching entry point,
// with the same arguments after the backend. The opencl device-buffer API
// (cl_mem in, cl_mem out, data stays on the device) is in
// primitives/opencl/device.hpp. No TBB or OpenCL type appears here.
//
// Determinism: every monoid below is integer arithmetic modulo 2^bits and
// combined in index order, so all backends and thread counts give
// bit-identical results; the radix sort is stable, so its output is unique.
//
// A monoid descriptor M (see monoids.h for the C-subset definitions shared
// with OpenCL C) provides
//   using Value;  static Value identity();  static Value combine(Value, Value);
//   kClName (the monoids.h prefix) and kClType (the OpenCL C value type).
// The templates are instantiated for the descriptors listed in
// PROCGEN_PRIMITIVES_MONOIDS; add a descriptor there to scan a new monoid.
#pragma once

#include <cstdint>
#include <vector>

#include "primitives/monoids.h"
#include "procgen/backend.hpp"
#include "procgen/memory.hpp"

namespace procgen::detail {
class CpuExecutor;
}

namespace procgen::primitives {

#define PROCGEN_PRIMITIVES_DESCRIBE_MONOID(Name, prefix, ValueType, cl_type) \
  struct Name {                                                              \
    using Value = ValueType;                                                 \
    static constexpr const char* kClName = #prefix;                          \
    static constexpr const char* kClType = cl_type;                          \
    static Value identity() { return prefix##Identity(); }                   \
    static Value combine(Value a, Value b) { return prefix##Combine(a, b); } \
  };

PROCGEN_PRIMITIVES_DESCRIBE_MONOID(SumU32, pgSumU32, pg_u32, "uint")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(SumU64, pgSumU64, pg_u64, "ulong")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(SumI32, pgSumI32, pg_i32, "int")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(SumI64, pgSumI64, pg_i64, "long")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(SumU64x4, pgSumU64x4, PgU64x4, "ulong4")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(MaxU32, pgMaxU32, pg_u32, "uint")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(AffineU32, pgAffineU32, PgAffineU32, "PgAffineU32")
PROCGEN_PRIMITIVES_DESCRIBE_MONOID(AndOrU64, pgAndOrU64, PgAndOrU64, "PgAndOrU64")

/// X(M) for every monoid the scan and reduce templates are instantiated for.
#define PROCGEN_PRIMITIVES_MONOIDS(X) \
  X(SumU32) X(SumU64) X(SumI32) X(SumI64) X(SumU64x4) X(MaxU32) X(AffineU32) X(AndOrU64)

/// X(T) for every element type stream compaction is instantiated for.
#define PROCGEN_PRIMITIVES_COMPACT_TYPES(X) X(uint32_t) X(uint64_t)

enum class ScanKind {
  kExclusive,  ///< out[i] = in[s] ⊕ ... ⊕ in[i-1] (identity when i = s)
  kInclusive,  ///< out[i] = in[s] ⊕ ... ⊕ in[i]
};
// where s is 0, or for a segmented scan the last i' <= i with heads[i'] != 0.

/// Scratch of the radix sort, reused across calls so repeated sorts do not
/// fault in fresh pages (src/common/large_buffer.hpp); grows, never shrinks.
/// One scratch per concurrent sort. OverwriteVectors: growing writes nothing
/// (a std::vector zero-filled 12 bytes per 64-bit key and value on one thread
/// before the sort overwrote them), and a fresh scratch of a one-shot caller
/// reuses the huge-page blocks an earlier call freed (procgen/memory.hpp).
struct RadixScratch {
  OverwriteVector<uint64_t> keys64;
  OverwriteVector<uint32_t> keys32;
  OverwriteVector<uint32_t> values;
  std::vector<uint64_t> counts;  ///< per chunk and digit
};

// ---------------------------------------------------------------------------
// Documentation of the primitives (the same for every backend):
//
// scan<M>(kind, in, heads, out, n)
//   Exclusive or inclusive scan of in[0..n) under M, written to out[0..n).
//   heads == nullptr: one segment. Otherwise heads[i] != 0 starts a new
//   segment at i (the scan restarts from the identity; heads[0] is implied).
//   out may equal in (in place); otherwise the ranges must not overlap.
//   O(n) work; cpu O(n / threads + chunks) span; opencl O(log n) launches.
//
// reduce<M>(in, n) -> in[0] ⊕ ... ⊕ in[n-1] (identity when n = 0). O(n).
//
// compact<T>(in, flags, n, out) -> count
//   Copies every in[i] with flags[i] != 0 to out[0..count), in index order
//   (stable). out must hold count elements (n suffices) and not overlap in.
//   O(n).
//
// radixSort(keys, values, n, scratch)
//   Sorts keys[0..n) ascending in place, stable (equal keys keep their
//   order); values[i] (when values != nullptr) moves with keys[i]; values must
//   not overlap keys. 8-bit digits, digits on which all keys agree skipped
//   (30-bit keys in 64-bit words sort on 4 digits): the host twins split on
//   the highest varying digit first and sort cache-sized buckets by LSD passes
//   (radix_sort_impl.hpp), the opencl twin runs LSD passes over the device.
//   O(n * digits) work; scratch holds n keys and n values after the call.
// ---------------------------------------------------------------------------

namespace serial {
template <typename M>
void scan(ScanKind kind, const typename M::Value* in, const uint8_t* heads, typename M::Value* out, uint64_t n);
template <typename M>
typename M::Value reduce(const typename M::Value* in, uint64_t n);
template <typename T>
uint64_t compact(const T* in, const uint8_t* flags, uint64_t n, T* out);
void radixSort(uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch);
void radixSort(uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch);
}  // namespace serial

/// cpu twins: chunked two-pass forms run in `exec`'s arena (scan: reduce per
/// chunk, scan of chunk totals, rescan per chunk; sort: per-chunk histograms,
/// scan in digit-major order, parallel stable scatter).
namespace cpu {
template <typename M>
void scan(detail::CpuExecutor& exec, ScanKind kind, const typename M::Value* in, const uint8_t* heads,
          typename M::Value* out, uint64_t n);
template <typename M>
typename M::Value reduce(detail::CpuExecutor& exec, const typename M::Value* in, uint64_t n);
template <typename T>
uint64_t compact(detail::CpuExecutor& exec, const T* in, const uint8_t* flags, uint64_t n, T* out);
void radixSort(detail::CpuExecutor& exec, uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch);
void radixSort(detail::CpuExecutor& exec, uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch);
}  // namespace cpu

/// opencl twins over host arrays: upload, run the device-buffer form
/// (primitives/opencl/device.hpp), read back. `device` as in Execution::device.
/// Throw BackendUnavailableError without a device, OpenCLError on failures.
namespace opencl {
template <typename M>
void scan(int device, ScanKind kind, const typename M::Value* in, const uint8_t* heads, typename M::Value* out,
          uint64_t n);
template <typename M>
typename M::Value reduce(int device, const typename M::Value* in, uint64_t n);
template <typename T>
uint64_t compact(int device, const T* in, const uint8_t* flags, uint64_t n, T* out);
void radixSort(int device, uint32_t* keys, uint32_t* values, uint64_t n);
void radixSort(int device, uint64_t* keys, uint32_t* values, uint64_t n);
}  // namespace opencl

// ---- dispatching entry points (common/dispatch.hpp: BackendUnavailableError
// when the backend is not compiled in) -----------------------------------------

template <typename M>
void scan(const Execution& exec, ScanKind kind, const typename M::Value* in, const uint8_t* heads,
          typename M::Value* out, uint64_t n);
template <typename M>
typename M::Value reduce(const Execution& exec, const typename M::Value* in, uint64_t n);
template <typename T>
uint64_t compact(const Execution& exec, const T* in, const uint8_t* flags, uint64_t n, T* out);
void radixSort(const Execution& exec, uint32_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch);
void radixSort(const Execution& exec, uint64_t* keys, uint32_t* values, uint64_t n, RadixScratch& scratch);

}  // namespace procgen::primitives

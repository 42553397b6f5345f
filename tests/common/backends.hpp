// The backend variants every parity test runs on (STYLE.md practices 6 and 7):
// one test body, parameterized by a Variant — serial, cpu×1, cpu×2, cpu×7 and
// opencl — that skips with its reason where the variant cannot run, carries
// the float tolerance that variant is held to against serial, and, for tests
// that stress chunk borders, a forced chunk size. Outputs are pre-filled with
// poison so that an element no backend wrote fails the comparison.
//
//   class MyParity : public procgen::test::BackendTest {};
//   TEST_P(MyParity, Something) { ... execution() ... tolerance() ... }
//   INSTANTIATE_TEST_SUITE_P(Backends, MyParity,
//                            testing::ValuesIn(procgen::test::backendVariants()),
//                            procgen::test::variantName);
//
// Test names read Backends/MyParity.Something/cpu2 (gtest_filter: '*/cpu*').
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/opencl.hpp"
#if PROCGEN_HAVE_TBB
#include "cpu/executor.hpp"
#endif

namespace procgen::test {

/// OpenCL C does not require sin, cos, tan, asin, acos, atan, atan2, exp, log
/// and pow to round like the host's libm (PoCL differs by 1 ulp in ~1% of
/// arguments): the relative tolerance of floats computed with them on the
/// opencl backend. + - * / and sqrt are exact there
/// (-cl-fp32-correctly-rounded-divide-sqrt), and serial and cpu run the same
/// host code: their tolerance is 0 (bit for bit).
inline constexpr double kOpenCLMathTolerance = 1e-5;

/// One way of running a stage: backend, thread count, forced chunk size.
struct Variant {
  std::string name;  ///< test-name suffix: letters, digits and '_' only
  Backend backend = Backend::kSerial;
  int threads = 1;
  uint64_t chunk = 0;     ///< forced cpu chunk (modules / elements); 0 = the default policy
  double tolerance = 0;   ///< relative float tolerance against serial; 0 = bit-exact

  Execution execution() const { return Execution{backend, threads}; }
};

inline Variant makeVariant(Backend backend, int threads, uint64_t chunk = 0) {
  Variant v;
  v.backend = backend;
  v.threads = backend == Backend::kSerial || backend == Backend::kOpenCL ? 1 : threads;
  v.chunk = chunk;
  v.tolerance = backend == Backend::kOpenCL ? kOpenCLMathTolerance : 0.0;
  v.name = backendName(backend);
  if (backend == Backend::kCpu) v.name += std::to_string(threads);
  if (chunk) v.name += "_chunk" + std::to_string(chunk);
  return v;
}

/// serial, cpu1, cpu2, cpu7, opencl: every variant, whether or not it can run
/// here (a test that cannot run is listed and skipped with its reason, so the
/// test list is the same on every machine).
inline std::vector<Variant> backendVariants() {
  return {makeVariant(Backend::kSerial, 1), makeVariant(Backend::kCpu, 1), makeVariant(Backend::kCpu, 2),
          makeVariant(Backend::kCpu, 7), makeVariant(Backend::kOpenCL, 1)};
}

/// Empty when `v` can run here; otherwise why not: "cpu backend not built
/// (no oneTBB)", "no OpenCL device: <the runtime's status>".
inline std::string skipReason(const Variant& v) {
  if (!backendAvailable(v.backend))
    return std::string(backendName(v.backend)) + " backend not built" +
           (v.backend == Backend::kCpu ? " (no oneTBB)" : " (no OpenCL)");
  if (v.backend == Backend::kOpenCL && openclDevices().empty()) return "no OpenCL device: " + openclStatus();
  return "";
}

/// Only the variants of `all` that can run here (for loops inside one test body).
inline std::vector<Variant> availableVariants(std::vector<Variant> all = backendVariants()) {
  std::vector<Variant> out;
  for (Variant& v : all)
    if (skipReason(v).empty()) out.push_back(std::move(v));
  return out;
}

/// How gtest prints a Variant (test listings, failures): its name.
inline void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

/// For INSTANTIATE_TEST_SUITE_P: the variant's name.
inline std::string variantName(const testing::TestParamInfo<Variant>& info) { return info.param.name; }

/// Skips the current test (from the test body or SetUp) unless `variant` can run.
#define PROCGEN_SKIP_UNLESS_RUNNABLE(variant)                               \
  do {                                                                      \
    const std::string procgen_skip_reason = ::procgen::test::skipReason(variant); \
    if (!procgen_skip_reason.empty()) GTEST_SKIP() << procgen_skip_reason;  \
  } while (0)

/// Skips the current test when there is no OpenCL device (or no OpenCL).
#define PROCGEN_SKIP_WITHOUT_OPENCL() \
  PROCGEN_SKIP_UNLESS_RUNNABLE(::procgen::test::makeVariant(::procgen::Backend::kOpenCL, 1))

/// Forces the cpu backend's chunk size for the lifetime of the scope (0 = the
/// default policy), so that contexts, brackets and groups straddle chunks.
class CpuChunkScope {
 public:
  explicit CpuChunkScope(uint64_t chunk) {
#if PROCGEN_HAVE_TBB
    procgen::detail::setCpuChunkOverrideForTesting(chunk);
#else
    (void)chunk;
#endif
  }
  ~CpuChunkScope() {
#if PROCGEN_HAVE_TBB
    procgen::detail::setCpuChunkOverrideForTesting(0);
#endif
  }
  CpuChunkScope(const CpuChunkScope&) = delete;
  CpuChunkScope& operator=(const CpuChunkScope&) = delete;
};

/// The fixture of value-parameterized backend suites: skips with the reason
/// where the variant cannot run. (A test forces variant().chunk with a
/// CpuChunkScope around the calls it means.)
class BackendTest : public testing::TestWithParam<Variant> {
 protected:
  void SetUp() override { PROCGEN_SKIP_UNLESS_RUNNABLE(GetParam()); }
  const Variant& variant() const { return GetParam(); }
  Execution execution() const { return GetParam().execution(); }
  double tolerance() const { return GetParam().tolerance; }
};

// ---------------------------------------------------------------------------
// Poison

/// The byte every poisoned output is filled with: 0x5a5a5a5a as an int32,
/// 1.5e16 as a float — never a valid index, and no plausible coordinate.
inline constexpr unsigned char kPoisonByte = 0x5a;

/// Fills `n` elements at `p` with kPoisonByte.
template <typename T>
void fillPoison(T* p, size_t n) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (n) std::memset(static_cast<void*>(p), kPoisonByte, n * sizeof(T));
}

/// `n` poisoned elements: the output buffer of a stage under test.
template <typename T>
std::vector<T> poisoned(size_t n) {
  std::vector<T> v(n);
  fillPoison(v.data(), n);
  return v;
}

/// Whether `x` still holds the poison (was never written).
template <typename T>
bool isPoison(const T& x) {
  T p;
  fillPoison(&p, 1);
  return std::memcmp(&x, &p, sizeof(T)) == 0;
}

// ---------------------------------------------------------------------------
// Float comparison

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// Equal bit for bit (NaN and -0 included), or both finite and within
/// `relative` × max(1, |got|, |want|); relative = 0 demands the same bits.
inline bool floatsAgree(float got, float want, double relative) {
  if (floatBits(got) == floatBits(want)) return true;
  if (relative == 0 || !std::isfinite(got) || !std::isfinite(want)) return false;
  const double g = got, w = want;
  return std::abs(g - w) <= relative * std::max({1.0, std::abs(g), std::abs(w)});
}

}  // namespace procgen::test

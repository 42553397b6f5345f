/* clc.h — the C subset shared by C++ and OpenCL C (STYLE.md practice 2).
 *
 * Headers that include this file hold pure per-element logic (expression
 * bytecode, context search, turtle rotations, monoids) and must compile both
 * as C++20 and as OpenCL C 1.2. Rules for such headers:
 *   - functions are PROCGEN_FN (static inline in C++, inline in OpenCL C);
 *   - pointers to arrays a kernel reads from global memory are PROCGEN_GLOBAL;
 *   - only fixed-width integer types from this file, float (no double), and
 *     no recursion, allocation, exceptions or standard library calls except
 *     the math functions named PG_* below.
 */
#ifndef PROCGEN_COMMON_CLC_H
#define PROCGEN_COMMON_CLC_H

#ifdef __OPENCL_C_VERSION__
/* OpenCL C lets the compiler fuse a*b+c into fma by default; C++ here does
 * not (ISO mode, no -ffp-contract=fast). Off, so float results match the host. */
#pragma OPENCL FP_CONTRACT OFF
#define PROCGEN_FN inline
#define PROCGEN_GLOBAL __global
#define PROCGEN_CONSTANT __constant
typedef char pg_i8;
typedef uchar pg_u8;
typedef int pg_i32;
typedef uint pg_u32;
typedef long pg_i64;
typedef ulong pg_u64;
#define PG_SQRT sqrt
#define PG_SIN sin
#define PG_COS cos
#define PG_TAN tan
#define PG_ASIN asin
#define PG_ACOS acos
#define PG_ATAN atan
#define PG_ATAN2 atan2
#define PG_EXP exp
#define PG_LOG log
#define PG_POW pow
#define PG_FLOOR floor
#define PG_CEIL ceil
#define PG_FABS fabs
#define PG_FMIN fmin
#define PG_FMAX fmax
#define PG_SINH sinh
#define PG_COSH cosh
#define PG_TANH tanh
#define PG_EXPM1 expm1
#define PG_LOG10 log10
#define PG_LOG1P log1p
#define PG_FMOD fmod
#define PG_TRUNC trunc
#define PG_RINT rint
#else
#include <cmath>
#include <cstdint>
#define PROCGEN_FN static inline
#define PROCGEN_GLOBAL
#define PROCGEN_CONSTANT static const
typedef int8_t pg_i8;
typedef uint8_t pg_u8;
typedef int32_t pg_i32;
typedef uint32_t pg_u32;
typedef int64_t pg_i64;
typedef uint64_t pg_u64;
#define PG_SQRT std::sqrt
#define PG_SIN std::sin
#define PG_COS std::cos
#define PG_TAN std::tan
#define PG_ASIN std::asin
#define PG_ACOS std::acos
#define PG_ATAN std::atan
#define PG_ATAN2 std::atan2
#define PG_EXP std::exp
#define PG_LOG std::log
#define PG_POW std::pow
#define PG_FLOOR std::floor
#define PG_CEIL std::ceil
#define PG_FABS std::fabs
#define PG_FMIN std::fmin
#define PG_FMAX std::fmax
#define PG_SINH std::sinh
#define PG_COSH std::cosh
#define PG_TANH std::tanh
#define PG_EXPM1 std::expm1
#define PG_LOG10 std::log10
#define PG_LOG1P std::log1p
#define PG_FMOD std::fmod
#define PG_TRUNC std::trunc
#define PG_RINT std::rint /* round half to even in the default rounding mode, as OpenCL's rint */
#endif

#endif /* PROCGEN_COMMON_CLC_H */

// PROCGEN_ASSERT: the first tier of STYLE.md practice 11 (include/procgen/error.hpp)
// — a check of an internal invariant or a caller's precondition that only a
// programming error can break. Never for untrusted input: grammars, scene
// files and arguments get ParseError or the runtime exceptions instead.
//
// On in a checked build (CMake -DPROCGEN_CHECKED=ON; also on in Debug and in
// every sanitizer build, see CMakeLists.txt), where a failure prints
// "file:line: PROCGEN_ASSERT(cond) failed: msg" on stderr and aborts, so the
// sanitizer or debugger shows the stack. Off in Release: the condition is not
// evaluated (it must have no side effects), only type-checked.
#pragma once

#include <cstdio>
#include <cstdlib>

#ifndef PROCGEN_CHECKED
#define PROCGEN_CHECKED 0
#endif

namespace procgen::detail {

[[noreturn]] inline void assertFailed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "%s:%d: PROCGEN_ASSERT(%s) failed: %s\n", file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace procgen::detail

#if PROCGEN_CHECKED
#define PROCGEN_ASSERT(cond, msg) \
  ((cond) ? static_cast<void>(0) : ::procgen::detail::assertFailed(__FILE__, __LINE__, #cond, (msg)))
#else
#define PROCGEN_ASSERT(cond, msg) static_cast<void>(sizeof(!(cond)) + sizeof(msg))
#endif

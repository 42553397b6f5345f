// Whether this test binary runs under a sanitizer (scripts/asan.sh,
// scripts/tsan.sh), where memory and thread instrumentation make the largest
// inputs take minutes: such tests use underSanitizer() to pick a smaller size
// — never to skip — so every test still runs in every build.
#pragma once

#include <cstdint>

namespace procgen::test {

inline constexpr bool kUnderSanitizer =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

/// `full` in a plain build, `sanitized` under a sanitizer.
inline constexpr uint64_t sizeUnlessSanitized(uint64_t full, uint64_t sanitized) {
  return kUnderSanitizer ? sanitized : full;
}

}  // namespace procgen::test

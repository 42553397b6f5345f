// PROCGEN_ASSERT (src/common/assert.hpp): in a checked build a false condition
// prints file:line, the condition and the message, and aborts; a true one does
// nothing. Off (Release without PROCGEN_CHECKED) the condition is not evaluated.
#include <gtest/gtest.h>

#include "common/assert.hpp"

namespace {

TEST(ProcgenAssert, FailureReportsFileLineConditionAndAborts) {
#if PROCGEN_CHECKED
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the cpu backend's worker threads may exist
  EXPECT_DEATH(PROCGEN_ASSERT(1 + 1 == 3, "arithmetic broke"),
               "assert_test\\.cpp:[0-9]+: PROCGEN_ASSERT\\(1 \\+ 1 == 3\\) failed: arithmetic broke");
#else
  GTEST_SKIP() << "PROCGEN_ASSERT is off in this build (configure with -DPROCGEN_CHECKED=ON)";
#endif
}

TEST(ProcgenAssert, ConditionEvaluatedOnceWhenCheckedNeverOtherwise) {
  int evaluated = 0;
  PROCGEN_ASSERT(++evaluated > 0, "counts evaluations");
  EXPECT_EQ(evaluated, PROCGEN_CHECKED ? 1 : 0);
}

}  // namespace

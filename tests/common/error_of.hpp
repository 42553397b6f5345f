// The message of the exception a call must throw, for tests that compare
// error texts: one helper instead of a copy per test file.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "procgen/error.hpp"

namespace procgen::test {

/// The message of the E that `fn` throws, or "" and a test failure when it
/// throws nothing or another exception.
template <typename E = Error, typename Fn>
std::string errorOf(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}

}  // namespace procgen::test

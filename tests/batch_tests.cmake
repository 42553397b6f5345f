# Writes CTest entries that each run a batch of tests of one suite in one
# process (tests/CMakeLists.txt, PROCGEN_CTEST_BATCH), instead of one process
# per test as gtest_discover_tests does. Run after the test binary links:
#   cmake -D TEST_EXECUTABLE=... -D CTEST_FILE=... -D BATCH=N -D TIMEOUT=S
#         -D WORKING_DIRECTORY=... -P batch_tests.cmake
# Entry names: the suite's name, or Suite#k when the suite needs several
# batches, so `ctest -R Suite` still selects a suite. Each entry's
# --gtest_filter lists its tests by their full names (gtest names hold only
# letters, digits, '_' and '/', none of which the filter syntax treats as
# special). Disabled tests (DISABLED_) are left out, as gtest would skip them.
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "batch_tests: ${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${errors}")
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")

set(content "# Written by tests/batch_tests.cmake from ${TEST_EXECUTABLE} --gtest_list_tests\n")
set(suite "")
set(batch "")
set(batch_size 0)
set(batch_index 0)
set(suite_batches "")

# Appends the pending batch as one add_test; a suite's entries are named once
# its last batch is known (one batch: the suite's name; more: Suite#1, #2, ...).
macro(flush_batch)
  if(batch_size GREATER 0)
    math(EXPR batch_index "${batch_index} + 1")
    list(APPEND suite_batches "${batch}")
    set(batch "")
    set(batch_size 0)
  endif()
endmacro()
macro(flush_suite)
  flush_batch()
  list(LENGTH suite_batches count)
  set(k 0)
  foreach(filter IN LISTS suite_batches)
    math(EXPR k "${k} + 1")
    if(count EQUAL 1)
      set(entry "${suite}")
    else()
      set(entry "${suite}#${k}")
    endif()
    string(APPEND content "add_test([=[${entry}]=] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${filter}]==])\n"
           "set_tests_properties([=[${entry}]=] PROPERTIES TIMEOUT ${TIMEOUT} WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==])\n")
  endforeach()
  set(suite_batches "")
  set(batch_index 0)
endmacro()

foreach(line IN LISTS lines)
  string(REGEX REPLACE "  #.*$" "" line "${line}")  # "  # GetParam() = ..." / "  # TypeParam = ..."
  string(STRIP "${line}" name)
  if(name STREQUAL "")
    continue()
  endif()
  if(NOT line MATCHES "^ ")  # a suite: "Suite." at the start of the line
    if(NOT suite STREQUAL "")
      flush_suite()
    endif()
    string(REGEX REPLACE "\\.$" "" suite "${name}")
    continue()
  endif()
  if(suite MATCHES "(^|/)DISABLED_" OR name MATCHES "^DISABLED_")
    continue()
  endif()
  if(batch_size GREATER 0)
    string(APPEND batch ":")
  endif()
  string(APPEND batch "${suite}.${name}")
  math(EXPR batch_size "${batch_size} + 1")
  if(batch_size EQUAL BATCH)
    flush_batch()
  endif()
endforeach()
if(NOT suite STREQUAL "")
  flush_suite()
endif()
file(WRITE "${CTEST_FILE}" "${content}")

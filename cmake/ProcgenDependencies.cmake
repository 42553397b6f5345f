# Finds procgen's dependencies (all Debian packages; scripts/install-deps.sh installs them).
find_package(PNG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)

# Random123 is header-only and ships no CMake config.
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)
add_library(Random123::Random123 INTERFACE IMPORTED)
target_include_directories(Random123::Random123 INTERFACE ${RANDOM123_INCLUDE_DIR})

# tinygltf: Debian ships the header plus a library; we compile the header-only
# implementation once in src/io/gltf_impl.cpp, so only the include path is needed.
find_path(TINYGLTF_INCLUDE_DIR tiny_gltf.h REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
add_library(procgen_tinygltf INTERFACE)
target_include_directories(procgen_tinygltf INTERFACE ${TINYGLTF_INCLUDE_DIR} /usr/include/stb)
target_link_libraries(procgen_tinygltf INTERFACE nlohmann_json::nlohmann_json)

function(procgen_optional_package var mode)
  # mode is AUTO, ON or OFF; remaining args are the find_package call.
  set(${var} OFF PARENT_SCOPE)
  if(mode STREQUAL "OFF")
    message(STATUS "procgen: ${var} switched off (option)")
    return()
  endif()
  find_package(${ARGN} QUIET)
  if(${ARGV2}_FOUND)
    set(${var} ON PARENT_SCOPE)
    message(STATUS "procgen: ${ARGV2} found, ${var} ON")
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "procgen: ${ARGV2} requested but not found (run scripts/install-deps.sh)")
  else()
    message(STATUS "procgen: ${ARGV2} not found, backend switched off (run scripts/install-deps.sh)")
  endif()
endfunction()

procgen_optional_package(PROCGEN_HAVE_TBB "${PROCGEN_WITH_TBB}" TBB CONFIG)
procgen_optional_package(PROCGEN_HAVE_OPENCL "${PROCGEN_WITH_OPENCL}" OpenCL)

# Finds procgen's dependencies (all Debian packages; scripts/install-deps.sh installs them).
find_package(PNG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(pugixml CONFIG REQUIRED)  # flam3 genome XML (src/flame/genome_reader.cpp)

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
# MPI (Debian's libopenmpi-dev): `mpirun -n R procgen ...` splits flames and
# noise over R ranks (include/procgen/distributed.hpp, docs/scaling.md).
procgen_optional_package(PROCGEN_HAVE_MPI "${PROCGEN_MPI}" MPI COMPONENTS C CXX)
if(PROCGEN_HAVE_MPI)
  find_program(PROCGEN_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
endif()

# OpenVDB (.vdb output), optional. Found by hand: Debian's FindOpenVDB.cmake also
# demands Boost.Iostreams, Blosc and more that linking its shared library does
# not need. Its headers need Boost's and Imath's; the library needs oneTBB.
set(PROCGEN_HAVE_OPENVDB OFF)
if(NOT PROCGEN_WITH_OPENVDB STREQUAL "OFF")
  find_path(PROCGEN_OPENVDB_INCLUDE_DIR openvdb/openvdb.h)
  find_library(PROCGEN_OPENVDB_LIBRARY openvdb)
  find_path(PROCGEN_BOOST_INCLUDE_DIR boost/numeric/conversion/conversion_traits.hpp)
  find_package(Imath CONFIG QUIET)
  if(PROCGEN_OPENVDB_INCLUDE_DIR AND PROCGEN_OPENVDB_LIBRARY AND PROCGEN_BOOST_INCLUDE_DIR AND Imath_FOUND
     AND PROCGEN_HAVE_TBB)
    add_library(OpenVDB::openvdb INTERFACE IMPORTED)
    target_include_directories(OpenVDB::openvdb INTERFACE ${PROCGEN_OPENVDB_INCLUDE_DIR} ${PROCGEN_BOOST_INCLUDE_DIR})
    target_link_libraries(OpenVDB::openvdb INTERFACE ${PROCGEN_OPENVDB_LIBRARY} Imath::Imath TBB::tbb)
    set(PROCGEN_HAVE_OPENVDB ON)
    message(STATUS "procgen: OpenVDB found, PROCGEN_HAVE_OPENVDB ON (.vdb output)")
  elseif(PROCGEN_WITH_OPENVDB STREQUAL "ON")
    message(FATAL_ERROR "procgen: OpenVDB requested but not found (needs libopenvdb-dev, libboost-dev and the cpu "
                        "backend's oneTBB; run scripts/install-deps.sh)")
  else()
    message(STATUS "procgen: OpenVDB not found, .vdb output switched off (run scripts/install-deps.sh)")
  endif()
endif()

# The .vdb writer module, procgen_vdb.so (src/io/volumes/vdb_module/): the one
# target that links OpenVDB. libprocgen loads it with dlopen on the first .vdb
# write (src/io/volumes/vdb_writer.cpp), so that libopenvdb and the libraries
# it pulls in are not loaded, and their relocations not paid, by every procgen
# process (docs/performance.md, "Cold start"). Included by CMakeLists.txt when
# PROCGEN_HAVE_OPENVDB.
#
# Where the loader looks: $PROCGEN_PLUGIN_DIR when set; otherwise beside the
# executable that libprocgen is linked into (the build tree: the module is
# built beside build/procgen and copied beside the other executables that
# write .vdb, procgen_vdb_module_beside below), then in the install tree's
# ${CMAKE_INSTALL_LIBDIR}/procgen relative to ${CMAKE_INSTALL_BINDIR}.
include(GNUInstallDirs)

add_library(procgen_vdb MODULE src/io/volumes/vdb_module/vdb_module.cpp)
set_target_properties(procgen_vdb PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_include_directories(procgen_vdb PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(procgen_vdb PRIVATE OpenVDB::openvdb)
# clang's UBSan (scripts/asan.sh) flags oneTBB's concurrent_hash_map, which
# OpenVDB's accessor registry uses: advance_to_next_bucket() static_casts its
# sentinel pointer (address 3) to a node before testing it. That is in the
# library's header, not in this adapter: the alignment check is off for this
# module only.
if(PROCGEN_SANITIZE MATCHES "undefined" AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(procgen_vdb PRIVATE -fno-sanitize=alignment)
endif()

set(PROCGEN_VDB_MODULE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/procgen)
install(TARGETS procgen_vdb LIBRARY DESTINATION ${PROCGEN_VDB_MODULE_INSTALL_DIR})
# The loader's second place, relative to the installed executable's directory.
file(RELATIVE_PATH procgen_vdb_module_from_bindir ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_FULL_LIBDIR}/procgen)
set_property(SOURCE src/io/volumes/vdb_writer.cpp APPEND PROPERTY COMPILE_DEFINITIONS
             PROCGEN_VDB_MODULE_FILE="$<TARGET_FILE_NAME:procgen_vdb>"
             PROCGEN_VDB_MODULE_INSTALL_DIR="${procgen_vdb_module_from_bindir}")

# Makes the module available beside `target`'s executable whenever it is
# built: a dependency, and after each link a copy of the module into the
# executable's directory when that is not the module's own. Call it in the
# directory that created `target` (add_custom_command(TARGET) must).
function(procgen_vdb_module_beside target)
  if(NOT TARGET procgen_vdb)
    return()
  endif()
  # Under Ninja a dependency of the link only, so that the target's sources
  # compile beside the module's instead of after it; Make needs the
  # target-level dependency.
  if(CMAKE_GENERATOR MATCHES "Ninja")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS $<TARGET_FILE:procgen_vdb>)
  else()
    add_dependencies(${target} procgen_vdb)
  endif()
  get_target_property(dir ${target} RUNTIME_OUTPUT_DIRECTORY)
  if(NOT dir)
    get_target_property(dir ${target} BINARY_DIR)
  endif()
  if(NOT dir STREQUAL PROJECT_BINARY_DIR)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:procgen_vdb> $<TARGET_FILE_DIR:${target}>
      VERBATIM)
  endif()
endfunction()

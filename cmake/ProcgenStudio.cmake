# procgen studio (issue 20): the `procgen serve` HTTP server (cpp-httplib from
# Debian) and its page, bundled from web/ with esbuild at build time (npm
# packages pinned by web/package-lock.json, installed into the build tree by
# `npm ci`) and embedded in the binary with the examples.
#
#   PROCGEN_WITH_STUDIO  AUTO (default): on when cpp-httplib is found;
#                        ON: missing cpp-httplib is an error; OFF.
# The page needs node and npm; without them the server runs and says so.
# PROCGEN_STUDIO_PAGE=OFF leaves it out even then (scripts/fuzz.sh: the request
# fuzzer needs the server, not the page).
set(PROCGEN_HAVE_STUDIO OFF)
set(PROCGEN_HAVE_STUDIO_PAGE OFF)
if(PROCGEN_WITH_STUDIO STREQUAL "OFF")
  message(STATUS "procgen: studio switched off (option)")
  return()
endif()
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PROCGEN_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
endif()
if(NOT PROCGEN_HTTPLIB_FOUND)
  if(PROCGEN_WITH_STUDIO STREQUAL "ON")
    message(FATAL_ERROR "procgen: studio requested but cpp-httplib not found (run scripts/install-deps.sh)")
  endif()
  message(STATUS "procgen: cpp-httplib not found, studio (procgen serve) switched off (run scripts/install-deps.sh)")
  return()
endif()
set(PROCGEN_HAVE_STUDIO ON)

find_program(PROCGEN_NODE NAMES node nodejs)
find_program(PROCGEN_NPM NAMES npm)
set(studio_web ${CMAKE_BINARY_DIR}/web)
set(studio_assets "")
if(PROCGEN_STUDIO_PAGE AND PROCGEN_NODE AND PROCGEN_NPM)
  set(PROCGEN_HAVE_STUDIO_PAGE ON)
  file(MAKE_DIRECTORY ${studio_web})
  message(STATUS "procgen: cpp-httplib, node and npm found, studio ON (procgen serve, page bundled from web/)")
  # npm ci into the build tree: the source tree stays clean, the lock file pins every package.
  add_custom_command(
    OUTPUT ${studio_web}/node_modules/.procgen-stamp
    COMMAND ${CMAKE_COMMAND} -E make_directory ${studio_web}
    COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/web/package.json ${PROJECT_SOURCE_DIR}/web/package-lock.json
            ${studio_web}/
    COMMAND ${PROCGEN_NPM} ci --no-audit --no-fund --loglevel=error
    COMMAND ${CMAKE_COMMAND} -E touch ${studio_web}/node_modules/.procgen-stamp
    WORKING_DIRECTORY ${studio_web}
    DEPENDS ${PROJECT_SOURCE_DIR}/web/package.json ${PROJECT_SOURCE_DIR}/web/package-lock.json
    COMMENT "studio: npm ci (three.js, CodeMirror, esbuild, playwright-core)" VERBATIM)
  file(GLOB_RECURSE studio_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/web/src/*)
  set(studio_dist ${studio_web}/dist)
  set(studio_bundle ${studio_dist}/index.html ${studio_dist}/studio.js ${studio_dist}/studio.css)
  add_custom_command(
    OUTPUT ${studio_bundle}
    COMMAND ${PROCGEN_NODE} ${PROJECT_SOURCE_DIR}/web/build.mjs --modules ${studio_web}/node_modules --out ${studio_dist}
    DEPENDS ${studio_web}/node_modules/.procgen-stamp ${PROJECT_SOURCE_DIR}/web/build.mjs ${studio_sources}
    COMMENT "studio: bundling web/ with esbuild" VERBATIM)
  foreach(f index.html studio.js studio.css)
    list(APPEND studio_assets "${f}=${studio_dist}/${f}")
  endforeach()
else()
  set(studio_bundle "")
  if(NOT PROCGEN_STUDIO_PAGE)
    message(STATUS "procgen: studio built without its page (PROCGEN_STUDIO_PAGE=OFF)")
  else()
    message(STATUS "procgen: node/npm not found, studio built without its page (run scripts/install-deps.sh)")
  endif()
endif()

# The examples, so the page can offer them from any install.
file(GLOB studio_examples CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/lsystems/*.l
     ${PROJECT_SOURCE_DIR}/examples/flames/*.flam3)
foreach(f IN LISTS studio_examples)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${f})
  list(APPEND studio_assets "${rel}=${f}")
endforeach()
string(REPLACE ";" "\\;" studio_assets_arg "${studio_assets}")
set(studio_generated ${CMAKE_BINARY_DIR}/generated/studio_assets.cpp)
add_custom_command(
  OUTPUT ${studio_generated}
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${studio_generated} "-DASSETS=${studio_assets_arg}"
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_assets.cmake
  DEPENDS ${studio_bundle} ${studio_examples} ${PROJECT_SOURCE_DIR}/cmake/embed_assets.cmake
  COMMENT "studio: embedding the page and the examples" VERBATIM)

file(GLOB studio_library_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/studio/*.cpp)
add_library(procgen_studio STATIC ${studio_library_sources} ${studio_generated})
target_include_directories(procgen_studio PRIVATE ${PROJECT_SOURCE_DIR}/src)
# The preview's AVX-512 chain pass (target attribute: FMA enabled) must round
# as the scalar one: no a*b+c fused into FMA.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/studio/api_lsystem.cpp PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
target_link_libraries(procgen_studio PUBLIC procgen::procgen PRIVATE PkgConfig::PROCGEN_HTTPLIB
                      nlohmann_json::nlohmann_json)
# The .incbin'ed files are dependencies of the generated source's object.
set_source_files_properties(${studio_generated} PROPERTIES OBJECT_DEPENDS "${studio_bundle};${studio_examples}")

# SPDX-License-Identifier: BSD-3-Clause
# Writes DIR/numaplace/version.h (the NPL_VERSION_* macros) from CMake's project version, the
# one place the version is written: included by CMakeLists.txt (DIR = build/include, installed
# with the headers), or alone for a compile outside CMake (scripts/reliability.sh's fuzz build):
#   cmake -DNPL_VERSION_OUT=DIR -P cmake/NplVersion.cmake
if(NOT PROJECT_VERSION) # script mode: project(numaplace VERSION x.y.z) of CMakeLists.txt
  file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../CMakeLists.txt NPL_PROJECT_LINE REGEX "^project\\(numaplace VERSION")
  string(REGEX MATCH "([0-9]+)\\.([0-9]+)\\.([0-9]+)" PROJECT_VERSION "${NPL_PROJECT_LINE}")
  set(PROJECT_VERSION_MAJOR ${CMAKE_MATCH_1})
  set(PROJECT_VERSION_MINOR ${CMAKE_MATCH_2})
  set(PROJECT_VERSION_PATCH ${CMAKE_MATCH_3})
endif()
if(NOT NPL_VERSION_OUT)
  set(NPL_VERSION_OUT ${PROJECT_BINARY_DIR}/include)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/../include/numaplace/version.h.in
               ${NPL_VERSION_OUT}/numaplace/version.h @ONLY)

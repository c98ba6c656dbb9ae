# SPDX-License-Identifier: BSD-3-Clause
# io_calls.cmake - the interposer's version script: preload/preload.map with the names of
# preload/io_calls.def (the wrapped calls) put in at @NPL_IO_NAMES@. Sets NPL_PRELOAD_MAP.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/preload/io_calls.def ${PROJECT_SOURCE_DIR}/preload/preload.map)
file(STRINGS ${PROJECT_SOURCE_DIR}/preload/io_calls.def npl_io_lines REGEX "^IO(_VOID|_HAND)?\\(")
set(NPL_IO_NAMES "")
foreach(l ${npl_io_lines})
  if(l MATCHES "^IO\\([^,]+, *([A-Za-z0-9_]+),")
    string(APPEND NPL_IO_NAMES "${CMAKE_MATCH_1}; ")
  elseif(l MATCHES "^IO_(VOID|HAND)\\(([A-Za-z0-9_]+)")
    string(APPEND NPL_IO_NAMES "${CMAKE_MATCH_2}; ")
  endif()
endforeach()
set(NPL_PRELOAD_MAP ${CMAKE_BINARY_DIR}/preload.map)
configure_file(${PROJECT_SOURCE_DIR}/preload/preload.map ${NPL_PRELOAD_MAP} @ONLY)

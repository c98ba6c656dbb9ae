# SPDX-License-Identifier: BSD-3-Clause
# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): runs on the staged tree of each package
# before it is packed. Man pages as Debian ships them: gzip -9n, and a page that only sources
# another (doxygen's MAN_LINKS: ".so man3/npl_arrays.3") becomes a symbolic link to it.
file(GLOB_RECURSE npl_pages "${CPACK_TEMPORARY_DIRECTORY}/*.[1-9]")
list(FILTER npl_pages INCLUDE REGEX "/share/man/man[1-9]/[^/]+$")
foreach(page IN LISTS npl_pages)
  file(STRINGS "${page}" lines LIMIT_COUNT 2)
  list(LENGTH lines n)
  if(n EQUAL 1 AND lines MATCHES "^\\.so man[1-9]/(.+)$")
    file(REMOVE "${page}")
    file(CREATE_LINK "${CMAKE_MATCH_1}.gz" "${page}.gz" SYMBOLIC)
  else()
    execute_process(COMMAND gzip -9n "${page}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "gzip ${page} failed")
    endif()
  endif()
endforeach()

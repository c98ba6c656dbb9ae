# SPDX-License-Identifier: BSD-3-Clause
# Install rules, pkg-config file, CMake package and CPack (.deb) for libnumaplace and the CLI.
# Included at the end of the top-level CMakeLists.txt. Layout under the prefix P:
#   P/include/numaplace.h, P/include/numaplace/*.h   P/LIBDIR/libnumaplace.so.0, libnumaplace.a
#   P/bin/numaplace (RUNPATH $ORIGIN/../LIBDIR)      P/LIBDIR/numaplace/libnumaplace_preload.so
#   P/share/man/man1/numaplace*.1                     P/share/numaplace/report_plot.py
#   P/LIBDIR/pkgconfig/numaplace.pc                   P/LIBDIR/cmake/numaplace/numaplaceConfig.cmake
# Everything is relative to P: a tree installed with --prefix anywhere, or copied, still works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# the CLI finds libnumaplace.so.0 and its helper library relative to its own executable
set_target_properties(numaplace_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
target_compile_definitions(numaplace_cli PRIVATE NPL_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}")
set_target_properties(numaplace_static PROPERTIES EXPORT_NAME numaplace_static)

# the C and C++ headers of libnumaplace; the MAi headers (numaplace/mai.h, mai.h) are installed
# with libnumaplace_mai (mai/CMakeLists.txt)
file(GLOB NPL_PUBLIC_SUBHEADERS ${PROJECT_SOURCE_DIR}/include/numaplace/*.h)
list(FILTER NPL_PUBLIC_SUBHEADERS EXCLUDE REGEX "/mai\\.h$")
install(FILES include/numaplace.h include/numaplace.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
install(FILES ${NPL_PUBLIC_SUBHEADERS} ${PROJECT_BINARY_DIR}/include/numaplace/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/numaplace COMPONENT dev)
install(TARGETS numaplace numaplace_static EXPORT numaplaceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS numaplace_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
if(TARGET numaplace_preload)
  install(TARGETS numaplace_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/numaplace COMPONENT tools)
endif()
file(GLOB NPL_MAN_PAGES ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(FILES ${NPL_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
include(${CMAKE_CURRENT_LIST_DIR}/NplMan.cmake) # share/man/man3: the API, from the headers
install(PROGRAMS tools/report_plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/numaplace COMPONENT tools)
# the licence (BSD-3-Clause), and in each package's doc directory Debian's machine-readable
# copyright file and the changelog (gzip -9n, as Debian ships it)
set(NPL_CHANGELOG_GZ ${PROJECT_BINARY_DIR}/changelog.gz)
execute_process(COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/debian/changelog
                OUTPUT_FILE ${NPL_CHANGELOG_GZ} RESULT_VARIABLE NPL_GZIP_RC)
if(NOT NPL_GZIP_RC EQUAL 0)
  message(FATAL_ERROR "gzip packaging/debian/changelog failed")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT tools)
foreach(c lib:libnumaplace0 mai:libnumaplace-mai0 dev:libnumaplace-dev tools:numaplace)
  string(REPLACE ":" ";" c ${c})
  list(GET c 0 comp)
  list(GET c 1 pkg)
  install(FILES packaging/debian/copyright ${NPL_CHANGELOG_GZ}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${comp})
endforeach()

# pkg-config: prefix relative to the .pc file (relocatable). Static linking needs hwloc and
# pthreads (libnuma is not used: the library makes the system calls itself).
file(RELATIVE_PATH NPL_PC_RELPREFIX "/P/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/P")
string(REGEX REPLACE "/$" "" NPL_PC_RELPREFIX "${NPL_PC_RELPREFIX}")
# One .pc file per installed library: numaplace, numaplace-mai, numaplace-fortran (the module
# is compiler-specific: its .pc names the compiler that wrote it).
configure_file(${PROJECT_SOURCE_DIR}/numaplace.pc.in ${PROJECT_BINARY_DIR}/numaplace.pc @ONLY)
set(NPL_PC_FILES ${PROJECT_BINARY_DIR}/numaplace.pc)
if(TARGET numaplace_mai)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/numaplace-mai.pc.in ${PROJECT_BINARY_DIR}/numaplace-mai.pc @ONLY)
  list(APPEND NPL_PC_FILES ${PROJECT_BINARY_DIR}/numaplace-mai.pc)
endif()
if(TARGET numaplace_fortran)
  set(NPL_FORTRAN_COMPILER_MAJOR ${CMAKE_Fortran_COMPILER_VERSION})
  set(NPL_FORTRAN_OPENMP_FLAGS "${OpenMP_Fortran_FLAGS}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/numaplace-fortran.pc.in
                 ${PROJECT_BINARY_DIR}/numaplace-fortran.pc @ONLY)
  list(APPEND NPL_PC_FILES ${PROJECT_BINARY_DIR}/numaplace-fortran.pc)
endif()
install(FILES ${NPL_PC_FILES} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# CMake package: find_package(numaplace) -> numaplace::numaplace, numaplace::numaplace_static,
# numaplace::numaplace_mai, numaplace::numaplace_mai_static and, in a project with Fortran
# enabled, numaplace::numaplace_fortran
set(NPL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/numaplace)
install(EXPORT numaplaceTargets NAMESPACE numaplace:: DESTINATION ${NPL_CMAKE_DIR} COMPONENT dev)
if(TARGET numaplace_fortran)
  install(EXPORT numaplaceFortranTargets NAMESPACE numaplace:: DESTINATION ${NPL_CMAKE_DIR}
          COMPONENT dev)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/numaplaceConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/numaplaceConfig.cmake INSTALL_DESTINATION ${NPL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/numaplaceConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion) # 0.x: minor versions may break
install(FILES ${PROJECT_BINARY_DIR}/numaplaceConfig.cmake ${PROJECT_BINARY_DIR}/numaplaceConfigVersion.cmake
        DESTINATION ${NPL_CMAKE_DIR} COMPONENT dev)

# CPack: the packages Debian would make, installed under /usr (docs/INSTALL.md; lintian's
# remaining tags explained there):
#   libnumaplace0      libnumaplace.so.0                         (component lib)
#   libnumaplace-mai0  libnumaplace_mai.so.0, the MAi-compatible API (component mai)
#   libnumaplace-dev   headers, .so links, static libraries, .pc files, CMake package, Fortran
#                      module, section-3 man pages               (component dev)
#   numaplace          the command, its interposer, section-1 man pages, report_plot.py (tools)
# Depends: dpkg-shlibdeps from the ELF files (libhwloc15, libcjson1, libgomp1, libc6) plus the
# packages of this set each needs, at this exact version. Nothing depends on LLVM's libomp:
# `run --next-touch` sees each program's regions through its own runtime (libnumaplace_preload.so
# links no OpenMP runtime)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME numaplace)
set(CPACK_PACKAGE_VENDOR "numaplace")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "place memory pages and threads on NUMA machines")
# no project address exists yet: a distributor sets its own (lintian's bogus-mail-host otherwise)
set(NPL_DEB_MAINTAINER "numaplace developers <numaplace@localhost>" CACHE STRING "the .deb's Maintainer")
set(CPACK_PACKAGE_CONTACT "${NPL_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib mai dev tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # shlibs file and the ldconfig trigger
# libnumaplace.so.0, needed by libnumaplace_mai and the command, is in the lib component's tree
# (dpkg-shlibdeps runs in each component's; the Depends on libnumaplace0 is written below)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ../lib/usr/${CMAKE_INSTALL_LIBDIR})
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip) # busybox's dpkg (the guest's) reads gzip
set(CPACK_STRIP_FILES ON)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/NplDebPrebuild.cmake) # man pages gzipped
# the shared libraries' packages: ldconfig by trigger (CPack 3.25 also writes ldconfig into
# postinst and postrm: lintian's maintscript-calls-ldconfig, docs/INSTALL.md)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/debian/triggers)
set(CPACK_DEBIAN_MAI_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/debian/triggers)
set(NPL_DEB_SAME "(= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LIB_PACKAGE_NAME libnumaplace0)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_LIB_DESCRIPTION "NUMA placement of memory pages and threads - shared library
libnumaplace places the pages of arrays and the threads of a program on the
nodes of a NUMA machine by policy (cyclic, blocked, skewed, next-touch...).")
set(CPACK_DEBIAN_MAI_PACKAGE_NAME libnumaplace-mai0)
set(CPACK_DEBIAN_MAI_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_MAI_PACKAGE_DEPENDS "libnumaplace0 ${NPL_DEB_SAME}")
set(CPACK_COMPONENT_MAI_DESCRIPTION "NUMA placement of memory pages and threads - MAi-compatible library
libnumaplace_mai implements the Memory Affinity interface (MAi) of
programs written for it on top of libnumaplace.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libnumaplace-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libnumaplace0 ${NPL_DEB_SAME}, libnumaplace-mai0 ${NPL_DEB_SAME}, libhwloc-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION "NUMA placement of memory pages and threads - development files
Headers, static libraries, pkg-config files, the CMake package, the Fortran
module and the section-3 manual pages of libnumaplace and libnumaplace_mai.")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME numaplace)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libnumaplace0 ${NPL_DEB_SAME}, python3") # report_plot.py
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "python3-matplotlib")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "NUMA placement of memory pages and threads - command-line tool
numaplace shows the topology, measures the machine, runs unmodified programs
under a placement policy (an LD_PRELOAD interposer), profiles their memory
accesses and advises a policy per array.")
include(CPack)

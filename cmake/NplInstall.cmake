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
install(FILES include/numaplace.h include/numaplace.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${NPL_PUBLIC_SUBHEADERS} ${PROJECT_BINARY_DIR}/include/numaplace/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/numaplace)
install(TARGETS numaplace numaplace_static EXPORT numaplaceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS numaplace_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET numaplace_preload)
  install(TARGETS numaplace_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/numaplace)
endif()
file(GLOB NPL_MAN_PAGES ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(FILES ${NPL_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
include(${CMAKE_CURRENT_LIST_DIR}/NplMan.cmake) # share/man/man3: the API, from the headers
install(PROGRAMS tools/report_plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/numaplace)
# the licence (BSD-3-Clause), and Debian's machine-readable copyright file
install(FILES LICENSE packaging/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# pkg-config: prefix relative to the .pc file (relocatable). Static linking needs hwloc and
# pthreads (libnuma is not used: the library makes the system calls itself).
file(RELATIVE_PATH NPL_PC_RELPREFIX "/P/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/P")
string(REGEX REPLACE "/$" "" NPL_PC_RELPREFIX "${NPL_PC_RELPREFIX}")
# One .pc file per installed library: numaplace, numaplace-mai, numaplace-fortran (the module
# is compiler-specific: its .pc names the compiler that wrote it).
configure_file(${PROJECT_SOURCE_DIR}/numaplace.pc.in ${PROJECT_BINARY_DIR}/numaplace.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/numaplace-mai.pc.in ${PROJECT_BINARY_DIR}/numaplace-mai.pc @ONLY)
set(NPL_PC_FILES ${PROJECT_BINARY_DIR}/numaplace.pc ${PROJECT_BINARY_DIR}/numaplace-mai.pc)
if(TARGET numaplace_fortran)
  set(NPL_FORTRAN_COMPILER_MAJOR ${CMAKE_Fortran_COMPILER_VERSION})
  set(NPL_FORTRAN_OPENMP_FLAGS "${OpenMP_Fortran_FLAGS}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/numaplace-fortran.pc.in
                 ${PROJECT_BINARY_DIR}/numaplace-fortran.pc @ONLY)
  list(APPEND NPL_PC_FILES ${PROJECT_BINARY_DIR}/numaplace-fortran.pc)
endif()
install(FILES ${NPL_PC_FILES} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package: find_package(numaplace) -> numaplace::numaplace, numaplace::numaplace_static,
# numaplace::numaplace_mai, numaplace::numaplace_mai_static and, in a project with Fortran
# enabled, numaplace::numaplace_fortran
set(NPL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/numaplace)
install(EXPORT numaplaceTargets NAMESPACE numaplace:: DESTINATION ${NPL_CMAKE_DIR})
if(TARGET numaplace_fortran)
  install(EXPORT numaplaceFortranTargets NAMESPACE numaplace:: DESTINATION ${NPL_CMAKE_DIR})
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/numaplaceConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/numaplaceConfig.cmake INSTALL_DESTINATION ${NPL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/numaplaceConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion) # 0.x: minor versions may break
install(FILES ${PROJECT_BINARY_DIR}/numaplaceConfig.cmake ${PROJECT_BINARY_DIR}/numaplaceConfigVersion.cmake
        DESTINATION ${NPL_CMAKE_DIR})

# CPack: one .deb (library, headers, CLI, man pages) installed under /usr; Depends computed by
# dpkg-shlibdeps from the ELF files (libhwloc15, libcjson1, libgomp1, libc6). Nothing depends on
# LLVM's libomp: `run --next-touch` sees each program's regions through its own runtime
# (libnumaplace_preload.so links no OpenMP runtime)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME numaplace)
set(CPACK_PACKAGE_VENDOR "numaplace")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "place memory pages and threads on NUMA machines")
set(CPACK_PACKAGE_CONTACT "numaplace maintainers <numaplace@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libhwloc-dev, pkg-config")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip) # busybox's dpkg (the guest's) reads gzip
set(CPACK_STRIP_FILES OFF)
include(CPack)

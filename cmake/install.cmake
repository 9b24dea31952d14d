# `cmake --install` puts the library, its headers under include/sluice/, a package config and a pkg-config
# file, so an outside project can `find_package(sluice)` and link `sluice::sluice`, or build with
# `pkg-config --cflags --libs sluice` (DESIGN.md §7).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A 0.x release may change its ABI at each minor version (sluiceConfigVersion says SameMinorVersion too).
set_target_properties(sluice PROPERTIES VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
if(SLUICE_SHARED)
  set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")  # the installed `sluice` finds libsluice.so
endif()

install(TARGETS sluice EXPORT sluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The headers of the layers libsluice is built from, and include/sluice/ (the umbrella, version.h), as a copy
# that includes itself as <sluice/...> (cmake/install_headers.cmake).
install(CODE "set(SLUICE_HEADER_DIRS base core hcq renderers backends runtime)
  set(SLUICE_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(SLUICE_BINARY_DIR \"${PROJECT_BINARY_DIR}\")
  set(SLUICE_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")")
install(SCRIPT cmake/install_headers.cmake)

# What libsluice links (target_link_libraries(sluice ...) across the tree), one row per link item: what
# sluice.pc and sluiceConfig.cmake need for it. A static libsluice records none of its private links, so
# there they are Requires and Libs of sluice.pc and find_dependency() calls of sluiceConfig.cmake; a shared
# one records them itself (in sluice.pc they are only what `pkg-config --static` adds). An item without a
# row stops the configure, so neither file falls behind the link line.
set(_pc_modules "")
set(_pc_libs "")
set(_find_deps "")
get_target_property(_links sluice LINK_LIBRARIES)
foreach(item IN LISTS _links)
  if(item MATCHES "^::@")  # CMake's marker for the folder a target_link_libraries() call came from
  elseif(item STREQUAL "Threads::Threads")  # public: -pthread in sluice.pc.in, find_dependency in the config
  elseif(item STREQUAL "${CMAKE_DL_LIBS}")  # backends/: dlopen of the drivers, dlsym
    list(APPEND _pc_libs "-l${item}")
  elseif(item STREQUAL "spdlog::spdlog")  # base/log.cpp
    list(APPEND _pc_modules spdlog)
    string(APPEND _find_deps "find_dependency(spdlog)\n")
  elseif(item STREQUAL "ZLIB::ZLIB")  # runtime/idx.cpp: gzip-compressed IDX files
    list(APPEND _pc_modules zlib)
    string(APPEND _find_deps "find_dependency(ZLIB)\n")
  else()
    message(FATAL_ERROR "libsluice links '${item}': give it a row in cmake/install.cmake (sluice.pc, sluiceConfig)")
  endif()
endforeach()
list(JOIN _pc_modules " " _pc_modules)
list(JOIN _pc_libs " " _pc_libs)
if(SLUICE_SHARED)
  set(SLUICE_PC_REQUIRES_PRIVATE "${_pc_modules}")
  set(SLUICE_PC_LIBS_PRIVATE "${_pc_libs}")
else()
  set(SLUICE_PC_REQUIRES "${_pc_modules}")
  set(SLUICE_PC_LIBS "${_pc_libs}")
  set(SLUICE_FIND_DEPENDENCIES "${_find_deps}")
endif()

install(EXPORT sluiceTargets NAMESPACE sluice:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
configure_package_config_file(cmake/sluiceConfig.cmake.in ${PROJECT_BINARY_DIR}/sluiceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sluiceConfig.cmake ${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
# sluice.pc finds the prefix from where it lies, so an installed tree can be moved.
file(RELATIVE_PATH SLUICE_PC_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")  # ../../
string(REGEX REPLACE "/$" "" SLUICE_PC_PREFIX "${SLUICE_PC_PREFIX}")
configure_file(cmake/sluice.pc.in ${PROJECT_BINARY_DIR}/sluice.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sluice.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Runs inside `cmake --install` (install(SCRIPT) in install.cmake). Installs the public headers as a copy whose
# includes of each other name the installed layout, `#include "core/ir/view.h"` -> `#include
# <sluice/core/ir/view.h>`, so that a consumer's include path holds only include/ and none of its own headers
# can stand in for one of ours (DESIGN.md §7). The source tree keeps its root-relative includes.
# In: SLUICE_HEADER_DIRS (layers, installed as include/sluice/<layer>/...), SLUICE_SOURCE_DIR,
# SLUICE_BINARY_DIR (include/sluice/ of both is installed as it lies), SLUICE_INCLUDEDIR.

set(dest "${SLUICE_INCLUDEDIR}")
if(NOT IS_ABSOLUTE "${dest}")
  set(dest "${CMAKE_INSTALL_PREFIX}/${dest}")
endif()

# Writes one header's rewritten text, unless the installed copy already holds it (its time then stays, so
# consumers do not rebuild), and records it in install_manifest.txt as install(FILES) would.
function(install_header src rel)
  file(READ "${src}" text)
  string(REGEX REPLACE
    "#([ \t]*)include[ \t]*\"((base|core|hcq|renderers|backends|runtime|frontend|models)/[^\"]*)\""
    "#\\1include <sluice/\\2>" text "${text}")
  set(dst "${dest}/${rel}")
  set(CMAKE_INSTALL_MANIFEST_FILES ${CMAKE_INSTALL_MANIFEST_FILES} "${dst}" PARENT_SCOPE)
  if(EXISTS "$ENV{DESTDIR}${dst}")
    file(READ "$ENV{DESTDIR}${dst}" old)
    if(old STREQUAL text)
      message(STATUS "Up-to-date: $ENV{DESTDIR}${dst}")
      return()
    endif()
  endif()
  message(STATUS "Installing: $ENV{DESTDIR}${dst}")
  file(WRITE "$ENV{DESTDIR}${dst}" "${text}")
endfunction()

foreach(layer IN LISTS SLUICE_HEADER_DIRS)
  file(GLOB_RECURSE headers RELATIVE "${SLUICE_SOURCE_DIR}" "${SLUICE_SOURCE_DIR}/${layer}/*.h")
  foreach(h IN LISTS headers)
    install_header("${SLUICE_SOURCE_DIR}/${h}" "sluice/${h}")
  endforeach()
endforeach()
foreach(root "${SLUICE_SOURCE_DIR}/include" "${SLUICE_BINARY_DIR}/include")
  file(GLOB_RECURSE headers RELATIVE "${root}" "${root}/sluice/*.h")
  foreach(h IN LISTS headers)
    install_header("${root}/${h}" "${h}")
  endforeach()
endforeach()

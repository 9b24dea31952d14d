# cmake -P script behind the Install.* tests (see CMakeLists.txt): installs the build into a prefix, checks
# that the installed headers include each other as <sluice/...> only, then builds and runs consumer/ twice
# against the prefix: as a CMake project (find_package(sluice)) and with the flags pkg-config gives.
# Any failing step stops the script with its output.
function(step what)
  message(STATUS "${what}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  message("${out}")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(config_args "")
if(CONFIG)  # empty for a single-config build without CMAKE_BUILD_TYPE
  set(config_args --config ${CONFIG})
endif()
separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
# A folder of this run's own (kept when a step fails): runs of the test in one build dir may overlap.
string(TIMESTAMP now "%s%f")
set(WORK_DIR ${WORK_DIR}/${now})
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/consumer)

step("install" ${CMAKE_COMMAND} --install ${SLUICE_BUILD_DIR} --prefix ${prefix} ${config_args})

# A quoted include in an installed header is found through the consumer's include path first.
file(GLOB_RECURSE headers ${prefix}/include/*.h)
set(quoted "")
foreach(h IN LISTS headers)
  file(STRINGS ${h} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(APPEND quoted "\n  ${h}: ${line}")
  endforeach()
endforeach()
if(quoted)
  message(FATAL_ERROR "installed headers must include each other as <sluice/...>:${quoted}")
endif()

step("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${build} -G Ninja
  -DCMAKE_BUILD_TYPE=${CONFIG} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS}")
step("build consumer" ${CMAKE_COMMAND} --build ${build})
step("run consumer" ${build}/app)

# pkg-config: the same program built with nothing but the flags sluice.pc gives (and the C++ standard).
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig:$ENV{PKG_CONFIG_PATH}")
step("pkg-config version" pkg-config --modversion sluice)
string(STRIP "${step_output}" version)
step("pkg-config flags" pkg-config --cflags --libs sluice)
separate_arguments(pc_flags UNIX_COMMAND "${step_output}")
step("build pkg-config consumer" ${CXX_COMPILER} -std=c++20 ${cxx_flags} -I${CONSUMER_DIR}/shadow
  "-DEXPECTED_VERSION=\"${version}\"" ${CONSUMER_DIR}/main.cpp ${pc_flags} -o ${WORK_DIR}/app_pkg_config
  -Wl,-rpath,${prefix}/${LIBDIR})  # a shared libsluice outside the loader's path (SLUICE_SHARED=ON)
step("run pkg-config consumer" ${WORK_DIR}/app_pkg_config)
file(REMOVE_RECURSE ${WORK_DIR})

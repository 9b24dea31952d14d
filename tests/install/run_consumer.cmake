# cmake -P script behind the Install.FindPackageConsumer test (see CMakeLists.txt). Any failing step
# stops the script with its output.
function(step what)
  message(STATUS "${what}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  message("${out}")
endfunction()

set(config_args "")
if(CONFIG)  # empty for a single-config build without CMAKE_BUILD_TYPE
  set(config_args --config ${CONFIG})
endif()
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${WORK_DIR})

step("install" ${CMAKE_COMMAND} --install ${SLUICE_BUILD_DIR} --prefix ${prefix} ${config_args})
step("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${build} -G Ninja
  -DCMAKE_BUILD_TYPE=${CONFIG} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS}")
step("build consumer" ${CMAKE_COMMAND} --build ${build})
step("run consumer" ${build}/app)

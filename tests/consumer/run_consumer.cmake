# Builds and runs tests/consumer/project. MODE: find_package (installs nvtxpp into a scratch
# prefix first) or add_subdirectory. Needs SOURCE_DIR, BUILD_DIR, WORK_DIR, GENERATOR.
# FUNCTION_NAMES (optional): the CMake option NVTXPP_FUNCTION_NAMES, which the consumer's code
# then checks it was compiled with.
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(args -G "${GENERATOR}" -S "${SOURCE_DIR}/tests/consumer/project" -B "${WORK_DIR}/build"
  -DNVTXPP_CONSUMER_MODE=${MODE})
if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  list(APPEND args "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
else()
  list(APPEND args "-DNVTXPP_SOURCE_DIR=${SOURCE_DIR}")
endif()
if(FUNCTION_NAMES)
  list(APPEND args -DNVTXPP_FUNCTION_NAMES=${FUNCTION_NAMES}
       -DCONSUMER_EXPECT_FUNCTION_NAMES=${FUNCTION_NAMES})
endif()
run(${CMAKE_COMMAND} ${args})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
